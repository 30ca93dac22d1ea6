"""Model deviations with a budget ``C`` (Robust-LCB eq. 5-6) and the accountant of eq. 6.

At a deviated round ``t`` the data come from the actual model ``D_a(t)`` instead of the
nominal ``B_a``; ``D_a(t)`` takes column ``i`` from an actual interventional matrix when
``i`` is intervened and from an actual observational matrix otherwise, exactly as eq. 2
builds ``B_a``. A schedule stores the few distinct actual models and which round uses which.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from causalbandits.envs.actions import ActionSet
from causalbandits.random import RNGLike, as_generator
from causalbandits.scm.linear import LinearSEM


@dataclass(frozen=True)
class DeviatedModel:
    """Actual observational and interventional weights ``(D, D*)`` of a deviated round."""

    weights: np.ndarray
    intervention_weights: np.ndarray


@dataclass(frozen=True)
class DeviationSchedule:
    """Deviated rounds (0-based) and the index of the actual model each of them uses."""

    horizon: int
    rounds: np.ndarray
    model_of_round: np.ndarray
    models: tuple[DeviatedModel, ...]

    def __post_init__(self) -> None:
        rounds = np.asarray(self.rounds, dtype=int)
        which = np.asarray(self.model_of_round, dtype=int)
        if self.horizon <= 0:
            raise ValueError(f"horizon must be positive, got {self.horizon}")
        if rounds.shape != which.shape:
            raise ValueError("rounds and model_of_round must have the same length")
        if rounds.size and (rounds.min() < 0 or rounds.max() >= self.horizon):
            raise ValueError(f"deviated rounds must lie in 0..{self.horizon - 1}")
        if np.unique(rounds).size != rounds.size:
            raise ValueError("a round can be deviated only once")
        if which.size and (which.min() < 0 or which.max() >= len(self.models)):
            raise ValueError("model_of_round refers to a model that does not exist")
        object.__setattr__(self, "rounds", rounds)
        object.__setattr__(self, "model_of_round", which)

    @classmethod
    def none(cls, horizon: int) -> DeviationSchedule:
        """No deviation at all (``C = 0``)."""
        return cls(horizon, np.zeros(0, int), np.zeros(0, int), ())

    def model_index_per_round(self) -> np.ndarray:
        """Dense array over rounds: the model index, or ``-1`` for the nominal model."""
        dense = np.full(self.horizon, -1, dtype=int)
        dense[self.rounds] = self.model_of_round
        return dense


def _mode_usage(actions: ActionSet) -> tuple[np.ndarray, np.ndarray]:
    """Per node: is it observational in some action, intervened in some action."""
    return (~actions.masks).any(axis=0), actions.masks.any(axis=0)


def node_deviation_totals(
    schedule: DeviationSchedule, sem: LinearSEM, actions: ActionSet
) -> np.ndarray:
    """``sum_t max_a ||[Delta_a(t)]_i||`` for every node ``i`` (the inner part of eq. 6)."""
    used_obs, used_int = _mode_usage(actions)
    per_model = []
    for model in schedule.models:
        obs = np.linalg.norm(model.weights - sem.weights, axis=0) * used_obs
        star = np.linalg.norm(model.intervention_weights - sem.intervention_weights, axis=0)
        per_model.append(np.maximum(obs, star * used_int))
    if not per_model:
        return np.zeros(sem.n_nodes)
    counts = np.bincount(schedule.model_of_round, minlength=len(schedule.models))
    return counts @ np.asarray(per_model)


def deviation_budget(schedule: DeviationSchedule, sem: LinearSEM, actions: ActionSet) -> float:
    """``C = max_i sum_t max_a ||[Delta_a(t)]_i||`` (eq. 6) of a schedule."""
    return float(node_deviation_totals(schedule, sem, actions).max(initial=0.0))


def check_budget(
    schedule: DeviationSchedule, sem: LinearSEM, actions: ActionSet, budget: float
) -> float:
    """Return the schedule's ``C`` and raise if it exceeds ``budget``."""
    spent = deviation_budget(schedule, sem, actions)
    if spent > budget * (1 + 1e-9) + 1e-12:
        raise ValueError(f"schedule spends C = {spent:.6g}, more than the budget {budget:.6g}")
    return spent


