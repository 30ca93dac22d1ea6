"""Compiled lazy edge selection of CSL (CSL-UCB Algorithm 1 with eq. 25's scores).

CSL deletes the highest-scoring edge ``I(r_i; x_j) - w log|B_hat[j, i]|`` of the graphs it
prunes. :func:`select_edge` finds it while computing as few KSG-2 terms (Kraskov et al.
2004, eq. 9) as it can: every kept edge has a ``key``, its exact score or an upper bound
(the estimate with each term not yet computed at its minimum ``2 psi(k)``, plus the exact
penalty); the first maximum of ``key`` in row-major order ``(slot, source, target)`` is
refined one block of samples at a time until it is exact, and an exact first maximum is the
edge that scoring every edge exactly would pick. The terms of a block come from
:func:`~causalbandits.estimators.ksg_kernel.ksg_block_terms`; samples whose ``k``-th and
``(k + 1)``-th neighbour distances tie are handed back to Python (the KD-tree path), and
:func:`finish_block` completes the block once their terms are written.

The state lives in arrays owned by :class:`causalbandits.estimators.csl.KSGEdgeScores`,
passed as ``(pairs, offsets, x_ordered, order, rank, columns, sorted_columns, is_sorted,
y_by_x, prepared, scratch, tails, head, floor)`` and ``(done, partial, penalty, key, exact,
column_max, column_arg)``:
per pair ``p`` (a learned ``(slot, target)``), rows ``offsets[p]:offsets[p + 1]`` of the
flat sample axis hold the current residual sorted (``x_ordered``), its order and ranks;
``columns[j]`` holds candidate ``j``'s standardised values per pair, ``sorted_columns[j]``
the same sorted (filled on first use) and ``y_by_x[j]`` in the residual's order (filled
when an edge is first refined after a refit). Per edge: ``done`` samples, their ``partial``
sum (in sample order, so the final mean is the same float however the blocks fell),
``penalty``, ``key`` and ``exact``. ``column_max``/``column_arg`` cache each target
column's first maximum, so a selection costs ``O(slots * N)`` instead of ``O(slots * N^2)``.
"""

from __future__ import annotations

import numba
import numpy as np

from causalbandits.estimators.ksg_kernel import ksg_block_terms

#: Fractions of a pair's samples after each block, and the fewest samples of a block (as
#: :mod:`causalbandits.estimators.mutual_information`).
SCHEDULE = np.array([0.25, 0.5, 0.75, 1.0])
MIN_BLOCK = 50
#: :func:`select_edge`'s outcomes: an exact edge; no kept edge above ``-inf``; a block
#: waiting for the KD-tree terms of its tied samples.
EDGE, NO_EDGE, TIES = 0, 1, 2


@numba.njit(cache=True)
def _block_stop(done: int, n: int) -> int:
    """The end of the next block: the next fraction of :data:`SCHEDULE` at least
    :data:`MIN_BLOCK` samples past ``done`` (``n`` when none is)."""
    for fraction in SCHEDULE:
        stop = int(np.ceil(fraction * n))
        if stop >= done + MIN_BLOCK:
            return stop
    return n


@numba.njit(cache=True)
def edge_key(partial: float, done: int, n: int, head: float, tail: float, floor: float) -> float:
    """KSG-2 of an edge's information term (``head - mean(terms) + tail``) once ``done == n``;
    before, the upper bound with the ``n - done`` missing terms at their minimum ``floor``
    (``2 psi(k)``), padded by ``1e-9`` against rounding."""
    if done == n:
        return head - partial / n + tail
    return head - (partial + (n - done) * floor) / n + tail + 1e-9


@numba.njit(cache=True)
def update_column(key: np.ndarray, column_max: np.ndarray, column_arg: np.ndarray, slot, target):
    """Re-cache the first maximum of ``key[slot, :, target]``."""
    best, where = -np.inf, 0
    for source in range(key.shape[1]):
        if key[slot, source, target] > best:
            best, where = key[slot, source, target], source
    column_max[slot, target], column_arg[slot, target] = best, where


@numba.njit(cache=True)
def _before(a: tuple, b: tuple) -> bool:
    """Whether index ``a`` comes before ``b`` in row-major order."""
    for i in range(3):
        if a[i] != b[i]:
            return a[i] < b[i]
    return False


@numba.njit(cache=True)
def _first_maximum(key, column_max, column_arg, allowed, use_allowed):
    """``(value, slot, source, target)`` of the first maximum of ``key`` in row-major order
    (over the ``allowed`` entries when ``use_allowed``)."""
    slots, n, _ = key.shape
    best, at = -np.inf, (-1, -1, -1)
    if use_allowed:
        for slot in range(slots):
            for source in range(n):
                for target in range(n):
                    if allowed[slot, source, target] and key[slot, source, target] > best:
                        best, at = key[slot, source, target], (slot, source, target)
        return best, at
    for slot in range(slots):
        for target in range(n):
            value, here = column_max[slot, target], (slot, column_arg[slot, target], target)
            if value > best or (value == best and _before(here, at)):
                best, at = value, here
    return best, at


