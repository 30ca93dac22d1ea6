"""Compiled KSG-2 terms of a block of samples (Kraskov et al. 2004, algorithm 2).

For each sample ``i`` of a block, :func:`ksg_block_terms` finds the ``k`` nearest joint
neighbours of ``i`` in the max-norm (``i`` itself excluded) by scanning outward from ``i``
in x-sorted order until the x-gap reaches the current ``(k + 1)``-th best distance, then
counts the samples within the marginal reaches of those neighbours exactly as
:func:`causalbandits.estimators.mutual_information._marginal_counts` does, by binary search
in the sorted marginals. A sample whose ``k``-th and ``(k + 1)``-th neighbour distances are
equal has a neighbour set that depends on tie-breaking; it is returned for the KD-tree
path instead. Compiled when the module is imported (explicit signatures; the estimator
imports it when it first needs it: importing the library does not compile).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import types

_VECTOR = types.Array(types.float64, 1, "C")
_READONLY_VECTOR = types.Array(types.float64, 1, "C", readonly=True)
_INDEX = types.Array(types.int64, 1, "C")


@numba.njit(types.void(_VECTOR, _INDEX, types.float64, types.int64), cache=True)
def _insert(best: np.ndarray, where: np.ndarray, distance: float, j: int) -> None:
    """Insert ``distance`` (of sample position ``j``) into the ascending ``best``, dropping
    its last entry."""
    slot = best.size - 1
    while slot > 0 and best[slot - 1] > distance:
        best[slot], where[slot] = best[slot - 1], where[slot - 1]
        slot -= 1
    best[slot], where[slot] = distance, j


@numba.njit(
    _INDEX(
        _VECTOR,
        _VECTOR,
        _INDEX,
        _VECTOR,
        _READONLY_VECTOR,
        types.int64,
        types.int64,
        types.int64,
        _VECTOR,
    ),
    cache=True,
)
def ksg_block_terms(
    x_ordered: np.ndarray,
    y_by_x: np.ndarray,
    rank: np.ndarray,
    y_ordered: np.ndarray,
    psi: np.ndarray,
    k: int,
    start: int,
    stop: int,
    terms: np.ndarray,
) -> np.ndarray:
    """Write ``psi(n_x(i)) + psi(n_y(i))`` into ``terms[i]`` for ``i`` in ``[start, stop)``.

    ``x_ordered`` is x sorted, ``y_by_x`` the y values in that order, ``rank[i]`` the
    position of sample ``i`` in it, ``y_ordered`` y sorted and ``psi[m - 1] = psi(m)``.
    Returns the samples whose ``k``-th and ``(k + 1)``-th neighbour distances tie; their
    ``terms`` are left unwritten.
    """
    n = x_ordered.size
    tied = np.empty(stop - start, dtype=np.int64)
    n_tied = 0
    best = np.empty(k + 1)
    where = np.empty(k + 1, dtype=np.int64)
    for i in range(start, stop):
        position = rank[i]
        x_i, y_i = x_ordered[position], y_by_x[position]
        best[:] = np.inf
        nearest = max(0, position - k - 1), min(n, position + k + 2)
        for j in range(nearest[0], nearest[1]):  # a first bound from the x-nearest samples
            if j != position:
                distance = max(abs(x_ordered[j] - x_i), abs(y_by_x[j] - y_i))
                if distance < best[k]:
                    _insert(best, where, distance, j)
        for j in range(nearest[0] - 1, -1, -1):  # then outward while the x-gap allows
            gap = x_i - x_ordered[j]
            if gap >= best[k]:
                break
            if abs(y_by_x[j] - y_i) < best[k]:
                _insert(best, where, max(gap, abs(y_by_x[j] - y_i)), j)
        for j in range(nearest[1], n):
            gap = x_ordered[j] - x_i
            if gap >= best[k]:
                break
            if abs(y_by_x[j] - y_i) < best[k]:
                _insert(best, where, max(gap, abs(y_by_x[j] - y_i)), j)
        if best[k - 1] == best[k]:
            tied[n_tied] = i
            n_tied += 1
            continue
        x_low = x_high = x_ordered[where[0]]
        y_low = y_high = y_by_x[where[0]]
        for m in range(1, k):
            x_low, x_high = min(x_low, x_ordered[where[m]]), max(x_high, x_ordered[where[m]])
            y_low, y_high = min(y_low, y_by_x[where[m]]), max(y_high, y_by_x[where[m]])
        reach = max(x_i - x_low, x_high - x_i)
        n_x = np.searchsorted(x_ordered, max(x_i + reach, x_high), side="right")
        n_x -= np.searchsorted(x_ordered, min(x_i - reach, x_low), side="left")
        reach = max(y_i - y_low, y_high - y_i)
        n_y = np.searchsorted(y_ordered, max(y_i + reach, y_high), side="right")
        n_y -= np.searchsorted(y_ordered, min(y_i - reach, y_low), side="left")
        terms[i] = psi[n_x - 2] + psi[n_y - 2]  # counts include i: n(i) = count - 1
    return tied[:n_tied]
