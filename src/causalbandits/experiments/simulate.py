"""The round loop (one policy against one environment, all replicates at once), its long
results table and :func:`compare`, the quickest way to put policies side by side."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from causalbandits.experiments.recorders import (
    ActionLog,
    Elapsed,
    ProgressBar,
    Recorder,
    RoundOracle,
    default_recorders,
)
from causalbandits.random import Stream, policy_stream, replicate_seeds


def checkpoint_rounds(horizon: int, count: int) -> np.ndarray:
    """``min(count, horizon)`` evenly spaced 1-based rounds, the last being ``horizon``."""
    if horizon < 1 or count < 1:
        raise ValueError(f"need horizon >= 1 and count >= 1, got {horizon} and {count}")
    k = np.arange(1, count + 1, dtype=np.int64)
    return np.unique((k * horizon + count - 1) // count)


def simulate(
    env: Any,
    policy: Any,
    checkpoints: int | np.ndarray,
    recorders: Sequence[Recorder] | None = None,
) -> dict[str, np.ndarray]:
    """The round loop: ``policy`` against ``env`` (both already reset), all replicates at once.

    Each round the policy selects one action per replicate, the recorders see the actions
    (while the regret oracle still describes the round), the environment steps and the
    policy learns from the feedback. ``checkpoints`` is a count of evenly spaced rounds or an
    increasing array of 1-based rounds; the loop stops after the last checkpoint.
    ``recorders`` default to :func:`~causalbandits.experiments.recorders.default_recorders`
    (``cum_regret`` and ``optimal_share``). Returns ``t`` (n,) and every recorder's columns,
    each ``(n, R)``.
    """
    horizon = int(env.horizon)
    if np.ndim(checkpoints) == 0:
        rounds = checkpoint_rounds(horizon, int(checkpoints))
    else:
        rounds = np.asarray(checkpoints, dtype=np.int64)
        if rounds.size == 0 or rounds[0] < 1 or rounds[-1] > horizon:
            raise ValueError(f"checkpoint rounds must lie in 1..{horizon}")
        if np.any(np.diff(rounds) <= 0):
            raise ValueError("checkpoint rounds must be strictly increasing")
    recorders = default_recorders() if recorders is None else list(recorders)
    # Only the hooks a recorder overrides are called: the loop costs what the recorders use.
    acting = [r for r in recorders if type(r).on_action is not Recorder.on_action]
    learning = [r for r in recorders if type(r).after_update is not Recorder.after_update]
    k = 0
    for t in range(1, int(rounds[-1]) + 1):
        actions = policy.select()
        if t == 1:
            for recorder in recorders:
                recorder.start(env, policy, rounds, len(actions))
        oracle = RoundOracle(env, actions)
        for recorder in acting:
            recorder.on_action(t, actions, oracle)
        policy.update(actions, env.step(actions))
        for recorder in learning:
            recorder.after_update(t, actions)
        if t == rounds[k]:
            for recorder in recorders:
                recorder.on_checkpoint(k, t)
            k += 1
    out: dict[str, np.ndarray] = {"t": rounds}
    for recorder in recorders:
        out.update(recorder.result())
    return out


def results_frame(
    result: dict[str, np.ndarray],
    algorithm: str,
    replicates: Sequence[int],
    per_replicate: Mapping[str, np.ndarray] | None = None,
    **columns: Any,
) -> pd.DataFrame:
    """The long table of one :func:`simulate` result: one row per (replicate, checkpoint),
    one column per recorded metric.

    ``per_replicate`` adds columns with one value per replicate (e.g. the change-detection
    scores of :mod:`~causalbandits.experiments.change_metrics`), repeated at every checkpoint.
    """
    rounds = result["t"]
    extra = {
        name: np.repeat(np.asarray(values), len(rounds))
        for name, values in (per_replicate or {}).items()
    }
    return pd.DataFrame(
        {
            **columns,
            "algorithm": algorithm,
            "replicate": np.repeat(np.asarray(replicates), len(rounds)),
            "t": np.tile(rounds, len(replicates)),
            **{name: values.T.ravel() for name, values in result.items() if name != "t"},
            **extra,
        }
    )


def compare(
    env: Any,
    policies: Mapping[str, Callable[[Any], Any]],
    replicates: int,
    seed: int = 0,
    checkpoints: int = 100,
    progress: bool | None = None,
) -> pd.DataFrame:
    """Run every policy on ``env`` with the same noise (common random numbers).

    ``policies`` maps labels to constructors taking the environment's ``problem``. Returns
    the long results table (setting 0), ready for :func:`~causalbandits.experiments.plots`,
    with the wall seconds of each policy's run so far in ``elapsed``; every action played,
    ``(T, R, ...)`` per label, is in ``table.attrs["actions"]``. ``progress``: a bar over the
    rounds of each policy on standard error (default: when it is a terminal).
    """
    frames, actions = [], {}
    reps = range(replicates)
    show = sys.stderr.isatty() if progress is None else progress
    for label, make_policy in policies.items():
        env.reset(replicate_seeds(seed, 0, reps, Stream.NOISE))
        policy = make_policy(env.problem)
        policy.reset(replicate_seeds(seed, 0, reps, policy_stream(label)))
        log = ActionLog()
        recorders = [*default_recorders(), Elapsed(), log, *([ProgressBar(label)] if show else [])]
        result = simulate(env, policy, checkpoints, recorders)
        frames.append(results_frame(result, label, reps, setting=0))
        actions[label] = log.stacked()
    table = pd.concat(frames, ignore_index=True)
    table.attrs["actions"] = actions
    return table
