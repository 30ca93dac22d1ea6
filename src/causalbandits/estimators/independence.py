"""HSIC independence test (Gretton et al. 2005, 2008) for the exogenous-recovery checks of
EXCBO (decisions: excbo 19): is the recovered noise ``û`` independent of the
node's inputs ``Z`` (Thms 4.1/4.2 say yes for DGMs and BGMs; outside them, no)?

With Gaussian kernel matrices ``K_ij = exp(−‖x_i − x_j‖² / (2 h_x²))`` and ``L`` likewise on
``y``, bandwidths by the median heuristic (``h`` = the median of the non-zero pairwise
distances), and the centring matrix ``H = I − 11ᵀ/n``, the (biased) statistic is

    HSIC = tr(K H L H) / n² = Σ_ij (HKH)_ij L_ij / n².

Under independence the distribution of ``HSIC`` is that of the statistic with the ``y``
sample permuted; the p-value is ``(1 + #{b : HSIC_b ≥ HSIC}) / (1 + B)`` over ``B`` seeded
permutations (valid at any n).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from causalbandits.random import RNGLike, as_generator

PERMUTATIONS = 500


@dataclass(frozen=True)
class HSICResult:
    """The statistic, its permutation p-value and the number of permutations."""

    statistic: float
    p_value: float
    permutations: int


def gaussian_gram(sample: np.ndarray) -> np.ndarray:
    """``exp(−‖s_i − s_j‖² / (2 h²))`` with ``h`` the median non-zero pairwise distance
    (``h = 1`` if all points coincide)."""
    squared = np.sum((sample[:, None, :] - sample[None, :, :]) ** 2, axis=-1)
    positive = squared[np.triu_indices(len(sample), k=1)]
    positive = positive[positive > 0]
    bandwidth2 = float(np.median(positive)) if positive.size else 1.0
    return np.exp(-squared / (2.0 * bandwidth2))


def as_sample(values: np.ndarray, name: str) -> np.ndarray:
    """``values`` as a finite ``(n, d)`` float array (a vector is one column)."""
    array = np.asarray(values, dtype=float)
    if array.ndim == 1:
        array = array[:, None]
    if array.ndim != 2:
        raise ValueError(f"{name} must have shape (n,) or (n, d), got {array.shape}")
    if not np.isfinite(array).all():
        raise ValueError(f"{name} must be finite (found NaN or inf)")
    return array


def hsic_test(
    x: np.ndarray, y: np.ndarray, permutations: int = PERMUTATIONS, rng: RNGLike = None
) -> HSICResult:
    """HSIC permutation test of ``x ⊥ y`` (module docstring); ``x`` and ``y`` are
    ``(n,)`` or ``(n, d)`` samples of the same ``n``; ``rng`` seeds the permutations."""
    a, b = as_sample(x, "x"), as_sample(y, "y")
    n = a.shape[0]
    if b.shape[0] != n:
        raise ValueError(f"x and y need the same number of points, got {n} and {b.shape[0]}")
    if n < 2:
        raise ValueError(f"an independence test needs at least 2 points, got {n}")
    if permutations < 1:
        raise ValueError(f"permutations must be >= 1, got {permutations}")
    k = gaussian_gram(a)
    centred = k - k.mean(0) - k.mean(1)[:, None] + k.mean()  # H K H
    gram = gaussian_gram(b)
    statistic = float(np.sum(centred * gram)) / n**2
    generator = as_generator(rng)
    exceed = 0
    for _ in range(permutations):
        p = generator.permutation(n)
        exceed += float(np.sum(centred * gram[np.ix_(p, p)])) / n**2 >= statistic
    return HSICResult(statistic, (1 + exceed) / (1 + permutations), permutations)
