"""Per-arm moments, their confidence boxes and the optimistic Taylor-moment payoff
(SSEM-UCB paper, eqs. 6-7 and Sec. III-B/C).

By independence of the base arms, the expected payoff of a super arm ``x`` is

    mu(x) = sum_{|alpha| <= q, supp alpha in I(x)} c_alpha prod_j phi^(alpha_j)[j] + E[R_{q+1}],

with ``c_alpha = D^alpha r_x(a) / alpha!`` (:func:`~causalbandits.estimators.jets.
reward_jets`) and the central moments ``phi^(p)[j] = E[(b_j - a_j)^p]``. The learner replaces
the moments by their estimates (eq. 6) and moves each within its confidence radius (eq. 7):
the internal UCB ``I^max``. The objective is multilinear in the per-arm factors, so its maximum
over the box is attained at a vertex (:func:`vertex_maximum`, exponential in ``q |I(x)|``);
the paper's experiments bound each addend separately (:func:`per_addend_maximum`, App. -G1),
an upper bound on the vertex maximum that is equal to it at ``q = 1``.
"""

from __future__ import annotations

import itertools
from math import comb

import numpy as np

#: Radius multipliers per moment order ``p`` (decisions: ssem-ucb 5): the main text's
#: ``2^(p mod 2)`` (2 for odd, 1 for even ``p``) or the proof's ``2^(2 mod p)`` (eq. 20).
RADIUS_RULES = ("main", "proof")


class PowerSums:
    """Per-arm power sums ``S_k[j] = sum_tau z_tau[j]^k`` over the rounds arm ``j`` was played,
    ``k = 0..degree`` (``S_0`` = the play counts ``m``), for ``R`` replicates."""

    def __init__(self, replicates: int, n_arms: int, degree: int) -> None:
        if degree < 1:
            raise ValueError(f"the Taylor degree q must be >= 1, got {degree}")
        self.degree = int(degree)
        self.sums = np.zeros((replicates, self.degree + 1, n_arms))

    @property
    def counts(self) -> np.ndarray:
        """``m`` ``(R, N)``: how often each arm has been played."""
        return self.sums[:, 0]

    def add(self, z: np.ndarray, played: np.ndarray) -> None:
        """Add the observed signals ``z`` ``(R, N)`` of the ``played`` arms (O(q N))."""
        powers = np.where(played, z, 0.0)[:, None, :] ** np.arange(self.degree + 1)[:, None]
        self.sums += np.where(played[:, None, :], powers, 0.0)

    def means(self) -> np.ndarray:
        """``beta_hat = S_1 / m`` (eq. 8), 0 for arms never played."""
        return self.sums[:, 1] / np.maximum(self.counts, 1)

    def central_moments(self, centres: np.ndarray) -> np.ndarray:
        """``phi_hat^(p)[j] = sum_tau (z_tau[j] - a[j])^p / m[j]`` (eq. 6), ``p = 0..q``, from
        the power sums in O(q^2): ``(R, q + 1, N)`` (``phi^(0) = 1``; 0 for unplayed arms)."""
        q = self.degree
        counts = np.maximum(self.counts, 1)
        shifted = -np.asarray(centres, dtype=float)
        out = np.zeros_like(self.sums)
        for p in range(q + 1):
            for k in range(p + 1):
                out[:, p] += comb(p, k) * shifted ** (p - k) * self.sums[:, k]
        out /= counts[:, None, :]
        out[:, 0] = 1.0
        return out


def confidence_radius(t: int, counts: np.ndarray, super_arm_size: int) -> np.ndarray:
    """``C_t[j] = sqrt((s + 1) ln t / m_t[j])`` (eq. 7); ``inf`` for arms never played."""
    counts = np.asarray(counts, dtype=float)
    log_t = np.log(max(int(t), 1))
    with np.errstate(divide="ignore"):
        return np.where(counts > 0, np.sqrt((super_arm_size + 1) * log_t / counts), np.inf)


