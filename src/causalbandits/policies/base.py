"""The policy interface: vectorised over replicates, built from what the learner is told."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol, TypeVar

import numpy as np

OptionsT = TypeVar("OptionsT")


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


def options_of(
    kind: type[OptionsT], options: OptionsT | None, changes: Mapping[str, Any]
) -> OptionsT:
    """A policy's knobs: ``options`` (an instance of the dataclass ``kind``, default its
    defaults) with ``changes`` by field name, the keyword options the registry and the presets
    pass (``Class(problem, beta=0.5)``); the dataclass checks them. ``TypeError`` for options
    of another class or an unknown name."""
    options = kind() if options is None else options
    if not isinstance(options, kind):
        raise TypeError(f"expected {kind.__name__}, got {type(options).__name__}")
    return replace(options, **changes) if changes else options
