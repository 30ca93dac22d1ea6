"""NDC-SEM (Ghoorchian & Maghsudi, arXiv 2307.09093): the synthetic experiment (Sec. V-A).

Figs. 2 and 6 of the paper: cumulative expected regret (eq. 7) of NDC-SEM, SEM-UCB, CUCB,
CTS, FTRL (HYBRID) and Random on ``N = 10`` base arms, ``s = 4``, ``T = 5000``, change points
at rounds 1000, 2500 and 4000, constant feedback delays ``D`` in {50, 200, 400}; and the
optimality ratio of NDC-SEM and SEM-UCB per stationary period (App. VII-C2)

    OR_k = sum_{t in T_k} |I(x_t) & I(x*_t)| / sum_{t in T_k} |I(x*_t)|,  I(x) = {i : x[i] != 0}.

NDC-SEM uses Table I (``gamma = 0.985``; ``xi`` = 1e-10, 1e-6, 1e-18 for D = 50, 200, 400).
The paper tunes the lasso penalty ``lambda`` of eq. 9 "by grid search over [1e-5, 1e6]"
without the grid, criterion or value; :mod:`~causalbandits.papers.ndc_sem.synthetic_tuning`
runs the decade grid on instances and seeds disjoint from the reported ones (root seed
:data:`TUNING_SEED`) and :data:`LAMBDA` records its choice (SEM-UCB shares the graph learner
and the value). The report: :mod:`~causalbandits.papers.ndc_sem.synthetic_report`.

Instances (decisions: ndc-sem 14; the paper gives the graph and ``beta`` not in numbers): by
default every replicate draws its own instance (graph and ``beta`` schedule) with that generator;
``instances="fixed"`` shares instance 0 across replicates (the paper's single Fig. 5
schedule). The experiment is a :class:`~causalbandits.experiments.grid.TaskGrid` over
``(delay, algorithm[, lam][, xi])`` whose chunks run the one round loop with the recorders of
regret, optimal share, super-arm overlap (OR), ``MSE(A_hat)`` and lock-ins (runs of at least
``ceil(D / 2)`` rounds on one base arm outside ``x*_t``). Seeds: the library's one layout
(:func:`~causalbandits.random.replicate_seeds`) with no seed axis (``SEED_AXES = ()``), so every
delay and algorithm sees the same instances and reward noise (common random numbers); streams
``Stream.INSTANCE``, ``Stream.NOISE`` and :func:`~causalbandits.random.policy_stream` of the
algorithm's label.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from causalbandits.envs.delay import FeedbackDelay
from causalbandits.envs.semibandit import SyntheticDesign
from causalbandits.envs.semibandit_instances import synthetic_instances
from causalbandits.experiments.bandit_grid import BanditGrid, BanditRun, regular_rounds
from causalbandits.experiments.recorders import RECORDERS, Recorder, default_recorders
from causalbandits.papers.ndc_sem.paper import (
    ALGORITHMS,
    ALL_ALGORITHMS,
    EVALUATION_SEED,
    GRAPH_LEARNERS,
    LAMBDA,
    PAPER_ARMS,
    PAPER_CHANGE_POINTS,
    PAPER_DELAYS,
    PAPER_GAMMA,
    PAPER_HORIZON,
    PAPER_REPLICATES,
    PAPER_SUPER_ARM_SIZE,
    PAPER_XI,
    POLICY_ENTRIES,
    TUNED_XI,
    XI_USERS,
)
from causalbandits.papers.ndc_sem.synthetic_report import build_report, plot_all
from causalbandits.policies import POLICIES
from causalbandits.random import Stream
from causalbandits.validation import count

INSTANCE_MODES = ("per-replicate", "fixed")

#: The quick preset: a fifth of the paper's horizon and delays, Table I's xi by position.
QUICK_HORIZON = 1000
QUICK_CHANGE_POINTS = (200, 500, 800)
QUICK_DELAYS = (10, 40, 80)
QUICK_REPLICATES = 4

KEY_COLUMNS = ("experiment", "instances", "delay", "algorithm", "lam", "xi", "replicate", "t")
VALUE_COLUMNS = (
    "cum_regret",
    "optimal_share",
    "matched",
    "optimal_arms",
    "a_mse",
    "lock_ins",
    "lock_in_rounds",
    "lock_in_regret",
)


@dataclass(frozen=True, kw_only=True)
class SyntheticExperiment(BanditGrid):
    """The synthetic experiment: a grid of (delay, algorithm) times chunks of replicates.

    Parameters
    ----------
    delays: constant feedback delays ``D``.
    xi: NDC-SEM's ``xi`` per delay (default Table I).
    tuned_xi: the ``xi`` per delay of :data:`~causalbandits.papers.ndc_sem.paper.TUNED_XI`
        (set from a tuning run, :class:`~causalbandits.papers.ndc_sem.synthetic_tuning.
        TunedXi`).
    algorithms: a subset of :data:`ALL_ALGORITHMS`.
    replicates: runs per (delay, algorithm).
    instances: ``"per-replicate"`` (own graph and ``beta`` per replicate) or ``"fixed"``.
    horizon, change_points, n_arms, super_arm_size, n_edges: the environment (Sec. V-A).
    change: how the means change at a change point, ``"redraw"`` (decisions: ndc-sem 14) or
        ``"incumbent-drop"`` (:func:`~causalbandits.envs.semibandit.synthetic_means`; the
        paper's Fig. 5 schedule is not given in numbers).
    n_redraw: arms whose means are redrawn at each change point under ``"redraw"``
        (``None``: ``N // 2``, the generator's default).
    gamma, lam: NDC-SEM's discount and the lasso penalty of eq. 9 (NDC-SEM and SEM-UCB).
    lam_grid, xi_grid: extra grid axes (tuning runs): every ``lambda``, or every ``xi`` (the
        same at every delay), replacing ``lam`` or ``xi``; empty: no such axis.
    seed: root seed; chunk_size: replicates per task; checkpoint_every: spacing of the
        recorded rounds (the rounds before each change point and ``T`` are always recorded).
    name, description: catalogue name and one-line description.
    """

    delays: tuple[int, ...] = PAPER_DELAYS
    xi: dict[int, float] = field(default_factory=lambda: dict(PAPER_XI))
    tuned_xi: dict[int, float] = field(default_factory=dict)
    algorithms: tuple[str, ...] = ALGORITHMS
    replicates: int = PAPER_REPLICATES
    instances: str = "per-replicate"
    horizon: int = PAPER_HORIZON
    change_points: tuple[int, ...] = PAPER_CHANGE_POINTS
    n_arms: int = PAPER_ARMS
    super_arm_size: int = PAPER_SUPER_ARM_SIZE
    n_edges: int = 9
    change: str = "redraw"
    n_redraw: int | None = None
    gamma: float = PAPER_GAMMA
    lam: float = LAMBDA
    lam_grid: tuple[float, ...] = ()
    xi_grid: tuple[float, ...] = ()
    seed: int = EVALUATION_SEED
    chunk_size: int = 20
    checkpoint_every: int = 100
    name: str = "ndc-sem-synthetic"
    description: str = (
        "NDC-SEM paper, synthetic experiment (Figs. 2, 6): regret and optimality ratio under "
        "delay D in {50, 200, 400}"
    )

    #: No axis changes the seeds: common random numbers across delays, algorithms and the
    #: tuning values of ``lam`` and ``xi``.
    SEED_AXES: ClassVar[tuple[str, ...]] = ()
    FIGURES = staticmethod(plot_all)
    REPORT = staticmethod(build_report)

    def check(self) -> None:
        for name in ("change_points", "lam_grid", "xi_grid"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        for name in ("xi", "tuned_xi"):
            values = {int(d): float(v) for d, v in dict(getattr(self, name)).items()}
            object.__setattr__(self, name, values)
        self.check_axes()
        self.design()  # checks change and n_redraw
        if self.instances not in INSTANCE_MODES:
            raise ValueError(f"instances must be one of {INSTANCE_MODES}, got {self.instances!r}")
        count("checkpoint_every", self.checkpoint_every)
        if not 0 < self.gamma <= 1 or min((self.lam, *self.lam_grid)) < 0:
            raise ValueError(f"need 0 < gamma <= 1 and lam >= 0, got {self.gamma}, {self.lam}")
        points = list(self.change_points)
        if points != sorted(set(points)) or (
            points and (points[0] < 2 or points[-1] > self.horizon)
        ):
            raise ValueError(
                f"change points must increase strictly within 2..T = {self.horizon}, got {points}"
            )

    def check_axes(self) -> None:
        """The delays, the algorithms and NDC-SEM's ``xi`` at every delay."""
        self.distinct("delays")
        for delay in self.delays:
            if isinstance(delay, bool) or not isinstance(delay, int | np.integer) or delay < 0:
                raise ValueError(f"delays must be non-negative integers, got {delay!r}")
        self.distinct("algorithms", ALL_ALGORITHMS)
        if set(XI_USERS) & set(self.algorithms) and not self.xi_grid:
            missing = [d for d in self.delays if d not in self.xi]
            if missing:
                raise ValueError(f"NDC-SEM needs xi for delay(s) {missing}; give xi={{D: value}}")

    def design(self) -> SyntheticDesign:
        """The instances' design (:class:`~causalbandits.envs.semibandit.SyntheticDesign`)
        with this experiment's sizes, changes and horizon."""
        return SyntheticDesign(
            n_arms=self.n_arms,
            super_arm_size=self.super_arm_size,
            horizon=self.horizon,
            change_points=self.change_points,
            n_edges=self.n_edges,
            n_redraw=self.n_redraw,
            change=self.change,
        )

    # ---------------------------------------------------------------- the grid

    def axes(self) -> dict[str, Sequence[Any]]:
        """Delays, then algorithms, then the tuning axes that are set."""
        axes: dict[str, Sequence[Any]] = {"delay": self.delays, "algorithm": self.algorithms}
        if self.lam_grid:
            axes["lam"] = self.lam_grid
        if self.xi_grid:
            axes["xi"] = self.xi_grid
        return axes

    def task_cost(self, point: Mapping[str, Any]) -> float:
        """The graph learners are slowest, then FTRL; longer delays first."""
        rank = 2 if point["algorithm"] in GRAPH_LEARNERS else int(point["algorithm"] == "FTRL")
        return rank + point["delay"] / 1e6

    def checkpoints(self) -> np.ndarray:
        """Recorded rounds: every ``checkpoint_every``, the last round of each period, round
        ``N + D`` (the feedback of ``H`` has arrived; decisions: ndc-sem 7) for each delay,
        and ``T``."""
        ends = [c - 1 for c in self.change_points]
        initial = [self.n_arms + d for d in self.delays if self.n_arms + d <= self.horizon]
        return regular_rounds(self.horizon, self.checkpoint_every, ends, initial)

    def periods(self) -> list[tuple[int, int]]:
        """The stationary periods as 1-based ``(first, last)`` rounds."""
        starts = [1, *self.change_points]
        ends = [c - 1 for c in self.change_points] + [self.horizon]
        return list(zip(starts, ends, strict=True))

    # ---------------------------------------------------------------- running

    def environment(self, replicates: Sequence[int], delay: int, setting: int = 0) -> FeedbackDelay:
        """The delayed environment of ``replicates`` at grid point ``setting``, reset with
        their reward streams (:meth:`make_environment`: not reset); ``instances="fixed"``
        gives every replicate instance 0."""
        return self.reset_environment(BanditRun({"delay": delay}, setting, replicates))

    # ---------------------------------------------------------------- the hooks

    def make_environment(self, run: BanditRun) -> FeedbackDelay:
        replicates, setting = run.replicates, run.setting
        keys = [0] * len(replicates) if self.instances == "fixed" else replicates
        return FeedbackDelay(
            synthetic_instances(self.seeds(setting, keys, Stream.INSTANCE), self.design()),
            int(run.point["delay"]),
        )

    def xi_of(self, algorithm: str, delay: int, point: Mapping[str, Any]) -> float:
        """``algorithm``'s ``xi`` at ``delay``: the grid point's, :attr:`tuned_xi` for
        :data:`~causalbandits.papers.ndc_sem.paper.TUNED_XI`, else :attr:`xi` (NaN if unset)."""
        if "xi" in point:
            return float(point["xi"])
        if algorithm == TUNED_XI:
            if delay not in self.tuned_xi:
                raise ValueError(f"{TUNED_XI} has no tuned xi for D = {delay}; run a TunedXi")
            return self.tuned_xi[delay]
        return self.xi.get(delay, np.nan)

    def policy(self, algorithm: str, env: FeedbackDelay, lam: float, xi: float) -> Any:
        """A fresh policy for ``env`` (not yet reset): the label's registry entry
        (:data:`~causalbandits.papers.ndc_sem.paper.POLICY_ENTRIES`) with ``lam`` for the
        graph learners and ``gamma``, ``xi`` for NDC-SEM."""
        name, fixed = POLICY_ENTRIES[algorithm]
        options: dict[str, Any] = {"lam": lam} if algorithm in GRAPH_LEARNERS else {}
        if algorithm in XI_USERS:
            options |= {"gamma": self.gamma, "xi": xi}
        return POLICIES.build(name, env, **options, **fixed)

    @staticmethod
    def recorders(env: FeedbackDelay) -> list[Recorder]:
        """Regret, optimal share, the OR counts, ``MSE(A_hat)`` and lock-ins (``ceil(D/2)``)."""
        extra = [RECORDERS[name](env) for name in ("overlap", "graph-error", "lock-ins")]
        return [*default_recorders(), *extra]

    def make_policy(self, run: BanditRun) -> Any:
        algorithm, delay = run.point["algorithm"], int(run.point["delay"])
        lam = float(run.point.get("lam", self.lam))
        return self.policy(algorithm, run.env, lam, self.xi_of(algorithm, delay, run.point))

    def recorded_rounds(self, run: BanditRun) -> np.ndarray:
        return self.checkpoints()

    def make_recorders(self, run: BanditRun) -> list[Recorder]:
        return self.recorders(run.env)

    def columns(self, run: BanditRun) -> dict[str, Any]:
        point, algorithm = run.point, run.point["algorithm"]
        delay = int(point["delay"])
        return {
            "experiment": self.name,
            "instances": self.instances,
            "delay": delay,
            "lam": float(point.get("lam", self.lam)) if algorithm in GRAPH_LEARNERS else np.nan,
            "xi": self.xi_of(algorithm, delay, point) if algorithm in XI_USERS else np.nan,
        }

    def finish(self, frame: pd.DataFrame, point: Mapping[str, Any]) -> pd.DataFrame:
        return frame[[*KEY_COLUMNS, *VALUE_COLUMNS]]


# -------------------------------------------------------------------- presets


def synthetic(quick: bool = False) -> SyntheticExperiment:
    """Sec. V-A: N = 10, s = 4, T = 5000, changes at 1000/2500/4000, D in {50, 200, 400},
    20 replicates (quick: T = 1000, changes at 200/500/800, D in {10, 40, 80}, 4 replicates)."""
    if quick:
        return SyntheticExperiment(
            delays=QUICK_DELAYS,
            xi=dict(zip(QUICK_DELAYS, (PAPER_XI[d] for d in PAPER_DELAYS), strict=True)),
            replicates=QUICK_REPLICATES,
            horizon=QUICK_HORIZON,
            change_points=QUICK_CHANGE_POINTS,
            checkpoint_every=20,
            name="ndc-sem-synthetic-quick",
            description="NDC-SEM synthetic experiment, quick: T = 1000, D in {10, 40, 80}",
        )
    return SyntheticExperiment()