def radius_multipliers(degree: int, rule: str = "main") -> np.ndarray:
    """``k_p`` for ``p = 0..q`` (``k_0 = 0``: the zeroth moment is exactly 1)."""
    if rule not in RADIUS_RULES:
        raise ValueError(f"rule must be one of {RADIUS_RULES}, got {rule!r}")
    orders = np.arange(1, degree + 1)
    main = 2.0 ** (orders % 2)
    values = main if rule == "main" else np.array([2.0 ** (2 % p) for p in orders])
    return np.concatenate([[0.0], values])


def moment_box(
    moments: np.ndarray,
    radius: np.ndarray,
    multipliers: np.ndarray,
    width: float | None = 1.0,
) -> tuple[np.ndarray, np.ndarray]:
    """The confidence box ``phi_hat^(p) -+ k_p C`` of every arm and order, ``(R, q + 1, N)``
    each; clipped to the range of the true moments (decisions: ssem-ucb 5) when the signals and
    centres lie in an interval of ``width``: ``[0, width^p]`` for even ``p``, ``[-width^p,
    width^p]`` for odd ``p`` (``None``: no clipping)."""
    spread = multipliers[None, :, None] * np.asarray(radius)[:, None, :]
    low, high = moments - spread, moments + spread
    low[:, 0] = high[:, 0] = 1.0
    if width is not None:
        orders = np.arange(moments.shape[1])[None, :, None]
        top = float(width) ** orders
        bottom = np.where(orders % 2 == 0, 0.0, -top)
        low, high = np.clip(low, bottom, top), np.clip(high, bottom, top)
    return low, high


def interval_product(
    low: np.ndarray, high: np.ndarray, axis: int = -1
) -> tuple[np.ndarray, np.ndarray]:
    """The product of intervals ``[low, high]`` along ``axis`` (interval arithmetic)."""
    low, high = np.moveaxis(low, axis, 0), np.moveaxis(high, axis, 0)
    lo, hi = low[0], high[0]
    for lo2, hi2 in zip(low[1:], high[1:], strict=True):
        corners = np.stack([lo * lo2, lo * hi2, hi * lo2, hi * hi2])
        lo, hi = corners.min(axis=0), corners.max(axis=0)
    return lo, hi


