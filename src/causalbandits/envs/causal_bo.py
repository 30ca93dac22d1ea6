"""Causal Bayesian optimisation as a bandit: a function network queried with continuous
actions, full node feedback and an exact regret oracle (EXCBO Sec. 2.2, 3.2, eqs. 4-8).

Each round a learner plays one action vector ``a in [0, 1]^{|A|}`` per replicate and observes
every node value ``x = F(a, u)`` (paper eq. 7); the reward is ``y = obj(x)``. The regret of a
round is ``E[y | a*] - E[y | a]`` (paper Section 3), judged by the environment's
``expected_reward``, exact where the problem allows it (decisions: excbo 2, 3) and a Monte Carlo
estimate with common random numbers otherwise (:class:`MonteCarloReward`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from causalbandits.envs.base import ReplicatedEnvironment
from causalbandits.graphs.dag import CausalDAG
from causalbandits.random import ReplicateStream, RNGLike, as_generator
from causalbandits.scm.function_network import FunctionNetwork
from causalbandits.scm.noise import NoiseModel
from causalbandits.validation import count, non_negative
from causalbandits.validation import horizon as check_horizon


class Objective(ABC):
    """``y = obj(x)`` of node values ``x (..., n_nodes)``.

    Implementations use only operations numpy arrays and torch tensors share (indexing
    ``x[..., k]``, arithmetic), so one objective serves the environment and the policies'
    sampled surrogate networks (composite objectives, decisions: excbo 16).
    """

    @abstractmethod
    def nodes(self, n_nodes: int) -> tuple[int, ...]:
        """The nodes the objective reads, in ``0..n_nodes-1``; ``ValueError`` if it does not
        fit a network of ``n_nodes`` nodes."""

    @abstractmethod
    def __call__(self, x: Any) -> Any:
        """The objective of ``x (..., n_nodes)``, shape ``(...)``."""


@dataclass(frozen=True)
class TargetNode(Objective):
    """``y = x_index``: the target node of the paper (node ``d``, the last one by default)."""

    index: int = -1

    def nodes(self, n_nodes: int) -> tuple[int, ...]:
        if not -n_nodes <= self.index < n_nodes:
            raise ValueError(f"target node {self.index} is not a node of 0..{n_nodes - 1}")
        return (self.index % n_nodes,)

    def __call__(self, x: Any) -> Any:
        return x[..., self.index]


@dataclass(frozen=True)
class CausalBOProblem:
    """What a causal-BO learner may be told: the graph, which actions feed which nodes, the
    objective, the noise level ``noise_std`` (the ``sigma`` of the problem, which the MCBO
    package passes to MCBO) and ``noise_variance``, every node's exact noise variance (eq.
    11's mixture has ``5 sigma^2``; empty when unknown). Which of the two a baseline reads
    is its ``noise`` option (decisions: excbo 10)."""

    parents: tuple[tuple[int, ...], ...]
    active_inputs: tuple[tuple[int, ...], ...]
    n_actions: int
    objective: Objective
    noise_std: float
    names: tuple[str, ...] = ()
    noise_variance: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        n = len(self.parents)
        if len(self.active_inputs) != n or (self.names and len(self.names) != n):
            raise ValueError(
                f"{n} nodes but {len(self.active_inputs)} active-input lists and "
                f"{len(self.names)} names"
            )
        non_negative("noise_std", self.noise_std)
        variances = np.asarray(self.noise_variance, dtype=float)
        if variances.size and (
            variances.shape != (n,) or not np.all(np.isfinite(variances)) or variances.min() < 0
        ):
            raise ValueError(
                f"noise_variance must hold {n} finite variances >= 0, got {self.noise_variance}"
            )
        if any(not 0 <= k < self.n_actions for node in self.active_inputs for k in node):
            raise ValueError(f"active inputs must be action indices in 0..{self.n_actions - 1}")
        self.objective.nodes(n)
        _ = self.dag  # builds, and so validates, the graph (indices, acyclicity) once

    @property
    def n_nodes(self) -> int:
        return len(self.parents)

    @cached_property
    def dag(self) -> CausalDAG:
        """The graph as a :class:`CausalDAG` (topological order, depths, ...)."""
        edges = [(p, child) for child, ps in enumerate(self.parents) for p in ps]
        adjacency = CausalDAG.from_edges(self.n_nodes, edges).adjacency
        return CausalDAG(adjacency, list(self.names) if self.names else None)


def told_problem(
    network: FunctionNetwork,
    noise: NoiseModel,
    objective: Objective | None = None,
    noise_std: float = 0.0,
) -> CausalBOProblem:
    """What a learner is told about ``network`` with ``noise``: the graph, the actions'
    inputs, the ``objective`` (default the last node) and the noise level and variances."""
    return CausalBOProblem(
        parents=network.parents,
        active_inputs=network.active_inputs,
        n_actions=network.n_actions,
        objective=TargetNode() if objective is None else objective,
        noise_std=float(noise_std),
        names=network.names,
        noise_variance=tuple(float(v) for v in noise.variance),
    )


class MonteCarloReward:
    """``E[obj(x) | a]`` by Monte Carlo with common random numbers (decisions: excbo 12).

    ``n_samples`` noise vectors are drawn once, at construction, and reused for every action,
    so differences between actions are not drowned by sampling noise and the estimate is a
    deterministic function of ``a``. For problems without a closed form.
    """

    def __init__(
        self,
        network: FunctionNetwork,
        noise: NoiseModel,
        objective: Objective,
        n_samples: int = 10_000,
        rng: RNGLike = 0,
        propagate_noise: bool = True,
        max_elements: int = 2**22,
    ) -> None:
        count("n_samples", n_samples, minimum=2)
        if noise.n_nodes != network.n_nodes:
            raise ValueError(f"noise for {noise.n_nodes} nodes, network of {network.n_nodes}")
        objective.nodes(network.n_nodes)
        self.network, self.objective = network, objective
        self.propagate_noise = propagate_noise
        self.noise = noise.sample(as_generator(rng), (int(n_samples),))
        self._chunk = max(1, int(max_elements) // (int(n_samples) * network.n_nodes))

    def estimate(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The mean and its standard error, each ``(...)``, for ``actions (..., |A|)``;
        evaluated in chunks of at most ``max_elements`` node values."""
        a = self.network.check_actions(actions)
        flat = a.reshape(-1, self.network.n_actions)
        mean, se = np.empty(len(flat)), np.empty(len(flat))
        for start in range(0, len(flat), self._chunk):
            block = flat[start : start + self._chunk, None, :]
            x = self.network.evaluate(block, self.noise, self.propagate_noise)
            y = np.asarray(self.objective(x))
            mean[start : start + len(block)] = y.mean(axis=-1)
            se[start : start + len(block)] = y.std(axis=-1, ddof=1) / np.sqrt(y.shape[-1])
        return mean.reshape(a.shape[:-1]), se.reshape(a.shape[:-1])

    def __call__(self, actions: np.ndarray) -> np.ndarray:
        return self.estimate(actions)[0]


