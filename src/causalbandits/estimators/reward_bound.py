"""Predicted rewards and the reward uncertainty of Theorem 1 for every arm (CSL-UCB eq. 36).

Ids (A3, A4, A5, A8, A16) are entries of docs/decisions/csl-ucb.md.

For arm ``a`` (a mask over the nodes), ``B_hat_a`` takes column ``i`` from ``B_hat*`` where
``a_i = 1`` and from ``B_hat`` otherwise (eq. 2). Then

    mu_hat_a = (I - B_hat_a)^{-T} nu,      c_hat_a = [(I - B_hat_a)^{-1}]_{:, N},

the predicted reward is ``[mu_hat_a]_N = c_hat_a^T nu``, and the uncertainty is

    paper (eq. 36):  U = 2 (N^2 + 2N)^{1/4} ||c_a|| ||mu_a|| sqrt(ln(2N/delta) sum_i lmax_i)
    per-node (A5):   U = ||c_a|| ||mu_a|| sqrt(4 ln(2N/delta) sum_i sqrt(p_i (p_i + 2)) lmax_i)

with ``lmax_i = lambda_max(Phi(i, a_i))`` and ``p_i`` the number of estimated parents of
``(i, a_i)`` (the chi-square of Lemma 1 has ``p_i`` degrees of freedom, A16); with
``p_i = N`` the two forms coincide. The unknown ``mu_a`` is replaced by ``mu_hat_a`` (A4).

Mixed-mode cycles (A8): ``B_hat`` and ``B_hat*`` are DAGs, but a mixture can be cyclic.
A cyclic mixture whose spectral radius is below one keeps its meaning (``(I - B)^{-1}`` is
the convergent sum over directed paths), so it is solved like the authors' code does; a
mixture with spectral radius ``>= 1`` (which includes every singular ``I - B_hat_a``) is
invalid: its reward is ``-inf`` and its bound 0, so ``reward + alpha U`` is ``-inf`` for
every ``alpha >= 0`` (a bound of ``+inf`` would make ``-inf + alpha U`` undefined).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from causalbandits.estimators.csl import is_acyclic
from causalbandits.estimators.subgraph import SubgraphData

BoundForm = Literal["paper", "per-node"]


@dataclass(frozen=True)
class RewardBounds:
    """Predictions for ``A`` arms.

    Attributes
    ----------
    rewards: ``(A,)`` predicted rewards ``[mu_hat_a]_N`` (``-inf`` for invalid arms).
    bounds: ``(A,)`` uncertainties ``U(a)`` (0 for invalid arms).
    means: ``(A, N)`` predicted means ``mu_hat_a`` (NaN for invalid arms).
    valid: ``(A,)`` whether the spectral radius of ``B_hat_a`` is below one.
    """

    rewards: np.ndarray
    bounds: np.ndarray
    means: np.ndarray
    valid: np.ndarray


def weight_error_spectra(
    data: SubgraphData,
    adjacency: np.ndarray,
    intervention_adjacency: np.ndarray,
    noise_variance: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``lambda_max(Phi(i, m))`` and ``p_{i,m} = |parents|`` of every pair, each ``(N, 2)``.

    ``adjacency[j, i]`` (mode 0) and ``intervention_adjacency[j, i]`` (mode 1) give the
    estimated parents. ``noise_variance`` (N,) is the known ``sigma^2``; ``None`` estimates
    it per pair from the residuals (A3). Parentless pairs get ``lambda_max = 0``.
    """
    n = data.n_nodes
    graphs = [np.asarray(adjacency, dtype=bool), np.asarray(intervention_adjacency, dtype=bool)]
    for graph in graphs:
        if graph.shape != (n, n):
            raise ValueError(f"adjacency matrices must have shape ({n}, {n}), got {graph.shape}")
    if noise_variance is not None:
        noise_variance = np.asarray(noise_variance, dtype=float)
        if noise_variance.shape != (n,):
            raise ValueError(f"noise_variance must have shape ({n},), got {noise_variance.shape}")
    spectra = np.zeros((n, 2))
    n_parents = np.zeros((n, 2), dtype=np.int64)
    for mode, graph in enumerate(graphs):
        for node in range(n):
            parents = np.flatnonzero(graph[:, node])
            n_parents[node, mode] = parents.size
            if parents.size:
                variance = None if noise_variance is None else float(noise_variance[node])
                phi = data.weight_covariance(node, mode, parents, variance)
                spectra[node, mode] = np.linalg.eigvalsh(phi)[-1]
    return spectra, n_parents


