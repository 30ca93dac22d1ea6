"""Linear SEM with soft interventions: ``X = B_a^T X + eps`` (Robust-LCB eq. 1-3).

Weights follow the library convention ``B[i, j]`` = weight of the edge ``i -> j``, so column
``j`` of ``B`` holds the weights into node ``j`` (the papers' ``[B]_j``). A soft intervention
on node ``j`` replaces column ``j`` of ``B`` by column ``j`` of ``B*`` (eq. 2).
"""

from __future__ import annotations

import numpy as np

from causalbandits.graphs.dag import CausalDAG
from causalbandits.scm.noise import GaussianNoise, NoiseModel


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
    def nonnegative_weights(self) -> bool:
        """Whether every weight of both modes (``B`` and ``B*``) is non-negative."""
        return bool((self.weights >= 0).all() and (self.intervention_weights >= 0).all())

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

    def transfer_matrices(
        self, masks: np.ndarray, batch: int = 64, **overrides: np.ndarray
    ) -> np.ndarray:
        """``(I - B_a^T)^{-1}`` for every mask, so that ``X = (I - B_a^T)^{-1} eps``; formed
        ``batch`` masks at a time, so the temporaries stay small beside the result."""
        masks = np.asarray(masks, dtype=bool)
        flat = masks.reshape(-1, self.n_nodes)
        out = np.empty((flat.shape[0], self.n_nodes, self.n_nodes))
        for start in range(0, flat.shape[0], batch):
            part = flat[start : start + batch]
            out[start : start + batch] = transfer_matrix(self.weights_under(part, **overrides))
        return out.reshape(*masks.shape[:-1], self.n_nodes, self.n_nodes)

    def mean_values(self, masks: np.ndarray, **overrides: np.ndarray) -> np.ndarray:
        """Exact ``E_a[X] = (I - B_a^T)^{-1} nu`` for every mask (eq. 3), shape ``(..., N)``."""
        return self.transfer_matrices(masks, **overrides) @ self.noise.mean

    def sample(self, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One draw of ``X`` for each mask in ``masks`` (shape ``(..., N)``)."""
        masks = np.asarray(masks, dtype=bool)
        eps = self.noise.sample(rng, masks.shape[:-1])
        return np.einsum("...ij,...j->...i", self.transfer_matrices(masks), eps)

    def x_norm_bound(
        self, masks: np.ndarray, failure_probability: float = 1e-6, batch: int = 64
    ) -> float:
        """``m``: a bound on ``||X||`` under every mask (decisions: robust-lcb A9).

        Gaussian noise: ``||X|| <= ||T_a nu|| + ||T_a S||_F + ||T_a S||_2 sqrt(2 ln(1/p))``
        with ``S = diag(std)``, which holds for one draw with probability ``1 - p``
        (``p = failure_probability``; Gaussian concentration of the ``||T_a S||_2``-Lipschitz
        map ``z -> ||T_a S z||`` around its mean, at most ``||T_a S||_F``). Other noise: the
        interval bound on its box, ``|| |T_a c| + |T_a| h ||`` (centre ``c``, half-widths
        ``h``), exact when ``T_a`` and the noise are non-negative and sure for bounded noise
        (for mixtures the box is a 4-sigma box). Transfer matrices are formed ``batch``
        masks at a time.
        """
        if not 0 < failure_probability < 1:
            raise ValueError(f"failure_probability must lie in (0, 1), got {failure_probability}")
        masks = np.asarray(masks, dtype=bool).reshape(-1, self.n_nodes)
        gaussian = isinstance(self.noise, GaussianNoise)
        if gaussian:
            centre, spread = self.noise.mean, self.noise.scale
        else:
            low, high = self.noise.box
            centre, spread = (low + high) / 2, (high - low) / 2
        largest = 0.0
        for start in range(0, masks.shape[0], batch):
            transfer = self.transfer_matrices(masks[start : start + batch])
            if gaussian:
                scaled = transfer * spread
                frobenius = np.linalg.norm(scaled, axis=(-2, -1))
                operator = np.linalg.norm(scaled, ord=2, axis=(-2, -1))
                tail = operator * np.sqrt(2 * np.log(1 / failure_probability))
                bound = np.linalg.norm(transfer @ centre, axis=-1) + frobenius + tail
            else:
                coordinates = np.abs(transfer @ centre) + np.abs(transfer) @ spread
                bound = np.linalg.norm(coordinates, axis=-1)
            largest = max(largest, float(bound.max()))
        return largest


def uniform_column_weights(dag: CausalDAG, column_norm: float) -> np.ndarray:
    """Weights ``column_norm / sqrt(|pa(j)|)`` on every edge into ``j`` (``||[B]_j|| = norm``)."""
    in_degree = dag.adjacency.sum(axis=0)
    scale = np.divide(
        column_norm, np.sqrt(in_degree), where=in_degree > 0, out=np.zeros(len(in_degree))
    )
    return dag.adjacency * scale[None, :]
