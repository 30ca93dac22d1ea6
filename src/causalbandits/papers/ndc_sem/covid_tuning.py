"""Tuning NDC-SEM's ``(gamma, xi)`` for the Covid experiment (App. VII-D5, spec §3.5).

The paper tunes ``gamma`` and ``xi`` jointly by grid search (the 10 x 22 values below,
verbatim) and keeps "the parameters that resulted in the highest estimated cumulative overall
reward", each day's reward estimated with the final ``A_hat`` (as in Fig. 9). It does not
state its reward scale (spec resolution 23 divides by the global max of ``y``), so Table I's
``(0.85, 0.1)`` need not suit ours; :class:`~causalbandits.papers.ndc_sem.covid.
CovidExperiment` repeats the procedure on our scale:

* on tuning seeds under their own root seed, disjoint from the evaluation seeds; each draws
  its own shift ``k``, validation days and KDE sample exactly like an evaluation seed;
* criterion: the mean over tuning seeds of the estimated cumulative overall reward of days
  ``1..T``. The paper names no window, and Fig. 9 cumulates from day 1; the claim's window
  (from the change point on) is thus not optimised directly;
* ties (equal means, e.g. pairs that make the same decisions) go to the first pair in grid
  order (``gamma``, then ``xi``, ascending).

Cost: with ``graph_input="b"`` the graph learner ignores the decisions, so a seed's
``A_hat`` path is the same for every pair. :func:`play_exploration_grid` runs ``P`` pairs as
``P`` replicates of one :class:`~causalbandits.policies.ndc_sem_validated.ValidatedNDCSEM`
that share one reward sample (the environment reset with ``P`` equal seeds), one policy seed
(the same ``H`` and tie-breaks) and one graph learner (``shared_graph``): eq. 9 is fitted
once per day, not ``P`` times, and replicate ``p`` makes exactly the decisions of a separate
run with pair ``p``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from causalbandits.estimators.validated_lasso import check_positive_grid
from causalbandits.policies.ndc_sem_validated import ValidatedNDCSEM

#: App. VII-D5: the discount factors searched (verbatim).
PAPER_GAMMA_GRID: tuple[float, ...] = (0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.99)
#: App. VII-D5: the exploration constants searched (verbatim: no 3e-2, no 3e-1).
PAPER_XI_GRID: tuple[float, ...] = (
    1e-8,
    3e-8,
    7e-8,
    1e-7,
    3e-7,
    7e-7,
    1e-6,
    3e-6,
    7e-6,
    1e-5,
    3e-5,
    7e-5,
    1e-4,
    3e-4,
    7e-4,
    1e-3,
    3e-3,
    7e-3,
    1e-2,
    7e-2,
    1e-1,
    7e-1,
)
#: Label of NDC-SEM with the tuned pair in the results table.
TUNED = "NDC-SEM (tuned)"


def check_exploration_grid(
    values: Sequence[float] | np.ndarray, name: str, upper: float | None
) -> tuple[float, ...]:
    """A grid of ``gamma`` (``upper = 1``: values in ``(0, 1]``) or ``xi`` (``upper = None``:
    values ``> 0``), sorted (:func:`~causalbandits.estimators.validated_lasso.
    check_positive_grid`)."""
    return tuple(float(v) for v in check_positive_grid(values, name, upper))


def exploration_pairs(
    gamma_grid: Sequence[float], xi_grid: Sequence[float]
) -> tuple[np.ndarray, np.ndarray]:
    """All ``(gamma, xi)`` of the joint grid, ``gamma``-major: two arrays ``(P,)``."""
    gammas = check_exploration_grid(gamma_grid, "gamma", 1.0)
    xis = check_exploration_grid(xi_grid, "xi", None)
    mesh = np.meshgrid(gammas, xis, indexing="ij")
    return mesh[0].reshape(-1), mesh[1].reshape(-1)


def copies(seed: np.random.SeedSequence, count: int) -> list[np.random.SeedSequence]:
    """``count`` equal but separate seed sequences (spawning from one shared object would
    advance it, so replicates would differ)."""
    return [
        np.random.SeedSequence(seed.entropy, spawn_key=seed.spawn_key, pool_size=seed.pool_size)
        for _ in range(count)
    ]


def play(env: Any, policy: Any, observe: Callable[[Any], None] | None = None) -> np.ndarray:
    """Play every day of ``env`` (reset) with ``policy`` (reset); return the super arms
    ``(T, R, N)``. ``observe(policy)`` runs after each day's update."""
    actions = []
    for _ in range(env.horizon):
        x = policy.select()
        policy.update(x, env.step(x))
        actions.append(x)
        if observe is not None:
            observe(policy)
    return np.stack(actions)


