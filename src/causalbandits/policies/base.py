"""The policy interface: vectorised over replicates, built from what the learner is told."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np


class Policy(Protocol):
    """A bandit policy acting on ``R`` replicates at once.

    A policy is constructed from a problem description (never the true model) and its
    hyper-parameters; ``reset`` gives it one ``SeedSequence`` per replicate for its own
    randomness (tie-breaking, posterior sampling).
    """

    def reset(self, seeds: Sequence[np.random.SeedSequence]) -> None:
        """Forget all data; prepare for ``len(seeds)`` replicates."""

    def select(self) -> np.ndarray:
        """The action index of every replicate for this round, shape ``(R,)``."""

    def update(self, actions: np.ndarray, feedback: np.ndarray) -> None:
        """Learn from the played ``actions`` (R,) and the environment's ``feedback``."""
