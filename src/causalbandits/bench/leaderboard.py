"""Scores that compare policies across problem families: the benchmark's leaderboard.

Input is one row per (family, instance, replicate, policy) with the regret at the horizon
and the regret of uniformly random play on the same instance. The scores:

- **Normalised regret** ``r = R(T) / R_random(T)``: 0 for the oracle, 1 for random play, on
  every instance whatever its scale, so that families can be compared and averaged.
- **Family means with bootstrap intervals**: the mean of ``r`` over a family's instances
  and replicates; its percentile interval from a two-level bootstrap (instances with
  replacement, then replicates with replacement within each drawn instance), the same draws
  for every policy (the policies met the same instances and noise, so the comparison is
  paired).
- **Rank uncertainty**: the policies ranked by their overall score (the mean of the family
  means) in every bootstrap draw; the share of draws in which each policy takes each rank.
- **Performance profile** (Dolan & More 2002): per instance the ratio of a policy's mean
  ``r`` to the best policy's; ``rho(tau)`` is the share of the instances a policy ran with
  ratio ``<= tau``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from causalbandits.validation import count

#: The columns a leaderboard reads.
COLUMNS = ("family", "instance", "replicate", "policy", "regret", "random_regret")


def normalised_regret(df: pd.DataFrame) -> pd.Series:
    """``regret / random_regret`` per row (0: the oracle, 1: uniformly random play)."""
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"the results need the columns {missing}")
    random = df["random_regret"].to_numpy(dtype=float)
    if not np.all(random > 0):
        raise ValueError("random_regret must be positive on every instance (random play loses)")
    return pd.Series(df["regret"].to_numpy(dtype=float) / random, index=df.index, name="score")


def family_cube(df: pd.DataFrame, family: str) -> tuple[np.ndarray, list[str]]:
    """One family's normalised regret as ``(instances, replicates, policies)`` and the
    policies' order; refuses an unbalanced family (every policy on every instance and
    replicate: the paired comparison needs all of them)."""
    rows = df[df["family"] == family].assign(score=normalised_regret)
    table = rows.pivot_table(
        index=["instance", "replicate"], columns="policy", values="score", aggfunc="first"
    )
    instances = table.index.get_level_values("instance").unique()
    replicates = table.index.get_level_values("replicate").unique()
    if table.isna().any().any() or len(table) != len(instances) * len(replicates):
        raise ValueError(
            f"family {family!r}: every policy needs a result on every instance and replicate"
        )
    cube = table.to_numpy().reshape(len(instances), len(replicates), table.shape[1])
    return cube, [str(p) for p in table.columns]


def bootstrap_means(cube: np.ndarray, draws: int, generator: np.random.Generator) -> np.ndarray:
    """``(draws, policies)`` means of ``cube`` (instances, replicates, policies) under the
    two-level bootstrap: instances with replacement, then replicates within each."""
    n_instances, n_replicates, _ = cube.shape
    instances = generator.integers(n_instances, size=(draws, n_instances))
    replicates = generator.integers(n_replicates, size=(draws, n_instances, n_replicates))
    sample = cube[instances[:, :, None], replicates]  # (draws, instances, replicates, policies)
    return sample.mean(axis=(1, 2))


@dataclass(frozen=True)
class Leaderboard:
    """Family means with intervals, overall scores and rank shares of a benchmark's results.

    ``means``: rows (family, policy) with ``mean``, ``low``, ``high`` (the ``level``
    percentile interval); ``overall``: per policy the mean of its family means with its
    interval; ``ranks``: policy x rank (1 = lowest overall score) -> share of bootstrap draws.
    """

    means: pd.DataFrame
    overall: pd.DataFrame
    ranks: pd.DataFrame

    @classmethod
    def of(
        cls, df: pd.DataFrame, draws: int = 1000, level: float = 0.95, seed: int = 0
    ) -> Leaderboard:
        """The leaderboard of ``df`` (columns :data:`COLUMNS`); every policy must have run
        every family (a policy skipped on a family is left out of ``df`` beforehand)."""
        count("draws", draws)
        if not 0 < level < 1:
            raise ValueError(f"level must lie in (0, 1), got {level}")
        generator = np.random.default_rng(seed)
        families = sorted(df["family"].unique())
        policies = sorted(df["policy"].unique())
        rows, family_means, family_boots = [], [], []
        for family in families:
            cube, order = family_cube(df, family)
            if order != policies:
                lacking = sorted(set(policies) - set(order))
                raise ValueError(f"family {family!r} lacks policies {lacking}")
            family_means.append(cube.mean(axis=(0, 1)))
            family_boots.append(bootstrap_means(cube, draws, generator))
            rows += interval_rows(
                family_means[-1], family_boots[-1], level, policies, family=family
            )
        boots = np.mean(family_boots, axis=0)  # (draws, policies): the overall score per draw
        overall = interval_rows(np.mean(family_means, axis=0), boots, level, policies)
        return cls(
            pd.DataFrame(rows).set_index(["family", "policy"]),
            pd.DataFrame(overall).set_index("policy"),
            rank_shares(boots, policies),
        )


def interval_rows(
    means: np.ndarray, boot: np.ndarray, level: float, policies: Sequence[str], **fields: str
) -> list[dict]:
    """Rows ``{**fields, policy, mean, low, high}``: the point estimate and the percentile
    interval of each policy's bootstrap means."""
    tail = 100 * (1 - level) / 2
    low, high = np.percentile(boot, [tail, 100 - tail], axis=0)
    return [
        {**fields, "policy": p, "mean": float(m), "low": float(lo), "high": float(hi)}
        for p, m, lo, hi in zip(policies, means, low, high, strict=True)
    ]


def rank_shares(boots: np.ndarray, policies: Sequence[str]) -> pd.DataFrame:
    """Policy x rank -> share of the bootstrap draws (rows of ``boots``) in which the policy
    has that rank by lowest score (ties share the better rank)."""
    draws, n = boots.shape
    # rank = 1 + number of policies strictly better in the draw
    ranks = 1 + (boots[:, None, :] < boots[:, :, None]).sum(axis=2)
    shares = np.stack([(ranks == k).mean(axis=0) for k in range(1, n + 1)], axis=1)
    return pd.DataFrame(shares, index=list(policies), columns=range(1, n + 1))


def performance_profile(df: pd.DataFrame, taus: Sequence[float]) -> pd.DataFrame:
    """``rho_p(tau)``: per policy, the share of the instances it ran (over all families) on
    which its mean normalised regret is at most ``tau`` times the best policy's there
    (Dolan & More 2002). A policy without a result on an instance (not compatible with its
    family) does not count it; a failed run enters with an infinite regret (never within
    ``tau``). An instance whose best score is 0 counts for the policies that also score 0."""
    taus = np.asarray(taus, dtype=float)
    if taus.ndim != 1 or not np.all(taus >= 1):
        raise ValueError("taus must be a 1-D sequence of ratios >= 1")
    scores = (
        df.assign(score=normalised_regret(df))
        .groupby(["family", "instance", "policy"])["score"]
        .mean()
        .unstack("policy")
    )
    values = scores.to_numpy()
    ran = ~np.isnan(values)
    best = np.nanmin(values, axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(best > 0, values / best, np.where(values <= best, 1.0, np.inf))
    within = (ratio[:, :, None] <= taus[None, None, :]) & ran[:, :, None]
    profile = within.sum(axis=0) / ran.sum(axis=0)[:, None]
    return pd.DataFrame(profile, index=scores.columns.astype(str), columns=taus)
