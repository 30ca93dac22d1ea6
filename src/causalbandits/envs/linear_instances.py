"""Linear-SEM bandits with one system per replicate (the CSL-UCB paper's E3 and E4).

:class:`LinearSEMInstances` runs ``R`` replicates at once, replicate ``r`` on its own system
(graph, weights and, in the non-stationary case, its own mechanism changes): the feedback
``X = T_a eps`` and the regret oracle of :class:`~causalbandits.envs.linear_bandit.
LinearSEMBandit` with a leading replicate axis on the transfer matrices and the expected
rewards. The systems share the action set, reward node, noise law, horizon and change points.
Noise: one vector per replicate and round from the replicate's own stream, as in
``LinearSEMBandit``, so a replicate sees the same numbers whatever else is in its stack.

The learner is told the union of the graphs as ``dag`` and each replicate's graph in
``replicate_dags`` (:class:`~causalbandits.envs.linear_bandit.LinearSEMProblem`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from causalbandits.envs.base import SeedLike
from causalbandits.envs.linear_bandit import LinearSEMBandit, SEMRounds
from causalbandits.envs.piecewise import ChangeRecord, PiecewiseStationaryBandit
from causalbandits.graphs.dag import CausalDAG
from causalbandits.scm.noise import same_noise

System = LinearSEMBandit | PiecewiseStationaryBandit


def _segments(system: System) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Change points, transfer matrices ``(S, A, N, N)`` and expected rewards ``(S, A)``."""
    if isinstance(system, PiecewiseStationaryBandit):
        return system.change_points, system.segment_transfers, system.segment_rewards
    if system.deviations.rounds.size:
        raise ValueError("systems with deviation rounds cannot be stacked")
    return np.zeros(0, dtype=int), system.transfer[None], system.expected_rewards[None]


class LinearSEMInstances(SEMRounds):
    """``R`` linear-SEM bandits (stationary or piecewise-stationary), one system each.

    Parameters
    ----------
    systems: one :class:`LinearSEMBandit` (without deviations) or
        :class:`PiecewiseStationaryBandit` per replicate, with the same horizon, action set,
        reward node, noise law, optimality tolerance and change points.
    """

    def __init__(self, systems: Sequence[System]) -> None:
        self.systems = tuple(systems)
        if not self.systems:
            raise ValueError("need at least one system")
        first = self.systems[0]
        segments = [_segments(s) for s in self.systems]
        for system, (points, _, _) in zip(self.systems, segments, strict=True):
            problems = [
                ("horizon", system.horizon == first.horizon),
                ("action set", np.array_equal(system.actions.masks, first.actions.masks)),
                ("reward node", system.reward_node == first.reward_node),
                ("noise law", same_noise(system.noise, first.noise)),
                ("optimal tolerance", system.optimal_tolerance == first.optimal_tolerance),
                ("change points", np.array_equal(points, segments[0][0])),
            ]
            differ = [name for name, same in problems if not same]
            if differ:
                raise ValueError(f"the systems must share their {', '.join(differ)}")
        self.horizon, self.actions = first.horizon, first.actions
        self.reward_node, self.noise = first.reward_node, first.noise
        self.optimal_tolerance = first.optimal_tolerance
        self.change_points = segments[0][0]
        #: ``T_a`` of every replicate's model in every segment, ``(R, S, A, N, N)``.
        self.segment_transfers = np.stack([transfer for _, transfer, _ in segments])
        self.segment_rewards = np.stack([rewards for _, _, rewards in segments])  # (R, S, A)
        self.segment_optimal_values = self.segment_rewards.max(axis=2)  # (R, S)
        #: Each replicate's mechanism changes; ``None`` for stationary systems.
        self.changes_per_replicate: tuple[tuple[ChangeRecord, ...], ...] | None = None
        if self.change_points.size:
            self.changes_per_replicate = tuple(tuple(s.changes) for s in self.systems)
        dags = tuple(s.problem.dag for s in self.systems)
        union = np.logical_or.reduce([g.adjacency for g in dags])
        self.problem = dataclasses.replace(
            first.problem,
            dag=CausalDAG(union),
            x_norm_bound=max(s.problem.x_norm_bound for s in self.systems),
            replicate_dags=dags,
            mode_parents=np.stack([s.problem.mode_parents for s in self.systems]),
            nonnegative=all(s.problem.nonnegative for s in self.systems),
        )
        self._rows = np.arange(len(self.systems))

    @property
    def replicates(self) -> int:
        """``R``, the number of systems (known before :meth:`reset`)."""
        return len(self.systems)

    def reset(self, seed: SeedLike = None, replicates: int | None = None) -> None:
        """Start round 1; ``seed`` is a root seed or one ``SeedSequence`` per system."""
        super().reset(seed, self.replicates if replicates is None else replicates)

    def start(self, seeds: list[np.random.SeedSequence]) -> None:
        if len(seeds) != len(self.systems):
            raise ValueError(f"got {len(seeds)} seeds for {len(self.systems)} systems")
        super().start(seeds)

    @property
    def segment(self) -> int:
        """The model of the round about to be played (the last one once the horizon is over)."""
        return int(np.searchsorted(self.change_points, min(self.t, self.horizon - 1), "right"))

    @property
    def expected_rewards(self) -> np.ndarray:
        """Expected reward of every replicate's arms under its current model, ``(R, A)``."""
        return self.segment_rewards[:, self.segment]

    @property
    def optimal_value(self) -> np.ndarray:
        """Every replicate's best expected reward, ``(R,)``."""
        return self.segment_optimal_values[:, self.segment]

    def round_transfer(self) -> np.ndarray:
        """Every replicate's transfer matrices of the current model, ``(R, A, N, N)``."""
        return self.segment_transfers[:, self.segment]

    def play(self, actions: np.ndarray) -> np.ndarray:
        """The samples ``X`` of shape ``(R, N)``, replicate ``r`` from its own system."""
        transfer = self.segment_transfers[self._rows, self.segment, actions]
        return np.einsum("rij,rj->ri", transfer, self._noise.next())

    def pseudo_regret(self, actions: np.ndarray) -> np.ndarray:
        return self.optimal_value - self.expected_rewards[self._rows, actions]

    def is_optimal(self, actions: np.ndarray) -> np.ndarray:
        rewards = self.expected_rewards[self._rows, actions]
        return rewards >= self.optimal_value - self.optimal_tolerance
