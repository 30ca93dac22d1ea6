"""Exact oracle of NDC-SEM eq. 12: the top-``s`` base arms of linear scores.

Eq. 12 maximises ``1^T (I - A_hat)^{-1} diag(E) x = sum_i w_i E_i x_i`` over ``||x||_0 <= s``
with ``w = (I - A_hat)^{-T} 1``: it keeps the ``s`` largest *positive* scores ``w_i E_i``
(spec §3.3). A score ``<= 0`` adds nothing, so with ``positive_only`` fewer than ``s`` arms
are returned when fewer scores are positive (the cyclic Covid case); ``positive_only=False``
always returns exactly ``s`` arms (an equally optimal choice in the DAG case, where scores are
``>= 0``). Ties at the ``s``-th score are broken by the ``uniforms`` (largest first), or
towards lower arm indices when none are given.
"""

from __future__ import annotations

import numpy as np


def top_s_mask(
    scores: np.ndarray,
    budget: int,
    uniforms: np.ndarray | None = None,
    positive_only: bool = True,
) -> np.ndarray:
    """Boolean ``(R, N)`` mask of the ``budget`` largest ``scores`` ``(R, N)`` per row."""
    scores = np.asarray(scores, dtype=float)
    n = scores.shape[-1]
    if not 0 <= budget <= n:
        raise ValueError(f"budget must lie in 0..{n}, got {budget}")
    if np.isnan(scores).any():
        raise ValueError("scores contain NaN")
    if budget == 0:
        return np.zeros(scores.shape, dtype=bool)
    kth = np.partition(scores, n - budget, axis=-1)[..., n - budget, None]
    above = scores > kth
    tied = scores == kth
    need = budget - above.sum(axis=-1, keepdims=True)
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