def addend_intervals(
    exponents: np.ndarray, members: np.ndarray, low: np.ndarray, high: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The interval of ``prod_j (phi_hat + W)^(alpha_j)[j]`` of every monomial ``alpha`` of
    every super arm: ``(R, A, M)`` each, for super arms of one size ``k`` (``members`` ``(A,
    k)``, ``exponents`` ``(M, k)``) and moment boxes ``(R, q + 1, N)``."""
    if members.shape[1] == 0:
        shape = (low.shape[0], members.shape[0], exponents.shape[0])
        return np.ones(shape), np.ones(shape)
    lows = low[:, exponents[None, :, :], members[:, None, :]]  # (R, A, M, k)
    highs = high[:, exponents[None, :, :], members[:, None, :]]
    return interval_product(lows, highs)


class MonomialTable:
    """Every monomial ``prod_j phi^(alpha_j)[j]`` of degree ``<= q`` in the ``N`` arms, and where
    each super arm's addends sit in it.

    An addend's interval depends on its (arm, order) pairs only, not on the super arm it belongs
    to, so the ``C(N + q, q)`` intervals (1,001 for ``N = 10, q = 4``) are computed once per
    round and every super arm's ``(A, M)`` addends are gathered from them (:meth:`index`),
    instead of multiplying ``k`` intervals for each of the ``sum_k C(N, k) C(k + q, q)``
    addends.
    """

    def __init__(self, n_arms: int, degree: int) -> None:
        from causalbandits.estimators.jets import monomials

        exponents = monomials(n_arms, degree).exponents  # (G, N)
        self.base = degree + 1
        self.codes = exponents @ self.base ** np.arange(n_arms, dtype=np.int64)
        self.order = np.argsort(self.codes)
        keep = min(degree, n_arms)
        support = np.argsort(-exponents, axis=1, kind="stable")[:, :keep]  # non-zero first
        self.arms = support
        self.orders = np.take_along_axis(exponents, support, axis=1)  # 0 pads: factor 1

    def index(self, exponents: np.ndarray, members: np.ndarray) -> np.ndarray:
        """The rows ``(A, M)`` of the addends ``exponents`` ``(M, k)`` of the super arms with
        ``members`` ``(A, k)``."""
        powers = self.base ** members.astype(np.int64)  # (A, k)
        codes = (powers[:, None, :] * exponents[None, :, :]).sum(axis=-1)
        return self.order[np.searchsorted(self.codes, codes, sorter=self.order)]

    def intervals(self, low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The interval of every monomial, ``(R, G)`` each, from moment boxes ``(R, q + 1, N)``."""
        return interval_product(low[:, self.orders, self.arms], high[:, self.orders, self.arms])


def per_addend_maximum(
    coefficients: np.ndarray, addend_low: np.ndarray, addend_high: np.ndarray
) -> np.ndarray:
    """The paper's internal UCB (App. -G1): each addend ``c_alpha * prod`` at the end of its
    interval that its sign favours, summed: ``(R, A)``."""
    return np.where(coefficients >= 0, coefficients * addend_high, coefficients * addend_low).sum(
        axis=-1
    )


def vertex_maximum(
    coefficients: np.ndarray, exponents: np.ndarray, low: np.ndarray, high: np.ndarray
) -> float:
    """The exact ``I^max`` of one super arm (Sec. III-B): the largest value of ``sum_alpha
    c_alpha prod_j F[alpha_j, j]`` over the ``2^(q k)`` vertices of the box ``F[p, j] in
    [low[p, j], high[p, j]]`` (``F[0, j] = 1``). ``coefficients`` ``(M,)``, ``exponents``
    ``(M, k)``, ``low``/``high`` ``(q + 1, k)``; exponential: for small ``q k`` only."""
    degree, k = low.shape[0] - 1, low.shape[1]
    if degree * k == 0:  # one vertex, every factor F[0, j] = 1 (e.g. the empty super arm)
        return float(np.sum(coefficients))
    if degree * k > 22:
        raise ValueError(f"2^(q k) = 2^{degree * k} vertices: too many to enumerate")
    corners = np.array(list(itertools.product((0, 1), repeat=degree * k)), dtype=bool)
    corners = corners.reshape(-1, degree, k)
    factors = np.where(corners, high[None, 1:], low[None, 1:])  # (V, q, k)
    factors = np.concatenate([np.ones((len(corners), 1, k)), factors], axis=1)
    terms = factors[:, exponents, np.arange(k)].prod(axis=-1)  # (V, M)
    return float((terms @ coefficients).max())


def external_ucb(
    t: int,
    counts: np.ndarray,
    super_arm_size: int,
    members: np.ndarray,
    form: str = "max",
    joint: bool = False,
) -> np.ndarray:
    """The graph-learning bonus ``E_t(x)`` of super arms of one size (Sec. III-C): ``(R, A)``.

    ``form="max"``: ``max_i x[i] 4 C_{t-1}[i] sqrt(ln(t - 1))`` (eq. 9's term); ``"sum"``:
    the short-horizon form ``sum_i x[i] 4 C_{t-1}[i] sqrt(ln(t - 1)) / s`` (App. -G2). With
    ``joint`` (Alg. 2) it is multiplied by ``sqrt(sqrt(t - 1) / ln(t - 1))``, written as
    ``4 sqrt((s + 1) ln(t - 1)) (t - 1)^(1/4) / sqrt(m)`` so that ``t = 2`` gives 0, not NaN.
    ``counts`` are ``m_{t-1}`` ``(R, N)``; the empty super arm has no bonus.
    """
    if form not in ("max", "sum"):
        raise ValueError(f"form must be 'max' or 'sum', got {form!r}")
    if members.shape[1] == 0:
        return np.zeros((counts.shape[0], members.shape[0]))
    log_t = np.log(max(int(t) - 1, 1))
    inverse_root = 1.0 / np.sqrt(np.maximum(counts, 1e-300))[:, members]  # (R, A, k)
    if form == "max":
        per_arm = inverse_root.max(axis=-1)
    else:
        per_arm = inverse_root.sum(axis=-1) / super_arm_size
    if joint:
        scale = 4.0 * np.sqrt((super_arm_size + 1) * log_t) * max(int(t) - 1, 0) ** 0.25
    else:
        scale = 4.0 * np.sqrt(super_arm_size + 1) * log_t
    return scale * per_arm
