"""SGB: the Combinatorial Stochastic-Greedy Bandit (Fourati, Quinn, Alouini, Aggarwal, AAAI
2024), a full-bandit baseline of the SSEM-UCB paper (Sec. V; decisions: ssem-ucb 14).

Explore-then-commit with stochastic-greedy subsampling for a monotone submodular expected
payoff and a *known* horizon ``T``. Starting from ``S = {}``, phase ``i = 1..k`` (``k = s``)
draws a uniform subset ``R_i`` of ``min(ceil((n / k) ln(1 / eps)), n - i + 1)`` arms not in
``S``, plays every ``S + {a}``, ``a`` in ``R_i``, ``m`` times in a row and adds the arm with the
best empirical mean payoff (ties at random) to ``S``; the final ``S`` (``s`` arms) is played for
the rest of the horizon. Only the scalar payoff ``1^T y`` is used (full-bandit feedback).

**Reconstruction.** The SSEM paper states neither ``m`` nor ``eps``. The defaults balance the
exploration cost ``~ m n ln(1/eps)`` against the commit error ``~ k T sqrt(ln T / m)``:
``m = ceil((k T sqrt(ln T) / (n ln(1/eps)))^(2/3))`` with ``eps = 0.1``; they
are not checked against the SGB paper itself.

**Short horizons.** When ``m * sum_i |R_i|`` exceeds ``T`` (the ``T^(2/3)`` balance is an
asymptotic statement: for ``N = 10, s = 6, T = 2000`` the formula asks for 3,072 exploration
rounds), ``m`` is capped at ``floor(T / sum_i |R_i|)`` so that the exploration fits in ``T``;
when even ``m = 1`` does not fit, the horizon ends during the exploration.

All replicates follow the same schedule of (phase, candidate, repetition); each draws its own
subsets and breaks its own ties.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import ceil, log, sqrt
from typing import Any

import numpy as np

from causalbandits.random import random_argmax, uniform_stream


def subset_sizes(n_arms: int, super_arm_size: int, eps: float) -> list[int]:
    """``|R_i| = min(ceil((n / k) ln(1 / eps)), n - i + 1)`` for phases ``i = 1..k``."""
    size = ceil(n_arms / super_arm_size * log(1.0 / eps))
    return [min(size, n_arms - i + 1) for i in range(1, super_arm_size + 1)]


def default_repetitions(n_arms: int, super_arm_size: int, horizon: int, eps: float) -> int:
    """``m = ceil((k T sqrt(ln T) / (n ln(1/eps)))^(2/3))``, at least 1 (reconstructed)."""
    balance = super_arm_size * horizon * sqrt(log(horizon)) / (n_arms * log(1.0 / eps))
    return max(1, ceil(balance ** (2.0 / 3.0)))


class SGB:
    """Combinatorial Stochastic-Greedy Bandit on ``R`` replicates.

    Parameters
    ----------
    problem: ``n_arms`` (``n``), ``super_arm_size`` (``k = s``) and ``horizon`` (``T``, known).
    eps: the stochastic-greedy accuracy ``eps`` in ``(0, 1)`` (reconstructed default 0.1).
    m: plays per candidate super arm; ``None`` for :func:`default_repetitions`. Either way it
        is capped so that the exploration fits in ``T`` (see the module docstring); the value
        used is :attr:`repetitions`.
    """

    #: Bench declarations (causalbandits.bench.capabilities).
    ACTS_ON = frozenset({"separable-super-arms"})

    def __init__(self, problem: Any, eps: float = 0.1, m: int | None = None) -> None:
        self.n_arms, self.super_arm_size = int(problem.n_arms), int(problem.super_arm_size)
        self.horizon = int(problem.horizon)
        if not 1 <= self.super_arm_size <= self.n_arms:
            raise ValueError(
                f"super-arm size s must lie in 1..{self.n_arms}, got {self.super_arm_size}"
            )
        if self.horizon < 1:
            raise ValueError(f"horizon T must be >= 1, got {self.horizon}")
        if not 0 < eps < 1:
            raise ValueError(f"eps must lie in (0, 1), got {eps}")
        if m is not None and (int(m) != m or m < 1):
            raise ValueError(f"m must be a positive integer or None, got {m}")
        self.eps = float(eps)
        #: ``|R_i|`` per phase.
        self.sizes = subset_sizes(self.n_arms, self.super_arm_size, self.eps)
        wanted = (
            default_repetitions(self.n_arms, self.super_arm_size, self.horizon, self.eps)
            if m is None
            else int(m)
        )
        #: ``m`` after the cap ``floor(T / sum_i |R_i|)`` (at least 1).
        self.repetitions = max(1, min(wanted, self.horizon // sum(self.sizes)))
        #: First round (0-based) of each phase, and the end of the exploration.
        self.phase_starts = np.cumsum([0] + [self.repetitions * n for n in self.sizes])

    @property
    def exploration_rounds(self) -> int:
        """``m * sum_i |R_i|``: the rounds before the commitment (may exceed ``T``)."""
        return int(self.phase_starts[-1])

    def reset(self, seeds: Sequence[np.random.SeedSequence]) -> None:
        replicates = len(seeds)
        self.chosen = np.zeros((replicates, self.n_arms), dtype=bool)
        self.candidates = np.zeros((replicates, 0), dtype=np.intp)
        self.sums = np.zeros((replicates, 0))
        # row 0: the subset draw of a phase; row 1: the tie break closing it
        self.uniforms = uniform_stream(seeds, (2, self.n_arms))
        self.t = 0
        self.slot = 0  # the candidate played in the current round

    def select(self) -> np.ndarray:
        """``S + {a}`` of the current (phase, candidate) during exploration, then ``S``."""
        draws = self.uniforms.next()
        offset = self.t
        self.t += 1
        phase = int(np.searchsorted(self.phase_starts, offset, side="right")) - 1
        if offset == self.phase_starts[phase] and phase > 0:
            self._close_phase(draws[:, 1])
        if phase >= self.super_arm_size:
            return self.chosen.copy()
        if offset == self.phase_starts[phase]:
            self._open_phase(phase, draws[:, 0])
        self.slot = (offset - int(self.phase_starts[phase])) // self.repetitions
        actions = self.chosen.copy()
        actions[np.arange(len(actions)), self.candidates[:, self.slot]] = True
        return actions

    def _open_phase(self, phase: int, uniforms: np.ndarray) -> None:
        """Draw ``R_i``: the ``|R_i|`` unselected arms with the largest uniforms."""
        keys = np.where(self.chosen, -1.0, uniforms)
        self.candidates = np.argsort(-keys, axis=1, kind="stable")[:, : self.sizes[phase]]
        self.sums = np.zeros(self.candidates.shape)

    def _close_phase(self, uniforms: np.ndarray) -> None:
        """Add the candidate with the best empirical mean (equal play counts) to ``S``."""
        best = random_argmax(self.sums, uniforms[:, : self.sums.shape[1]])
        rows = np.arange(len(self.chosen))
        self.chosen[rows, self.candidates[rows, best]] = True

    def update(self, actions: np.ndarray, feedback: Any) -> None:
        """Accumulate the payoff ``1^T y`` of the candidate just played (exploration only)."""
        if self.t <= self.exploration_rounds:
            self.sums[:, self.slot] += np.asarray(feedback.y, dtype=float).sum(axis=1)