class FunctionNetworkBandit(ReplicatedEnvironment):
    """A function network as a causal-BO environment, vectorised over replicates.

    ``reset`` takes one ``SeedSequence`` per replicate; the noise of replicate ``r`` comes
    from its own stream, independent of the actions (common random numbers). ``step`` plays
    one action vector per replicate and returns every node's value, ``(R, n_nodes)``.

    Parameters
    ----------
    network, noise:
        The mechanisms and the exogenous noise model (one column per node).
    horizon:
        Number of rounds ``T`` (a policy's initial design included).
    expected_reward:
        ``E[y | a]`` for valid actions ``(..., |A|)``, shape ``(...)``: the regret oracle.
    optimal_action:
        A maximiser of ``expected_reward``; the optimum is its expected reward.
    noise_std:
        The problem's noise level ``sigma``, told to the learner (:class:`CausalBOProblem`).
    objective:
        The reward ``y = obj(x)`` (default: the last node).
    propagate_noise:
        Whether a node's mechanism sees its parents' noisy values (the default) or their
        noiseless ones (:meth:`FunctionNetwork.evaluate`).
    optimal_tolerance:
        An action counts as optimal (:meth:`is_optimal`) when its pseudo-regret is at most
        ``optimal_tolerance * max(1, |optimum|)``: continuous actions almost never hit the
        maximiser exactly, so "optimal" means within 1% (default) of the optimum's scale.
    """

    def __init__(
        self,
        network: FunctionNetwork,
        noise: NoiseModel,
        horizon: int,
        expected_reward: Callable[[np.ndarray], np.ndarray],
        optimal_action: np.ndarray,
        noise_std: float,
        objective: Objective | None = None,
        propagate_noise: bool = True,
        optimal_tolerance: float = 1e-2,
    ) -> None:
        check_horizon(horizon)
        if noise.n_nodes != network.n_nodes:
            raise ValueError(f"noise for {noise.n_nodes} nodes, network of {network.n_nodes}")
        if not 0 <= optimal_tolerance < np.inf:
            raise ValueError(f"optimal_tolerance must be finite and >= 0, got {optimal_tolerance}")
        self.network, self.noise = network, noise
        self.horizon = int(horizon)
        self.propagate_noise = bool(propagate_noise)
        self.optimal_tolerance = float(optimal_tolerance)
        self._expected_reward = expected_reward
        self.optimal_action = network.check_actions(optimal_action)
        if self.optimal_action.shape != (network.n_actions,):
            raise ValueError(f"optimal_action must have shape ({network.n_actions},)")
        self.optimum = float(self.expected_reward(self.optimal_action))
        self._problem = told_problem(network, noise, objective, noise_std)

    @property
    def problem(self) -> CausalBOProblem:
        return self._problem

    @property
    def objective(self) -> Objective:
        return self._problem.objective

    def start(self, seeds: list[np.random.SeedSequence]) -> None:
        noise = self.noise
        self._noise = ReplicateStream(seeds, (), lambda g, size: noise.sample(g, size))

    def check_actions(self, actions: np.ndarray) -> np.ndarray:
        a = self.network.check_actions(actions)
        if a.shape != (self.replicates, self.network.n_actions):
            raise ValueError(
                f"need one action vector per replicate, shape "
                f"({self.replicates}, {self.network.n_actions}), got {a.shape}"
            )
        return a

    def play(self, actions: np.ndarray) -> np.ndarray:
        """One noisy draw of every node, ``(R, n_nodes)``."""
        return self.network.evaluate(actions, self._noise.next(), self.propagate_noise)

    def expected_reward(self, actions: np.ndarray) -> np.ndarray:
        """``E[y | a]`` of ``actions (..., |A|)``, shape ``(...)``."""
        return np.asarray(self._expected_reward(self.network.check_actions(actions)), dtype=float)

    def pseudo_regret(self, actions: np.ndarray) -> np.ndarray:
        """``E[y | a*] - E[y | a]`` of each action."""
        return self.optimum - self.expected_reward(actions)

    def is_optimal(self, actions: np.ndarray) -> np.ndarray:
        """Whether each action's pseudo-regret is within the tolerance (class docstring)."""
        slack = self.optimal_tolerance * max(1.0, abs(self.optimum))
        return self.pseudo_regret(actions) <= slack
