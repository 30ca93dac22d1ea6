"""NDC-SEM (Ghoorchian & Maghsudi, arXiv 2307.09093, Algorithm 1) and SEM-UCB, by composition.

:class:`SEMSemiBandit` is Algorithm 1's skeleton: each round it fits the graph ``A_hat`` with
its graph learner (eq. 9), computes the UCB indices ``E`` of its index (eq. 10-11) and plays
the top-``s`` base arms of ``w_hat * E`` with ``w_hat = (I - A_hat)^{-T} 1`` (the exact oracle
of eq. 12). The first ``N`` rounds play the columns of the initialisation matrix ``H``
(Algorithm 1, lines 1-4). The paper is silent on rounds ``N < t <= N + D``, before any
feedback of ``H`` has arrived (decisions: ndc-sem 7): the default ``start_rule="random"``
follows Algorithm 1 and gives every arm without feedback the index ``+inf`` (eq. 11 with
``M = 0``), ties broken at random, the rule of every baseline; ``start_rule="cycle"`` keeps
cycling through the columns of ``H`` until round ``N + D`` (``D`` the delay bound the problem
states).

The index is :class:`DiscountedIndex` (eq. 10-11: discounted means and counts with factor
``gamma``, exploration constant ``xi``); the graph learner is :class:`LassoGraph` (a fixed
penalty) or, with the option ``validation`` (:class:`~causalbandits.policies.ndc_sem_validated.
LambdaValidation`), :class:`~causalbandits.policies.ndc_sem_validated.ValidatedGraph` (penalty
tuned online, the Covid experiment). The public policies are presets: :class:`NDCSEM`
(discounted index) and :class:`SEMUCB` (Nourani-Koliji et al., IJCAI 2022; decisions: ndc-sem
11), the stationary, delay-agnostic predecessor: undiscounted sample means and the index
``beta_hat + sqrt((s + 1) ln t / m_i)``, i.e. eq. 11 with ``gamma = 1`` and ``xi = 1/4``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from causalbandits.estimators.discounted import DiscountedArmStatistics
from causalbandits.estimators.lasso import SEMLasso
from causalbandits.estimators.topk import top_s_mask, total_effects
from causalbandits.policies.base import options_of
from causalbandits.policies.ndc_sem_validated import LambdaValidation
from causalbandits.policies.semibandit import collect_arrivals
from causalbandits.random import uniform_stream

#: Table I's Covid-19 value, our default ``xi``: it satisfies Theorem 1's condition
#: ``xi > 1 / (2 (s + 1))`` for ``s >= 4`` (the synthetic runs pass Table I's ``xi`` per delay).
DEFAULT_XI = 0.1

#: What :class:`SEMSemiBandit` plays at ``N < t <= N + D`` (decisions: ndc-sem 7): ``"random"``
#: (index ``+inf`` for arms without feedback, random ties) or ``"cycle"`` (the columns of ``H``).
START_RULES = ("random", "cycle")


def initialisation_matrix(n_arms: int, super_arm_size: int, rng: np.random.Generator) -> np.ndarray:
    """``H`` of Algorithm 1 (lines 1-4): upper triangular with unit diagonal.

    Column ``i`` (1-based) has ones in rows ``1..i`` when ``i <= s``; otherwise the diagonal
    and ``s - 1`` rows drawn uniformly from ``1..i-1``. So ``det H = 1`` and every column is a
    feasible super arm.
    """
    h = np.eye(n_arms, dtype=bool)
    for i in range(n_arms):
        if i < super_arm_size:
            h[:i, i] = True
        else:
            h[rng.choice(i, size=super_arm_size - 1, replace=False), i] = True
    return h


def _constant(value: float | Sequence[float] | np.ndarray) -> float | np.ndarray:
    """A scalar constant as ``float``, a per-replicate one as a float array."""
    return float(value) if np.ndim(value) == 0 else np.asarray(value, dtype=float)


@dataclass(frozen=True)
class DiscountedIndex:
    """The UCB index of eq. 10-11 (:class:`~causalbandits.estimators.discounted.
    DiscountedArmStatistics`): discount ``gamma`` and exploration constant ``xi``, each a
    scalar or one value per replicate ``(R,)`` (e.g. a tuning grid run as replicates).
    ``gamma = 1, xi = 1/4`` is SEM-UCB's undiscounted index. ``count_pending`` (not in the
    paper, off by default): the padding also counts the plays whose feedback is in flight."""

    gamma: float | np.ndarray
    xi: float | np.ndarray
    count_pending: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "gamma", _constant(self.gamma))
        object.__setattr__(self, "xi", _constant(self.xi))
        # fail at construction, not at reset, on bad constants (reset checks R = len(seeds))
        sizes = [np.size(v) for v in (self.gamma, self.xi) if np.ndim(v)]
        DiscountedArmStatistics(max(sizes, default=1), 1, self.gamma, self.xi, 1)

    def statistics(
        self, replicates: int, n_arms: int, super_arm_size: int
    ) -> DiscountedArmStatistics:
        """Fresh arm statistics of ``replicates`` replicates."""
        return DiscountedArmStatistics(
            replicates, n_arms, self.gamma, self.xi, super_arm_size, 1.0, self.count_pending
        )


#: SEM-UCB's index: undiscounted means, ``sqrt((s + 1) ln t / m_i)`` padding.
SEM_UCB_INDEX = DiscountedIndex(1.0, 0.25)


class GraphLearner(Protocol):
    """What :class:`SEMSemiBandit` needs of a graph learner specification."""

    def learner(self, replicates: int, n_arms: int, structure: str) -> Any:
        """A fresh learner with ``fit() -> A_hat (R, N, N)``."""

    def feed(
        self,
        learner: Any,
        rounds: np.ndarray,
        received: np.ndarray,
        y: np.ndarray,
        exogenous: np.ndarray,
    ) -> None:
        """Give ``learner`` the arrived rounds ``(y, z or b)``."""


@dataclass(frozen=True)
class LassoGraph:
    """The non-negative lasso of eq. 9 with a fixed penalty ``lam`` (the paper grid-searches
    ``[1e-5, 1e6]``), ``sweeps`` coordinate-descent sweeps per round warm-started from the
    previous round's ``A_hat``: the iterate follows the slowly changing solution of eq. 9
    (one solve to ``tol = 1e-10`` every round would cost 100 x more on collinear data)."""

    lam: float = 1e-2
    sweeps: int = 5

    def __post_init__(self) -> None:
        if self.lam < 0:
            raise ValueError(f"lam must be >= 0, got {self.lam}")
        if self.sweeps < 1:
            raise ValueError(f"lasso_sweeps must be >= 1, got {self.sweeps}")

    def learner(self, replicates: int, n_arms: int, structure: str) -> SEMLasso:
        return SEMLasso(replicates, n_arms, float(self.lam), structure, 1e-8, int(self.sweeps))

    def feed(
        self,
        learner: SEMLasso,
        rounds: np.ndarray,
        received: np.ndarray,
        y: np.ndarray,
        exogenous: np.ndarray,
    ) -> None:
        learner.add(y, exogenous, received)


class SEMSemiBandit:
    """Algorithm 1 on ``R`` replicates with a pluggable ``index`` and ``graph`` learner.

    Parameters
    ----------
    problem: ``n_arms``, ``super_arm_size`` (``s``), ``upper_triangular`` (known order: DAG lasso;
        otherwise cycles are allowed, as in the Covid experiment) and ``delay`` (``D``).
    index: the UCB index of eq. 10-11 (:class:`DiscountedIndex`).
    graph: the graph learner of eq. 9 (:class:`LassoGraph` or a validated one).
    graph_input: the exogenous input the graph learner regresses on: ``"z"`` (eq. 8) or
        ``"b"`` (the full reward vector, which the Covid data reveal; decisions: ndc-sem 22).
    start_rule: what rounds ``N < t <= N + D`` play, one of :data:`START_RULES`
        (decisions: ndc-sem 7).
    """

    #: Bench declarations (causalbandits.bench.capabilities).
    ACTS_ON = frozenset({"super-arms", "delayed-super-arms", "separable-super-arms"})

    def __init__(
        self,
        problem: object,
        index: DiscountedIndex,
        graph: GraphLearner,
        graph_input: str = "z",
        start_rule: str = "random",
    ) -> None:
        self.n_arms, self.super_arm_size = int(problem.n_arms), int(problem.super_arm_size)
        if not 1 <= self.super_arm_size <= self.n_arms:
            raise ValueError(
                f"super-arm size s must lie in 1..{self.n_arms}, got {self.super_arm_size}"
            )
        if graph_input not in ("z", "b"):
            raise ValueError(f"graph_input must be 'z' or 'b', got {graph_input!r}")
        if start_rule not in START_RULES:
            raise ValueError(f"start_rule must be one of {START_RULES}, got {start_rule!r}")
        self.index, self.graph, self.graph_input = index, graph, graph_input
        self.structure = "dag" if getattr(problem, "upper_triangular", True) else "cyclic"
        delay = int(getattr(problem, "delay", 0))
        self.start_rule = start_rule
        #: Rounds that play the columns of ``H`` (Algorithm 1, lines 1-4; decisions: ndc-sem 7).
        self.initial_rounds = self.n_arms + (delay if start_rule == "cycle" else 0)

    @property
    def gamma(self) -> float | np.ndarray:
        return self.index.gamma

    @property
    def xi(self) -> float | np.ndarray:
        return self.index.xi

    def reset(self, seeds: Sequence[np.random.SeedSequence]) -> None:
        replicates = len(seeds)
        rngs = [np.random.default_rng(s.spawn(1)[0]) for s in seeds]
        self.h = np.stack(
            [initialisation_matrix(self.n_arms, self.super_arm_size, g) for g in rngs]
        )
        self.arms = self.index.statistics(replicates, self.n_arms, self.super_arm_size)
        self.lasso = self.graph.learner(replicates, self.n_arms, self.structure)
        self.uniforms = uniform_stream(seeds, (self.n_arms,))
        self.t = 0

    def select(self) -> np.ndarray:
        self.t += 1
        ties = self.uniforms.next()
        if self.t <= self.initial_rounds:
            return self.h[:, :, (self.t - 1) % self.n_arms].copy()
        scores = total_effects(self.lasso.fit()) * self.arms.indices()
        return top_s_mask(
            scores, self.super_arm_size, ties, positive_only=self.structure == "cyclic"
        )

    def update(self, actions: np.ndarray, feedback: object) -> None:
        arrived = collect_arrivals(actions, feedback, self.t, len(self.h))
        self.arms.advance(actions)
        received = arrived.received
        self.arms.receive(np.where(received, arrived.rounds, 0), arrived.actions, arrived.z)
        exogenous = arrived.z if self.graph_input == "z" else arrived.b
        if exogenous is None:
            raise ValueError("graph_input='b' needs feedback that reveals b")
        self.graph.feed(self.lasso, arrived.rounds, received, arrived.y, exogenous)

    @property
    def adjacency(self) -> np.ndarray:
        """The current ``A_hat`` per replicate, ``(R, N, N)`` (paper convention)."""
        return self.lasso.fit()


@dataclass(frozen=True, kw_only=True)
class SEMUCBOptions:
    """The knobs of SEM-UCB: its graph learner, :class:`LassoGraph` (eq. 9) or, with
    ``validation``, the online tuning of ``lam`` (Sec. V-B), and the learner's input; checked
    on construction (``graph_input`` by :class:`SEMSemiBandit`)."""

    #: The penalty of eq. 9 (the paper grid-searches ``[1e-5, 1e6]``).
    lam: float = 1e-2
    #: Coordinate-descent sweeps per round, warm-started (:class:`LassoGraph`).
    lasso_sweeps: int = 5
    #: The exogenous input of the graph learner: ``"z"`` (eq. 8) or ``"b"`` (decisions:
    #: ndc-sem 22).
    graph_input: str = "z"
    #: Tune ``lam`` online on validation days instead of the fixed ``lam`` (Sec. V-B, the
    #: Covid experiment); ``None``: the fixed ``lam``.
    validation: LambdaValidation | None = None

    def __post_init__(self) -> None:
        LassoGraph(self.lam, self.lasso_sweeps)  # checks them

    def graph(self, problem: object) -> GraphLearner:
        """The graph learner of eq. 9 for ``problem``."""
        if self.validation is None:
            return LassoGraph(self.lam, self.lasso_sweeps)
        return self.validation.graph(problem, self.graph_input)


@dataclass(frozen=True, kw_only=True, eq=False)
class NDCSEMOptions(SEMUCBOptions):
    """The knobs of NDC-SEM: SEM-UCB's, plus its index :class:`DiscountedIndex` (eq. 10-11)
    and the start rule (decisions: ndc-sem 7); ``gamma`` and ``xi`` are scalars or one value
    per replicate."""

    #: The discount of eq. 10 (Table I: 0.985 synthetic, 0.85 Covid).
    gamma: float | np.ndarray = 0.985
    #: The exploration constant of eq. 11 (:data:`DEFAULT_XI`).
    xi: float | np.ndarray = DEFAULT_XI
    #: Pad with the plays in flight too (not in the paper; :class:`DiscountedIndex`).
    count_pending: bool = False
    #: What rounds ``N < t <= N + D`` play (:data:`START_RULES`).
    start_rule: str = "random"

    def __post_init__(self) -> None:
        super().__post_init__()
        DiscountedIndex(self.gamma, self.xi, self.count_pending)  # checks them

    @property
    def index(self) -> DiscountedIndex:
        return DiscountedIndex(self.gamma, self.xi, self.count_pending)


class NDCSEM(SEMSemiBandit):
    """NDC-SEM (Algorithm 1) with :class:`NDCSEMOptions` (``options``, with ``changes`` by
    name, e.g. ``NDCSEM(problem, gamma=0.85, xi=0.1)``)."""

    def __init__(
        self, problem: object, options: NDCSEMOptions | None = None, **changes: Any
    ) -> None:
        options = options_of(NDCSEMOptions, options, changes)
        super().__init__(
            problem, options.index, options.graph(problem), options.graph_input, options.start_rule
        )


class SEMUCB(SEMSemiBandit):
    """SEM-UCB: :data:`SEM_UCB_INDEX` (no discounting, ``xi = 1/4``), :class:`LassoGraph` of
    :class:`SEMUCBOptions` (``options``, with ``changes`` by name), ``H`` once, then arms
    without feedback at random (``start_rule="random"``)."""

    def __init__(
        self, problem: object, options: SEMUCBOptions | None = None, **changes: Any
    ) -> None:
        options = options_of(SEMUCBOptions, options, changes)
        super().__init__(problem, SEM_UCB_INDEX, options.graph(problem), options.graph_input)
