"""The ask/tell base of the causal Bayesian-optimisation policies (EXCBO Alg. 1, Sec. 7.1).

A user drives a policy against a real system with :meth:`SequentialOptimizer.suggest` (the
next action in ``[0, 1]^|A|``) and :meth:`SequentialOptimizer.observe` (the action played and
every node's observed value). The first ``n_init`` suggestions are a uniform random design
(default ``2(|A| + 1)`` for every method, as MCBO; decisions: excbo 9); later ones maximise
the policy's acquisition (:meth:`SequentialOptimizer.propose`).

The same object is a one-replicate policy of the library's round loop (``reset`` /
``select`` / ``update``), so BO runs go through
:func:`~causalbandits.experiments.simulate.simulate` like every bandit. Each proposal runs
under its own torch seed drawn from the policy's stream, with one torch thread, so that a
run's numbers depend on its seed only.
"""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from botorch.acquisition import AcquisitionFunction
from botorch.exceptions.warnings import (
    BadInitialCandidatesWarning,
    NumericsWarning,
    OptimizationWarning,
)
from botorch.optim import optimize_acqf

from causalbandits.envs.causal_bo import CausalBOProblem
from causalbandits.estimators.gp import DTYPE
from causalbandits.estimators.gp_network import NodeSpec
from causalbandits.random import as_seed_sequences
from causalbandits.validation import count, optional


@dataclass(frozen=True)
class AcquisitionOptimiser:
    """Multi-start L-BFGS-B settings for a decision of dimension ``D`` (decisions: excbo
    18): ``restarts * D`` restarts from the best of ``raw_samples * D`` random points (by
    default the MCBO package's ``10 D`` and ``100 D``), optionally capped at
    ``max_restarts`` and ``max_raw_samples`` (:data:`CAPPED`), and at most
    ``max_iterations`` iterations."""

    restarts: int = 10
    raw_samples: int = 100
    max_restarts: int | None = None
    max_raw_samples: int | None = None
    max_iterations: int = 200

    def __post_init__(self) -> None:
        for name, value in vars(self).items():
            optional(count, name, value)

    def starts(self, dimension: int) -> tuple[int, int]:
        """``(restarts, raw samples)`` for a decision of dimension ``dimension``."""
        restarts = self.restarts * dimension
        raw = self.raw_samples * dimension
        if self.max_restarts is not None:
            restarts = min(restarts, self.max_restarts)
        if self.max_raw_samples is not None:
            raw = min(raw, self.max_raw_samples)
        return restarts, max(raw, restarts)


#: A labelled budget for large decisions: at most 20 restarts from at most 512 raw points
#: (BoTorch's tutorial settings; decisions: excbo 18).
CAPPED = AcquisitionOptimiser(max_restarts=20, max_raw_samples=512)


#: Raw starting points scored per block (speed only, the same values): one block of all
#: 1,200 of Alpine2's EXCBO decision is memory-bound (1.98 s against 0.47 s in blocks of 120);
#: blocks of a few dozen pay BoTorch's per-call overhead (EICF on Dropwave: 2x slower at 20).
RAW_BLOCK = 128


#: Monte Carlo samples of a sampled acquisition (128 Sobol QMC samples, the MCBO package's).
MC_SAMPLES = 128


@dataclass(frozen=True, kw_only=True)
class Budget:
    """What a causal-BO policy may spend per run and proposal (Sec. 7.1), shared by the
    policies' options; checked on construction."""

    #: Size of the initial uniform design; ``None``: ``2(|A| + 1)``, MCBO's (decisions:
    #: excbo 9).
    n_init: int | None = None
    #: The acquisition optimiser's multi-start settings (decisions: excbo 18); a mapping of
    #: its fields is accepted (JSON and YAML specs, persistent studies).
    optimiser: AcquisitionOptimiser = AcquisitionOptimiser()
    #: Monte Carlo samples of a sampled acquisition: EXCBO's ``S`` draws of ``p(U)``
    #: (decisions: excbo 7), MCBO's noise draws, EICF's QMC samples (GP-UCB's is analytic).
    samples: int = MC_SAMPLES

    def __post_init__(self) -> None:
        if isinstance(self.optimiser, Mapping):
            object.__setattr__(self, "optimiser", AcquisitionOptimiser(**self.optimiser))
        if not isinstance(self.optimiser, AcquisitionOptimiser):
            raise TypeError(f"optimiser must be an AcquisitionOptimiser, got {self.optimiser!r}")
        object.__setattr__(self, "n_init", optional(count, "n_init", self.n_init))
        object.__setattr__(self, "samples", count("samples", self.samples))


def default_initial_design(problem: CausalBOProblem) -> int:
    """``2(|A| + 1)`` uniform random actions (MCBO's design, Sec. 7.1; decisions: excbo 9)."""
    return 2 * (problem.n_actions + 1)


