"""Least squares with box constraints on the coefficients and a free intercept, for a batch
of problems (exact cyclic coordinate descent; used by the train-delay fit's bounded edge
amplitudes, :mod:`causalbandits.envs.train_delay_fit`)."""

from __future__ import annotations

import numpy as np

#: Coordinate descent stops once a sweep moves no coefficient by more than this (relative to
#: the largest ``|X^T r|`` over the largest ``X^T X`` diagonal), or after :data:`MAX_SWEEPS`.
TOL = 1e-12
MAX_SWEEPS = 2000


def box_least_squares(
    features: np.ndarray,
    target: np.ndarray,
    rows: np.ndarray,
    upper: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """``min sum_rows (r - c - X a)^2`` over ``0 <= a <= upper`` with a free intercept ``c``,
    for a batch of problems: ``features`` ``(B, n, p)``, ``target`` ``(n,)``, ``rows`` ``(B, n)``
    booleans (the rows each problem fits on), ``upper`` ``(B, p)``. Exact cyclic coordinate
    descent on the centred normal equations (a convex problem with separable constraints), to
    :data:`TOL`; returns ``a`` ``(B, p)`` and ``c`` ``(B,)``."""
    weight = rows.astype(float)
    count = np.maximum(weight.sum(axis=1), 1.0)
    x_mean = np.einsum("bn,bnp->bp", weight, features) / count[:, None]
    r_mean = weight @ target / count
    centred = (features - x_mean[:, None, :]) * np.sqrt(weight)[:, :, None]
    gram = np.einsum("bnp,bnq->bpq", centred, centred)
    cross = np.einsum("bnp,bn->bp", centred, (target[None] - r_mean[:, None]) * np.sqrt(weight))
    p = features.shape[2]
    a = np.zeros((features.shape[0], p))
    diag = np.einsum("bpp->bp", gram)
    scale = max(float(np.abs(cross).max(initial=0.0)), 1e-300)
    for _ in range(MAX_SWEEPS):
        largest = 0.0
        for k in range(p):
            rest = cross[:, k] - np.einsum("bq,bq->b", gram[:, k], a) + diag[:, k] * a[:, k]
            new = np.where(
                diag[:, k] > 1e-14,
                np.clip(rest / np.where(diag[:, k] > 1e-14, diag[:, k], 1.0), 0.0, upper[:, k]),
                0.0,
            )
            largest = max(largest, float(np.abs(new - a[:, k]).max(initial=0.0)))
            a[:, k] = new
        if largest * max(float(diag.max(initial=0.0)), 1e-300) <= TOL * scale:
            break
    return a, r_mean - np.einsum("bp,bp->b", x_mean, a)
