"""The linear-SEM causal bandit with full-vector feedback and a replicate axis.

``step`` takes one action per replicate and returns the whole sample ``X`` of each
replicate. The noise of replicate ``r`` comes from its own stream (common random numbers):
it does not depend on the policy, so every algorithm faces the same noise.

Building one warns (:class:`~causalbandits.assumptions.AssumptionWarning`) when the noise
standard deviations of the reward node and its ancestors span more than
:data:`NOISE_SPREAD_LIMIT`, or when the bound ``m`` on ``||X||`` exceeds the largest
root-mean-square norm ``sqrt(E||X_a||^2)`` of the arms more than :data:`NORM_BOUND_SLACK`
times.
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass

import networkx as nx
import numpy as np

from causalbandits.assumptions import warn_assumption
from causalbandits.envs.actions import ActionSet, check_transfer_memory
from causalbandits.envs.base import ReplicatedEnvironment
from causalbandits.envs.deviations import DeviationSchedule
from causalbandits.graphs.dag import CausalDAG
from causalbandits.random import ReplicateStream
from causalbandits.scm.linear import LinearSEM
from causalbandits.scm.noise import NoiseModel
from causalbandits.validation import horizon as check_horizon

#: Largest ratio of the noise standard deviations (reward node and its ancestors) that
#: passes without a warning: LinSEM-UCB's, Robust-LCB's and LinSEM-TS's confidence sets use
#: one noise scale for every node.
NOISE_SPREAD_LIMIT = 100.0
#: Largest ratio of ``m`` to the arms' largest root-mean-square norm of ``X`` that passes
#: without a warning (Gaussian noise stays below it: ``m / rms <= sqrt(2) +
#: sqrt(2 ln(2 N T))``; loose interval bounds of bounded noise may not).
NORM_BOUND_SLACK = 10.0


@dataclass(frozen=True)
class LinearSEMProblem:
    """What a learner is told: graph, actions, reward node, noise mean and known constants.

    When the replicates are different systems (:class:`~causalbandits.envs.linear_instances.
    LinearSEMInstances`), ``replicate_dags`` holds the graph of each, ``dag`` is their union
    (a correct, coarser graph for every replicate) and ``x_norm_bound`` the largest bound.
    """

    dag: CausalDAG
    actions: ActionSet
    reward_node: int
    noise_mean: np.ndarray
    x_norm_bound: float
    horizon: int
    deviation_budget: float = 0.0
    replicate_dags: tuple[CausalDAG, ...] | None = None
    #: The supports of ``B`` and ``B*`` (edge ``i -> j`` in mode ``m`` at ``[..., m, i, j]``),
    #: ``(2, N, N)``, or ``(R, 2, N, N)`` with ``replicate_dags``: each mode's own parents.
    mode_parents: np.ndarray | None = None
    #: Each node's noise variance, ``(N,)``, when the environment tells it (CSL-UCB's
    #: ``noise_variance="known"``).
    noise_variance: np.ndarray | None = None
    #: The Robust-LCB paper's assumption holds: both modes' weights and the noise means are
    #: non-negative (every replicate's), so greedy forward propagation is the paper's bound
    #: of eq. 18; LinSEM-UCB's ``solver="auto"`` uses it then, the interval bound otherwise.
    nonnegative: bool = False

    def __post_init__(self) -> None:
        if self.replicate_dags is not None and any(
            np.any(g.adjacency & ~self.dag.adjacency) for g in self.replicate_dags
        ):
            raise ValueError("every replicate's graph must be a sub-graph of dag")


class SEMRounds(ReplicatedEnvironment):
    """What :class:`LinearSEMBandit` and its piecewise-stationary sibling share: actions are
    indices into ``actions``; each round draws one noise vector per replicate from its own
    stream and returns ``X = T_a eps`` with the transfer matrices ``T_a = (I - B_a^T)^{-1}``
    of the round's model; the regret oracle compares ``expected_rewards`` with
    ``optimal_value`` (within ``optimal_tolerance``; decisions: csl-ucb A12)."""

    actions: ActionSet
    noise: NoiseModel
    expected_rewards: np.ndarray
    optimal_value: float
    optimal_tolerance: float

    @property
    def n_actions(self) -> int:
        return self.actions.n_actions

    def start(self, seeds: list[np.random.SeedSequence]) -> None:
        noise = self.noise
        self._noise = ReplicateStream(seeds, (), lambda g, size: noise.sample(g, size))

    def check_actions(self, actions: np.ndarray) -> np.ndarray:
        actions = self.actions.check(actions)
        if actions.shape != (self.replicates,):
            raise ValueError(f"need one action per replicate, shape ({self.replicates},)")
        return actions

    @abstractmethod
    def round_transfer(self) -> np.ndarray:
        """The transfer matrices ``(A, N, N)`` of the model of round ``t + 1``."""

    def play(self, actions: np.ndarray) -> np.ndarray:
        """The samples ``X`` of shape ``(R, N)``."""
        transfer = self.round_transfer()
        return np.einsum("rij,rj->ri", transfer[actions], self._noise.next())

    def pseudo_regret(self, actions: np.ndarray) -> np.ndarray:
        """``mu*_t - mu_{a,t}`` of each replicate's action for the round about to be played
        (under the nominal model in deviation rounds; decisions: robust-lcb A7)."""
        return self.optimal_value - self.expected_rewards[actions]

    def is_optimal(self, actions: np.ndarray) -> np.ndarray:
        """Whether each action is within ``optimal_tolerance`` of the best
        (decisions: csl-ucb A12)."""
        return self.expected_rewards[actions] >= self.optimal_value - self.optimal_tolerance


class LinearSEMBandit(SEMRounds):
    """Causal bandit on a linear SEM (Robust-LCB Section II), vectorised over replicates.

    Parameters
    ----------
    sem:
        The nominal model.
    actions:
        The action set (default: subsets of non-root nodes, reward node included).
    horizon:
        Number of rounds ``T``.
    reward_node:
        The reward node (default: the last node); any node.
    deviations:
        Rounds where the data come from a deviated model (default: none).
    deviation_budget:
        The ``C`` told to the learner (default: 0).
    optimal_tolerance:
        An action counts as optimal when its expected reward is within this of the best
        (the CSL-UCB paper uses 1e-2; decisions: csl-ucb A12).
    """

    def __init__(
        self,
        sem: LinearSEM,
        horizon: int,
        actions: ActionSet | None = None,
        reward_node: int | None = None,
        deviations: DeviationSchedule | None = None,
        deviation_budget: float = 0.0,
        optimal_tolerance: float = 1e-9,
    ) -> None:
        check_horizon(horizon)
        if not 0 <= deviation_budget < np.inf:
            raise ValueError(
                f"the deviation budget C must be finite and >= 0, got {deviation_budget}"
            )
        self.sem = sem
        self.noise = sem.noise
        self.horizon = int(horizon)
        self.reward_node = sem.n_nodes - 1 if reward_node is None else int(reward_node)
        if not 0 <= self.reward_node < sem.n_nodes:
            raise ValueError(f"reward node {self.reward_node} is outside 0..{sem.n_nodes - 1}")
        self.actions = actions if actions is not None else ActionSet.non_root(sem.dag)
        if self.actions.n_nodes != sem.n_nodes:
            raise ValueError("the action set and the SEM have different numbers of nodes")
        self.deviations = deviations or DeviationSchedule.none(self.horizon)
        if self.deviations.horizon != self.horizon:
            raise ValueError("the deviation schedule has a different horizon")
        self.deviation_budget = float(deviation_budget)
        if not 0 <= optimal_tolerance < np.inf:
            raise ValueError(f"optimal_tolerance must be finite and >= 0, got {optimal_tolerance}")
        self.optimal_tolerance = float(optimal_tolerance)

        masks = self.actions.masks
        check_transfer_memory(self.actions.n_actions, sem.n_nodes)
        #: ``T_a`` of the nominal model, ``(A, N, N)``.
        self.transfer = sem.transfer_matrices(masks)
        self._deviated_transfer = [
            sem.transfer_matrices(
                masks, weights=m.weights, intervention_weights=m.intervention_weights
            )
            for m in self.deviations.models
        ]
        self._model_index = self.deviations.model_index_per_round()
        self.expected_values = self.transfer @ sem.noise.mean
        self.expected_rewards = self.expected_values[:, self.reward_node]
        self.optimal_value = float(self.expected_rewards.max())
        self.problem = LinearSEMProblem(
            dag=sem.dag,
            actions=self.actions,
            reward_node=self.reward_node,
            noise_mean=sem.noise.mean.copy(),
            x_norm_bound=sem.x_norm_bound(masks, 1 / (2 * sem.n_nodes * self.horizon)),
            horizon=self.horizon,
            deviation_budget=self.deviation_budget,
            mode_parents=np.stack([sem.weights != 0, sem.intervention_weights != 0]),
            noise_variance=np.array(sem.noise.variance, dtype=float),
            nonnegative=sem.nonnegative_weights and bool((sem.noise.mean >= 0).all()),
        )
        self._warn_noise_spread()
        self._warn_loose_norm_bound()

    def _warn_noise_spread(self) -> None:
        """Warn when the reward's ancestors' noise scales span over :data:`NOISE_SPREAD_LIMIT`."""
        dag = self.sem.dag
        nodes = sorted(nx.ancestors(dag.to_networkx(), self.reward_node) | {self.reward_node})
        std = np.sqrt(self.problem.noise_variance[nodes])
        low, high = int(np.argmin(std)), int(np.argmax(std))
        if std[high] > NOISE_SPREAD_LIMIT * std[low]:
            warn_assumption(
                f"the noise standard deviations of the reward node and its ancestors span a "
                f"factor of {std[high] / std[low]:.3g} ({std[low]:.3g} at "
                f"{dag.names[nodes[low]]!r} to {std[high]:.3g} at {dag.names[nodes[high]]!r}), "
                f"above {NOISE_SPREAD_LIMIT:.0f}, while the confidence sets of LinSEM-UCB, "
                "Robust-LCB and LinSEM-TS use one noise scale for every node: rescale each "
                "node j by its noise std s_j (weights i -> j times s_i / s_j)"
            )

    def _warn_loose_norm_bound(self) -> None:
        """Warn when ``m`` exceeds the largest root-mean-square ``||X_a||`` over
        :data:`NORM_BOUND_SLACK` times (``E||X_a||^2 = ||T_a mu||^2 + sum_ij T_aij^2 var_j``)."""
        second_moment = np.einsum(
            "aij,aij,j->a", self.transfer, self.transfer, self.problem.noise_variance
        )
        rms = float(np.sqrt((self.expected_values**2).sum(axis=1) + second_moment).max())
        m = self.problem.x_norm_bound
        if m > NORM_BOUND_SLACK * rms:
            warn_assumption(
                f"the bound m = {m:.4g} on ||X|| that LinSEM-UCB and Robust-LCB use is "
                f"{m / rms:.3g} times the largest root-mean-square norm of X over the arms "
                f"({rms:.4g}), above {NORM_BOUND_SLACK:.0f}, which widens their confidence "
                "radii: give them a tighter bound, dataclasses.replace(env.problem, "
                "x_norm_bound=...)"
            )

    def round_transfer(self) -> np.ndarray:
        """The nominal transfer matrices, or the deviated ones in a deviation round."""
        model = self._model_index[self.t]
        return self.transfer if model < 0 else self._deviated_transfer[model]
