"""UCB1 over the action set, blind to the causal structure (it uses only the reward)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from causalbandits.random import random_argmax, uniform_stream


class UCB1:
    """UCB1: ``mean_a + sqrt(2 log(1/delta) / n_a)``, every arm once first (spec §4.2, A11).

    Parameters
    ----------
    problem: anything with ``actions``, ``reward_node`` and ``horizon``.
    delta: confidence level (default ``1/T^2``, i.e. the bonus ``sqrt(4 log T / n_a)``).
    """

    def __init__(self, problem: object, delta: float | None = None) -> None:
        self.n_actions = problem.actions.n_actions
        self.reward_node = problem.reward_node
        self.delta = delta if delta is not None else 1.0 / problem.horizon**2
        if not 0 < self.delta < 1:
            raise ValueError(f"delta must lie in (0, 1), got {self.delta}")
        self._bonus_scale = np.sqrt(2 * np.log(1 / self.delta))

    def reset(self, seeds: Sequence[np.random.SeedSequence]) -> None:
        replicates = len(seeds)
        self.counts = np.zeros((replicates, self.n_actions))
        self.sums = np.zeros((replicates, self.n_actions))
        self._rows = np.arange(replicates)
        self._ties = uniform_stream(seeds, (self.n_actions,))

    def select(self) -> np.ndarray:
        counts = self.counts
        with np.errstate(divide="ignore", invalid="ignore"):
            index = self.sums / counts + self._bonus_scale / np.sqrt(counts)
        index[counts == 0] = np.inf
        return random_argmax(index, self._ties.next())

    def update(self, actions: np.ndarray, feedback: np.ndarray) -> None:
        self.counts[self._rows, actions] += 1
        self.sums[self._rows, actions] += feedback[:, self.reward_node]
