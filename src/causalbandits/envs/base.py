"""The environment interface the round loop and the runner rely on, and the replicated base
class holding the guards every environment shares.

An environment runs ``R`` replicates at once (beside :class:`~causalbandits.policies.base.
Policy`): ``reset`` gives it one ``SeedSequence`` per replicate for its noise (common random
numbers: the noise does not depend on the actions), ``step`` plays one action per replicate and
returns the feedback a learner sees, and the regret oracle (``pseudo_regret``, ``is_optimal``)
judges the actions of the round about to be played, which is why the loop calls it before
``step``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from causalbandits.random import as_seed_sequences

SeedLike = int | np.random.SeedSequence | Sequence[np.random.SeedSequence] | None


class Environment(Protocol):
    """A bandit environment acting on ``R`` replicates at once.

    Required by :func:`~causalbandits.experiments.simulate.simulate` and the runner:
    ``horizon`` (``T``), ``problem`` (what a learner is told; policies are built from it, never
    from the true model), ``reset``, ``replicates``, ``step`` and the regret oracle.

    Optional attributes, read by recorders and oracle policies when present:

    - ``optimal_action``: the optimal super arm(s) of the round about to be played, ``(N,)``
      or ``(R, N)`` (``SuperArmOverlap``, ``LockIns``);
    - ``optimal_actions`` and ``change_points``: the optimal super arms per period and the
      1-based rounds where a period starts (``Oracle.from_environment``);
    - ``adjacency``: the true graph, ``(N, N)`` or ``(R, N, N)`` (``GraphError``, ``LockIns``);
    - ``changes`` (or ``changes_per_replicate``, one list per replicate) and
      ``change_points``: the mechanism changes and their 0-based rounds
      (:func:`~causalbandits.experiments.change_metrics.detection_columns`);
    - ``delay``: the feedback delay ``D`` (the ``lock-ins`` recorder's minimum length).
    """

    horizon: int
    problem: Any

    @property
    def replicates(self) -> int:
        """``R``, the number of replicates of the last ``reset``."""

    def reset(self, seed: SeedLike = None, replicates: int | None = None) -> None:
        """Start round 1; ``seed`` is a root seed or one ``SeedSequence`` per replicate."""

    def step(self, actions: np.ndarray) -> Any:
        """Play one action per replicate; return the round's feedback."""

    def pseudo_regret(self, actions: np.ndarray) -> np.ndarray:
        """``mu*_t - mu_t(a)`` of each replicate's action for the round about to be played."""

    def is_optimal(self, actions: np.ndarray) -> np.ndarray:
        """Whether each replicate's action is optimal for the round about to be played."""


class ReplicatedEnvironment(ABC):
    """The round counter and guards of a replicated environment.

    :meth:`reset` normalises the seeds and starts round 1 (``t = 0`` rounds played);
    :meth:`step` refuses to play before ``reset`` or after the horizon, validates one action
    per replicate (:meth:`check_actions`), plays the round (:meth:`play`, with ``t`` the
    rounds played before it) and counts it. Subclasses set ``horizon`` and implement
    :meth:`start`, :meth:`check_actions` and :meth:`play`.
    """

    horizon: int
    t: int = 0
    _replicates: int | None = None

    def reset(self, seed: SeedLike = None, replicates: int | None = None) -> None:
        """Start round 1; ``seed`` is a root seed or one ``SeedSequence`` per replicate."""
        seeds = as_seed_sequences(seed, replicates)
        self.start(seeds)
        self._replicates = len(seeds)
        self.t = 0

    @property
    def replicates(self) -> int:
        if self._replicates is None:
            raise RuntimeError("call reset() before using the environment")
        return self._replicates

    def step(self, actions: Any) -> Any:
        """Play one action per replicate; return the round's feedback."""
        if self._replicates is None:
            raise RuntimeError("call reset() before step()")
        if self.t >= self.horizon:
            raise RuntimeError(f"the horizon T = {self.horizon} is over; call reset()")
        feedback = self.play(self.check_actions(actions))
        self.t += 1
        return feedback

    @abstractmethod
    def start(self, seeds: list[np.random.SeedSequence]) -> None:
        """Draw or prepare the noise of one replicate per seed."""

    @abstractmethod
    def check_actions(self, actions: Any) -> Any:
        """Validate one action per replicate; return them in canonical form."""

    @abstractmethod
    def play(self, actions: Any) -> Any:
        """The feedback of round ``t + 1`` for valid ``actions``."""
