"""Kraskov-Stoegbauer-Grassberger k-nearest-neighbour mutual information (CSL-UCB eq. 25).

KSG "algorithm 2" (Kraskov et al. 2004, eq. 9) with the max-norm in the joint space:

    I = psi(k) - 1/k - <psi(n_x) + psi(n_y)> + psi(n),

where, for sample ``i``, ``eps_x(i)`` and ``eps_y(i)`` are the largest x- and y-distances
among its ``k`` nearest joint neighbours and ``n_x(i) = #{j != i: |x_j - x_i| <= eps_x(i)}``.
The neighbours come from a KD-tree (Chebyshev metric) and the marginal counts from binary
search in the sorted marginals. A compiled kernel
(:mod:`causalbandits.estimators.ksg_kernel`) finds the same neighbours and counts without
the tree, which serves only the samples whose ``k``-th neighbour distance ties with the
``(k + 1)``-th (where the neighbour set depends on the tree's tie-breaking); the terms are
the same floats either way. The mean of eq. 9 sums the terms in sample order (as CSL's
block-wise sums do, :mod:`causalbandits.estimators.csl_kernel`).

Both variables are scaled to unit standard deviation first (as scikit-learn does): the
mutual information is scale-free, but the max-norm neighbourhoods of KSG are not, and
CSL pairs residuals of scale ~1 with node values that can be ~1e3.
"""

from __future__ import annotations

import functools

import numpy as np
from scipy.spatial import cKDTree
from scipy.special import digamma

from causalbandits.random import RNGLike, as_generator


def _check_finite(values: np.ndarray, label: str) -> None:
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{label} contains non-finite values (NaN or inf)")


def _safe_scale(values: np.ndarray) -> np.ndarray:
    """Each column's standard deviation, 1 where it is 0."""
    scale = values.std(axis=0)
    return np.where(scale > 0, scale, 1.0)


def _standardise(
    values: np.ndarray, label: str, jitter: float, generator: np.random.Generator | None
) -> np.ndarray:
    """Check finiteness, scale each column to unit standard deviation and add the jitter."""
    _check_finite(values, label)
    scaled = values / _safe_scale(values)
    if generator is not None:
        scaled += jitter * generator.standard_normal(values.shape)
    return scaled


def _marginal_counts(
    values: np.ndarray, ordered: np.ndarray, neighbours: np.ndarray, centres: np.ndarray
) -> np.ndarray:
    """``n(i)``: points other than ``i`` within the marginal reach of ``i``'s neighbours.

    ``ordered`` is ``values`` sorted; ``neighbours`` holds one row per point ``i`` of
    ``centres`` (the values of the rows computed). The interval
    ``[v_i - eps(i), v_i + eps(i)]`` is widened to contain the neighbours' own values, so
    that rounding can never drop the neighbour that defines ``eps(i)``. Every operation
    is element-wise per row, so a block of rows gives the same counts as the full call.
    """
    near = values[neighbours]
    lowest, highest = near.min(axis=1), near.max(axis=1)
    reach = np.maximum(centres - lowest, highest - centres)
    low = np.minimum(centres - reach, lowest)
    high = np.maximum(centres + reach, highest)
    inside = np.searchsorted(ordered, high, side="right") - np.searchsorted(
        ordered, low, side="left"
    )
    return inside - 1


