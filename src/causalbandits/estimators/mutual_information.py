"""Kraskov-Stoegbauer-Grassberger k-nearest-neighbour mutual information (CSL-UCB eq. 25).

KSG "algorithm 2" (Kraskov et al. 2004, eq. 9) with the max-norm in the joint space:

    I = psi(k) - 1/k - <psi(n_x) + psi(n_y)> + psi(n),

where, for sample ``i``, ``eps_x(i)`` and ``eps_y(i)`` are the largest x- and y-distances
among its ``k`` nearest joint neighbours and ``n_x(i) = #{j != i: |x_j - x_i| <= eps_x(i)}``.
The neighbours come from a KD-tree (Chebyshev metric) and the marginal counts from binary
search in the sorted marginals, so one estimate costs ``O(n log n)``. When numba is
installed, a compiled kernel (:mod:`causalbandits.estimators.ksg_kernel`) finds the same
neighbours and counts without the tree, which serves only the samples whose ``k``-th
neighbour distance ties with the ``(k + 1)``-th (where the neighbour set depends on the
tree's tie-breaking); the terms are the same floats either way.

Both variables are scaled to unit standard deviation first (as scikit-learn does): the
mutual information is scale-free, but the max-norm neighbourhoods of KSG are not, and
CSL pairs residuals of scale ~1 with node values that can be ~1e3.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
from scipy.spatial import cKDTree
from scipy.special import digamma

from causalbandits.random import RNGLike, as_generator


@functools.cache
def compiled_kernel() -> Callable[..., np.ndarray] | None:
    """:func:`~causalbandits.estimators.ksg_kernel.ksg_block_terms`, imported (and compiled)
    on first use, so that importing the library does not pay for numba; ``None`` without
    numba (optional: every block then goes through the KD-tree)."""
    try:
        from causalbandits.estimators.ksg_kernel import ksg_block_terms
    except ImportError:
        return None
    return ksg_block_terms


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


#: Fractions of the samples in a partial KSG sum (:class:`_PartialKSG`) after each block,
#: and the fewest samples of a block (smaller blocks cost more in calls than they save).
_SCHEDULE = (0.25, 0.5, 0.75, 1.0)
_MIN_BLOCK = 50


class _PartialKSG:
    """KSG-2 of one pair ``(xs, ys)``, summed over the samples block by block.

    Eq. 9's mean runs over per-sample terms ``psi(n_x(i)) + psi(n_y(i))``, each at least
    ``2 psi(k)`` (the ``k`` neighbours are inside both marginal reaches). After a block,
    :attr:`bound` is the estimate with every remaining term at that minimum, an upper
    bound on the final value. Each sample's neighbours (from the compiled kernel, or one
    KD-tree query per point) and counts do not depend on the other samples of its block,
    and the final mean runs over the same ``(n,)`` array of terms as the one-shot
    computation, so :meth:`value` is the same float. ``x_sorting`` is :func:`_sorting` of
    ``xs`` (computed when not given).
    """

    def __init__(
        self,
        xs: np.ndarray,
        x_ordered: np.ndarray,
        ys: np.ndarray,
        k: int,
        x_sorting: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> None:
        self.xs, self.ys, self.k = xs, ys, k
        self.n = xs.size
        self.head, self.tail, self.psi = _constants(self.n, k)
        self.x_ordered, self.y_ordered = x_ordered, np.sort(ys)
        self.kernel = compiled_kernel()
        if self.kernel is not None:
            order, self.x_rank = _sorting(xs) if x_sorting is None else x_sorting
            self.y_by_x = ys[order]
        self.joint: np.ndarray | None = None
        self.tree: cKDTree | None = None
        self.terms = np.empty(self.n)
        self.done = 0
        self.partial = 0.0

    @property
    def finished(self) -> bool:
        return self.done == self.n

    def advance(self, block: int | None = None) -> None:
        """Add the terms of the next ``block`` samples (default: up to the next fraction of
        :data:`_SCHEDULE` that is at least :data:`_MIN_BLOCK` samples away)."""
        start = self.done
        if block is None:
            stops = (int(np.ceil(f * self.n)) for f in _SCHEDULE)
            stop = next((s for s in stops if s >= start + _MIN_BLOCK), self.n)
        else:
            stop = min(self.n, start + block)
        if self.kernel is None:
            self._tree_terms(np.arange(start, stop))
        else:
            tied = self.kernel(
                self.x_ordered,
                self.y_by_x,
                self.x_rank,
                self.y_ordered,
                self.psi,
                self.k,
                start,
                stop,
                self.terms,
            )
            if tied.size:
                self._tree_terms(tied)
        self.partial += float(self.terms[start:stop].sum())
        self.done = stop

    def _tree_terms(self, rows: np.ndarray) -> None:
        """The terms of samples ``rows`` from KD-tree neighbours (the tree built once)."""
        if self.tree is None:
            self.joint = np.column_stack([self.xs, self.ys])
            self.tree = cKDTree(self.joint)
        _, index = self.tree.query(self.joint[rows], k=self.k + 1, p=np.inf)
        if np.array_equal(index[:, 0], rows):  # the point itself comes first
            neighbours = index[:, 1:]
        else:  # exact duplicates: drop the point wherever it is (the farthest if it is absent)
            is_self = index == rows[:, None]
            is_self[~is_self.any(axis=1), -1] = True
            neighbours = index[~is_self].reshape(rows.size, self.k)
        n_x = _marginal_counts(self.xs, self.x_ordered, neighbours, self.xs[rows])
        n_y = _marginal_counts(self.ys, self.y_ordered, neighbours, self.ys[rows])
        self.terms[rows] = self.psi[n_x - 1] + self.psi[n_y - 1]

    @property
    def bound(self) -> float:
        """An upper bound on :meth:`value`, padded by ``1e-9`` against rounding."""
        rest = (self.n - self.done) * 2 * self.psi[self.k - 1]
        return float(self.head - (self.partial + rest) / self.n + self.tail) + 1e-9

    def value(self) -> float:
        """The KSG-2 estimate (all blocks computed first)."""
        while not self.finished:
            self.advance(self.n)
        return float(self.head - np.mean(self.terms) + self.tail)


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


class KSGColumns:
    """:func:`ksg_mutual_information_columns`, one column at a time and on demand.

    The constructor does everything that touches the random stream or needs all columns
    at once, exactly as the eager function: the finiteness checks, the standard deviations
    of ``x`` and of all ``columns`` (``std(axis=0)`` of the whole matrix, so the same
    summation order), and the jitter draws (``n`` values for ``x``, then ``(n, p)`` for
    the columns). A column is then scaled and jittered element-wise when first used, which
    gives the same floats as scaling the whole matrix, and its KSG-2 sum is built block by
    block (:class:`_PartialKSG`). So :meth:`estimate` equals entry ``j`` of the eager
    result bit for bit, the generator ends in the same state, and a column whose upper
    bound (:meth:`bound`, refined by :meth:`refine`) is never needed costs only its jitter
    draw. CSL's lazy edge scores use the bounds to skip columns that cannot score highest.
    """

    def __init__(
        self,
        x: np.ndarray,
        columns: np.ndarray,
        k: int = 5,
        jitter: float = 1e-10,
        rng: RNGLike = None,
    ) -> None:
        x = np.asarray(x, dtype=float)
        columns = np.asarray(columns, dtype=float)
        _check_ksg_arguments(x, columns, k, jitter)
        generator = as_generator(rng) if jitter > 0 else None
        self._xs = _standardise(x, "x", jitter, generator)
        self._x_ordered = np.sort(self._xs)
        self._x_sorting = _sorting(self._xs)
        _check_finite(columns, "columns")
        self._columns = columns
        self._scale = _safe_scale(columns)
        self._jitter = jitter
        self._noise = None if generator is None else generator.standard_normal(columns.shape)
        self._k = int(k)
        head, tail, psi = _constants(x.size, self._k)
        #: The bound of a column before any of its terms: every term at ``2 psi(k)``.
        self.upper_bound = float(head - 2 * psi[self._k - 1] + tail) + 1e-9
        self._partial: dict[int, _PartialKSG] = {}

    @property
    def n_columns(self) -> int:
        """``p``."""
        return self._columns.shape[1]

    def _column(self, j: int) -> _PartialKSG:
        partial = self._partial.get(j)
        if partial is None:
            ys = self._columns[:, j] / self._scale[j]
            if self._noise is not None:
                ys += self._jitter * self._noise[:, j]
            partial = self._partial[j] = _PartialKSG(
                self._xs, self._x_ordered, ys, self._k, self._x_sorting
            )
        return partial

    def bound(self, j: int) -> float:
        """An upper bound on :meth:`estimate` of column ``j`` from the blocks computed so far."""
        partial = self._partial.get(j)
        return self.upper_bound if partial is None else partial.bound

    def refine(self, j: int) -> bool:
        """Compute the next block of column ``j``; whether the column is now complete."""
        partial = self._column(j)
        partial.advance()
        return partial.finished

    def estimate(self, j: int) -> float:
        """KSG-2 estimate of ``I(x; columns[:, j])``."""
        return self._column(j).value()

    def estimates(self) -> np.ndarray:
        """All ``p`` estimates, shape ``(p,)``."""
        return np.array([self.estimate(j) for j in range(self.n_columns)])


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
    :class:`KSGColumns` gives the same numbers column by column, on demand.
    """
    return KSGColumns(x, columns, k, jitter, rng).estimates()


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
