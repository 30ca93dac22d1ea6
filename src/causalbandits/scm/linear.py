"""Linear SEM with soft interventions: ``X = B_a^T X + eps`` (Robust-LCB eq. 1-3).

Weights follow the library convention ``B[i, j]`` = weight of the edge ``i -> j``, so column
``j`` of ``B`` holds the weights into node ``j`` (the papers' ``[B]_j``). A soft intervention
on node ``j`` replaces column ``j`` of ``B`` by column ``j`` of ``B*`` (eq. 2).
"""

from __future__ import annotations

import numpy as np

from causalbandits.graphs.dag import CausalDAG
from causalbandits.scm.noise import NoiseModel


def _check_weights(dag: CausalDAG, weights: np.ndarray, label: str) -> np.ndarray:
    matrix = np.asarray(weights, dtype=float)
    n = dag.n_nodes
    if matrix.shape != (n, n):
        raise ValueError(f"{label} must have shape ({n}, {n}), got {matrix.shape}")
    if not np.all(np.isfinite(matrix)):
        raise ValueError(f"{label} contains non-finite values")
    off_graph = (matrix != 0) & ~dag.adjacency
    if off_graph.any():
        i, j = np.argwhere(off_graph)[0]
        raise ValueError(f"{label} has weight {matrix[i, j]} on the non-edge {i} -> {j}")
    return matrix


def transfer_matrix(weights: np.ndarray) -> np.ndarray:
    """``(I - W^T)^{-1}`` for weights ``W`` ``(..., N, N)`` (``W[i, j]``: edge ``i -> j``): the
    solution ``X = (I - W^T)^{-1} eps`` of ``X = W^T X + eps`` (Robust-LCB eq. 1; NDC-SEM eq. 4
    with ``A = W^T``)."""
    weights = np.asarray(weights, dtype=float)
    return np.linalg.inv(np.eye(weights.shape[-1]) - np.swapaxes(weights, -1, -2))


class LinearSEM:
    """A linear SEM on a DAG with observational weights ``B``, interventional ``B*``, noise."""

    def __init__(
        self,
        dag: CausalDAG,
        weights: np.ndarray,
        intervention_weights: np.ndarray,
        noise: NoiseModel,
    ) -> None:
        self.dag = dag
        self.weights = _check_weights(dag, weights, "weights")
        self.intervention_weights = _check_weights(
            dag, intervention_weights, "intervention_weights"
        )
        if noise.n_nodes != dag.n_nodes:
            raise ValueError(f"noise has {noise.n_nodes} nodes, the graph {dag.n_nodes}")
        self.noise = noise

    @property
    def n_nodes(self) -> int:
        return self.dag.n_nodes

    def weights_under(
        self,
        masks: np.ndarray,
        weights: np.ndarray | None = None,
        intervention_weights: np.ndarray | None = None,
    ) -> np.ndarray:
        """``B_a`` (eq. 2) for intervention masks of shape ``(..., N)``: shape ``(..., N, N)``.

        ``weights`` / ``intervention_weights`` override the nominal ones (deviated models).
        """
        base = self.weights if weights is None else weights
        star = self.intervention_weights if intervention_weights is None else intervention_weights
        masks = np.asarray(masks, dtype=bool)
        return np.where(masks[..., None, :], star, base)

    def transfer_matrices(self, masks: np.ndarray, **overrides: np.ndarray) -> np.ndarray:
        """``(I - B_a^T)^{-1}`` for every mask, so that ``X = (I - B_a^T)^{-1} eps``."""
        return transfer_matrix(self.weights_under(masks, **overrides))

    def mean_values(self, masks: np.ndarray, **overrides: np.ndarray) -> np.ndarray:
        """Exact ``E_a[X] = (I - B_a^T)^{-1} nu`` for every mask (eq. 3), shape ``(..., N)``."""
        return self.transfer_matrices(masks, **overrides) @ self.noise.mean

    def sample(self, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One draw of ``X`` for each mask in ``masks`` (shape ``(..., N)``)."""
        masks = np.asarray(masks, dtype=bool)
        eps = self.noise.sample(rng, masks.shape[:-1])
        return np.einsum("...ij,...j->...i", self.transfer_matrices(masks), eps)

    def x_norm_bound(self, masks: np.ndarray) -> float:
        """``m``: an upper bound on ``||X||`` under every mask (decisions: robust-lcb A9).

        Exact when every transfer matrix is non-negative and the noise is non-negative
        (the maximum is then at the upper noise bound); otherwise the operator-norm bound.
        For Gaussian noise the box is the 4-sigma box, so the bound holds with high probability.
        """
        low, high = self.noise.box
        transfer = self.transfer_matrices(masks)
        if np.all(transfer >= 0) and np.all(low >= 0):
            return float(np.linalg.norm(transfer @ high, axis=-1).max())
        largest = np.maximum(np.abs(low), np.abs(high))
        return float(np.linalg.norm(transfer, ord=2, axis=(-2, -1)).max() * np.linalg.norm(largest))


def uniform_column_weights(dag: CausalDAG, column_norm: float) -> np.ndarray:
    """Weights ``column_norm / sqrt(|pa(j)|)`` on every edge into ``j`` (``||[B]_j|| = norm``)."""
    in_degree = dag.adjacency.sum(axis=0)
    scale = np.divide(
        column_norm, np.sqrt(in_degree), where=in_degree > 0, out=np.zeros(len(in_degree))
    )
    return dag.adjacency * scale[None, :]
