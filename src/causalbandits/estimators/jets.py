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

from causalbandits.scm.basis import Dictionary


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


def reward_jets(
    weights: np.ndarray,
    dictionary: Dictionary,
    centres: np.ndarray,
    members: np.ndarray,
    degree: int,
    upper_triangular: bool = True,
    tol: float = 1e-12,
    max_iter: int = 200,
) -> np.ndarray:
    """Taylor coefficients ``D^alpha r_x(a) / alpha!`` of ``r_x(b) = 1^T (I - F)^{-1}(x * b)``
    about ``b = a``, for super arms of one size ``k``: ``(R, A, M)``.

    ``weights`` ``(R, N, N, K)`` define ``F`` (:class:`~causalbandits.scm.separable.
    SeparableSEM`), ``centres`` ``(R, N)`` the expansion points ``a``, ``members`` ``(A, k)``
    the super arms. With ``upper_triangular`` one backward sweep in the paper's node order
    is exact (a DAG); otherwise the fixed point ``Y <- F(Y) + U`` is iterated on the jets
    (a cyclic ``F`` must be a contraction there) and :class:`~causalbandits.scm.separable.
    ConvergenceError` is raised when it does not converge in ``max_iter`` sweeps.
    """
    from causalbandits.scm.separable import ConvergenceError

    basis = monomials(members.shape[1], degree)
    replicates, n = centres.shape
    count = members.shape[0]
    y = input_jets(centres, members, basis).reshape(replicates * count, n, basis.size)
    weights = np.asarray(weights, dtype=float)
    w = np.repeat(weights, count, axis=0)  # (B, N, N, K)
    # the children of each node in some replicate: only they receive its jet
    children = [np.flatnonzero(np.any(weights[:, :, j], axis=(0, 2))) for j in range(n)]
    if upper_triangular:
        for j in range(n - 1, 0, -1):
            kids = children[j]
            if kids.size:
                y[:, kids] += _pushed(y[:, j], w[:, kids, j], dictionary, basis, degree)
        return y.sum(axis=1).reshape(replicates, count, basis.size)
    inputs = y.copy()
    for _ in range(max_iter):
        new = inputs.copy()
        for j in range(n):
            kids = children[j]
            if kids.size:
                new[:, kids] += _pushed(y[:, j], w[:, kids, j], dictionary, basis, degree)
        if not np.all(np.isfinite(new)):
            break
        change = np.abs(new - y).max(initial=0.0)
        y = new
        if change <= tol * max(1.0, np.abs(y).max(initial=0.0)):
            return y.sum(axis=1).reshape(replicates, count, basis.size)
    raise ConvergenceError(
        f"the fixed point of the jets did not converge in {max_iter} sweeps: the fitted F is "
        "not a contraction about these centres"
    )


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
