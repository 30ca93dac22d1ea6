"""Piecewise-stationary linear-SEM bandits: mechanisms regenerated at change points.

The non-stationary experiment of the CSL-UCB paper (Sec. VI-D, Figs. 9-10). Ids A10 and
A12 below are entries of docs/decisions/csl-ucb.md; [code] marks the authors' code.

At each change point some columns ("causal mechanisms") of ``B`` or ``B*`` are replaced by
the recipe of A10 [code]: among the nodes on which all optimal arms agree, ``n_columns`` are
drawn with replacement (at most as many as there are such nodes, as in the code), and the
column each optimal arm uses there (``B[:, n]`` if ``a*_n = 0``, else ``B*[:, n]``) gets new
parents (each earlier node but the reward node w.p. 0.5) and new weights U(0.5, 2) with a
random sign. The draw is repeated until no previously optimal arm is optimal any more, where
"optimal" means within ``optimal_tolerance`` (1e-2, A12) of the best expected reward; the
code only requires that none of them attains the new maximum exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from causalbandits.envs.actions import ActionSet
from causalbandits.envs.linear_bandit import LinearSEMBandit, SEMRounds
from causalbandits.envs.random_systems import signed_uniform_weights
from causalbandits.graphs.dag import CausalDAG
from causalbandits.random import RNGLike, as_generator
from causalbandits.scm.linear import LinearSEM
from causalbandits.scm.noise import same_noise


@dataclass(frozen=True)
class ChangeRecord:
    """From 0-based ``round`` on, column ``node`` of ``B`` (``mode`` 0) or ``B*`` (1) is new."""

    round: int
    node: int
    mode: int


def optimal_arms(expected_rewards: np.ndarray, tolerance: float) -> np.ndarray:
    """Indices of the arms within ``tolerance`` of the best expected reward (A12)."""
    return np.flatnonzero(expected_rewards >= expected_rewards.max() - tolerance)


def changed_columns(before: LinearSEM, after: LinearSEM) -> list[tuple[int, int]]:
    """The ``(node, mode)`` columns of ``B`` (mode 0) or ``B*`` (mode 1) that differ."""
    pairs = zip(
        (before.weights, before.intervention_weights),
        (after.weights, after.intervention_weights),
        strict=True,
    )
    differ = np.stack([np.any(old != new, axis=0) for old, new in pairs], axis=1)  # (N, 2)
    return [(int(node), int(mode)) for node, mode in zip(*np.nonzero(differ), strict=True)]


@dataclass(frozen=True, kw_only=True)
class MechanismChange:
    """What one change regenerates (A10) and what it must achieve (A12); checked on
    construction."""

    #: Columns drawn, with replacement, among the nodes on which all optimal arms agree (A10).
    n_columns: int = 2
    #: An arm is optimal if within this much of the best expected reward (A12).
    optimal_tolerance: float = 1e-2
    #: Draws tried before giving up.
    max_attempts: int = 1_000

    def __post_init__(self) -> None:
        if self.n_columns < 1:
            raise ValueError(f"n_columns must be >= 1, got {self.n_columns}")
        if self.optimal_tolerance < 0:
            raise ValueError(f"optimal_tolerance must be >= 0, got {self.optimal_tolerance}")
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, got {self.max_attempts}")


def change_mechanisms(
    sem: LinearSEM,
    actions: ActionSet,
    reward_node: int,
    rng: RNGLike = None,
    change: MechanismChange | None = None,
) -> tuple[LinearSEM, list[tuple[int, int]]]:
    """One change of A10 (``change``, default :class:`MechanismChange`'s): the new model and
    its regenerated ``(node, mode)`` columns.

    New parents are drawn among the nodes before ``n`` in the topological order, never the
    reward node, so the graph stays acyclic and the reward node a sink. Only the columns that
    really differ from the old ones are returned.
    """
    change = MechanismChange() if change is None else change
    tolerance = change.optimal_tolerance
    generator = as_generator(rng)
    masks = actions.masks
    rewards = sem.mean_values(masks)[:, reward_node]
    old_optimal = optimal_arms(rewards, tolerance)
    if old_optimal.size == masks.shape[0]:
        raise ValueError("every arm is optimal: no change can make the optimal arms sub-optimal")
    optimal_masks = masks[old_optimal]
    agreed = np.flatnonzero(np.all(optimal_masks == optimal_masks[0], axis=0))
    if agreed.size == 0:
        raise ValueError("the optimal arms agree on no node: no mechanism can be changed")
    modes = optimal_masks[0].astype(int)
    order = sem.dag.topological_order
    position = np.empty(sem.n_nodes, dtype=int)
    position[order] = np.arange(sem.n_nodes)
    eligible = np.arange(sem.n_nodes) != reward_node
    old = (sem.weights, sem.intervention_weights)
    for _ in range(change.max_attempts):
        new = (old[0].copy(), old[1].copy())
        for node in generator.choice(agreed, size=min(change.n_columns, agreed.size)):
            column = signed_uniform_weights((sem.n_nodes,), generator)
            new[modes[node]][:, node] = column * ((position < position[node]) & eligible)
        overrides = {"weights": new[0], "intervention_weights": new[1]}
        rewards = sem.mean_values(masks, **overrides)[:, reward_node]
        if np.all(rewards[old_optimal] < rewards.max() - tolerance):
            dag = CausalDAG((new[0] != 0) | (new[1] != 0))
            changed_sem = LinearSEM(dag, *new, sem.noise)
            return changed_sem, changed_columns(sem, changed_sem)
    raise RuntimeError(
        f"no change of {change.n_columns} mechanism(s) made the optimal arms sub-optimal "
        f"in {change.max_attempts} attempts"
    )


def check_change_points(change_points: Sequence[int], horizon: int) -> np.ndarray:
    """The change points as integers, strictly increasing in ``1..horizon-1``; else
    ``ValueError``."""
    points = np.asarray(change_points, dtype=int).reshape(-1)
    if not np.array_equal(points, np.asarray(change_points).reshape(-1)):
        raise ValueError(f"change points must be integers, got {change_points}")
    if points.size and (points.min() < 1 or points.max() > horizon - 1):
        raise ValueError(f"change points must lie in 1..{horizon - 1}, got {points}")
    if np.any(np.diff(points) <= 0):
        raise ValueError(f"change points must be strictly increasing, got {points}")
    return points


class PiecewiseStationaryBandit(SEMRounds):
    """A :class:`LinearSEMBandit` whose model changes at given rounds (CSL-UCB-CD, Sec. V).

    Parameters
    ----------
    env:
        The initial bandit (without deviations); its ``problem`` is what a learner is told.
    change_points:
        Strictly increasing 0-based rounds in ``1..T-1`` at which a new model starts.
    n_columns, optimal_tolerance:
        Each change's columns (A10) and optimality tolerance (A12): :class:`MechanismChange`.
    rng:
        Randomness of the changes, all drawn at construction.
    models:
        A user's own schedule instead of A10's random one: the model that starts at each
        change point (same nodes and noise as ``env.sem``); ``n_columns`` and ``rng`` are
        then unused and ``changes`` lists the columns that differ from the model before.
    """

    def __init__(
        self,
        env: LinearSEMBandit,
        change_points: Sequence[int],
        n_columns: int = 2,
        rng: RNGLike = None,
        optimal_tolerance: float = 1e-2,
        models: Sequence[LinearSEM] | None = None,
    ) -> None:
        points = check_change_points(change_points, env.horizon)
        change = MechanismChange(n_columns=n_columns, optimal_tolerance=optimal_tolerance)
        if env.deviations.rounds.size:
            raise ValueError(
                "the piecewise-stationary wrapper needs an environment without deviations"
            )
        self.env = env
        self.noise = env.noise
        self.horizon = env.horizon
        self.actions = env.actions
        self.reward_node = env.reward_node
        self.problem = env.problem
        self.change_points = points
        self.optimal_tolerance = float(optimal_tolerance)
        if models is not None and len(models) != points.size:
            raise ValueError(f"got {len(models)} models for {points.size} change points")
        if models is not None and any(
            m.n_nodes != env.sem.n_nodes or not same_noise(m.noise, env.sem.noise) for m in models
        ):
            raise ValueError("every model must have the environment's nodes and noise")
        self.sems, self.changes = self._schedule(models, as_generator(rng), change)
        if env.problem.nonnegative and not all(s.nonnegative_weights for s in self.sems):
            # a change drew a negative weight: the paper's sign assumption no longer holds
            self.problem = replace(env.problem, nonnegative=False)
        masks = self.actions.masks
        #: ``T_a`` of each segment's model, ``(S, A, N, N)``.
        self.segment_transfers = np.stack([sem.transfer_matrices(masks) for sem in self.sems])
        self.segment_rewards = (self.segment_transfers @ env.sem.noise.mean)[..., self.reward_node]
        self.segment_optimal_values = self.segment_rewards.max(axis=1)

    def _schedule(
        self,
        models: Sequence[LinearSEM] | None,
        generator: np.random.Generator,
        change: MechanismChange,
    ) -> tuple[tuple[LinearSEM, ...], list[ChangeRecord]]:
        """The model of every segment and the changed columns: ``models``, or A10's changes
        drawn from ``generator``."""
        sems = [self.env.sem]
        changes: list[ChangeRecord] = []
        for index, point in enumerate(self.change_points):
            if models is None:
                sem, changed = change_mechanisms(
                    sems[-1], self.actions, self.reward_node, generator, change
                )
            else:
                sem, changed = models[index], changed_columns(sems[-1], models[index])
            sems.append(sem)
            changes.extend(ChangeRecord(int(point), node, mode) for node, mode in changed)
        return tuple(sems), changes

    def segment_of(self, rounds: np.ndarray | int) -> np.ndarray:
        """Index of the model used at 0-based ``rounds`` (0 before the first change point)."""
        return np.searchsorted(self.change_points, rounds, side="right")

    @property
    def segment(self) -> int:
        """The model of the round about to be played (the last one once the horizon is over)."""
        return int(self.segment_of(min(self.t, self.horizon - 1)))

    @property
    def expected_rewards(self) -> np.ndarray:
        """Expected reward of every arm under the current model."""
        return self.segment_rewards[self.segment]

    @property
    def optimal_value(self) -> float:
        return float(self.segment_optimal_values[self.segment])

    def round_transfer(self) -> np.ndarray:
        """The transfer matrices of the current model."""
        return self.segment_transfers[self.segment]
