"""Random soft-intervention systems of the CSL-UCB experiments (Sec. VI-C).

Ids (A1, A12) are entries of docs/decisions/csl-ucb.md; [code] marks the authors' code.

Nodes are numbered in topological order (``B[i, j] != 0`` only if ``i < j``), so the last
node, the reward node, is a sink. ``B`` and ``B*`` are drawn independently; a draw is
rejected unless every non-root column of ``B`` differs from the same column of ``B*``, so
every intervention except the one on node 0 (whose columns are always empty) changes a
mechanism. The rejection applies to both presets (the paper does not say; without it some
interventions would change nothing).
"""

from __future__ import annotations

import numpy as np

from causalbandits.envs.actions import ActionSet
from causalbandits.envs.linear_bandit import LinearSEMBandit
from causalbandits.graphs.dag import CausalDAG
from causalbandits.random import RNGLike, as_generator
from causalbandits.scm.linear import LinearSEM
from causalbandits.scm.noise import GaussianNoise

#: ``"authors"``: magnitudes U(0.5, 2) with a random sign [code]; ``"paper"``: U(-2, 2).
PRESETS = ("authors", "paper")


def signed_uniform_weights(
    shape: tuple[int, ...],
    rng: RNGLike = None,
    edge_probability: float = 0.5,
    low: float = 0.5,
    high: float = 2.0,
) -> np.ndarray:
    """Entries present w.p. ``edge_probability`` with magnitude U(low, high) and a random sign."""
    generator = as_generator(rng)
    present = generator.random(shape) < edge_probability
    sign = np.where(generator.random(shape) < 0.5, -1.0, 1.0)
    return present * sign * generator.uniform(low, high, shape)


def _upper_weights(
    n_nodes: int, generator: np.random.Generator, preset: str, p: float
) -> np.ndarray:
    if preset == "authors":
        full = signed_uniform_weights((n_nodes, n_nodes), generator, p)
    else:
        full = (generator.random((n_nodes, n_nodes)) < p) * generator.uniform(
            -2.0, 2.0, (n_nodes, n_nodes)
        )
    return np.triu(full, k=1)


def random_soft_intervention_weights(
    n_nodes: int, rng: RNGLike = None, preset: str = "authors", edge_probability: float = 0.5
) -> tuple[np.ndarray, np.ndarray]:
    """Strictly upper-triangular ``(B, B*)`` with differing non-root columns (A1)."""
    if n_nodes < 2:
        raise ValueError(f"a soft-intervention system needs n_nodes >= 2, got {n_nodes}")
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; use one of {PRESETS}")
    if not 0 < edge_probability <= 1:
        raise ValueError(f"edge_probability must lie in (0, 1], got {edge_probability}")
    generator = as_generator(rng)
    while True:
        weights = _upper_weights(n_nodes, generator, preset, edge_probability)
        star = _upper_weights(n_nodes, generator, preset, edge_probability)
        if np.all(np.any(weights[:, 1:] != star[:, 1:], axis=0)):
            return weights, star


def random_soft_intervention_sem(
    n_nodes: int, rng: RNGLike = None, preset: str = "authors", edge_probability: float = 0.5
) -> LinearSEM:
    """A random linear SEM with noise N(1, 1) on the union graph of ``B`` and ``B*`` (A1)."""
    weights, star = random_soft_intervention_weights(n_nodes, rng, preset, edge_probability)
    dag = CausalDAG((weights != 0) | (star != 0))
    return LinearSEM(dag, weights, star, GaussianNoise.iid(n_nodes, 1.0, 1.0))


def random_csl_bandit(
    n_nodes: int,
    horizon: int,
    rng: RNGLike = None,
    preset: str = "authors",
    edge_probability: float = 0.5,
    optimal_tolerance: float = 1e-2,
) -> LinearSEMBandit:
    """The CSL-UCB bandit (eq. 7): all ``2^N`` arms, reward node ``N - 1``; an arm within
    ``optimal_tolerance`` of the best counts as optimal (A12)."""
    sem = random_soft_intervention_sem(n_nodes, rng, preset, edge_probability)
    return LinearSEMBandit(
        sem,
        horizon,
        ActionSet.all_subsets(n_nodes),
        reward_node=n_nodes - 1,
        optimal_tolerance=optimal_tolerance,
    )
