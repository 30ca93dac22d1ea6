"""Truncated multivariate Taylor arithmetic (jets) and the Taylor coefficients of the reward map
of a separable SEM (SSEM-UCB paper, Sec. III-B).

A jet in ``k`` variables of degree ``q`` stores the coefficients ``c_alpha`` of
``sum_{|alpha| <= q} c_alpha delta^alpha`` over the monomials of :class:`Monomials`. Pushed
through ``y = F(y) + u`` with ``u = x * (a + delta)`` (the super arm's members are the
variables), the jets of the nodes sum to the jet of ``r_x(b) = 1^T (I - F)^{-1}(x * b)``
about ``b = a``, whose coefficients are exactly ``D^alpha r_x(a) / alpha!`` (no finite
differences): each edge applies ``phi(y0 + h) = sum_n phi^(n)(y0) h^n / n!`` with truncated
products.
"""

from __future__ import annotations

import itertools
from functools import cache
from math import factorial

import numpy as np

from causalbandits.estimators.expansion import Expansion
from causalbandits.scm.basis import Dictionary
from causalbandits.scm.separable import ChordSEM


class Monomials:
    """The monomials ``delta^alpha``, ``|alpha| <= degree``, in ``n_vars`` variables: constant
    first, then by total degree, then lexicographically (so index ``1 + v`` is ``delta_v``).

    ``exponents`` is ``(M, n_vars)``; the products of non-constant monomials whose degree stays
    within ``degree`` are tabulated on the first product, sorted by the product monomial.
    """

    def __init__(self, n_vars: int, degree: int) -> None:
        if n_vars < 0 or degree < 0:
            raise ValueError(f"need n_vars >= 0 and degree >= 0, got {n_vars}, {degree}")
        self.n_vars, self.degree = int(n_vars), int(degree)
        rows = [
            alpha
            for total in range(self.degree + 1)
            for alpha in sorted(_compositions(self.n_vars, total), reverse=True)
        ]
        self.exponents = np.array(rows, dtype=np.int64).reshape(len(rows), self.n_vars)
        self.index = {tuple(map(int, e)): m for m, e in enumerate(self.exponents)}
        self.total_degree = self.exponents.sum(axis=1)
        self.factorials = np.array([np.prod([factorial(int(e)) for e in row]) for row in rows])

    @cache  # noqa: B019 (one table per instance and degree, kept with the cached instance)
    def _pairs(self, min_left: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The products of a left monomial of degree ``>= max(min_left, 1)`` and a non-constant
        right one that stay within ``degree``: left and right rows sorted by the product row,
        the product rows and where each starts (built on first use)."""
        left, right, target = [], [], []
        for i, a in enumerate(self.exponents):
            if self.total_degree[i] < max(min_left, 1):
                continue
            for j, b in enumerate(self.exponents):
                if self.total_degree[j]:
                    m = self.index.get(tuple(map(int, a + b)))
                    if m is not None:
                        left.append(i)
                        right.append(j)
                        target.append(m)
        order = np.argsort(target, kind="stable")
        targets = np.array(target, dtype=np.intp)[order]
        unique, starts = np.unique(targets, return_index=True)
        return (
            np.array(left, dtype=np.intp)[order],
            np.array(right, dtype=np.intp)[order],
            unique,
            starts,
        )

    @property
    def size(self) -> int:
        """``M = C(n_vars + degree, degree)``."""
        return len(self.exponents)

    def _pair_products(self, a: np.ndarray, b: np.ndarray, min_left: int = 1) -> np.ndarray:
        """The truncated product of the non-constant parts of ``a`` and ``b``, ``a``'s
        monomials below degree ``min_left`` being zero."""
        out = np.zeros(np.broadcast_shapes(a.shape, b.shape))
        left, right, targets, starts = self._pairs(min_left)
        if left.size:
            out[..., targets] = np.add.reduceat(a[..., left] * b[..., right], starts, axis=-1)
        return out

    def powers(self, h: np.ndarray, count: int) -> list[np.ndarray]:
        """``[h, h^2, ..., h^count]`` of a jet ``h`` without constant term (``h^(n-1)`` has no
        monomial below degree ``n - 1``, which prunes the products)."""
        out = [h]
        for n in range(2, count + 1):
            out.append(self._pair_products(out[-1], h, min_left=n - 1))
        return out


def _compositions(n_vars: int, total: int) -> list[tuple[int, ...]]:
    """Every exponent vector of ``n_vars`` non-negative integers summing to ``total``."""
    if n_vars == 0:
        return [()] if total == 0 else []
    return [
        tuple(np.bincount(c, minlength=n_vars))
        for c in itertools.combinations_with_replacement(range(n_vars), total)
    ]


@cache
def monomials(n_vars: int, degree: int) -> Monomials:
    """The (cached) :class:`Monomials` of ``n_vars`` variables and ``degree``."""
    return Monomials(n_vars, degree)


def input_jets(centres: np.ndarray, members: np.ndarray, basis: Monomials) -> np.ndarray:
    """The jets of ``u = x * (a + delta)``: ``(R, A, N, M)`` for centres ``a`` ``(R, N)`` and
    super arms of one size given by their ``members`` ``(A, k)``."""
    replicates, n = centres.shape
    count, k = members.shape
    jets = np.zeros((replicates, count, n, basis.size))
    rows = np.arange(count)[:, None]
    jets[:, rows, members, 0] = centres[:, members]
    jets[:, rows, members, 1 + np.arange(k)] = 1.0
    return jets


#: Super arms per block of :func:`reward_jets` (bounds its memory: ``(R, chunk, N, M)`` jets).
JET_CHUNK = 4096


def reward_jets(
    weights: np.ndarray,
    expansion: Expansion,
    centres: np.ndarray,
    members: np.ndarray,
    degree: int,
) -> np.ndarray:
    """Taylor coefficients ``D^alpha r_x(a) / alpha!`` of ``r_x(b) = 1^T (I - F)^{-1}(x * b)``
    about ``b = a``, for super arms of one size ``k``: ``(R, A, M)``.

    ``weights`` ``(R, N, N, K)`` define ``F`` on ``expansion.dictionary``
    (:class:`~causalbandits.scm.separable.SeparableSEM`), ``centres`` ``(R, N)`` the expansion
    points ``a``, ``members`` ``(A, k)`` the super arms, in blocks of :data:`JET_CHUNK`. With
    ``expansion.upper_triangular`` one backward sweep in the paper's node order is exact (a
    DAG). Otherwise (cycles, Prop. IV.4) the constant terms are the cyclic solve ``y0 = F(y0) +
    x * a`` (:class:`~causalbandits.scm.separable.ChordSEM` to ``expansion.tol``, which raises
    :class:`~causalbandits.scm.separable.ConvergenceError` when ``F`` is not a contraction
    there: a fitted ``F`` then has no equilibrium the process reaches), and each degree
    ``d = 1..q`` is one linear solve: the degree-``d`` terms of ``Y = F(Y) + U`` are
    ``J h_d + (terms of lower degrees)`` with ``J = dF/dy (y0)``, so
    ``Y_d = (I - J)^{-1} (U_d + [F(Y_{<d})]_d)``, the limit of the fixed point on the jets
    reached in ``q`` steps instead of iterated sweeps. ``expansion.derivatives`` is not
    consulted (these are the exact coefficients).
    """
    basis = monomials(members.shape[1], degree)
    weights = np.asarray(weights, dtype=float)
    dictionary = expansion.dictionary
    out = np.empty((centres.shape[0], members.shape[0], basis.size))
    for start in range(0, members.shape[0], JET_CHUNK):
        block = slice(start, start + JET_CHUNK)
        inputs = input_jets(centres, members[block], basis)  # (R, A, N, M)
        if expansion.upper_triangular:
            jets = _backward_jets(weights, dictionary, inputs, basis, degree)
        else:
            jets = _cyclic_jets(weights, expansion, inputs, basis, degree)
        out[:, block] = jets.sum(axis=2)
    return out


def _edges_from(weights: np.ndarray, parent: int, count: int) -> tuple[np.ndarray, np.ndarray]:
    """The children of ``parent`` in some replicate and their edge coefficients repeated for
    ``count`` super arms per replicate, ``(R * count, C, K)``."""
    kids = np.flatnonzero(np.any(weights[:, :, parent], axis=(0, 2)))
    edges = weights[:, None, kids, parent]  # (R, 1, C, K)
    shape = (weights.shape[0] * count, kids.size, weights.shape[3])
    return kids, np.broadcast_to(edges, (weights.shape[0], count, *edges.shape[2:])).reshape(shape)


def _backward_jets(
    weights: np.ndarray, dictionary: Dictionary, inputs: np.ndarray, basis: Monomials, degree: int
) -> np.ndarray:
    """The node jets ``(R, A, N, M)`` of a DAG in the paper's order: one backward sweep."""
    replicates, count, n, size = inputs.shape
    y = inputs.reshape(replicates * count, n, size).copy()
    for j in range(n - 1, 0, -1):
        kids, edges = _edges_from(weights, j, count)
        if kids.size:
            y[:, kids] += _pushed(y[:, j], edges, dictionary, basis, degree)
    return y.reshape(inputs.shape)


