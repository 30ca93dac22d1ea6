"""Exact oracle of NDC-SEM eq. 12: total effects and the top-``s`` base arms of linear scores.

Eq. 12 maximises ``1^T (I - A_hat)^{-1} diag(E) x = sum_i w_i E_i x_i`` over ``||x||_0 <= s``
with ``w = (I - A_hat)^{-T} 1``: it keeps the ``s`` largest *positive* scores ``w_i E_i``
(eq. 12). A score ``<= 0`` adds nothing, so with ``positive_only`` fewer than ``s`` arms
are returned when fewer scores are positive (the cyclic Covid case); ``positive_only=False``
always returns exactly ``s`` arms (an equally optimal choice in the DAG case, where scores are
``>= 0``). Ties at the ``s``-th score are broken by the ``uniforms`` (largest first), or
towards lower arm indices when none are given.
"""

from __future__ import annotations

import numpy as np


def total_effects(adjacency: np.ndarray, least_squares: bool = False) -> np.ndarray:
    """``w = (I - A)^{-T} 1`` for ``A`` ``(..., N, N)``: the total effect of each node on
    ``1^T y`` when ``y = A y + z`` (eqs. 4, 6; ``w*`` of the true graph, ``w_hat`` of eq. 12).

    ``A[i, j]`` is the effect of node ``j`` on node ``i`` (paper convention). Every system is
    solved by least squares (minimum norm) when some ``I - A`` is singular (possible with
    cycles), or always with ``least_squares`` (as the Covid experiment's Fig. 9 rewards have
    been computed; the two differ only by rounding when ``I - A`` is regular).
    """
    adjacency = np.asarray(adjacency, dtype=float)
    n = adjacency.shape[-1]
    system = np.eye(n) - np.swapaxes(adjacency, -1, -2)
    ones = np.ones(adjacency.shape[:-1])
    if not least_squares:
        try:
            return np.linalg.solve(system, ones[..., None])[..., 0]
        except np.linalg.LinAlgError:
            pass
    flat = [np.linalg.lstsq(m, np.ones(n), rcond=None)[0] for m in system.reshape(-1, n, n)]
    return np.reshape(flat, ones.shape)


def top_s_mask(
    scores: np.ndarray,
    super_arm_size: int,
    uniforms: np.ndarray | None = None,
    positive_only: bool = True,
) -> np.ndarray:
    """Boolean mask ``(..., N)`` of the ``super_arm_size`` (``s``) largest ``scores`` per row.

    ``scores`` and the mask have shape ``(..., N)``.
    """
    scores = np.asarray(scores, dtype=float)
    n = scores.shape[-1]
    if not 0 <= super_arm_size <= n:
        raise ValueError(f"super-arm size s must lie in 0..{n}, got {super_arm_size}")
    if np.isnan(scores).any():
        raise ValueError("scores contain NaN")
    if super_arm_size == 0:
        return np.zeros(scores.shape, dtype=bool)
    kth = np.partition(scores, n - super_arm_size, axis=-1)[..., n - super_arm_size, None]
    above = scores > kth
    tied = scores == kth
    need = super_arm_size - above.sum(axis=-1, keepdims=True)
    if uniforms is None:
        priority = np.broadcast_to(-np.arange(n, dtype=float), scores.shape)
    else:
        priority = np.asarray(uniforms, dtype=float)
    order = np.argsort(np.where(tied, -priority, np.inf), axis=-1, kind="stable")
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(n), axis=-1)
    mask = above | (tied & (rank < need))
    if positive_only:
        mask &= scores > 0
    return mask
