"""UCB over the action set, blind to the causal structure (it uses only the reward)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from causalbandits.assumptions import warn_assumption
from causalbandits.random import random_argmax, uniform_stream


class UCB1:
    """UCB1 with every arm played once first, optionally over a sliding window per arm.

    The index is ``mean_a + sqrt(2 log(1/delta) / n_a)`` (decisions: robust-lcb A11), or, when
    ``exploration`` is given, ``mean_a + exploration sqrt(log t / n_a)`` (CSL-UCB eq. 64;
    decisions: csl-ucb B1).
    With ``window = w`` each arm's mean and count use only its last ``w`` rewards (the
    non-stationary baseline of the CSL-UCB paper). With more arms than rounds it warns
    (:class:`~causalbandits.assumptions.AssumptionWarning`): it cannot play each arm once.

    Parameters
    ----------
    problem: anything with ``actions``, ``reward_node`` and ``horizon``.
    delta: confidence level (default ``1/T^2``, i.e. the bonus ``sqrt(4 log T / n_a)``).
    exploration: the constant of the ``sqrt(log t / n_a)`` bonus; replaces ``delta``.
    window: number of most recent rewards kept per arm (default: all).
    """

    #: Bench declarations (causalbandits.bench.capabilities).
    ACTS_ON = frozenset({"interventions"})

    def __init__(
        self,
        problem: object,
        delta: float | None = None,
        exploration: float | None = None,
        window: int | None = None,
    ) -> None:
        self.n_actions = problem.actions.n_actions
        self.reward_node = problem.reward_node
        if self.n_actions > problem.horizon:
            warn_assumption(
                f"UCB1 has {self.n_actions} arms but only {problem.horizon} rounds, so it "
                "cannot even play every arm once: use a learner that shares what it learns "
                "across arms (LinSEM-UCB, LinSEM-TS, CSL-UCB) or make fewer nodes intervenable"
            )
        self.delta = delta if delta is not None else 1.0 / problem.horizon**2
        if not 0 < self.delta < 1:
            raise ValueError(f"delta must lie in (0, 1), got {self.delta}")
        if exploration is not None and not 0 <= exploration < float("inf"):
            raise ValueError(f"exploration must be finite and >= 0, got {exploration}")
        if window is not None and window < 1:
            raise ValueError(f"window must be >= 1, got {window}")
        self.exploration = exploration
        self.window = window
        self._bonus_scale = np.sqrt(2 * np.log(1 / self.delta))

    def reset(self, seeds: Sequence[np.random.SeedSequence]) -> None:
        replicates = len(seeds)
        self.counts = np.zeros((replicates, self.n_actions))
        self.sums = np.zeros((replicates, self.n_actions))
        self._rows = np.arange(replicates)
        self._ties = uniform_stream(seeds, (self.n_actions,))
        self.t = 0
        if self.window is not None:
            self._recent = np.zeros((replicates, self.n_actions, self.window))
            self._pulls = np.zeros((replicates, self.n_actions), dtype=np.int64)

    def select(self) -> np.ndarray:
        counts = self.counts
        if self.exploration is None:
            scale = self._bonus_scale
        else:
            scale = self.exploration * np.sqrt(np.log(max(self.t, 1)))
        with np.errstate(divide="ignore", invalid="ignore"):
            index = self.sums / counts + scale / np.sqrt(counts)
        index[counts == 0] = np.inf
        return random_argmax(index, self._ties.next())

    def update(self, actions: np.ndarray, feedback: np.ndarray) -> None:
        reward = feedback[:, self.reward_node]
        self.t += 1
        if self.window is None:
            self.counts[self._rows, actions] += 1
            self.sums[self._rows, actions] += reward
            return
        pulls = self._pulls[self._rows, actions]
        slot = pulls % self.window
        oldest = np.where(pulls >= self.window, self._recent[self._rows, actions, slot], 0.0)
        self.sums[self._rows, actions] += reward - oldest
        self.counts[self._rows, actions] = np.minimum(pulls + 1, self.window)
        self._recent[self._rows, actions, slot] = reward
        self._pulls[self._rows, actions] = pulls + 1