def _cyclic_jets(
    weights: np.ndarray, expansion: Expansion, inputs: np.ndarray, basis: Monomials, degree: int
) -> np.ndarray:
    """The node jets ``(R, A, N, M)`` of a cyclic ``F``, degree by degree (:func:`reward_jets`)."""
    replicates, count, n, size = inputs.shape
    dictionary = expansion.dictionary
    sem = ChordSEM(weights, dictionary, tol=expansion.tol, max_iter=expansion.max_iter)
    constant = sem.solve(inputs[..., 0])  # (R, A, N)
    system = np.eye(n) - sem.jacobian(constant)  # (R, A, N, N)
    y = np.zeros((replicates * count, n, size))
    y[:, :, 0] = constant.reshape(-1, n)
    children = [_edges_from(weights, j, count) for j in range(n)]
    for d in range(1, degree + 1):
        columns = np.flatnonzero(basis.total_degree == d)
        if not columns.size:  # the empty super arm: a constant
            break
        right = inputs.reshape(-1, n, size)[:, :, columns].copy()
        for j, (kids, edges) in enumerate(children):
            if kids.size:
                right[:, kids] += _pushed(y[:, j], edges, dictionary, basis, d)[:, :, columns]
        shaped = right.reshape(replicates, count, n, columns.size)
        y[:, :, columns] = np.linalg.solve(system, shaped).reshape(-1, n, columns.size)
    return y.reshape(inputs.shape)


def _pushed(
    parent: np.ndarray, edges: np.ndarray, dictionary: Dictionary, basis: Monomials, degree: int
) -> np.ndarray:
    """The jets ``sum_k W[i, j, k] phi_k(Y_j)`` a parent ``j`` (jets ``(B, M)``) adds to its
    children ``i`` (edge coefficients ``(B, C, K)``): ``(B, C, M)``."""
    centre = parent[:, 0]
    h = parent.copy()
    h[:, 0] = 0.0
    derivatives = dictionary.derivatives(centre, degree)  # (K, q + 1, B)
    scaled = derivatives / np.array([factorial(n) for n in range(degree + 1)])[:, None]
    coefficients = np.einsum("bck,knb->bcn", edges, scaled)  # (B, C, q + 1)
    out = coefficients[:, :, :1] * np.eye(1, basis.size)  # constant terms
    moving = np.flatnonzero(np.any(h, axis=1))  # super arms that reach j: the others stay put
    if degree and moving.size:
        for n, power in enumerate(basis.powers(h[moving], degree), start=1):
            out[moving] += coefficients[moving, :, n, None] * power[:, None, :]
    return out
