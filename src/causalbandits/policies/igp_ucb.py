"""IGP-UCB (Chowdhury & Gopalan, ICML 2017), the kernelised full-bandit baseline of the SSEM-UCB
paper (Sec. V, App. -G1; decisions: ssem-ucb 14).

A Gaussian-process UCB over the super-arm indicators ``x`` in ``{0,1}^N`` with the
squared-exponential kernel ``k(x, x') = exp(-||x - x'||^2 / (2 l^2))`` (``||x - x'||^2`` is the
Hamming distance). After ``t`` rounds with played points ``P`` and payoffs ``y_{1:t}``
(``1^T y`` of each round):

* ``mu_t(x) = k_t(x)^T (K_t + lam I)^{-1} y_{1:t}``,
  ``sigma_t^2(x) = k(x, x) - k_t(x)^T (K_t + lam I)^{-1} k_t(x)``;
* ``x_{t+1} = argmax_{x in X} mu_t(x) + beta_{t+1} sigma_t(x)`` over all ``|X|`` super arms
  (ties at random), ``beta_{t+1} = B + R sqrt(2 (gamma_t + 1 + ln(1/delta)))``;
* ``gamma_t`` is the information-gain proxy ``1/2 log det(I + K_t / lam)`` of the points played
  (the maximum information gain itself is not computable).

**Incremental Cholesky.** With ``K_t + lam I = L L^T`` the policy keeps ``Q = L^{-1} K(P, X)``
(``t x |X|``), ``alpha = L^{-1} y_{1:t}``, ``mu_t(X) = Q^T alpha`` and ``sigma_t^2(X) = 1 -
colsum(Q^2)``. Playing ``x_{t+1}`` (column ``j`` of ``X``) appends the row ``(l^T, d)`` to ``L``
with ``l = L^{-1} k_t(x_{t+1}) = Q[:, j]`` (already stored) and ``d = sqrt(lam +
sigma_t^2(x_{t+1}))``, one row ``q = (k(x_{t+1}, X) - l^T Q) / d`` to ``Q`` and ``(y_{t+1} - l .
alpha) / d`` to ``alpha``; ``mu`` gains ``q alpha_{t+1}``, ``sigma^2`` loses ``q^2`` and ``gamma``
gains ``ln d - ln(lam) / 2``. A round costs ``O(t |X|)``, memory ``O(T |X|)`` per replicate.

**The paper's settings** (App. -G1, "in the notation of [5]"), computed from the truth by
:meth:`IGPUCB.from_environment`: ``lam = max_x (max_b r_x(b) - E_b r_x(b))``, ``R = sqrt(lam)``,
``delta = 0.1`` and ``B`` printed as ``mu^T K mu`` over all super arms (``b_form="printed"``),
or the textbook RKHS-norm bound ``sqrt(mu^T K^{-1} mu)`` (``b_form="textbook"``;
§3.6 item 11). Without the truth the defaults are ``B = 1`` and Chowdhury & Gopalan's
``lam = 1 + 2 / T``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from causalbandits.envs.super_arms import all_super_arms
from causalbandits.policies.base import options_of
from causalbandits.random import random_argmax, uniform_stream

#: The two forms of ``B``: as printed in App. -G1, and the textbook RKHS-norm bound.
B_FORMS = ("printed", "textbook")
#: Rows of the kernel matrix formed at a time when ``B`` is computed.
_BLOCK = 512


def se_kernel(left: np.ndarray, right: np.ndarray, length_scale: float) -> np.ndarray:
    """``exp(-||x - x'||^2 / (2 l^2))`` between boolean masks ``left`` (A, N), ``right`` (B, N)."""
    a, b = np.asarray(left, dtype=float), np.asarray(right, dtype=float)
    distance = a.sum(axis=1)[:, None] + b.sum(axis=1)[None, :] - 2.0 * a @ b.T
    return np.exp(-distance / (2.0 * length_scale**2))


def norm_bound(
    expected_payoffs: np.ndarray, super_arms: np.ndarray, length_scale: float, b_form: str
) -> np.ndarray:
    """``B`` per replicate from ``mu(x)`` (R, M) over the super arms (M, N): ``mu^T K mu``
    (``"printed"``, App. -G1) or ``sqrt(mu^T K^{-1} mu)`` (``"textbook"``, an ``O(M^3)``
    Cholesky solve)."""
    mu = np.atleast_2d(np.asarray(expected_payoffs, dtype=float))
    if b_form == "printed":
        quadratic = np.zeros(len(mu))
        for start in range(0, len(super_arms), _BLOCK):
            block = se_kernel(super_arms[start : start + _BLOCK], super_arms, length_scale)
            quadratic += np.sum((mu[:, start : start + _BLOCK] @ block) * mu, axis=1)
        return quadratic
    if b_form == "textbook":
        factor = cho_factor(se_kernel(super_arms, super_arms, length_scale), lower=True)
        return np.sqrt(np.einsum("rm,mr->r", mu, cho_solve(factor, mu.T)))
    raise ValueError(f"b_form must be one of {B_FORMS}, got {b_form!r}")


def _per_replicate(name: str, value: float | np.ndarray, positive: bool) -> float | np.ndarray:
    """A scalar as ``float``, one value per replicate as a 1-d array; finite, and > 0 or >= 0."""
    array = np.asarray(value, dtype=float)
    if array.ndim > 1 or not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be a finite scalar or one value per replicate")
    if np.any(array <= 0) if positive else np.any(array < 0):
        raise ValueError(f"{name} must be {'> 0' if positive else '>= 0'}, got {value}")
    return float(array) if array.ndim == 0 else array


@dataclass(frozen=True, kw_only=True, eq=False)
class IGPUCBOptions:
    """The constants of IGP-UCB (Chowdhury & Gopalan 2017, Thm 3; the SSEM-UCB paper's
    settings, App. -G1: :meth:`IGPUCB.from_environment`), checked on construction.
    ``B``, ``lam`` and ``R`` are scalars or one value per replicate."""

    #: The RKHS-norm bound ``B >= 0``.
    B: float | np.ndarray = 1.0
    #: The regulariser ``lam > 0``; ``None``: ``1 + 2 / T``.
    lam: float | np.ndarray | None = None
    #: The sub-Gaussian noise scale ``R >= 0``; ``None``: ``sqrt(lam)``.
    R: float | np.ndarray | None = None
    #: The confidence level ``delta`` in ``(0, 1)``.
    delta: float = 0.1
    #: The squared-exponential kernel's length scale ``l > 0``.
    length_scale: float = 1.0

    def __post_init__(self) -> None:
        if not 0 < self.delta < 1:
            raise ValueError(f"delta must lie in (0, 1), got {self.delta}")
        if not self.length_scale > 0:
            raise ValueError(f"length_scale must be positive, got {self.length_scale}")
        object.__setattr__(self, "B", _per_replicate("B", self.B, positive=False))
        if self.lam is not None:
            object.__setattr__(self, "lam", _per_replicate("lam", self.lam, positive=True))
        if self.R is not None:
            object.__setattr__(self, "R", _per_replicate("R", self.R, positive=False))


class IGPUCB:
    """IGP-UCB over all super arms on ``R`` replicates.

    Parameters
    ----------
    problem: ``n_arms`` (``N``), ``super_arm_size`` (``s``), ``horizon`` (``T``).
    options: the constants (:class:`IGPUCBOptions`, default its defaults).
    changes: its fields by name, applied on top of ``options`` (e.g. ``IGPUCB(problem,
        lam=0.1)``).

    :attr:`B`, :attr:`lam` and :attr:`R` hold the constants resolved for the problem.
    """

    #: Bench declarations (causalbandits.bench.capabilities).
    ACTS_ON = frozenset({"separable-super-arms"})

    def __init__(self, problem: Any, options: IGPUCBOptions | None = None, **changes: Any) -> None:
        self.n_arms, self.super_arm_size = int(problem.n_arms), int(problem.super_arm_size)
        self.horizon = int(problem.horizon)
        options = options_of(IGPUCBOptions, options, changes)
        lam = 1.0 + 2.0 / self.horizon if options.lam is None else options.lam
        self.B = options.B
        self.lam = _per_replicate("lam", lam, positive=True)
        self.R = _per_replicate("R", np.sqrt(self.lam) if options.R is None else options.R, False)
        self.delta, self.length_scale = float(options.delta), float(options.length_scale)
        self.super_arms = all_super_arms(self.n_arms, self.super_arm_size)
        # k(x, x') depends on the Hamming distance |x| + |x'| - 2 x.x' only: a lookup table
        self._arms = self.super_arms.astype(float)
        self._sizes = self.super_arms.sum(axis=1)
        self._kernel_by_distance = np.exp(
            -np.arange(2 * self.super_arm_size + 1) / (2.0 * self.length_scale**2)
        )

    @classmethod
    def from_environment(cls, env: Any, b_form: str = "printed", **params: Any) -> IGPUCB:
        """IGP-UCB with the paper's settings (App. -G1) from the environment's truth.

        ``env`` exposes ``problem``, ``super_arms`` (M, N) (the order of
        :func:`~causalbandits.envs.super_arms.all_super_arms`), ``expected_payoffs`` (R, M)
        (``mu(x)`` per replicate) and ``payoff_spread`` (R,) (``max_x (max_b r_x(b) -
        mu(x))``). Then ``lam = payoff_spread``, ``R = sqrt(lam)`` and ``B`` is
        :func:`norm_bound` of ``b_form``; ``B``, ``lam`` or ``R`` given in ``params`` win.
        """
        problem = env.problem
        super_arms = np.asarray(env.super_arms, dtype=bool)
        expected = all_super_arms(int(problem.n_arms), int(problem.super_arm_size))
        if not np.array_equal(super_arms, expected):
            raise ValueError("env.super_arms must be all_super_arms(N, s) in its order")
        payoffs = np.asarray(env.expected_payoffs, dtype=float)
        if payoffs.ndim != 2 or payoffs.shape[1] != len(super_arms):
            raise ValueError(
                f"env.expected_payoffs must have shape (R, {len(super_arms)}), got {payoffs.shape}"
            )
        spread = np.asarray(env.payoff_spread, dtype=float).reshape(-1)
        length_scale = float(params.get("length_scale", 1.0))
        if b_form not in B_FORMS:
            raise ValueError(f"b_form must be one of {B_FORMS}, got {b_form!r}")
        if "B" not in params:
            params["B"] = norm_bound(payoffs, super_arms, length_scale, b_form)
        params.setdefault("lam", spread)
        params.setdefault("R", np.sqrt(params["lam"]))
        return cls(problem, **params)

    def reset(self, seeds: Sequence[np.random.SeedSequence]) -> None:
        replicates, arms = len(seeds), len(self.super_arms)
        for name in ("B", "lam", "R"):
            value = getattr(self, name)
            if np.ndim(value) and len(value) != replicates:
                raise ValueError(f"{name} holds {len(value)} values for {replicates} replicates")
        self._lam = np.broadcast_to(self.lam, (replicates,))
        self._q = np.empty((replicates, self.horizon, arms))
        self._alpha = np.empty((replicates, self.horizon))
        self.mean = np.zeros((replicates, arms))
        self.variance = np.ones((replicates, arms))
        self.gamma = np.zeros(replicates)
        self.ties = uniform_stream(seeds, (arms,))
        self.t = 0

    @property
    def beta(self) -> np.ndarray:
        """``B + R sqrt(2 (gamma_t + 1 + ln(1/delta)))`` per replicate for the next round."""
        return self.B + self.R * np.sqrt(2.0 * (self.gamma + 1.0 + np.log(1.0 / self.delta)))

    def select(self) -> np.ndarray:
        """The super arm of largest ``mu_t + beta sigma_t`` per replicate, ``(R, N)``."""
        scores = self.mean + self.beta[:, None] * np.sqrt(np.maximum(self.variance, 0.0))
        self.played = random_argmax(scores, self.ties.next())
        return self.super_arms[self.played].copy()

    def update(self, actions: np.ndarray, feedback: Any) -> None:
        """Append the round's point and payoff ``1^T y`` to the Cholesky factor."""
        if self.t == self._q.shape[1]:  # played beyond the horizon: grow the storage
            self._q = np.concatenate([self._q, np.empty_like(self._q)], axis=1)
            self._alpha = np.concatenate([self._alpha, np.empty_like(self._alpha)], axis=1)
        t, rows, j = self.t, np.arange(len(self.played)), self.played
        payoff = np.asarray(feedback.y, dtype=float).sum(axis=1)
        previous = self._q[:, :t]
        column = previous[rows, :, j]  # l = L^{-1} k_t(x_j), (R, t)
        d = np.sqrt(self._lam + np.maximum(self.variance[rows, j], 0.0))
        kernel = self._kernel_row(j)
        q = (kernel - np.matmul(column[:, None, :], previous)[:, 0]) / d[:, None]
        alpha = (payoff - np.einsum("rt,rt->r", column, self._alpha[:, :t])) / d
        self._q[:, t], self._alpha[:, t] = q, alpha
        self.mean += q * alpha[:, None]
        self.variance -= q**2
        self.gamma += np.log(d) - 0.5 * np.log(self._lam)
        self.t += 1

    def _kernel_row(self, indices: np.ndarray) -> np.ndarray:
        """``k(x_j, X)`` (R, M) of the super arms ``indices`` (R,)."""
        overlap = self._arms[indices] @ self._arms.T
        distance = self._sizes[indices][:, None] + self._sizes[None, :] - 2 * overlap
        return self._kernel_by_distance[distance.astype(np.intp)]
