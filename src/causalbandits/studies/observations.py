"""Observations as a user tells them, checked before anything is stored."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from causalbandits.studies.spec import StudyError


def finite_array(observation: Any, shape: tuple[int, ...], what: str) -> np.ndarray:
    """``observation`` as a float array of ``shape``, or :class:`StudyError`."""
    try:
        values = np.asarray(observation, dtype=float)
    except (TypeError, ValueError) as error:
        raise StudyError(f"{what} must be numbers, got {observation!r}") from error
    if values.shape != shape:
        raise StudyError(f"{what} must have shape {shape}, got {values.shape}")
    if not np.all(np.isfinite(values)):
        raise StudyError(f"{what} must be finite (got NaN or inf): {values.tolist()}")
    return values


def by_name(observation: Any, names: Sequence[str]) -> Any:
    """A mapping ``{node name: value}`` as the list in node order; anything else unchanged."""
    if not isinstance(observation, dict):
        return observation
    if not names:
        raise StudyError("this problem's nodes have no names: tell a list of node values")
    unknown = set(observation) - set(names)
    missing = [name for name in names if name not in observation]
    if unknown or missing:
        raise StudyError(
            f"observation names: unknown {sorted(unknown)}, missing {missing}; nodes: {list(names)}"
        )
    return [observation[name] for name in names]


class ObservationCheck:
    """What a study accepts as an evaluation's observation, and the objective it carries.

    A causal-BO problem (one with an ``objective``) is told every node's value, as a list in
    node order or a mapping by node name; the objective is the problem's. A bandit is told
    the feedback of one replicate, of the shape one simulated step of its environment gives;
    its reward is the reward node's value, else the sum of the feedback (a semi-bandit's
    super-arm reward).
    """

    def __init__(self, problem: Any, environment: Any) -> None:
        self.problem, self.environment = problem, environment
        self._shapes: dict[tuple[int, ...], tuple[int, ...]] = {}

    def __call__(self, action: Any, observation: Any) -> tuple[Any, float]:
        problem = self.problem
        if hasattr(problem, "objective"):
            observation = by_name(observation, problem.names)
            values = finite_array(observation, (problem.n_nodes,), "the observed node values")
            return values.tolist(), float(np.asarray(problem.objective(values[None, :]))[0])
        shape = self.feedback_shape(action)
        values = finite_array(observation, shape or np.shape(observation), "the feedback")
        node = getattr(problem, "reward_node", None)
        reward = values[node] if node is not None and values.ndim == 1 else values.sum()
        return values.tolist(), float(reward)

    def feedback_shape(self, action: Any) -> tuple[int, ...] | None:
        """The shape of one replicate's feedback to ``action`` (``None`` without an
        environment)."""
        if self.environment is None:
            return None
        key = np.shape(action)
        if key not in self._shapes:
            self.environment.reset(seed=0, replicates=1)
            feedback = self.environment.step(np.asarray(action)[None])
            if not isinstance(feedback, np.ndarray):
                raise StudyError(
                    f"this environment's feedback is a {type(feedback).__name__}, not an "
                    "array: studies take array feedback"
                )
            self._shapes[key] = feedback.shape[1:]
        return self._shapes[key]