def play_exploration_grid(
    env: Any,
    reward_seed: np.random.SeedSequence,
    policy_seed: np.random.SeedSequence,
    gammas: Sequence[float] | np.ndarray,
    xis: Sequence[float] | np.ndarray,
    observe: Callable[[Any], None] | None = None,
    **options: Any,
) -> tuple[np.ndarray, np.ndarray]:
    """NDC-SEM with pair ``(gammas[p], xis[p])`` on replicate ``p``; one reward sample, one
    policy seed and one graph path for all (see the module docstring).

    ``env`` is the delayed Covid bandit (reset here); ``options`` go to
    :class:`~causalbandits.policies.ndc_sem_validated.ValidatedNDCSEM` (e.g. ``lam_grid``).
    Returns the super arms ``(T, P, N)`` and the final ``A_hat`` ``(N, N)``.
    """
    gammas, xis = np.asarray(gammas, dtype=float), np.asarray(xis, dtype=float)
    if gammas.ndim != 1 or gammas.shape != xis.shape:
        raise ValueError(f"gammas and xis must be (P,) arrays, got {gammas.shape}, {xis.shape}")
    env.reset(copies(reward_seed, gammas.size))
    policy = ValidatedNDCSEM(
        env.problem, gamma=gammas, xi=xis, shared_graph=True, graph_input="b", **options
    )
    policy.reset(copies(policy_seed, gammas.size))
    actions = play(env, policy, observe)
    return actions, policy.lasso.fit()[0]


def tuning_summary(rows: pd.DataFrame, unit: str) -> pd.DataFrame:
    """Per ``(gamma, xi)`` of unit ``unit``'s ``record == "tuning"`` rows, in grid order: mean
    and standard error over tuning seeds of the cumulative reward of days ``1..T``
    (``reward``, the criterion) and from the change point on (``reward_from_change``), the
    rank by the criterion (1 = chosen) and the gap to the chosen pair, paired by seed
    (``gap``, ``gap_se``)."""
    mine = rows[(rows["record"] == "tuning") & (rows["unit"] == unit)]
    if mine.empty:
        raise ValueError(f"no tuning rows for unit {unit!r}")
    by_seed = mine.pivot_table(index=["gamma", "xi"], columns="seed", values="reward")
    after = mine.pivot_table(index=["gamma", "xi"], columns="seed", values="reward_from_change")
    seeds = by_seed.shape[1]
    out = pd.DataFrame(
        {
            "reward": by_seed.mean(axis=1),
            "reward_se": by_seed.std(axis=1, ddof=1) / np.sqrt(seeds),
            "reward_from_change": after.mean(axis=1),
            "reward_from_change_se": after.std(axis=1, ddof=1) / np.sqrt(seeds),
            "seeds": by_seed.count(axis=1),
        }
    ).reset_index()
    order = np.argsort(-out["reward"].to_numpy(), kind="stable")  # ties: grid order
    rank = np.empty(len(out), dtype=int)
    rank[order] = np.arange(1, len(out) + 1)
    out["rank"] = rank
    gap = by_seed.to_numpy() - by_seed.to_numpy()[order[0]]
    out["gap"] = gap.mean(axis=1)
    out["gap_se"] = gap.std(axis=1, ddof=1) / np.sqrt(seeds)
    return out


def choose_exploration(rows: pd.DataFrame, unit: str) -> tuple[float, float]:
    """The ``(gamma, xi)`` with the highest mean estimated cumulative overall reward over the
    tuning seeds (App. VII-D5); ties go to the first pair in grid order."""
    summary = tuning_summary(rows, unit)
    best = summary.loc[summary["rank"] == 1].iloc[0]
    return float(best["gamma"]), float(best["xi"])
