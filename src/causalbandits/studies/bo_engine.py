"""A causal-BO optimiser's study state, rebuilt from the stored evaluations.

A proposal is a function of the seed, the evaluation's number, the told observations (as a
set, sorted by number), the pending actions and the earlier proposals' memories. Number
``k < n_init`` is the ``k``-th point of the policy's uniform design; later numbers propose
with the ``(k - n_init)``-th seed of the stream
:meth:`~causalbandits.policies.causal_bo.SequentialOptimizer.suggest` draws from, pending
evaluations entering as believed observations (:mod:`.pending`). A study asked and told in
turn therefore plays exactly the policy's in-memory ``suggest``/``observe`` loop. An ask
beyond the design made while fewer than ``n_init`` observations are told gets a further
uniform point (from its seed): the models need the design's data.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from causalbandits.policies.causal_bo import SequentialOptimizer, seeded_torch
from causalbandits.studies.pending import believed_values
from causalbandits.studies.storage import COMPLETE, PENDING, Evaluation


class BOEngine:
    """A causal-BO optimiser's state from the stored evaluations (module docstring)."""

    #: Whether an ask must be recomputed when anything happened since its proposal began
    #: (only new asks matter here: they change the pending set).
    strict = False

    def __init__(self, policy: SequentialOptimizer, seed: int) -> None:
        policy.reset(seed)
        self.policy = policy
        self.problem = policy.problem
        self.told: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self.pending: dict[int, np.ndarray] = {}
        self.memories: dict[int, Any] = {}
        self._seeds = np.empty(0, dtype=np.int64)

    def apply(self, events: Sequence[tuple[int, str, Evaluation]]) -> None:
        """Take the latest state of every evaluation in ``events`` (order does not matter)."""
        for _, _, evaluation in events:
            number = evaluation.number
            self.told.pop(number, None)
            self.pending.pop(number, None)
            if evaluation.memory is not None:
                self.memories[number] = evaluation.memory
            if evaluation.state == COMPLETE:
                self.told[number] = (
                    np.asarray(evaluation.action, dtype=float),
                    np.asarray(evaluation.observation, dtype=float),
                )
            elif evaluation.state == PENDING:
                self.pending[number] = np.asarray(evaluation.action, dtype=float)

    def accept(self, evaluation: Evaluation) -> None:
        """The ask ``evaluation`` this engine proposed was stored."""
        self.apply([(evaluation.asked_version, "ask", evaluation)])

    def seed_of(self, number: int) -> int:
        index = number - self.policy.n_init
        if index >= len(self._seeds):
            self._seeds = self.policy.proposal_seeds(max(2 * len(self._seeds), index + 1, 64))
        return int(self._seeds[index])

    def propose(self, number: int) -> tuple[list[float], Any]:
        """The action of evaluation ``number`` and the proposal's memory."""
        policy = self.policy
        if number < policy.n_init:
            return policy.design[number].tolist(), None
        seed = self.seed_of(number)
        if len(self.told) < policy.n_init:
            return np.random.default_rng(seed).random(self.problem.n_actions).tolist(), None
        told = sorted(self.told)
        actions = np.array([self.told[k][0] for k in told])
        values = np.array([self.told[k][1] for k in told])
        if self.pending:
            pending = np.array([self.pending[k] for k in sorted(self.pending)])
            with seeded_torch(seed):  # as the proposal: the same floats on any machine
                believed = believed_values(policy.specs, policy.order, actions, values, pending)
            actions, values = np.vstack([actions, pending]), np.vstack([values, believed])
        policy.actions, policy.values = actions, values
        policy.restore_memory([self.memories[k] for k in sorted(self.memories) if k < number])
        action = policy.proposal(seed)
        return action.tolist(), policy.proposal_memory()