def _check_inputs(
    weights: np.ndarray,
    intervention_weights: np.ndarray,
    noise_mean: np.ndarray,
    masks: np.ndarray,
    spectra: np.ndarray,
    n_parents: np.ndarray,
) -> None:
    if noise_mean.ndim != 1 or not np.all(np.isfinite(noise_mean)):
        raise ValueError(f"noise_mean must be a finite vector (N,), got shape {noise_mean.shape}")
    n = noise_mean.size
    expected = {
        "weights": (weights, (n, n)),
        "intervention_weights": (intervention_weights, (n, n)),
        "spectra": (spectra, (n, 2)),
        "n_parents": (n_parents, (n, 2)),
    }
    for label, (array, shape) in expected.items():
        if array.shape != shape:
            raise ValueError(f"{label} must have shape {shape} for N = {n}, got {array.shape}")
        if not np.all(np.isfinite(array)):
            raise ValueError(f"{label} contains non-finite values")
    if masks.ndim != 2 or masks.shape[1] != n:
        raise ValueError(f"masks must have shape (A, {n}), got {masks.shape}")
    if np.any(spectra < 0) or np.any(n_parents < 0):
        raise ValueError("spectra and n_parents must be non-negative")


def reward_bounds(
    weights: np.ndarray,
    intervention_weights: np.ndarray,
    noise_mean: np.ndarray,
    masks: np.ndarray,
    spectra: np.ndarray,
    n_parents: np.ndarray,
    delta: float = 0.05,
    form: BoundForm = "per-node",
    reward_node: int | None = None,
) -> RewardBounds:
    """Predicted reward and Theorem 1 uncertainty of every arm, batched over arms.

    Parameters
    ----------
    weights, intervention_weights: ``B_hat`` and ``B_hat*``, ``(N, N)``.
    noise_mean: ``nu``, ``(N,)``.
    masks: arms ``(A, N)``, ``masks[a, i]`` = node ``i`` intervened under arm ``a``.
    spectra: ``lambda_max(Phi(i, m))``, ``(N, 2)`` (see :func:`weight_error_spectra`).
    n_parents: ``p_{i,m}``, ``(N, 2)``; used by the per-node form only.
    delta: the confidence level of the bound, in (0, 1).
    form: ``"per-node"`` (default, the authors' code) or ``"paper"`` (eq. 36).
    reward_node: the reward node (default ``N - 1``).
    """
    weights = np.asarray(weights, dtype=float)
    intervention_weights = np.asarray(intervention_weights, dtype=float)
    noise_mean = np.asarray(noise_mean, dtype=float)
    masks = np.asarray(masks)
    spectra = np.asarray(spectra, dtype=float)
    n_parents = np.asarray(n_parents)
    _check_inputs(weights, intervention_weights, noise_mean, masks, spectra, n_parents)
    if not 0 < delta < 1:
        raise ValueError(f"delta must lie in (0, 1), got {delta}")
    if form not in ("paper", "per-node"):
        raise ValueError(f"form must be 'paper' or 'per-node', got {form!r}")
    n = noise_mean.size
    reward_node = n - 1 if reward_node is None else reward_node
    if not 0 <= reward_node < n:
        raise ValueError(f"reward_node {reward_node} is outside 0..{n - 1}")
    masks = masks.astype(bool)

    mixed = np.where(masks[:, None, :], intervention_weights, weights)  # (A, N, N)
    valid = is_acyclic(mixed).copy()
    if not valid.all():
        cyclic = np.flatnonzero(~valid)
        radius = np.abs(np.linalg.eigvals(mixed[cyclic])).max(axis=-1)
        valid[cyclic] = radius < 1.0
    system = np.eye(n) - mixed[valid]  # (V, N, N)
    means = np.full((masks.shape[0], n), np.nan)
    means[valid] = np.linalg.solve(np.swapaxes(system, -1, -2), noise_mean[:, None])[..., 0]
    unit = np.zeros((n, 1))
    unit[reward_node] = 1.0
    effects = np.linalg.solve(system, unit)[..., 0]  # c_hat_a, (V, N)

    if form == "paper":
        per_pair = spectra
        scale = 2.0 * (n * n + 2.0 * n) ** 0.25 * np.sqrt(np.log(2 * n / delta))
    else:
        per_pair = np.sqrt(n_parents * (n_parents + 2.0)) * spectra
        scale = np.sqrt(4.0 * np.log(2 * n / delta))
    # sum_i kappa_{i, a_i}, linear in the mask.
    total = per_pair[:, 0].sum() + masks[valid] @ (per_pair[:, 1] - per_pair[:, 0])
    bounds = np.zeros(masks.shape[0])
    bounds[valid] = (
        scale
        * np.linalg.norm(effects, axis=-1)
        * np.linalg.norm(means[valid], axis=-1)
        * np.sqrt(np.maximum(total, 0.0))
    )
    rewards = np.where(valid, means[:, reward_node], -np.inf)
    return RewardBounds(rewards=rewards, bounds=bounds, means=means, valid=valid)