def _sorting(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(order, rank)``: ``values[order]`` is sorted and ``order[rank[i]] == i``."""
    order = np.argsort(values)
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return order, rank


def _digamma_of_counts(n: int) -> np.ndarray:
    """``psi(m)`` for ``m = 1..n-1`` (index ``m - 1``): ``H_{m-1} - gamma``, exact."""
    return np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, n - 1))]) - np.euler_gamma


@functools.lru_cache(maxsize=64)
def _constants(n: int, k: int) -> tuple[float, float, np.ndarray]:
    """``(psi(k) - 1/k, psi(n), psi table)`` of KSG-2 at ``(n, k)`` (the table read-only)."""
    psi = _digamma_of_counts(n)
    psi.flags.writeable = False
    return digamma(k) - 1.0 / k, digamma(n), psi


def tree_terms(
    tree: cKDTree,
    xs: np.ndarray,
    ys: np.ndarray,
    x_ordered: np.ndarray,
    y_ordered: np.ndarray,
    psi: np.ndarray,
    k: int,
    rows: np.ndarray,
) -> np.ndarray:
    """KSG-2 terms ``psi(n_x(i)) + psi(n_y(i))`` of samples ``rows`` from the neighbours of a
    KD-tree (Chebyshev metric) on the points ``(xs, ys)``; ``*_ordered`` are the sorted
    marginals and ``psi[m - 1] = psi(m)``. Exact duplicates are dropped from their own
    neighbour lists wherever the tree put them."""
    _, index = tree.query(np.column_stack([xs[rows], ys[rows]]), k=k + 1, p=np.inf)
    if np.array_equal(index[:, 0], rows):  # the point itself comes first
        neighbours = index[:, 1:]
    else:  # exact duplicates: drop the point wherever it is (the farthest if it is absent)
        is_self = index == rows[:, None]
        is_self[~is_self.any(axis=1), -1] = True
        neighbours = index[~is_self].reshape(rows.size, k)
    n_x = _marginal_counts(xs, x_ordered, neighbours, xs[rows])
    n_y = _marginal_counts(ys, y_ordered, neighbours, ys[rows])
    return psi[n_x - 1] + psi[n_y - 1]


def ksg_terms(
    xs: np.ndarray,
    x_sorting: tuple[np.ndarray, np.ndarray],
    ys: np.ndarray,
    k: int,
    psi: np.ndarray,
) -> np.ndarray:
    """Every sample's KSG-2 term ``psi(n_x(i)) + psi(n_y(i))`` of the pair ``(xs, ys)``:
    the compiled kernel, and the KD-tree for the samples whose neighbours tie.
    ``x_sorting`` is :func:`_sorting` of ``xs``."""
    from causalbandits.estimators.ksg_kernel import ksg_block_terms

    order, rank = x_sorting
    x_ordered, y_ordered = xs[order], np.sort(ys)
    terms = np.empty(xs.size)
    tied = ksg_block_terms(x_ordered, ys[order], rank, y_ordered, psi, k, 0, xs.size, terms)
    if tied.size:
        tree = cKDTree(np.column_stack([xs, ys]))
        terms[tied] = tree_terms(tree, xs, ys, x_ordered, y_ordered, psi, k, tied)
    return terms


def ksg_value(terms: np.ndarray, k: int) -> float:
    """Eq. 9 from the terms: ``psi(k) - 1/k - mean(terms) + psi(n)``, the terms summed in
    sample order."""
    head, tail, _ = _constants(terms.size, k)
    return float(head - np.cumsum(terms)[-1] / terms.size + tail)


def _check_ksg_arguments(x: np.ndarray, columns: np.ndarray, k: int, jitter: float) -> None:
    if int(k) != k or k < 1:
        raise ValueError(f"k must be a positive integer, got {k}")
    if not jitter >= 0:
        raise ValueError(f"jitter must be non-negative, got {jitter}")
    if x.ndim != 1:
        raise ValueError(f"x must be a 1-D array, got shape {x.shape}")
    if columns.ndim != 2 or columns.shape[0] != x.size:
        raise ValueError(f"columns must have shape ({x.size}, p), got {columns.shape}")
    if x.size <= k:
        raise ValueError(f"KSG needs more than k = {k} samples, got {x.size}")


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
    Both variables are standardised and jittered first (``x``'s draws, then the columns').
    """
    x = np.asarray(x, dtype=float)
    columns = np.asarray(columns, dtype=float)
    _check_ksg_arguments(x, columns, k, jitter)
    generator = as_generator(rng) if jitter > 0 else None
    xs = _standardise(x, "x", jitter, generator)
    ys = _standardise(columns, "columns", jitter, generator)
    sorting, psi = _sorting(xs), _constants(x.size, int(k))[2]
    return np.array(
        [
            ksg_value(ksg_terms(xs, sorting, ys[:, j].copy(), int(k), psi), int(k))
            for j in range(ys.shape[1])
        ]
    )


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
