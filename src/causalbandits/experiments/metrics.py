"""Summaries of the long results table: means, standard errors and 95% bands."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from causalbandits.experiments.spec import RESERVED_COLUMNS

#: The round loop's recorded metrics (bandits: regret, its time average ``avg_regret =
#: cum_regret / t``, the optimal share, the ``current`` and ``elapsed`` recorders;
#: continuous-action runs: the ``OptimisationTrace`` columns); a table is summarised on those
#: it has.
METRICS = (
    "cum_regret",
    "avg_regret",
    "optimal_share",
    "regret_now",
    "optimal_now",
    "elapsed",
    "reconstruction_mse",
    "prequential_mse",
    "heldout_mse",
    "expected_reward",
    "best_expected",
    "observed",
    "seconds",
)
#: Optional per-replicate metrics (e.g. ``detection_hits``), summarised when present.
OPTIONAL_METRIC_PREFIXES = ("detection_",)
Z95 = 1.96


def metric_columns(df: pd.DataFrame) -> list[str]:
    """The metrics among the columns of a results table: :data:`METRICS`, then optional ones."""
    optional = [c for c in df.columns if c.startswith(OPTIONAL_METRIC_PREFIXES)]
    return [*(m for m in METRICS if m in df.columns), *optional]


def parameter_columns(df: pd.DataFrame) -> list[str]:
    """The setting parameters among the columns of a results table."""
    metrics = (*METRICS, *OPTIONAL_METRIC_PREFIXES)
    return [c for c in df.columns if c not in RESERVED_COLUMNS and not c.startswith(metrics)]


def summarise(
    df: pd.DataFrame, by: Sequence[str] | None = None, metrics: Sequence[str] | None = None
) -> pd.DataFrame:
    """Per group: ``replicates`` and, per metric, ``_mean``, ``_se``, ``_low`` and ``_high``.

    The band is mean +- 1.96 standard errors (``_se`` is NaN for a single replicate). The
    default groups are (setting, its parameters, algorithm, t), in order of appearance (a
    table without the grid point ``setting``: its parameters); the default metrics are
    :func:`metric_columns` (a table of other quantities names its own ``metrics``).
    """
    if by is None:
        point = ["setting"] if "setting" in df.columns else []
        by = [*point, *parameter_columns(df), "algorithm", "t"]
    grouped = df.groupby(list(by), sort=False, dropna=False)
    out = grouped.size().rename("replicates").to_frame()
    for metric in metric_columns(df) if metrics is None else metrics:
        stats = grouped[metric].agg(["mean", "std"])
        se = stats["std"] / np.sqrt(out["replicates"])
        out[f"{metric}_mean"] = stats["mean"]
        out[f"{metric}_se"] = se
        out[f"{metric}_low"] = stats["mean"] - Z95 * se
        out[f"{metric}_high"] = stats["mean"] + Z95 * se
    return out.reset_index()


def final(df: pd.DataFrame) -> pd.DataFrame:
    """The rows at the last round ``t`` of each (setting, algorithm): of each algorithm in a
    table without ``setting``, the table's last round in one without either."""
    keys = [key for key in ("setting", "algorithm") if key in df.columns]
    last = df.groupby(keys, sort=False)["t"].transform("max") if keys else df["t"].max()
    return df[df["t"] == last].reset_index(drop=True)
