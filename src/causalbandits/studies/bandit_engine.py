"""A round-loop policy's study state (one replicate), rebuilt by replaying its calls.

The policy's calls are replayed in the study's event order: ``select`` at every ask
(checked against the stored action) and ``update`` at every tell. Concurrent asks see what
has been told, as under delayed feedback (Joulani, Gyorgy & Szepesvari 2013); failed and
expired evaluations teach nothing.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import numpy as np

from causalbandits.random import as_seed_sequences
from causalbandits.studies.spec import StudyError
from causalbandits.studies.storage import COMPLETE, Evaluation


class BanditEngine:
    """A round-loop policy's state by replaying its calls (module docstring)."""

    strict = True

    def __init__(self, policy: Any, seed: int) -> None:
        policy.reset(as_seed_sequences(seed, 1))
        self.policy = policy
        self._candidate: Any = None

    def apply(self, events: Sequence[tuple[int, str, Evaluation]]) -> None:
        """Replay ``events`` ``(version, kind, evaluation)`` in version order."""
        for _, kind, evaluation in sorted(events, key=lambda event: event[0]):
            action = np.asarray(evaluation.action)
            if kind == "ask":
                replayed = np.asarray(self.policy.select())[0]
                if replayed.shape != action.shape or not np.array_equal(replayed, action):
                    raise StudyError(
                        f"evaluation {evaluation.number} does not replay: the policy now "
                        f"selects {replayed.tolist()}, the study stored {action.tolist()} "
                        "(was the library or the policy changed?)"
                    )
            elif evaluation.state == COMPLETE:
                self.policy.update(action[None], np.asarray(evaluation.observation)[None])

    def accept(self, evaluation: Evaluation) -> None:
        self.policy = self._candidate

    def propose(self, number: int) -> tuple[Any, None]:
        self._candidate = copy.deepcopy(self.policy)
        return np.asarray(self._candidate.select())[0].tolist(), None
