"""FTRL with the HYBRID regulariser of Zimmert, Luo & Wei (ICML 2019) on m-sets.

The NDC-SEM paper's FTRL baseline (Sec. V; decisions: ndc-sem B-FTRL).

The super arms are the m-sets: exactly ``m = s`` of the ``N`` base arms. Round ``t`` plays a
set whose inclusion probabilities are

    x_t = argmin_{x in conv(m-sets)}  <x, L_hat> + Psi(x) / eta_t,      eta_t = 1 / sqrt(t),
    Psi(x) = sum_i  -sqrt(x_i) + gamma_h (1 - x_i) log(1 - x_i),

``conv(m-sets) = {x in [0, 1]^N : sum x = m}``. The KKT conditions give, for a multiplier
``nu``, ``eta (L_hat_i + nu) - 1 / (2 sqrt(x_i)) - gamma_h (1 + log(1 - x_i)) = 0``: each
``x_i`` is a monotone function of ``nu``, found by a bracketed Newton solve, and ``nu`` by a
bracketed Newton solve of ``sum_i x_i = m`` (both vectorised over replicates and arms).
A set with exactly these marginals is drawn by Madow's systematic sampling. Losses are
``l = 1 - y~`` with ``y~`` the normalised observation of each played arm, and
``L_hat += l 1{i in A_tau} / x_tau[i]`` when the feedback of round ``tau`` arrives.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from causalbandits.random import uniform_stream

_HALF_SQRT2 = np.sqrt(0.5)
_LOG2 = np.log(2.0)


def hybrid_weight(n_arms: int, super_arm_size: int) -> float:
    """``gamma_h`` of Zimmert et al.: 1 if ``m <= d / 2``, else ``sqrt(1 / log(d / (d - m)))``."""
    if super_arm_size <= n_arms / 2:
        return 1.0
    if super_arm_size >= n_arms:
        return 0.0
    return float(np.sqrt(1.0 / np.log(n_arms / (n_arms - super_arm_size))))


def _softplus(v: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, v)


def _stationarity(theta: np.ndarray, hybrid: float) -> tuple[np.ndarray, np.ndarray]:
    """``g(x) = -1/(2 sqrt x) - gamma_h (1 + log(1 - x))`` at ``x = sigmoid(theta)``, and d/dtheta.

    ``log x = -softplus(-theta)`` and ``log(1 - x) = -softplus(theta)`` keep ``x`` near 0 and 1
    exact; ``g`` increases from ``-inf`` to ``+inf`` in ``theta``.
    """
    sp_neg, sp_pos = _softplus(-theta), _softplus(theta)
    value = -0.5 * np.exp(0.5 * sp_neg) - hybrid * (1.0 - sp_pos)
    slope = 0.25 * np.exp(0.5 * sp_neg - sp_pos) + hybrid * np.exp(-sp_neg)
    return value, slope


def _bracketed_newton(
    fun: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
    lo: np.ndarray,
    hi: np.ndarray,
    start: np.ndarray,
    tol: float,
    max_iter: int,
    ftol: float = 0.0,
) -> np.ndarray:
    """Elementwise root of an increasing ``fun`` with ``fun(lo) <= 0 <= fun(hi)``.

    Newton steps, replaced by bisection whenever they leave the current bracket; an element
    stops once its step is below ``tol (1 + |x|)`` or ``|fun| <= ftol``.
    """
    x = np.clip(start, lo, hi)
    for _ in range(max_iter):
        f, df = fun(x)
        lo = np.where(f < 0, x, lo)
        hi = np.where(f > 0, x, hi)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = f / df
        done = (np.abs(f) <= ftol) | (np.abs(step) <= tol * (1.0 + np.abs(x)))
        if done.all():
            break
        new = x - step
        new = np.where((new >= lo) & (new <= hi), new, 0.5 * (lo + hi))
        x = np.where(done, x, new)
    return x


def _solve_theta(target: np.ndarray, hybrid: float, start: np.ndarray, tol: float, max_iter: int):
    """``theta`` with ``g(sigmoid(theta)) = target``, bracketed by envelopes of ``g``.

    With ``max(v, 0) <= softplus(v) <= max(v, 0) + log 2``, ``g`` lies between
    ``-e^(max(-theta, 0) / 2) / sqrt 2 - gamma_h + gamma_h max(theta, 0)`` and
    ``-e^(max(-theta, 0) / 2) / 2 - gamma_h (1 - log 2) + gamma_h max(theta, 0)``; their
    inverses at ``target`` bound the root.
    """
    upper0 = -0.5 - hybrid * (1.0 - _LOG2)
    lower0 = -_HALF_SQRT2 - hybrid
    with np.errstate(divide="ignore", invalid="ignore"):
        lo = np.where(
            target >= upper0,
            (target - upper0) / hybrid,
            -2.0 * np.log(np.maximum(-2.0 * (target + hybrid * (1.0 - _LOG2)), 1.0)),
        )
        hi = np.where(
            target >= lower0,
            (target - lower0) / hybrid,
            -2.0 * np.log(np.maximum(-2.0 * _HALF_SQRT2 * (target + hybrid), 1.0)),
        )

    def fun(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        value, slope = _stationarity(theta, hybrid)
        return value - target, slope

    return _bracketed_newton(fun, lo, hi, start, tol, max_iter)


def hybrid_marginals(
    cum_losses: np.ndarray,
    eta: float | np.ndarray,
    super_arm_size: int,
    hybrid: float = 1.0,
    start: np.ndarray | None = None,
    tol: float = 1e-13,
    max_iter: int = 100,
) -> tuple[np.ndarray, np.ndarray]:
    """FTRL-HYBRID marginals ``x`` ``(R, N)`` over m-sets and the multipliers ``nu`` ``(R,)``.

    ``cum_losses`` ``L_hat`` is ``(R, N)``, ``eta`` a scalar or ``(R,)``; ``start`` is a warm
    start for ``nu`` (e.g. the previous round's). Returns ``x`` in ``[0, 1]`` with
    ``sum_i x_i = super_arm_size`` up to rounding.
    """
    losses = np.asarray(cum_losses, dtype=float)
    replicates, n = losses.shape
    if not 1 <= super_arm_size <= n:
        raise ValueError(f"super-arm size s must lie in 1..{n}, got {super_arm_size}")
    if super_arm_size == n:
        return np.ones((replicates, n)), np.zeros(replicates)
    if hybrid <= 0:
        raise ValueError(f"the hybrid weight must be positive for s < N, got {hybrid}")
    eta = np.broadcast_to(np.asarray(eta, dtype=float), (replicates,))[:, None]
    shift = losses.min(axis=1, keepdims=True)
    losses = losses - shift
    # nu at which every x_i is >= (<=) m / N, so that sum x >= (<=) m: an exact bracket.
    uniform = np.full((1, 1), np.log(super_arm_size / (n - super_arm_size)))
    g_uniform = _stationarity(uniform, hybrid)[0]
    lo = -g_uniform / eta - losses.max(axis=1, keepdims=True)
    hi = -g_uniform / eta
    nu0 = 0.5 * (lo + hi) if start is None else np.asarray(start, dtype=float)[:, None] + shift
    theta = np.broadcast_to(uniform, losses.shape)

    def excess(nu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        nonlocal theta
        theta = _solve_theta(-eta * (losses + nu), hybrid, theta, tol, max_iter)
        x = np.exp(-_softplus(-theta))
        slope = _stationarity(theta, hybrid)[1]
        dx_dnu = eta * x * np.exp(-_softplus(theta)) / slope
        return super_arm_size - x.sum(axis=1, keepdims=True), dx_dnu.sum(axis=1, keepdims=True)

    nu = _bracketed_newton(excess, lo, hi, nu0, tol, max_iter, ftol=tol * super_arm_size)
    excess(nu)
    return np.exp(-_softplus(-theta)), (nu - shift)[:, 0]


def madow_sample(marginals: np.ndarray, uniforms: np.ndarray, super_arm_size: int) -> np.ndarray:
    """Madow's systematic sampling: ``(R, N)`` masks of exactly ``super_arm_size`` distinct arms.

    Arm ``i`` is taken when one of the points ``u + k``, ``k = 0..m-1``, falls in
    ``[sum_{j<i} x_j, sum_{j<=i} x_j)``, so ``P(i in A) = x_i`` when ``sum x = m`` and
    ``x <= 1``. Rounding can only place two points in one interval with probability ~1e-16;
    indices are then pushed apart so that the ``m`` arms are always distinct.
    """
    marginals = np.asarray(marginals, dtype=float)
    replicates, n = marginals.shape
    cumulative = np.cumsum(marginals, axis=1)
    steps = np.arange(super_arm_size)
    points = np.asarray(uniforms, dtype=float).reshape(replicates, 1) + steps
    index = (cumulative[:, None, :] <= points[:, :, None]).sum(axis=2)
    offset = np.clip(np.maximum.accumulate(index - steps, axis=1), 0, n - super_arm_size)
    mask = np.zeros((replicates, n), dtype=bool)
    np.put_along_axis(mask, offset + steps, True, axis=1)
    return mask


def importance_weighted_losses(
    losses: np.ndarray, played: np.ndarray, marginals: np.ndarray
) -> np.ndarray:
    """Unbiased estimates ``l_hat[i] = l[i] 1{i in A} / x[i]`` (all arrays ``(R, N)``)."""
    return np.where(played, losses / np.where(played, marginals, 1.0), 0.0)


class FTRLHybrid:
    """FTRL-HYBRID (Zimmert et al.) on exactly ``s`` of ``N`` arms, delay-agnostic.

    ``select`` returns ``(R, N)`` boolean super arms. ``update`` takes either the plain
    feedback of the round just played (fields ``y`` and ``z``, each ``(R, N)``) or the
    :class:`~causalbandits.envs.delay.DelayedFeedback` of a delay wrapper (``rounds``,
    ``replicates`` and ``feedback`` with ``(K, N)`` fields): feedback is used when it arrives,
    with the super arm and marginals the policy kept for its round (decisions: ndc-sem B-FTRL).

    Parameters
    ----------
    problem: anything with ``n_arms`` (``N``) and ``super_arm_size`` (``m = s``).
    reward_scale: observations are divided by it and clipped to ``[0, 1]``
        (decisions: ndc-sem 10, e.g. ``y_max = max_i sum_j [(I - A)^{-1}]_ij``); ``None`` uses
        each replicate's running max of the observations, ``y[i]`` of the played arms (as
        CUCB and CTS).
    observe: ``"y"`` (overall rewards, the paper's protocol) or ``"z"`` (instantaneous).
    hybrid: ``gamma_h``; ``None`` chooses it by :func:`hybrid_weight`.
    """

    #: Bench declarations (causalbandits.bench.capabilities).
    ACTS_ON = frozenset({"super-arms", "delayed-super-arms", "separable-super-arms"})

    def __init__(
        self,
        problem: object,
        reward_scale: float | None = None,
        observe: str = "y",
        hybrid: float | None = None,
    ) -> None:
        n_arms, super_arm_size = int(problem.n_arms), int(problem.super_arm_size)
        if not 1 <= super_arm_size <= n_arms:
            raise ValueError(f"super-arm size s must lie in 1..{n_arms}, got {super_arm_size}")
        if observe not in ("y", "z"):
            raise ValueError(f"observe must be 'y' or 'z', got {observe!r}")
        if reward_scale is not None and reward_scale <= 0:
            raise ValueError(f"reward_scale must be positive, got {reward_scale}")
        self.n_arms = n_arms
        self.super_arm_size = super_arm_size
        self.reward_scale = reward_scale
        self.observe = observe
        self.hybrid = hybrid_weight(n_arms, super_arm_size) if hybrid is None else float(hybrid)

    def reset(self, seeds: Sequence[np.random.SeedSequence]) -> None:
        replicates = len(seeds)
        self.cum_losses = np.zeros((replicates, self.n_arms))
        self.t = 0
        self._nu: np.ndarray | None = None
        self._scale = np.full(replicates, self.reward_scale or 0.0)
        self._uniforms = uniform_stream(seeds, ())
        self._pending: dict[int, list] = {}

    def select(self) -> np.ndarray:
        self.t += 1
        x, self._nu = hybrid_marginals(
            self.cum_losses, 1.0 / np.sqrt(self.t), self.super_arm_size, self.hybrid, start=self._nu
        )
        played = madow_sample(x, self._uniforms.next(), self.super_arm_size)
        self._pending[self.t] = [x, played, len(played)]
        return played

    def update(self, actions: np.ndarray, feedback: object) -> None:
        """Add the importance-weighted losses of the rounds whose feedback arrived."""
        if hasattr(feedback, "rounds"):  # a DelayedFeedback: one item per (round, replicate)
            rows, rounds = np.asarray(feedback.replicates), np.asarray(feedback.rounds)
            observed = np.asarray(getattr(feedback.feedback, self.observe), dtype=float)
        else:
            observed = np.asarray(getattr(feedback, self.observe), dtype=float)
            rows = np.arange(observed.shape[0])
            rounds = np.full(rows.size, self.t)
        played = np.zeros(observed.shape, dtype=bool)
        for round_ in np.unique(rounds):
            items = np.flatnonzero(rounds == round_)
            played[items] = self._pending[int(round_)][1][rows[items]]
        if self.reward_scale is None and rows.size:
            # the observations are y[i] of the played arms (decisions: ndc-sem 10)
            np.maximum.at(self._scale, rows, np.where(played, observed, 0.0).max(axis=1))
        scale = self._scale[rows, None]
        reward = np.clip(observed / np.where(scale > 0, scale, 1.0), 0.0, 1.0)
        for round_ in np.unique(rounds):
            items = np.flatnonzero(rounds == round_)
            entry = self._pending[int(round_)]
            marginals = entry[0][rows[items]]
            estimate = importance_weighted_losses(1.0 - reward[items], played[items], marginals)
            np.add.at(self.cum_losses, rows[items], estimate)
            entry[2] -= items.size
            if entry[2] <= 0:
                del self._pending[int(round_)]
