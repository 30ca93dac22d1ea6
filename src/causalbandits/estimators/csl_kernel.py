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

The state lives in two named tuples of arrays owned by
:class:`causalbandits.estimators.csl.KSGEdgeScores`: :class:`Samples` (per pair, a learned
``(slot, target)``) and :class:`Edges` (per edge ``(slot, source, target)``).
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from causalbandits.estimators.ksg_kernel import ksg_block_terms

#: Fractions of a pair's samples after each block, and the fewest samples of a block:
#: blocks of 10 with 100 samples per pair, 50 with 500 (against quarters of at least 50,
#: 24 % fewer terms at N = 50 with 100 samples and 11 % with 500; ``bench_csl_step.py``).
SCHEDULE = np.arange(1, 11) / 10
MIN_BLOCK = 10
#: :func:`select_edge`'s outcomes: an exact edge; no kept edge above ``-inf``; a block
#: waiting for the KD-tree terms of its tied samples.
EDGE, NO_EDGE, TIES = 0, 1, 2


class Samples(NamedTuple):
    """Per pair ``p``, rows ``offsets[p]:offsets[p + 1]`` of a flat sample axis."""

    #: ``(slots, N)``: the pair of ``(slot, target)``, -1 where the node is not learned.
    pairs: np.ndarray
    offsets: np.ndarray
    #: The current residual, standardised and jittered, sorted; its argsort and ranks.
    x_ordered: np.ndarray
    order: np.ndarray
    rank: np.ndarray
    #: ``(N, rows)``: each node's standardised, jittered values, and the same sorted (filled
    #: on first use, ``is_sorted`` per pair and node).
    columns: np.ndarray
    sorted_columns: np.ndarray
    is_sorted: np.ndarray
    #: The column of the block being computed in the residual's order, and its terms by
    #: sample.
    y_by_x: np.ndarray
    scratch: np.ndarray
    #: ``psi(n)`` per pair; ``psi(k) - 1/k``; ``2 psi(k)``, a term's minimum.
    tails: np.ndarray
    head: float
    floor: float


class Edges(NamedTuple):
    """Per edge ``(slot, source, target)``: the samples done, their terms' sum in sample
    order (so the final mean is the same float however the blocks fell), the penalty, the
    key (exact score or bound, ``-inf`` off the graphs) and whether it is exact; per target
    column, its first maximum and where."""

    done: np.ndarray
    partial: np.ndarray
    penalty: np.ndarray
    key: np.ndarray
    exact: np.ndarray
    column_max: np.ndarray
    column_arg: np.ndarray


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
def update_column(edges, slot, target) -> None:
    """Re-cache the first maximum of ``key[slot, :, target]``."""
    best, where = -np.inf, 0
    for source in range(edges.key.shape[1]):
        if edges.key[slot, source, target] > best:
            best, where = edges.key[slot, source, target], source
    edges.column_max[slot, target], edges.column_arg[slot, target] = best, where


@numba.njit(cache=True)
def _before(a: tuple, b: tuple) -> bool:
    """Whether index ``a`` comes before ``b`` in row-major order."""
    for i in range(3):
        if a[i] != b[i]:
            return a[i] < b[i]
    return False


@numba.njit(cache=True)
def _first_maximum(edges, allowed, use_allowed):
    """``(value, (slot, source, target))`` of the first maximum of ``key`` in row-major
    order (over the ``allowed`` entries when ``use_allowed``)."""
    key = edges.key
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
            value = edges.column_max[slot, target]
            here = (slot, edges.column_arg[slot, target], target)
            if value > best or (value == best and _before(here, at)):
                best, at = value, here
    return best, at


@numba.njit(cache=True)
def _prepare(samples, source, pair) -> None:
    """Put column ``source`` of the pair in the residual's order into ``y_by_x``, and sort
    the column once per pair."""
    low, high = samples.offsets[pair], samples.offsets[pair + 1]
    for position in range(low, high):
        samples.y_by_x[position - low] = samples.columns[source, low + samples.order[position]]
    if not samples.is_sorted[pair, source]:
        samples.sorted_columns[source, low:high] = np.sort(samples.columns[source, low:high])
        samples.is_sorted[pair, source] = True


@numba.njit(cache=True)
def finish_block(samples, edges, slot, source, target, stop) -> None:
    """Add the terms of samples ``done..stop`` (in the scratch) to the edge's partial sum in
    sample order and update its key."""
    pair = samples.pairs[slot, target]
    n = samples.offsets[pair + 1] - samples.offsets[pair]
    total = edges.partial[slot, source, target]
    for sample in range(edges.done[slot, source, target], stop):
        total += samples.scratch[sample]
    edges.partial[slot, source, target], edges.done[slot, source, target] = total, stop
    information = edge_key(total, stop, n, samples.head, samples.tails[pair], samples.floor)
    edges.key[slot, source, target] = information + edges.penalty[slot, source, target]
    edges.exact[slot, source, target] = stop == n
    update_column(edges, slot, target)


@numba.njit(cache=True)
def select_edge(samples, edges, psi, k, allowed, use_allowed):
    """Refine the first maximum of ``key`` until it is exact.

    Returns ``(EDGE, (slot, source, target), 0, no samples)``; ``(NO_EDGE, ...)`` when every
    candidate is at ``-inf``; or ``(TIES, edge, stop, tied)``: the block up to ``stop`` waits
    for the terms of the ``tied`` samples (the caller writes them into the scratch and calls
    :func:`finish_block`).
    """
    empty = np.empty(0, dtype=np.int64)
    while True:
        value, edge = _first_maximum(edges, allowed, use_allowed)
        if value == -np.inf:
            return NO_EDGE, edge, 0, empty
        slot, source, target = edge
        if edges.exact[slot, source, target]:
            return EDGE, edge, 0, empty
        pair = samples.pairs[slot, target]
        low, high = samples.offsets[pair], samples.offsets[pair + 1]
        _prepare(samples, source, pair)
        start = edges.done[slot, source, target]
        stop = _block_stop(start, high - low)
        tied = ksg_block_terms(
            samples.x_ordered[low:high],
            samples.y_by_x[: high - low],
            samples.rank[low:high],
            samples.sorted_columns[source, low:high],
            psi,
            k,
            start,
            stop,
            samples.scratch,
        )
        if tied.size:
            return TIES, edge, stop, tied
        finish_block(samples, edges, slot, source, target, stop)


@numba.njit(cache=True)
def refit_target(samples, edges, slot, target, candidates, xs, penalties) -> None:
    """Start the edges into ``target`` of ``slot`` afresh after a refit: the standardised,
    jittered residual ``xs`` sorted into the pair's rows, each candidate's key at its first
    bound plus its ``penalties`` entry, every other source at ``-inf``."""
    pair = samples.pairs[slot, target]
    low = samples.offsets[pair]
    sorting = np.argsort(xs)
    for position in range(xs.size):
        samples.x_ordered[low + position] = xs[sorting[position]]
        samples.order[low + position] = sorting[position]
        samples.rank[low + sorting[position]] = position
    for source in range(edges.key.shape[1]):
        edges.done[slot, source, target], edges.partial[slot, source, target] = 0, 0.0
        edges.penalty[slot, source, target], edges.key[slot, source, target] = 0.0, -np.inf
        edges.exact[slot, source, target] = False
    bound = edge_key(0.0, 0, xs.size, samples.head, samples.tails[pair], samples.floor)
    for position in range(candidates.size):
        source = candidates[position]
        edges.penalty[slot, source, target] = penalties[position]
        edges.key[slot, source, target] = bound + penalties[position]
    update_column(edges, slot, target)
