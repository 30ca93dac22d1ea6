"""The clairvoyant oracle of the NDC-SEM paper: it plays ``x*_t`` every round
(decisions: ndc-sem B-oracle).

``x*_t`` is the top-``s`` of ``w* beta_t`` with ``w* = (I - A)^{-T} 1`` (eq. 6), which only the
environment knows, so the oracle is built from the environment's optimal super arms per
period and its change points, :meth:`Oracle.from_environment`, not from the problem a learner
is told: the registry (:data:`causalbandits.policies.POLICIES`, ``"oracle"``) builds it by
``from_environment``, as the optimal super arms of an instance are neither part of
``env.problem`` nor known when a spec is written. Its pseudo-regret (eq. 7) is zero by
construction; the feedback (delayed or not) is ignored, as the paper's "the oracle receives
the feedback without delay" has no effect on a clairvoyant player.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


class Oracle:
    """Plays the environment's optimal super arm of the current period, for ``R`` replicates.

    Parameters
    ----------
    problem: anything with ``n_arms`` (``N``) and ``super_arm_size`` (``s``).
    optimal_actions: boolean masks ``(n_periods, N)`` (one instance) or ``(R, n_periods, N)``
        (one instance per replicate).
    change_points: 1-based rounds where a new period starts (``n_periods - 1`` of them).
    """

    #: Bench declarations (causalbandits.bench.capabilities).
    ACTS_ON = frozenset({"super-arms", "delayed-super-arms", "separable-super-arms"})
    NEEDS = frozenset({"truth"})

    def __init__(
        self, problem: Any, optimal_actions: np.ndarray, change_points: Sequence[int] = ()
    ) -> None:
        self.n_arms, self.super_arm_size = int(problem.n_arms), int(problem.super_arm_size)
        actions = np.asarray(optimal_actions)
        if actions.dtype != bool and not np.all((actions == 0) | (actions == 1)):
            raise ValueError("optimal_actions must be 0/1 masks")
        actions = actions.astype(bool)
        self.change_points = np.asarray(change_points, dtype=np.int64).reshape(-1)
        periods = self.change_points.size + 1
        if actions.ndim not in (2, 3) or actions.shape[-2:] != (periods, self.n_arms):
            raise ValueError(
                f"optimal_actions must have shape ([R,] {periods}, {self.n_arms}) for "
                f"{periods - 1} change point(s), got {actions.shape}"
            )
        if np.any(actions.sum(axis=-1) > self.super_arm_size):
            raise ValueError(f"optimal super arms may hold at most s = {self.super_arm_size} arms")
        self.optimal_actions = actions

    @classmethod
    def from_environment(cls, env: Any) -> Oracle:
        """The oracle of ``env`` (a semi-bandit environment, possibly wrapped in a delay)."""
        return cls(env.problem, env.optimal_actions, env.change_points)

    def reset(self, seeds: Sequence[np.random.SeedSequence]) -> None:
        replicates = len(seeds)
        if self.optimal_actions.ndim == 3 and len(self.optimal_actions) != replicates:
            raise ValueError(
                f"the oracle holds {len(self.optimal_actions)} instances, got {replicates} seeds"
            )
        self.replicates = replicates
        self.t = 0

    def select(self) -> np.ndarray:
        """``x*_t`` per replicate, ``(R, N)``."""
        self.t += 1
        period = int(np.searchsorted(self.change_points, self.t, side="right"))
        best = self.optimal_actions[..., period, :]
        return np.array(np.broadcast_to(best, (self.replicates, self.n_arms)))

    def update(self, actions: np.ndarray, feedback: object) -> None:
        """Nothing to learn."""