@contextmanager
def seeded_torch(seed: int) -> Iterator[None]:
    """One torch thread and torch's generator seeded with ``seed`` (restored after), BoTorch's
    optimisation warnings silenced: a computation's floats then depend on ``seed`` only."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.random.fork_rng(), warnings.catch_warnings():
            torch.manual_seed(seed)
            warnings.simplefilter("ignore", OptimizationWarning)
            warnings.simplefilter("ignore", BadInitialCandidatesWarning)
            # EICF keeps qEI (decisions: excbo 11)
            warnings.simplefilter("ignore", NumericsWarning)
            yield
    finally:
        torch.set_num_threads(threads)


class SequentialOptimizer(ABC):
    """Ask/tell optimiser of ``E[objective(x) | a]`` over ``a in [0, 1]^|A|``.

    Parameters
    ----------
    problem: what the learner is told (:class:`~causalbandits.envs.causal_bo.CausalBOProblem`).
    budget: the initial design's size and the acquisition optimiser (:class:`Budget`, default
        its defaults); :attr:`n_init` is the design's size resolved for the problem.
    """

    #: Bench declarations (causalbandits.bench.capabilities).
    ACTS_ON = frozenset({"continuous"})

    def __init__(self, problem: CausalBOProblem, budget: Budget | None = None) -> None:
        budget = Budget() if budget is None else budget
        self.problem = problem
        self.n_init = default_initial_design(problem) if budget.n_init is None else budget.n_init
        self.optimiser = budget.optimiser
        self.n_nodes = len(problem.parents)
        self.specs = tuple(
            NodeSpec(tuple(problem.active_inputs[i]), tuple(problem.parents[i]))
            for i in range(self.n_nodes)
        )
        self.order = tuple(int(i) for i in problem.dag.topological_order)
        self.reset()

    # ------------------------------------------------------------------ ask / tell

    def reset(
        self, seed: int | np.random.SeedSequence | Sequence[np.random.SeedSequence] | None = None
    ) -> None:
        """Forget all data; ``seed``: a root seed or a ``SeedSequence`` (or a list of one:
        the round loop's one replicate)."""
        (self.seed_sequence,) = as_seed_sequences(seed, 1)
        self.rng = np.random.default_rng(self.seed_sequence)
        self.design = self.rng.random((self.n_init, self.problem.n_actions))
        self.actions = np.empty((0, self.problem.n_actions))
        self.values = np.empty((0, self.n_nodes))

    def suggest(self) -> np.ndarray:
        """The next action to play, ``(|A|,)`` in ``[0, 1]``."""
        if len(self.actions) < self.n_init:
            return self.design[len(self.actions)].copy()
        return self.proposal(int(self.rng.integers(2**31)))

    def proposal_seeds(self, count: int) -> np.ndarray:
        """The seeds of the first ``count`` proposals after the design: the stream
        :meth:`suggest` draws from, recomputed from the seed (persistent studies)."""
        rng = np.random.default_rng(self.seed_sequence)
        rng.random((self.n_init, self.problem.n_actions))
        return rng.integers(2**31, size=count)

    def proposal(self, seed: int) -> np.ndarray:
        """:meth:`propose` under torch seed ``seed`` with one torch thread, clipped to
        ``[0, 1]``."""
        with seeded_torch(seed):
            action = self.propose(seed)
        return np.clip(action, 0.0, 1.0)

    def observe(self, action: np.ndarray, node_values: np.ndarray) -> None:
        """Learn from one round: the ``action`` played and every node's observed value."""
        action = np.asarray(action, dtype=float)
        node_values = np.asarray(node_values, dtype=float)
        if action.shape != (self.problem.n_actions,):
            raise ValueError(
                f"action must have shape ({self.problem.n_actions},), got {action.shape}"
            )
        if not np.all(np.isfinite(action)) or action.min() < 0 or action.max() > 1:
            raise ValueError("actions must be finite and lie in [0, 1]")
        if node_values.shape != (self.n_nodes,):
            raise ValueError(
                f"node_values must have shape ({self.n_nodes},), got {node_values.shape}"
            )
        if not np.all(np.isfinite(node_values)):
            raise ValueError("observed node values must be finite (got NaN or inf)")
        self.actions = np.vstack([self.actions, action])
        self.values = np.vstack([self.values, node_values])

    @property
    def observed_objective(self) -> np.ndarray:
        """``objective(x_t)`` of every observed round."""
        return np.asarray(self.problem.objective(self.values), dtype=float)

    @abstractmethod
    def propose(self, seed: int) -> np.ndarray:
        """The maximiser of the acquisition given the data (called after the design)."""

    def proposal_memory(self) -> Any:
        """What the last proposal left for later ones, as plain JSON data (``None``: the
        policy keeps nothing between proposals beyond its data)."""
        return None

    def restore_memory(self, memories: Sequence[Any]) -> None:
        """Take back the :meth:`proposal_memory` of every earlier proposal, in order."""
        return None

    # ------------------------------------------------------------------ round loop

    def select(self) -> np.ndarray:
        """The round loop's interface: one replicate, ``(1, |A|)``."""
        return self.suggest()[None, :]

    def update(self, actions: np.ndarray, feedback: np.ndarray) -> None:
        """The round loop's interface: ``actions`` (1, |A|), node values ``(1, nodes)``."""
        self.observe(actions[0], np.asarray(feedback)[0])

    # ------------------------------------------------------------------ helpers

    def tensors(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The observed actions ``(n, |A|)`` and node values ``(n, nodes)`` as tensors."""
        return torch.as_tensor(self.actions, dtype=DTYPE), torch.as_tensor(self.values, dtype=DTYPE)

    def maximise(self, acquisition: AcquisitionFunction, dimension: int, seed: int) -> torch.Tensor:
        """Multi-start L-BFGS-B over ``[0, 1]^dimension`` (BoTorch ``optimize_acqf``), restarts
        batched; returns the best decision ``(dimension,)``. The raw points are scored in
        blocks of :data:`RAW_BLOCK`."""
        bounds = torch.stack(
            [torch.zeros(dimension, dtype=DTYPE), torch.ones(dimension, dtype=DTYPE)]
        )
        restarts, raw_samples = self.optimiser.starts(dimension)
        candidate, _ = optimize_acqf(
            acquisition,
            bounds=bounds,
            q=1,
            num_restarts=restarts,
            raw_samples=raw_samples,
            options={
                "seed": seed,
                "maxiter": self.optimiser.max_iterations,
                "init_batch_limit": RAW_BLOCK,
            },
        )
        return candidate.detach()[0]
