"""Batched weighted ridge regression with rank-one updates (Robust-LCB eq. 7-12).

For every slot ``s`` (e.g. a (replicate, node, mode) triple) it keeps

* ``V = I + sum_s w x x^T`` and its inverse (eq. 9-10),
* ``Vt = I + sum_s w^2 x x^T`` and its inverse (eq. 11-12),
* ``g = sum_s w x y`` and the estimate ``theta = V^{-1} g`` (eq. 7-8),
* ``ellipsoid_inv = V^{-1} Vt V^{-1}``, the inverse of the ellipsoid matrix
  ``M = V Vt^{-1} V`` of eq. 14-16.

Updates are Sherman-Morrison rank-one corrections applied only to the slots that received
a sample, so one round costs ``O(d^2)`` per updated slot. With unit weights ``Vt = V`` and
the estimator is ordinary ridge regression (LinSEM-UCB); ``unit_weights=True`` then skips
the second Gram matrix.
"""

from __future__ import annotations

import numpy as np


class WeightedRidge:
    """Weighted ridge regressions in ``dim`` dimensions over a batch of slots ``shape``."""

    def __init__(
        self, shape: tuple[int, ...], dim: int, regularisation: float = 1.0, unit_weights: bool = False
    ) -> None:
        if regularisation <= 0:
            raise ValueError(f"regularisation must be positive, got {regularisation}")
        self.shape = tuple(shape)
        self.dim = int(dim)
        self.unit_weights = unit_weights
        eye = np.eye(self.dim) / regularisation
        self.gram_inv = np.broadcast_to(eye, (*self.shape, dim, dim)).copy()
        self.gram = np.broadcast_to(np.eye(dim) * regularisation, (*self.shape, dim, dim)).copy()
        self.cross = np.zeros((*self.shape, dim))
        self.theta = np.zeros((*self.shape, dim))
        self.counts = np.zeros(self.shape, dtype=np.int64)
        if unit_weights:
            self.sq_gram = self.gram
            self.sq_gram_inv = self.gram_inv
            self.ellipsoid_inv = self.gram_inv
        else:
            self.sq_gram = self.gram.copy()
            self.sq_gram_inv = self.gram_inv.copy()
            self.ellipsoid_inv = self.gram_inv.copy()

    def bonus(self, index: tuple[np.ndarray, ...], x: np.ndarray) -> np.ndarray:
        """The weighted exploration bonus ``||x||_{Vt^{-1}}`` of the indexed slots."""
        return np.sqrt(np.einsum("...i,...ij,...j->...", x, self.sq_gram_inv[index], x))

    def update(
        self,
        index: tuple[np.ndarray, ...],
        x: np.ndarray,
        y: np.ndarray,
        weights: np.ndarray | None = None,
    ) -> None:
        """Add one sample ``(x, y)`` with weight ``w`` to each indexed slot.

        ``index`` is a tuple of integer arrays of a common shape ``S`` addressing distinct
        slots; ``x`` has shape ``(*S, dim)``, ``y`` and ``weights`` shape ``S``.
        """
        w = np.ones(y.shape) if weights is None else weights
        gram_inv = self.gram_inv[index]
        vx = np.einsum("...ij,...j->...i", gram_inv, x)
        quad = np.einsum("...i,...i->...", x, vx)
        gram_inv -= (w / (1.0 + w * quad))[..., None, None] * vx[..., :, None] * vx[..., None, :]
        self.gram_inv[index] = gram_inv
        outer = x[..., :, None] * x[..., None, :]
        self.gram[index] += w[..., None, None] * outer
        cross = self.cross[index] + (w * y)[..., None] * x
        self.cross[index] = cross
        self.theta[index] = np.einsum("...ij,...j->...i", gram_inv, cross)
        self.counts[index] += 1
        if self.unit_weights:
            return
        w2 = w * w
        sq_inv = self.sq_gram_inv[index]
        tx = np.einsum("...ij,...j->...i", sq_inv, x)
        tquad = np.einsum("...i,...i->...", x, tx)
        sq_inv -= (w2 / (1.0 + w2 * tquad))[..., None, None] * tx[..., :, None] * tx[..., None, :]
        self.sq_gram_inv[index] = sq_inv
        sq_gram = self.sq_gram[index] + w2[..., None, None] * outer
        self.sq_gram[index] = sq_gram
        self.ellipsoid_inv[index] = gram_inv @ sq_gram @ gram_inv