@numba.njit(cache=True)
def _prepare(source, pair, offsets, order, columns, sorted_columns, is_sorted, y_by_x):
    """Fill ``y_by_x[source]`` for the pair's current residual order, and sort the column
    once per pair."""
    low, high = offsets[pair], offsets[pair + 1]
    for position in range(low, high):
        y_by_x[source, position] = columns[source, low + order[position]]
    if not is_sorted[pair, source]:
        sorted_columns[source, low:high] = np.sort(columns[source, low:high])
        is_sorted[pair, source] = True


@numba.njit(cache=True)
def finish_block(state, slot, source, target, stop) -> None:
    """Add the terms of samples ``done..stop`` (in the scratch) to the edge's partial sum in
    sample order and update its key."""
    (pairs, offsets, _, _, _, _, _, _, _, _, scratch, tails, head, floor) = state[0]
    done, partial, penalty, key, exact, column_max, column_arg = state[1]
    pair = pairs[slot, target]
    n = offsets[pair + 1] - offsets[pair]
    total = partial[slot, source, target]
    for sample in range(done[slot, source, target], stop):
        total += scratch[sample]
    partial[slot, source, target], done[slot, source, target] = total, stop
    information = edge_key(total, stop, n, head, tails[pair], floor)
    key[slot, source, target] = information + penalty[slot, source, target]
    exact[slot, source, target] = stop == n
    update_column(key, column_max, column_arg, slot, target)


@numba.njit(cache=True)
def select_edge(state, psi, k, allowed, use_allowed):
    """Refine the first maximum of ``key`` until it is exact.

    Returns ``(EDGE, (slot, source, target), 0, no samples)``; ``(NO_EDGE, ...)`` when every
    candidate is at ``-inf``; or ``(TIES, edge, stop, tied)``: the block up to ``stop`` waits
    for the terms of the ``tied`` samples (the caller writes them into the scratch and calls
    :func:`finish_block`).
    """
    pairs, offsets, x_ordered, order, rank, columns, sorted_columns, is_sorted = state[0][:8]
    y_by_x, prepared, scratch = state[0][8], state[0][9], state[0][10]
    done, key, exact = state[1][0], state[1][3], state[1][4]
    column_max, column_arg = state[1][5], state[1][6]
    empty = np.empty(0, dtype=np.int64)
    while True:
        value, edge = _first_maximum(key, column_max, column_arg, allowed, use_allowed)
        if value == -np.inf:
            return NO_EDGE, edge, 0, empty
        slot, source, target = edge
        if exact[slot, source, target]:
            return EDGE, edge, 0, empty
        pair = pairs[slot, target]
        low, high = offsets[pair], offsets[pair + 1]
        if not prepared[slot, source, target]:
            _prepare(source, pair, offsets, order, columns, sorted_columns, is_sorted, y_by_x)
            prepared[slot, source, target] = True
        stop = _block_stop(done[slot, source, target], high - low)
        tied = ksg_block_terms(
            x_ordered[low:high],
            y_by_x[source, low:high],
            rank[low:high],
            sorted_columns[source, low:high],
            psi,
            k,
            done[slot, source, target],
            stop,
            scratch,
        )
        if tied.size:
            return TIES, edge, stop, tied
        finish_block(state, slot, source, target, stop)


@numba.njit(cache=True)
def refit_target(state, slot, target, candidates, xs, penalties) -> None:
    """Start the edges into ``target`` of ``slot`` afresh after a refit: the standardised,
    jittered residual ``xs`` sorted into the pair's rows, each candidate's key at its first
    bound plus its ``penalties`` entry, every other source at ``-inf``."""
    pairs, offsets, x_ordered, order, rank = state[0][:5]
    prepared, tails, head, floor = state[0][9], state[0][11], state[0][12], state[0][13]
    done, partial, penalty, key, exact, column_max, column_arg = state[1]
    pair = pairs[slot, target]
    low = offsets[pair]
    sorting = np.argsort(xs)
    for position in range(xs.size):
        x_ordered[low + position] = xs[sorting[position]]
        order[low + position] = sorting[position]
        rank[low + sorting[position]] = position
    for source in range(key.shape[1]):
        done[slot, source, target], partial[slot, source, target] = 0, 0.0
        penalty[slot, source, target], key[slot, source, target] = 0.0, -np.inf
        exact[slot, source, target], prepared[slot, source, target] = False, False
    bound = edge_key(0.0, 0, xs.size, head, tails[pair], floor)
    for position in range(candidates.size):
        source = candidates[position]
        penalty[slot, source, target] = penalties[position]
        key[slot, source, target] = bound + penalties[position]
    update_column(key, column_max, column_arg, slot, target)
