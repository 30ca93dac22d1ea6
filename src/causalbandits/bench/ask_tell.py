"""A user's ask/tell optimiser as a policy of the round loop (the causal-BO families).

An optimiser with ``suggest() -> action`` (a point of ``[0, 1]^|A|``) and
``observe(action, node_values)``, built as ``Optimiser(problem)``, plays one replicate per
task (the family's tasks hold one replicate each); its randomness comes from ``reset``'s
seed when it defines ``reset(seed)``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from causalbandits.lookup import import_object


def is_ask_tell(cls: object) -> bool:
    """Whether ``cls`` has the ask/tell methods and not the round loop's."""
    return hasattr(cls, "suggest") and hasattr(cls, "observe") and not hasattr(cls, "select")


class AskTell:
    """The round loop's interface over the optimiser ``optimiser`` (``"module:Class"``)."""

    def __init__(self, problem: object, optimiser: str) -> None:
        self.optimiser = import_object(optimiser)(problem)

    def reset(self, seeds: Sequence[np.random.SeedSequence]) -> None:
        if len(seeds) != 1:
            raise ValueError(f"an ask/tell optimiser plays one replicate, got {len(seeds)}")
        if hasattr(self.optimiser, "reset"):
            self.optimiser.reset(seeds[0])

    def select(self) -> np.ndarray:
        return np.asarray(self.optimiser.suggest(), dtype=float)[None, :]

    def update(self, actions: np.ndarray, feedback: np.ndarray) -> None:
        self.optimiser.observe(actions[0], np.asarray(feedback)[0])
