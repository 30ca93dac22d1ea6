"""The CSL-UCB paper's bandits: random soft-intervention systems, optionally with changes."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from causalbandits.envs.linear_bandit import LinearSEMBandit
from causalbandits.envs.linear_instances import LinearSEMInstances
from causalbandits.envs.piecewise import PiecewiseStationaryBandit
from causalbandits.envs.random_systems import random_csl_bandit
from causalbandits.random import SubStream, derive


def csl_system(
    instance_seed: np.random.SeedSequence,
    horizon: int = 1500,
    n_nodes: int = 10,
    preset: str = "authors",
    change_points: Sequence[int] = (),
    n_columns: int = 2,
    optimal_tolerance: float = 1e-2,
) -> LinearSEMBandit | PiecewiseStationaryBandit:
    """One system of the paper's random family (N = 10, 2^N arms, N(1, 1); decisions:
    csl-ucb A1), drawn from one instance seed (stream ``INSTANCE`` of a replicate).

    With ``change_points`` the mechanisms used by the optimal arm are regenerated at those
    rounds (decisions: csl-ucb A10; E4 uses 1000 and 2000), drawn from the instance seed's
    ``SubStream.CHANGES``. The system depends on the seed only, so every algorithm faces
    the same systems.
    """
    env = random_csl_bandit(
        n_nodes,
        horizon,
        np.random.default_rng(instance_seed),
        preset,
        optimal_tolerance=optimal_tolerance,
    )
    if not len(change_points):
        return env
    (change_seed,) = derive([instance_seed], SubStream.CHANGES)
    return PiecewiseStationaryBandit(
        env,
        change_points,
        n_columns,
        np.random.default_rng(change_seed),
        optimal_tolerance=optimal_tolerance,
    )


def make_environment(
    instance_seeds: Sequence[np.random.SeedSequence], **options: object
) -> LinearSEMInstances:
    """One system per instance seed (:func:`csl_system`, whose keywords ``options`` takes),
    stacked so that the systems are the replicates of one environment."""
    seeds = list(instance_seeds)
    if not seeds:
        raise ValueError("need at least one instance seed")
    return LinearSEMInstances([csl_system(seed, **options) for seed in seeds])
