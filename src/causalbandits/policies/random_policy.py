"""The uniformly random policy: the speed floor and a sanity baseline."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from causalbandits.random import uniform_stream


class RandomPolicy:
    """Plays a uniformly random action in every round."""

    def __init__(self, problem: object) -> None:
        self.n_actions = problem.actions.n_actions

    def reset(self, seeds: Sequence[np.random.SeedSequence]) -> None:
        self._uniforms = uniform_stream(seeds, ())

    def select(self) -> np.ndarray:
        return (self._uniforms.next() * self.n_actions).astype(np.intp)

    def update(self, actions: np.ndarray, feedback: np.ndarray) -> None:
        """Nothing to learn."""
