"""Feedback delay for any environment (NDC-SEM Sec. II: constant ``D``; random ``D_t <= D_max``).

Timing, with 1-based rounds: the feedback of round ``tau`` with delay ``d`` arrives at the
*end* of round ``tau + d``, i.e. it is part of what :meth:`FeedbackDelay.step` returns in
round ``tau + d`` (with ``d = 0``, in round ``tau`` itself, as without the wrapper). So when
deciding at round ``t`` the agent holds the feedback of the rounds ``tau <= t - 1 - d``
(the delay model of NDC-SEM Sec. II). Feedback due after the horizon ``T`` is never delivered.

Random delays are uniform integers in ``[delay, max_delay]``, one per (replicate, round), from
the wrapper's own stream of each replicate (common random numbers: they do not depend on the
policy).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from causalbandits.envs.base import Environment, ReplicatedEnvironment
from causalbandits.random import ReplicateStream, SubStream, derive


@dataclass(frozen=True)
class DelayedFeedback:
    """Everything that arrives at the end of one round, one row per (round, replicate) item.

    ``rounds`` (K,) are the 1-based rounds the items belong to and ``replicates`` (K,) their
    replicate indices, sorted by round, then replicate; ``actions`` (K, ...) are the actions
    played then; ``feedback`` is the environment's feedback with the replicate axis replaced
    by the item axis: an array ``(K, ...)``, or the same dataclass with every field ``(K, ...)``.
    """

    rounds: np.ndarray
    replicates: np.ndarray
    actions: np.ndarray
    feedback: Any

    def __len__(self) -> int:
        return self.rounds.size


def _take(feedback: Any, rows: np.ndarray, replicates: int) -> Any:
    """The replicate rows ``rows`` of an array or of every field of a dataclass."""
    if isinstance(feedback, np.ndarray):
        return feedback[rows]
    if dataclasses.is_dataclass(feedback) and not isinstance(feedback, type):
        taken = {}
        for field in dataclasses.fields(feedback):
            value = getattr(feedback, field.name)
            if not isinstance(value, np.ndarray) or value.shape[:1] != (replicates,):
                raise TypeError(
                    f"feedback field {field.name!r} must be an array with a leading replicate "
                    f"axis of length {replicates}"
                )
            taken[field.name] = value[rows]
        return dataclasses.replace(feedback, **taken)
    raise TypeError(f"cannot delay feedback of type {type(feedback).__name__}")


def _concatenate(parts: list[Any]) -> Any:
    """Stack arrays, or the fields of dataclasses of one type, along the item axis."""
    first = parts[0]
    if isinstance(first, np.ndarray):
        return np.concatenate(parts)
    stacked = {
        field.name: np.concatenate([getattr(p, field.name) for p in parts])
        for field in dataclasses.fields(first)
    }
    return dataclasses.replace(first, **stacked)


class FeedbackDelay(ReplicatedEnvironment):
    """Delay the feedback of ``env``: constant ``delay``, or uniform in ``[delay, max_delay]``.

    Uses only the :class:`~causalbandits.envs.base.Environment` interface of ``env``; every
    other attribute is passed through. ``step`` returns a :class:`DelayedFeedback`.
    """

    def __init__(self, env: Environment, delay: int = 0, max_delay: int | None = None) -> None:
        if int(delay) != delay or delay < 0:
            raise ValueError(f"the delay D must be a non-negative integer, got {delay}")
        if max_delay is not None and (int(max_delay) != max_delay or max_delay < delay):
            raise ValueError(f"max_delay must be an integer >= delay = {delay}, got {max_delay}")
        self.env = env
        self.delay = int(delay)
        self.max_delay = self.delay if max_delay is None else int(max_delay)
        self._pending: dict[int, list[tuple[int, np.ndarray, np.ndarray, Any]]] = {}

    def __getattr__(self, name: str) -> Any:
        env = self.__dict__.get("env")
        if env is None:
            raise AttributeError(name)
        return getattr(env, name)

    @property
    def horizon(self) -> int:
        return self.env.horizon

    @property
    def problem(self) -> Any:
        """The wrapped problem; one with a ``delay`` field is told the delay bound."""
        problem = self.env.problem
        fields = (
            {f.name for f in dataclasses.fields(problem)}
            if dataclasses.is_dataclass(problem)
            else set()
        )
        if "delay" in fields:
            return dataclasses.replace(problem, delay=self.max_delay)
        return problem

    @property
    def pending(self) -> int:
        """Number of (round, replicate) items played but not delivered yet."""
        return sum(rows.size for items in self._pending.values() for _, rows, _, _ in items)

    def start(self, seeds: list[np.random.SeedSequence]) -> None:
        """Reset ``env`` with the same seeds and draw the delays from streams derived from them."""
        self.env.reset(seeds)
        low, high = self.delay, self.max_delay
        self._delays = ReplicateStream(
            derive(seeds, SubStream.DELAY), (), lambda g, size: g.integers(low, high + 1, size)
        )
        self._pending = {}

    def check_actions(self, actions: Any) -> Any:
        """The actions as they are (``env`` validates them)."""
        return actions

    def play(self, actions: Any) -> DelayedFeedback:
        """Play ``actions``; return the feedback arriving at the end of this round."""
        feedback = self.env.step(actions)
        actions = np.asarray(actions)
        now, count = self.t + 1, self.replicates
        delays = self._delays.next()
        for arrival in np.unique(delays) + now:
            rows = np.flatnonzero(delays + now == arrival)
            item = (now, rows, actions[rows], _take(feedback, rows, count))
            self._pending.setdefault(int(arrival), []).append(item)
        due = self._pending.pop(now, None)
        if due is None:
            none = np.zeros(0, dtype=int)
            due = [(now, none, actions[none], _take(feedback, none, count))]
        return DelayedFeedback(
            rounds=np.concatenate([np.full(rows.size, tau) for tau, rows, _, _ in due]),
            replicates=np.concatenate([rows for _, rows, _, _ in due]),
            actions=np.concatenate([played for _, _, played, _ in due]),
            feedback=_concatenate([data for _, _, _, data in due]),
        )

    def pseudo_regret(self, actions: Any) -> np.ndarray:
        return self.env.pseudo_regret(actions)

    def is_optimal(self, actions: Any) -> np.ndarray:
        return self.env.is_optimal(actions)
