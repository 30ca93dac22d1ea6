"""The uniformly random policies: the speed floor and the random-play baseline."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from causalbandits.random import uniform_stream


class RandomPolicy:
    """Plays a uniformly random action in every round."""

    ACTS_ON = frozenset({"interventions"})

    def __init__(self, problem: object) -> None:
        self.n_actions = problem.actions.n_actions

    def reset(self, seeds: Sequence[np.random.SeedSequence]) -> None:
        self._uniforms = uniform_stream(seeds, ())

    def select(self) -> np.ndarray:
        return (self._uniforms.next() * self.n_actions).astype(np.intp)

    def update(self, actions: np.ndarray, feedback: np.ndarray) -> None:
        """Nothing to learn."""


class RandomSearch:
    """Plays a uniformly random point of ``[0, 1]^|A|`` in every round (continuous actions:
    the random-play baseline of the causal-BO problems)."""

    ACTS_ON = frozenset({"continuous"})

    def __init__(self, problem: object) -> None:
        self.n_actions = problem.n_actions

    def reset(self, seeds: Sequence[np.random.SeedSequence]) -> None:
        self._uniforms = uniform_stream(seeds, (self.n_actions,))

    def select(self) -> np.ndarray:
        return self._uniforms.next()

    def update(self, actions: np.ndarray, feedback: np.ndarray) -> None:
        """Nothing to learn."""
