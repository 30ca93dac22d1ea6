"""Kraskov-Stoegbauer-Grassberger k-nearest-neighbour mutual information (CSL-UCB eq. 25).

KSG "algorithm 2" (Kraskov et al. 2004, eq. 9) with the max-norm in the joint space:

    I = psi(k) - 1/k - <psi(n_x) + psi(n_y)> + psi(n),

where, for sample ``i``, ``eps_x(i)`` and ``eps_y(i)`` are the largest x- and y-distances
among its ``k`` nearest joint neighbours and ``n_x(i) = #{j != i: |x_j - x_i| <= eps_x(i)}``.
The neighbours come from a KD-tree (Chebyshev metric) and the marginal counts from binary
search in the sorted marginals, so one estimate costs ``O(n log n)``.

Both variables are scaled to unit standard deviation first (as scikit-learn does): the
mutual information is scale-free, but the max-norm neighbourhoods of KSG are not, and
CSL pairs residuals of scale ~1 with node values that can be ~1e3.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree
from scipy.special import digamma

from causalbandits.random import RNGLike, as_generator


def _standardise(
    values: np.ndarray, label: str, jitter: float, generator: np.random.Generator | None
) -> np.ndarray:
    """Check finiteness, scale each column to unit standard deviation and add the jitter."""
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{label} contains non-finite values (NaN or inf)")
    scale = values.std(axis=0)
    scaled = values / np.where(scale > 0, scale, 1.0)
    if generator is not None:
        scaled += jitter * generator.standard_normal(values.shape)
    return scaled


def _marginal_counts(values: np.ndarray, ordered: np.ndarray, neighbours: np.ndarray) -> np.ndarray:
    """``n(i)``: points other than ``i`` within the marginal reach of ``i``'s neighbours.

    ``ordered`` is ``values`` sorted. The interval ``[v_i - eps(i), v_i + eps(i)]`` is
    widened to contain the neighbours' own values, so that rounding can never drop the
    neighbour that defines ``eps(i)``.
    """
    near = values[neighbours]
    lowest, highest = near.min(axis=1), near.max(axis=1)
    reach = np.maximum(values - lowest, highest - values)
    low = np.minimum(values - reach, lowest)
    high = np.maximum(values + reach, highest)
    inside = np.searchsorted(ordered, high, side="right") - np.searchsorted(
        ordered, low, side="left"
    )
    return inside - 1


def _digamma_of_counts(n: int) -> np.ndarray:
    """``psi(m)`` for ``m = 1..n-1`` (index ``m - 1``): ``H_{m-1} - gamma``, exact."""
    return np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, n - 1))]) - np.euler_gamma


def _ksg(xs: np.ndarray, x_ordered: np.ndarray, ys: np.ndarray, k: int) -> float:
    """KSG-2 on prepared samples (``x_ordered`` is ``xs`` sorted)."""
    n = xs.size
    joint = np.column_stack([xs, ys])
    _, index = cKDTree(joint).query(joint, k=k + 1, p=np.inf)
    rows = np.arange(n)
    if np.array_equal(index[:, 0], rows):  # the point itself comes first
        neighbours = index[:, 1:]
    else:  # exact duplicates: drop the point wherever it is (the farthest if it is absent)
        is_self = index == rows[:, None]
        is_self[~is_self.any(axis=1), -1] = True
        neighbours = index[~is_self].reshape(n, k)
    n_x = _marginal_counts(xs, x_ordered, neighbours)
    n_y = _marginal_counts(ys, np.sort(ys), neighbours)
    psi = _digamma_of_counts(n)
    mean_marginal = np.mean(psi[n_x - 1] + psi[n_y - 1])
    return float(digamma(k) - 1.0 / k - mean_marginal + digamma(n))


def ksg_mutual_information_columns(
    x: np.ndarray,
    columns: np.ndarray,
    k: int = 5,
    jitter: float = 1e-10,
    rng: RNGLike = None,
) -> np.ndarray:
    """KSG-2 estimates of ``I(x; columns[:, j])`` for every column, shape ``(p,)``, in nats.

    Parameters
    ----------
    x: samples ``(n,)`` with ``n > k``.
    columns: samples ``(n, p)`` paired with ``x``.
    k: number of joint-space nearest neighbours (5 in the authors' code).
    jitter: standard deviation of the Gaussian noise added to the standardised values to
        break ties (KSG assumes continuous data); 0 disables it.
    rng: source of the jitter.

    The estimates are not clipped at zero: for independent data they fluctuate around 0.
    """
    if int(k) != k or k < 1:
        raise ValueError(f"k must be a positive integer, got {k}")
    if not jitter >= 0:
        raise ValueError(f"jitter must be non-negative, got {jitter}")
    x = np.asarray(x, dtype=float)
    columns = np.asarray(columns, dtype=float)
    if x.ndim != 1:
        raise ValueError(f"x must be a 1-D array, got shape {x.shape}")
    if columns.ndim != 2 or columns.shape[0] != x.size:
        raise ValueError(f"columns must have shape ({x.size}, p), got {columns.shape}")
    if x.size <= k:
        raise ValueError(f"KSG needs more than k = {k} samples, got {x.size}")
    generator = as_generator(rng) if jitter > 0 else None
    xs = _standardise(x, "x", jitter, generator)
    ys = _standardise(columns, "columns", jitter, generator)
    x_ordered = np.sort(xs)
    return np.array([_ksg(xs, x_ordered, ys[:, j], int(k)) for j in range(ys.shape[1])])


def ksg_mutual_information(
    x: np.ndarray,
    y: np.ndarray,
    k: int = 5,
    jitter: float = 1e-10,
    rng: RNGLike = None,
) -> float:
    """KSG-2 estimate of ``I(x; y)`` in nats for paired 1-D samples (CSL-UCB eq. 25's ``I``).

    See :func:`ksg_mutual_information_columns` for the parameters.
    """
    y = np.asarray(y, dtype=float)
    if y.ndim != 1:
        raise ValueError(f"y must be a 1-D array, got shape {y.shape}")
    if y.size != np.size(x):
        raise ValueError(f"x and y must have the same length, got {np.size(x)} and {y.size}")
    return float(ksg_mutual_information_columns(x, y[:, None], k, jitter, rng)[0])
