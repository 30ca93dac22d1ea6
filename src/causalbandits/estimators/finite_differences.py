"""Taylor coefficients of the reward map by central finite differences (SSEM-UCB paper,
Sec. III-B; App. -G1: the experiments differentiate numerically, with "minuscule thresholds").

The coefficients of ``r_x(b) = 1^T (I - F)^{-1}(x * b)`` about ``b = a`` (Sec. III-B),

    c_alpha = D^alpha r_x(a) / alpha!,   supp alpha in I(x), |alpha| <= q,

are approximated by the tensor product of one-dimensional central differences, one per
member ``j`` of the super arm with ``alpha_j > 0``:

    D^alpha r_x(a) ~ h^(-|alpha|) sum_o (prod_j w^(alpha_j)_(o_j)) r_x(a + h o),

where ``w^(p)`` are the weights of the ``O(h^2)`` central difference of order ``p`` on the
offsets ``-m..m``, ``m = ceil(p / 2)`` (:func:`central_stencil`; e.g. ``(f(h) - f(-h)) / 2h``,
``(f(h) - 2 f(0) + f(-h)) / h^2``). The error is ``O(h^2)`` truncation (the next even
derivatives) plus rounding of about ``eps |r| / h^|alpha|`` (``eps`` the machine epsilon), so
the step ``h`` trades the two: at ``q = 4`` and ``|r| ~ 1``, ``h = 1e-3`` (:data:`~causalbandits.
estimators.expansion.FD_STEP`)
keeps the rounding near ``1e-4`` on the fourth derivatives, ``h = 1e-4`` makes it about 1.

:func:`reward_jets` (``derivatives="exact"``) computes the same coefficients exactly with
jets; :func:`taylor_coefficients` dispatches between the two.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from fractions import Fraction
from functools import cache
from math import factorial, prod

import numpy as np

from causalbandits.estimators.expansion import Expansion
from causalbandits.estimators.jets import monomials, reward_jets
from causalbandits.scm.separable import ChordSEM, ConvergenceError, SeparableSEM

#: Evaluation points ``r_x(a + h o)`` per block of :func:`finite_difference_jets` (bounds the
#: memory of the ``(R, A, P, N)`` inputs to about 64 MB).
FD_POINTS = 800_000
#: Newton steps that polish a cyclic solve to rounding before it is differenced.
POLISH_STEPS = 2

Solver = Callable[[np.ndarray], np.ndarray]


@cache
def central_stencil(order: int) -> tuple[tuple[int, ...], tuple[Fraction, ...]]:
    """The ``O(h^2)`` central difference of ``order`` ``p``: offsets ``o`` and exact weights
    ``w`` with ``f^(p)(a) = h^(-p) sum_o w_o f(a + o h) + O(h^2)`` (zero weights dropped).

    The weights are ``p!`` times the ``t^p`` coefficients of the Lagrange basis polynomials
    on the ``2m + 1`` offsets ``-m..m``, ``m = ceil(p / 2)``: the differentiated interpolant,
    exact for polynomials of degree ``2m`` and, by symmetry, of error ``O(h^2)``."""
    if int(order) != order or order < 0:
        raise ValueError(f"the derivative order must be an integer >= 0, got {order}")
    if order == 0:
        return (0,), (Fraction(1),)
    reach = (order + 1) // 2
    grid = range(-reach, reach + 1)
    offsets, weights = [], []
    for o in grid:
        weight = factorial(order) * _lagrange_coefficient(o, grid, order)
        if weight:
            offsets.append(o)
            weights.append(weight)
    return tuple(offsets), tuple(weights)


def _lagrange_coefficient(node: int, grid: range, power: int) -> Fraction:
    """The ``t^power`` coefficient of ``prod_{g != node} (t - g) / (node - g)``, exactly."""
    coefficients = [Fraction(1)]  # ascending powers of t
    for g in grid:
        if g == node:
            continue
        shifted = [Fraction(0), *coefficients]  # t * p(t)
        coefficients = [
            (shifted[i] - g * (coefficients[i] if i < len(coefficients) else 0)) / (node - g)
            for i in range(len(shifted))
        ]
    return coefficients[power] if power < len(coefficients) else Fraction(0)


@cache
def stencil_table(n_vars: int, degree: int) -> tuple[np.ndarray, np.ndarray]:
    """The points and weights of every Taylor coefficient of :func:`~causalbandits.estimators.
    jets.monomials` ``(n_vars, degree)``: the union of the tensor-product stencils' offsets
    ``(P, n_vars)`` and a matrix ``(M, P)`` with ``c_alpha ~ h^(-|alpha|) sum_o W[alpha, o]
    r(a + h o)`` (``W`` includes ``1 / alpha!``)."""
    basis = monomials(n_vars, degree)
    columns: dict[tuple[int, ...], int] = {}
    entries: list[tuple[int, int, float]] = []
    for row, alpha in enumerate(basis.exponents):
        stencils = [central_stencil(int(p)) for p in alpha]
        for combination in itertools.product(*(zip(*s, strict=True) for s in stencils)):
            offset = tuple(o for o, _ in combination)
            weight = prod((w for _, w in combination), start=Fraction(1))
            column = columns.setdefault(offset, len(columns))
            entries.append((row, column, float(weight / int(basis.factorials[row]))))
    table = np.zeros((basis.size, len(columns)))
    for row, column, weight in entries:
        table[row, column] += weight
    offsets = np.array(list(columns), dtype=float).reshape(len(columns), n_vars)
    return offsets, table


def finite_difference_jets(
    weights: np.ndarray,
    expansion: Expansion,
    centres: np.ndarray,
    members: np.ndarray,
    degree: int,
) -> np.ndarray:
    """Central-difference Taylor coefficients ``c_alpha ~ D^alpha r_x(a) / alpha!`` about
    ``b = a`` of super arms of one size ``k`` (see the module docstring): ``(R, A, M)``, the
    layout of :func:`~causalbandits.estimators.jets.reward_jets`.

    ``weights`` ``(R, N, N, K)`` define ``F`` on ``expansion.dictionary``, ``centres``
    ``(R, N)`` the points ``a``, ``members`` ``(A, k)`` the super arms and
    ``expansion.fd_step`` the ``h``. All super arms (in blocks of :data:`FD_POINTS`
    evaluations) and stencil points are solved at once: with ``expansion.upper_triangular`` by
    one backward sweep, otherwise by the cyclic solve
    (:class:`~causalbandits.scm.separable.ChordSEM`, tolerance ``expansion.tol``; it raises
    :class:`~causalbandits.scm.separable.ConvergenceError` when ``F`` is no contraction
    there) polished by :data:`POLISH_STEPS` Newton steps, since the stopping tolerance would
    otherwise be amplified by ``h^(-|alpha|)``."""
    step = expansion.fd_step
    weights = np.asarray(weights, dtype=float)
    centres = np.asarray(centres, dtype=float)
    offsets, table = stencil_table(members.shape[1], degree)
    orders = monomials(members.shape[1], degree).total_degree
    scaled = table * float(step) ** -orders[:, None].astype(float)  # (M, P)
    solve = _solver(weights, expansion)
    out = np.empty((centres.shape[0], members.shape[0], table.shape[0]))
    chunk = max(1, FD_POINTS // (centres.shape[0] * len(offsets)))
    for start in range(0, members.shape[0], chunk):
        block = slice(start, start + chunk)
        values = stencil_rewards(solve, centres, members[block], float(step) * offsets)
        out[:, block] = values @ scaled.T
    return out


def stencil_rewards(
    solve: Solver, centres: np.ndarray, members: np.ndarray, displacements: np.ndarray
) -> np.ndarray:
    """``r_x(a + d) = 1^T y`` with ``y = F(y) + x * (a + d)`` at every displacement ``d``
    ``(P, k)`` of the members ``(A, k)`` of each super arm ``x``: ``(R, A, P)``."""
    replicates, n = centres.shape
    count = members.shape[0]
    inputs = np.zeros((replicates, count, len(displacements), n))
    points = centres[:, members][:, :, None, :] + displacements[None, None]  # (R, A, P, k)
    index = np.broadcast_to(members[None, :, None, :], points.shape)
    np.put_along_axis(inputs, index, points, axis=-1)
    return solve(inputs).sum(axis=-1)


def _solver(weights: np.ndarray, expansion: Expansion) -> Solver:
    """``u -> y`` solving ``y = F(y) + u`` for inputs ``(R, ..., N)``."""
    if expansion.upper_triangular:
        return SeparableSEM(weights, expansion.dictionary, method="backward").solve
    sem = ChordSEM(weights, expansion.dictionary, tol=expansion.tol, max_iter=expansion.max_iter)

    def solve(u: np.ndarray) -> np.ndarray:
        return polished(sem, u, sem.solve(u))

    return solve


def polished(sem: SeparableSEM, u: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``y`` after :data:`POLISH_STEPS` Newton steps on ``y - F(y) - u = 0``
    (:class:`~causalbandits.scm.separable.ConvergenceError` at a singular ``I - dF/dy``)."""
    eye = np.eye(sem.n_nodes)
    for _ in range(POLISH_STEPS):
        residual = y - sem.mechanisms(y) - u
        system = eye - sem.jacobian(y)
        try:
            y = y - np.linalg.solve(system, residual[..., None])[..., 0]
        except np.linalg.LinAlgError as error:
            raise ConvergenceError(f"Newton's polish met a singular I - dF/dy: {error}") from error
    return y


def taylor_coefficients(
    weights: np.ndarray,
    expansion: Expansion,
    centres: np.ndarray,
    members: np.ndarray,
    degree: int,
) -> np.ndarray:
    """``D^alpha r_x(a) / alpha!`` ``(R, A, M)`` of super arms of one size (Sec. III-B), by
    exact jets (:func:`~causalbandits.estimators.jets.reward_jets`,
    ``expansion.derivatives="exact"``) or by central differences of step ``expansion.fd_step``
    (:func:`finite_difference_jets`, ``"finite-difference"``, the paper's numerical
    derivatives, App. -G1)."""
    if expansion.derivatives == "exact":
        return reward_jets(weights, expansion, centres, members, degree)
    return finite_difference_jets(weights, expansion, centres, members, degree)
