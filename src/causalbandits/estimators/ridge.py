"""Batched weighted ridge regression with rank-one updates (Robust-LCB eq. 7-12).

For every slot ``s`` (e.g. a (replicate, node, mode) triple) it keeps

* the inverse of ``V = I + sum_s w x x^T`` (eq. 9-10),
* ``Vt = I + sum_s w^2 x x^T`` and its inverse (eq. 11-12),
* ``g = sum_s w x y`` and the estimate ``theta = V^{-1} g`` (eq. 7-8),
* ``ellipsoid_inv = V^{-1} Vt V^{-1}``, the inverse of the ellipsoid matrix
  ``M = V Vt^{-1} V`` of eq. 14-16,
* ``log det V`` (matrix determinant lemma: each sample adds ``log(1 + w x^T V^{-1} x)``),
  which the self-normalised radius of Abbasi-Yadkori et al. (2011, Thm 2) needs.

Updates are Sherman-Morrison rank-one corrections applied only to the slots that received
a sample, so one round costs ``O(d^2)`` per updated slot. Slots are stored flat and
addressed by integer ids; the arrays are also exposed in the batch ``shape``. With unit
weights ``Vt = V`` and the estimator is ordinary ridge regression (LinSEM-UCB);
``unit_weights=True`` then skips the second Gram matrix.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

WeightRule = Callable[[np.ndarray], np.ndarray]


class WeightedRidge:
    """Weighted ridge regressions in ``dim`` dimensions over a batch of slots ``shape``."""

    def __init__(
        self,
        shape: tuple[int, ...],
        dim: int,
        regularisation: float = 1.0,
        unit_weights: bool = False,
    ) -> None:
        if regularisation <= 0:
            raise ValueError(f"regularisation must be positive, got {regularisation}")
        self.shape = tuple(shape)
        self.dim = int(dim)
        self.unit_weights = unit_weights
        slots = int(np.prod(self.shape))
        eye = np.eye(self.dim)
        self._gram_inv = np.tile(eye / regularisation, (slots, 1, 1))
        self._cross = np.zeros((slots, dim))
        self._theta = np.zeros((slots, dim))
        self._counts = np.zeros(slots, dtype=np.int64)
        self._log_det = np.full(slots, self.dim * np.log(regularisation))
        if unit_weights:  # Vt = V: M^{-1} = V^{-1}, and Vt itself is never needed
            self._sq_gram_inv = self._ellipsoid_inv = self._gram_inv
        else:
            self._sq_gram = np.tile(eye * regularisation, (slots, 1, 1))
            self._sq_gram_inv = self._gram_inv.copy()
            self._ellipsoid_inv = self._gram_inv.copy()

    def slot_ids(self, index: tuple[np.ndarray, ...]) -> np.ndarray:
        """Flat slot ids of a tuple of index arrays into ``shape``."""
        return np.ravel_multi_index(index, self.shape)

    @property
    def theta(self) -> np.ndarray:
        """Estimates ``V^{-1} g``, shape ``(*shape, dim)``."""
        return self._theta.reshape(*self.shape, self.dim)

    @property
    def gram_inv(self) -> np.ndarray:
        """``V^{-1}``, shape ``(*shape, dim, dim)``."""
        return self._gram_inv.reshape(*self.shape, self.dim, self.dim)

    @property
    def ellipsoid_inv(self) -> np.ndarray:
        """``M^{-1} = V^{-1} Vt V^{-1}``, shape ``(*shape, dim, dim)``."""
        return self._ellipsoid_inv.reshape(*self.shape, self.dim, self.dim)

    @property
    def log_det_gram(self) -> np.ndarray:
        """``log det V``, shape ``shape``."""
        return self._log_det.reshape(self.shape)

    @property
    def counts(self) -> np.ndarray:
        """Number of samples per slot, shape ``shape``."""
        return self._counts.reshape(self.shape)

    def update(
        self,
        slots: np.ndarray,
        x: np.ndarray,
        y: np.ndarray,
        weight_rule: WeightRule | None = None,
    ) -> np.ndarray:
        """Add one sample ``(x, y)`` to each of the distinct flat ``slots``.

        ``x`` has shape ``(len(slots), dim)`` and ``y`` ``(len(slots),)``. ``weight_rule`` maps
        the weighted exploration bonus ``||x||_{Vt^{-1}}`` (``Vt`` before this sample;
        decisions: robust-lcb A1) to the sample weights; ``None`` means unit weights. Returns
        the weights used.
        """
        if self.unit_weights:
            if weight_rule is not None:
                raise ValueError("an estimator with unit_weights takes no weight rule")
            w = np.ones(y.shape)
        else:
            sq_inv = self._sq_gram_inv.take(slots, axis=0)
            tx = np.einsum("sij,sj->si", sq_inv, x)
            tquad = np.einsum("si,si->s", x, tx)
            w = np.ones(y.shape) if weight_rule is None else weight_rule(np.sqrt(tquad))
        gram_inv = self._gram_inv.take(slots, axis=0)
        vx = np.einsum("sij,sj->si", gram_inv, x)
        quad = np.einsum("si,si->s", x, vx)
        gram_inv -= (w / (1.0 + w * quad))[:, None, None] * (vx[:, :, None] * vx[:, None, :])
        self._gram_inv[slots] = gram_inv
        cross = self._cross.take(slots, axis=0) + (w * y)[:, None] * x
        self._cross[slots] = cross
        self._theta[slots] = np.einsum("sij,sj->si", gram_inv, cross)
        self._counts[slots] += 1
        self._log_det[slots] += np.log1p(w * quad)
        if not self.unit_weights:
            w2 = w * w
            sq_inv -= (w2 / (1.0 + w2 * tquad))[:, None, None] * (tx[:, :, None] * tx[:, None, :])
            self._sq_gram_inv[slots] = sq_inv
            outer = x[:, :, None] * x[:, None, :]
            sq_gram = self._sq_gram.take(slots, axis=0) + w2[:, None, None] * outer
            self._sq_gram[slots] = sq_gram
            self._ellipsoid_inv[slots] = gram_inv @ sq_gram @ gram_inv
        return w
