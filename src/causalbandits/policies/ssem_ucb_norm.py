"""SSEM-UCB-Norm (Bauschmann & Maghsudi, arXiv 2606.14650, App. -B2, Alg. 3) for Gaussian base
arms, on ``R`` replicates.

For normal arms the central moments are ``E(b - mu)^(2p) = (2p - 1)!! sigma^(2p)`` and 0 for odd
orders (App. -F4), so only even multi-indices enter the Taylor sum and each arm needs two
confidence scores: a mean shift ``C in prod_i [-C_i, C_i]`` applied to the derivatives'
argument and a variance shift ``W in prod_i {-C_i, +C_i}``. Alg. 3 selects

    argmax_x  w_E E_t(x) + max_{C, W} sum_{|alpha| <= q, alpha even}
        D^alpha r_hat(x * (beta_hat + C)) / alpha!!  prod_{j in I(x)} V_j^(alpha_j / 2),
    V_j = m~_j phi_hat^(2)_j + sqrt(m~_j) W_j,

with the Bessel factor ``m~ = m / (m - 1)`` and the initial blocks played twice (``m >= 2``).

How it is evaluated. The jets give ``c_beta = D^beta r_hat_x(a) / beta!``, the degree-``q``
Taylor polynomial ``P`` of ``r_hat_x`` about the centre ``a``. Write the argument ``beta_hat +
C = a + d``. The derivatives of ``P`` there are ``D^gamma P(a + d) / gamma! = sum_{beta >=
gamma} c_beta C(beta, gamma) d^(beta - gamma)`` and ``D^gamma / gamma!! = (D^gamma /
gamma!) prod_j (gamma_j - 1)!!``, so Alg. 3's sum for ``P`` is, exactly,

    sum_{|beta| <= q} c_beta prod_j M_{beta_j}(d_j, V_j),
    M_p(d, V) = E[(d + sqrt(V) Z)^p] = sum_{g even <= p} C(p, g) (g - 1)!! d^(p - g) V^(g/2),

the JO Taylor-moment sum with the raw moments about ``a`` of ``N(a + d, V)`` (testable
property 9: with ``d = 0`` these are the Gaussian central moments). The maximum over ``(C,
W)`` is bounded per addend, as the JO rule of App. -G1: every arm's ``M_p`` ranges exactly
over its box of ``(d, V)`` (:func:`gaussian_moment_box`: ``M_p`` rises with ``V``; odd ``M_p``
rises with ``d`` and has its sign, even ``M_p`` is even and convex in ``d``), the product of
the arms' ranges is exact (independent arms) and each addend takes the end its coefficient's
sign favours. The cost per round is about JO's: one range per monomial of the ``N`` arms
(:class:`~causalbandits.estimators.taylor_moments.MonomialTable`, the base class's), gathered
by every super arm.

Decisions (the paper is silent or ambiguous):

- Mean shift. The maximum over the continuous box of ``C`` is the per-addend bound above (an
  upper bound on the joint maximum, like JO's). The alternative, the ``2^|I(x)|``
  vertices of ``C`` plus 0, would need ``2^s + 1`` jet evaluations per super arm and round.
  Derivatives at ``beta_hat + C`` are those of ``P`` (exact when ``r_hat`` is a polynomial of
  degree ``<= q``), so the jets are reused between refits.
- Centre. The base class freezes the centres ``a`` (the empirical means at the last refit)
  between refits, so the jets are reused; ``a_t = beta_hat_{t-1}`` holds at every refit. In
  between, the power sums give the current ``beta_hat_{t-1}``: the argument ``beta_hat_{t-1} +
  C`` is ``a + d`` with ``d in [phi_1 - C, phi_1 + C]``, ``phi_1 = beta_hat - a`` (0 right
  after a refit). The variance is the one Alg. 3 intends, eq. 6's second moment about
  ``a_t = beta_hat_{t-1}`` (the biased sample variance ``S_2/m - beta_hat^2``, which equals
  ``phi_2 - phi_1^2`` about any frozen centre), times ``m~``: not the second moment about the
  frozen centre.
- Clipping: the variance base ``m~ phi_hat^(2) + sqrt(m~) W`` at 0 (spec); with
  ``signal_width`` ``w`` (signals in an interval of width ``w``), the shift to ``[-w, w]`` and
  the variance to ``w^2 / 4`` (Popoviciu's bound).
- Weight of ``E_t``: Alg. 3 prints ``E_t(x)`` unweighted, eq. 9 weights it by the internal span
  ``Delta^I``; ``bonus_weight="span"`` (default, consistent with eq. 9) or ``"none"``. ``E_t``
  has no Alg. 2 factor (:attr:`joint` is ``False``: Alg. 3 is "exactly as SSEM-UCB").
- Graph fit: the joint fit of Alg. 2 (the experiments run Alg. 3
  alongside JO). ``radius_rule`` is unused: Alg. 3's radii are ``C`` for the mean and
  ``sqrt(m~) C`` for the variance.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

import numpy as np

from causalbandits.estimators.taylor_moments import confidence_radius
from causalbandits.policies.ssem_ucb import SSEMUCBJO, SSEMOptions, selection_scores

BONUS_WEIGHTS = ("span", "none")


def double_factorial(n: int) -> int:
    """``n!! = n (n - 2) (n - 4) ...`` (1 for ``n <= 0``)."""
    return prod(range(n, 0, -2))


def gaussian_moments(shift: np.ndarray, variance: np.ndarray, degree: int) -> np.ndarray:
    """``M_p(d, V) = E[(d + sqrt(V) Z)^p]``, ``Z ~ N(0, 1)``, for ``p = 0..q``: the raw moments
    about ``a`` of ``N(a + d, V)``, ``(*shape, q + 1)`` for ``shift`` and ``variance`` of one
    shape, by the recursion ``M_{p+1} = d M_p + p V M_{p-1}`` (``M_0 = 1``, ``M_1 = d``); so
    ``M_p = sum_{g even} C(p, g) (g - 1)!! d^(p - g) V^(g/2)``."""
    shift, variance = np.broadcast_arrays(
        np.asarray(shift, dtype=float), np.asarray(variance, dtype=float)
    )
    out = np.empty((*shift.shape, degree + 1))
    out[..., 0] = 1.0
    if degree:
        out[..., 1] = shift
    for p in range(1, degree):
        out[..., p + 1] = shift * out[..., p] + p * variance * out[..., p - 1]
    return out


def gaussian_moment_box(
    shift_low: np.ndarray,
    shift_high: np.ndarray,
    variance_low: np.ndarray,
    variance_high: np.ndarray,
    degree: int,
) -> tuple[np.ndarray, np.ndarray]:
    """The exact range of ``M_p(d, V)`` (:func:`gaussian_moments`) over ``d in [shift_low,
    shift_high]``, ``V in [variance_low, variance_high]`` (``(R, N)`` each, ``V >= 0``), for
    ``p = 0..q``: ``(R, q + 1, N)`` each (the layout of
    :func:`~causalbandits.estimators.taylor_moments.moment_box`).

    ``dM_p/dV = C(p, 2) M_{p-2} >= 0`` for even ``p`` and ``dM_p/dd = p M_{p-1} >= 0`` for odd
    ``p``; odd ``M_p`` has the sign of ``d`` and even ``M_p`` is even and convex in ``d``. So
    the extremes of odd orders are at ``(d_high, V)`` and ``(d_low, V)`` with ``V`` at the end
    the sign of ``d`` favours, and those of even orders at ``V_high`` with the farther end of
    ``d`` and at ``V_low`` with the ``d`` nearest 0.
    """
    if np.any(variance_low < 0) or np.any(variance_high < variance_low):
        raise ValueError("need 0 <= variance_low <= variance_high")
    if np.any(shift_high < shift_low):
        raise ValueError("need shift_low <= shift_high")
    towards_high = np.where(shift_high >= 0, variance_high, variance_low)
    towards_low = np.where(shift_low >= 0, variance_low, variance_high)
    nearest = np.clip(0.0, shift_low, shift_high)
    shifts = np.stack([shift_high, shift_low, shift_high, shift_low, nearest])
    variances = np.stack([towards_high, variance_high, variance_high, towards_low, variance_low])
    values = gaussian_moments(shifts, variances, degree)  # (5, R, N, q + 1)
    odd = np.arange(degree + 1) % 2 == 1
    high = np.where(odd, values[0], np.maximum(values[1], values[2]))
    low = np.where(odd, values[3], values[4])
    return np.moveaxis(low, -1, 1), np.moveaxis(high, -1, 1)


@dataclass(frozen=True, kw_only=True)
class NormOptions(SSEMOptions):
    """The knobs of SSEM-UCB-Norm (Alg. 3): those of :class:`~causalbandits.policies.ssem_ucb.
    SSEMOptions` (``internal_ucb`` must be ``"per-addend"``; ``radius_rule`` is unused), plus
    the weight of ``E_t``."""

    #: ``"span"`` (``Delta^I E_t``, as eq. 9; default) or ``"none"`` (``E_t`` as printed in
    #: Alg. 3), both times ``bonus_scale``.
    bonus_weight: str = "span"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.internal_ucb != "per-addend":
            raise ValueError(
                "SSEM-UCB-Norm bounds each Taylor addend over the mean and variance boxes: "
                f"internal_ucb must be 'per-addend', got {self.internal_ucb!r}"
            )
        if self.bonus_weight not in BONUS_WEIGHTS:
            raise ValueError(
                f"bonus_weight must be one of {BONUS_WEIGHTS}, got {self.bonus_weight!r}"
            )


class SSEMUCBNorm(SSEMUCBJO):
    """SSEM-UCB-Norm (Alg. 3) on ``R`` replicates, with :class:`NormOptions`."""

    joint = False
    initial_passes = 2
    Options = NormOptions

    def variance_boxes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The boxes of the mean shift ``d = beta_hat + C - a`` and of the unbiased variance
        ``m~ phi_hat^(2) + sqrt(m~) W`` (clipped at 0) of every arm: ``shift_low, shift_high,
        variance_low, variance_high``, ``(R, N)`` each (see the module docstring)."""
        counts = self.sums.counts
        played = np.maximum(counts, 1)
        means = self.sums.sums[:, 1] / played
        shift = means - self.centres
        biased = (
            self.sums.sums[:, 2] / played - means**2 if self.options.degree >= 2 else 0.0 * shift
        )
        bessel = counts / np.maximum(counts - 1, 1)
        radius = self.options.radius_scale * confidence_radius(
            self.t - 1, counts, self.super_arm_size
        )
        variance = bessel * np.maximum(biased, 0.0)
        spread = np.sqrt(bessel) * radius
        shift_low, shift_high = shift - radius, shift + radius
        variance_low, variance_high = np.maximum(variance - spread, 0.0), variance + spread
        if self.options.signal_width is not None:
            width = float(self.options.signal_width)
            shift_low = np.clip(shift_low, -width, width)
            shift_high = np.clip(shift_high, -width, width)
            variance_low = np.minimum(variance_low, width**2 / 4)
            variance_high = np.minimum(variance_high, width**2 / 4)
        return shift_low, shift_high, variance_low, variance_high

    def moment_boxes(self) -> tuple[np.ndarray, np.ndarray]:
        """Alg. 3's factors: the ranges of the Gaussian raw moments ``M_p(d, V)`` over the mean
        shift and variance boxes (see the module docstring), ``(R, q + 1, N)`` each."""
        return gaussian_moment_box(*self.variance_boxes(), self.options.degree)

    def scores(self) -> np.ndarray:
        """Alg. 3's selection scores, ``(R, |X|)``: ``I^max + w_E E_t`` with ``w_E`` the span
        ``Delta^I`` or 1 (``bonus_weight``), times ``bonus_scale``."""
        return selection_scores(
            self.internal_upper_bounds(),
            self.external_bonus(),
            self.options.bonus_scale,
            span_weighted=self.options.bonus_weight == "span",
        )