def _place(count: int, horizon: int, placement: str, rng: RNGLike) -> np.ndarray:
    if count > horizon:
        raise ValueError(f"the budget needs {count} deviated rounds but the horizon is {horizon}")
    if placement == "start":
        return np.arange(count)
    if placement == "spread":
        return np.unique(np.linspace(0, horizon - 1, count).round().astype(int)) if count else np.zeros(0, int)
    if placement == "random":
        return np.sort(as_generator(rng).choice(horizon, size=count, replace=False))
    raise ValueError(f"unknown placement {placement!r}; use 'start', 'spread' or 'random'")


def _split_budget(budget: float, per_round: float) -> tuple[int, float]:
    """Full rounds of deviation ``per_round`` and the remainder so the total is ``budget``."""
    if budget < 0 or not np.isfinite(budget):
        raise ValueError(f"the deviation budget C must be a finite number >= 0, got {budget}")
    if per_round <= 0:
        raise ValueError("this deviation design has zero deviation per round")
    full = int(np.floor(budget / per_round + 1e-12))
    remainder = budget - full * per_round
    return full, (remainder if remainder > 1e-12 * max(budget, 1.0) else 0.0)


def _schedule(
    horizon: int, full: int, remainder_model: DeviatedModel | None, full_model: DeviatedModel,
    placement: str, rng: RNGLike,
) -> DeviationSchedule:
    count = full + (remainder_model is not None)
    rounds = _place(count, horizon, placement, rng)
    models = (full_model,) if remainder_model is None else (full_model, remainder_model)
    which = np.zeros(count, dtype=int)
    if remainder_model is not None:
        which[-1] = 1
    return DeviationSchedule(horizon, rounds, which, models)


def negated_interventions(
    sem: LinearSEM, budget: float, horizon: int, factor: float = 1.0,
    placement: str = "start", rng: RNGLike = None,
) -> DeviationSchedule:
    """The default design (A6): intervened columns become ``-factor * [B*]_i`` when deviated.

    One round deviates node ``i`` by ``(1 + factor) ||[B*]_i||``; full rounds are followed by
    one partial round ``(1 - s) [B*]_i`` so that eq. 6 totals exactly ``budget``. Under the
    deviated model every intervention lowers the reward, which changes the optimal action.
    """
    if factor <= 0:
        raise ValueError(f"factor must be positive, got {factor}")
    star = sem.intervention_weights
    largest = float(np.linalg.norm(star, axis=0).max())
    full, remainder = _split_budget(budget, (1 + factor) * largest)
    full_model = DeviatedModel(sem.weights, -factor * star)
    partial = None
    if remainder:
        partial = DeviatedModel(sem.weights, (1 - remainder / largest) * star)
    return _schedule(horizon, full, partial, full_model, placement, rng)


def swapped_mechanisms(
    sem: LinearSEM, budget: float, horizon: int, placement: str = "start", rng: RNGLike = None
) -> DeviationSchedule:
    """Alternative design: a deviated round swaps observational and interventional columns."""
    gap = sem.intervention_weights - sem.weights
    largest = float(np.linalg.norm(gap, axis=0).max())
    full, remainder = _split_budget(budget, largest)
    full_model = DeviatedModel(sem.intervention_weights, sem.weights)
    partial = None
    if remainder:
        share = remainder / largest
        partial = DeviatedModel(sem.weights + share * gap, sem.intervention_weights - share * gap)
    return _schedule(horizon, full, partial, full_model, placement, rng)


DEVIATION_DESIGNS = {"negate": negated_interventions, "swap": swapped_mechanisms}
