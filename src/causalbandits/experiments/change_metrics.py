"""Scores of a sub-graph change detector against an environment's recorded changes (E4).

An environment with mechanism changes lists them as ``changes`` (records with ``round``,
``node``, ``mode``: from 0-based ``round`` on, column ``node`` of mode ``mode`` is new), or
one such list per replicate as ``changes_per_replicate`` when each replicate is its own
system, and its ``change_points``; a policy with a sub-graph detector lists, per replicate,
its alarms as ``subgraph_detections`` (``(round, node, mode)``, ``round`` 0-based: the round
whose sample raised the alarm). A change is detected when its pair raises an alarm in ``[round, next
change point)``; its delay is the first such alarm's round minus ``round``. Every other
alarm is a false alarm.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

#: Per-replicate columns of the results table: changes, detected changes, the sum of their
#: delays (rounds) and the false alarms.
DETECTION_COLUMNS = (
    "detection_changes",
    "detection_hits",
    "detection_delay_sum",
    "detection_false_alarms",
)


def score_detections(
    changes: Sequence[Any],
    detections: Sequence[tuple[int, int, int]],
    change_points: Sequence[int],
    horizon: int,
) -> dict[str, int]:
    """Changes, hits, summed delay and false alarms of one run (see the module docstring)."""
    points = np.sort(np.asarray(change_points, dtype=int))
    alarms = sorted((int(t), int(node), int(mode)) for t, node, mode in detections)
    used = [False] * len(alarms)
    hits = delay_sum = 0
    for change in changes:
        later = points[points > change.round]
        end = int(later[0]) if later.size else int(horizon)
        for k, (t, node, mode) in enumerate(alarms):
            if (node, mode) == (change.node, change.mode) and change.round <= t < end:
                used[k] = True
                hits += 1
                delay_sum += t - change.round
                break
    return {
        "detection_changes": len(changes),
        "detection_hits": hits,
        "detection_delay_sum": delay_sum,
        "detection_false_alarms": len(alarms) - sum(used),
    }


def detection_columns(env: Any, policy: Any) -> dict[str, np.ndarray]:
    """Per-replicate :data:`DETECTION_COLUMNS` when ``env`` records changes and ``policy``
    reports sub-graph alarms; empty otherwise."""
    alarms = getattr(policy, "subgraph_detections", None)
    per_replicate = getattr(env, "changes_per_replicate", None)
    if per_replicate is None and getattr(env, "changes", None) is not None:
        per_replicate = [env.changes] * len(alarms or ())
    if per_replicate is None or alarms is None:
        return {}
    scores = [
        score_detections(changes, run, env.change_points, env.horizon)
        for changes, run in zip(per_replicate, alarms, strict=True)
    ]
    return {name: np.array([s[name] for s in scores]) for name in DETECTION_COLUMNS}


def detection_summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per algorithm with detection scores, from a results table's last round: ``changes``,
    ``hits``, ``rate`` (hits / changes), mean ``delay`` of the hits (rounds; NaN without
    hits) and ``false_alarms`` per replicate. Empty without :data:`DETECTION_COLUMNS`."""
    columns = ["changes", "hits", "rate", "delay", "false_alarms"]
    if "detection_hits" not in df:
        return pd.DataFrame(columns=columns)
    last = df[df["t"] == df["t"].max()].dropna(subset=["detection_hits"])
    grouped = last.groupby("algorithm")
    sums = grouped[["detection_changes", "detection_hits", "detection_delay_sum"]].sum()
    hits = sums["detection_hits"]
    return pd.DataFrame(
        {
            "changes": sums["detection_changes"],
            "hits": hits,
            "rate": hits / sums["detection_changes"],
            "delay": (sums["detection_delay_sum"] / hits).where(hits > 0),
            "false_alarms": grouped["detection_false_alarms"].mean(),
        }
    )[columns]
