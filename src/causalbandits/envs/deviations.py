"""Model deviations with a budget ``C`` (Robust-LCB eq. 5-6) and the accountant of eq. 6.

At a deviated round ``t`` the data come from the actual model ``D_a(t)`` instead of the
nominal ``B_a``; ``D_a(t)`` takes column ``i`` from an actual interventional matrix when
``i`` is intervened and from an actual observational matrix otherwise, exactly as eq. 2
builds ``B_a``. A schedule stores the few distinct actual models and which round uses which.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from causalbandits.envs.actions import ActionSet
from causalbandits.graphs.dag import CausalDAG
from causalbandits.random import RNGLike, as_generator
from causalbandits.scm.linear import LinearSEM
from causalbandits.validation import horizon as check_horizon


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
    check_horizon(horizon)
    if count > horizon:
        raise ValueError(f"the budget needs {count} deviated rounds but the horizon is {horizon}")
    if placement == "start":
        return np.arange(count)
    if placement == "spread":
        return (
            np.unique(np.linspace(0, horizon - 1, count).round().astype(int))
            if count
            else np.zeros(0, int)
        )
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
    horizon: int,
    full: int,
    full_models: Sequence[DeviatedModel],
    partial_models: Sequence[DeviatedModel],
    interleave: bool,
    placement: str,
    rng: RNGLike,
) -> DeviationSchedule:
    """Rounds of the groups' models: interleaved, or one group after the other.

    Each group gets ``full`` full rounds followed by its partial round (if any).
    """
    groups = len(full_models)
    per_group = [[g] * full + ([groups + g] if partial_models else []) for g in range(groups)]
    if interleave:
        which = [g for step in zip(*per_group, strict=True) for g in step]
    else:
        which = [g for rounds in per_group for g in rounds]
    rounds = _place(len(which), horizon, placement, rng)
    return DeviationSchedule(
        horizon, rounds, np.asarray(which, dtype=int), (*full_models, *partial_models)
    )


def negated_interventions(
    sem: LinearSEM,
    budget: float,
    horizon: int,
    per_round: float | None = None,
    max_rounds: int | None = None,
    groups: Sequence[Sequence[int]] | None = None,
    interleave: bool = False,
    placement: str = "start",
    rng: RNGLike = None,
) -> DeviationSchedule:
    """Interventional columns pushed towards (and past) zero: the default design
    (decisions: robust-lcb A6).

    In a deviated round the actual interventional column of every node of the round's group
    is ``(1 - s / b) [B*]_i`` with ``b = max_i ||[B*]_i||``, a deviation of at most ``s``.
    The default ``s = 2 b`` gives ``-[B*]_i`` (decisions: robust-lcb A6). With
    ``max_rounds = K`` a group never deviates in more than ``K`` rounds: ``s`` grows to
    ``C / K`` when needed. ``groups``
    (default: one group of all nodes) deviate one after the other, or take turns with
    ``interleave``; deviations of different groups never meet in one round. Full rounds
    are followed by one partial round per group so that eq. 6 totals exactly ``budget``.
    Under the deviated model interventions lower the reward: the optimal action changes.
    """
    star = sem.intervention_weights
    largest = float(np.linalg.norm(star, axis=0).max())
    per_round = 2 * largest if per_round is None else float(per_round)
    if max_rounds is not None:
        if max_rounds < 1:
            raise ValueError(f"max_rounds must be >= 1, got {max_rounds}")
        per_round = max(per_round, budget / max_rounds)
    full, remainder = _split_budget(budget, per_round)
    node_groups = [list(range(sem.n_nodes))] if groups is None else [list(g) for g in groups]

    def shrunk(nodes: list[int], amount: float) -> DeviatedModel:
        scale = np.ones(sem.n_nodes)
        scale[nodes] = 1 - amount / largest
        return DeviatedModel(sem.weights, star * scale[None, :])

    fulls = [shrunk(nodes, per_round) for nodes in node_groups]
    partials = [shrunk(nodes, remainder) for nodes in node_groups] if remainder else []
    return _schedule(horizon, full, fulls, partials, interleave, placement, rng)


def depth_groups(dag: CausalDAG, deepest_first: bool = True) -> list[list[int]]:
    """Non-root nodes grouped by causal depth ``L_i`` (for :func:`negated_interventions`)."""
    depths = dag.depths
    levels = range(depths.max(), 0, -1) if deepest_first else range(1, depths.max() + 1)
    return [[int(v) for v in np.flatnonzero(depths == level)] for level in levels]


def swapped_mechanisms(
    sem: LinearSEM, budget: float, horizon: int, placement: str = "start", rng: RNGLike = None
) -> DeviationSchedule:
    """Alternative design: a deviated round swaps observational and interventional columns."""
    gap = sem.intervention_weights - sem.weights
    largest = float(np.linalg.norm(gap, axis=0).max())
    full, remainder = _split_budget(budget, largest)
    full_model = DeviatedModel(sem.intervention_weights, sem.weights)
    partials = []
    if remainder:
        share = remainder / largest
        partials = [
            DeviatedModel(sem.weights + share * gap, sem.intervention_weights - share * gap)
        ]
    return _schedule(horizon, full, [full_model], partials, False, placement, rng)


DEVIATION_DESIGNS = {"negate": negated_interventions, "swap": swapped_mechanisms}
