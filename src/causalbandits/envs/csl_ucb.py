"""The CSL-UCB paper's bandits: random soft-intervention systems, optionally with changes."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from causalbandits.envs.linear_bandit import LinearSEMBandit
from causalbandits.envs.piecewise import PiecewiseStationaryBandit
from causalbandits.envs.random_systems import random_csl_bandit

#: Root seed of the systems (the authors' code seeds numpy with 2025).
SYSTEMS_SEED = 2025


def make_environment(
    horizon: int = 1500,
    system: int = 0,
    n_nodes: int = 10,
    preset: str = "authors",
    change_points: Sequence[int] = (),
    n_columns: int = 2,
    optimal_tolerance: float = 1e-2,
) -> LinearSEMBandit | PiecewiseStationaryBandit:
    """System number ``system`` of the paper's random family (N = 10, 2^N arms, N(1, 1)).

    The system and its changes depend only on ``(SYSTEMS_SEED, system)``, so every
    algorithm faces the same systems. With ``change_points`` the mechanisms used by the
    optimal arm are regenerated at those rounds (decisions: csl-ucb A10; E4 uses 1000 and 2000).
    """
    if system < 0:
        raise ValueError(f"system must be a non-negative index, got {system}")
    system_rng, change_rng = np.random.default_rng([SYSTEMS_SEED, system]).spawn(2)
    env = random_csl_bandit(
        n_nodes, horizon, system_rng, preset, optimal_tolerance=optimal_tolerance
    )
    if not len(change_points):
        return env
    return PiecewiseStationaryBandit(
        env, change_points, n_columns, change_rng, optimal_tolerance=optimal_tolerance
    )
