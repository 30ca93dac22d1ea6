"""NDC-SEM (Ghoorchian & Maghsudi, arXiv 2307.09093): the synthetic experiment (Sec. V-A).

Figs. 2 and 6 of the paper: cumulative expected regret (eq. 7) of NDC-SEM, SEM-UCB, CUCB,
CTS, FTRL (HYBRID) and Random on ``N = 10`` base arms, ``s = 4``, ``T = 5000``, change points
at rounds 1000, 2500 and 4000, constant feedback delays ``D`` in {50, 200, 400}; and the
optimality ratio of NDC-SEM and SEM-UCB per stationary period (App. VII-C2)

    OR_k = sum_{t in T_k} |I(x_t) & I(x*_t)| / sum_{t in T_k} |I(x*_t)|,  I(x) = {i : x[i] != 0}.

NDC-SEM uses Table I (``gamma = 0.985``; ``xi`` = 1e-10, 1e-6, 1e-18 for D = 50, 200, 400).
The paper tunes the lasso penalty ``lambda`` of eq. 9 "by grid search over [1e-5, 1e6]"
without the grid, criterion or value; :mod:`~causalbandits.papers.ndc_sem.synthetic_tuning` runs the
decade grid on instances and seeds disjoint from the reported ones (root seed
:data:`TUNING_SEED`) and :data:`LAMBDA` records its choice (SEM-UCB shares the graph learner
and the value). Summaries, figures and the report:
:mod:`~causalbandits.papers.ndc_sem.synthetic_report`.

Instances (spec §5.1 leaves the graph and ``beta`` to a fixed-seed synthesis): by default
every replicate draws its own instance (graph and ``beta`` schedule) with the §5.1 generator,
so the averages describe the generator rather than one lucky or unlucky draw;
``instances="fixed"`` shares instance 0 across replicates (the paper's single Fig. 5
schedule). Randomness is keyed by replicate: instance ``SeedSequence(seed, (INSTANCE, r))``
(``r = 0`` for all when fixed), rewards ``(NOISE, r)`` -- the same for every algorithm and
every delay (common random numbers) -- and each policy's own stream ``(POLICY + hash(label),
r)``. Tasks are (delay, algorithm, chunk of replicates); the split depends on the
configuration only, so the numbers do not depend on the number of workers or the backend.

The long results table has one row per (delay, algorithm, replicate, checkpoint) with the
cumulative pseudo-regret, the cumulative counts behind OR (``matched``, ``optimal_arms``),
``MSE(A_hat)`` of the graph learners, and a delay diagnostic: ``lock_ins``, the number of
finished runs of at least ``D / 2`` (:func:`lock_in_length`) consecutive rounds in which the
policy kept one base arm that is not in ``x*_t``, ``lock_in_rounds`` (their total length)
and ``lock_in_regret`` (the regret of the rounds inside them).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from causalbandits.envs.delay import FeedbackDelay
from causalbandits.envs.semibandit_instances import synthetic_instances
from causalbandits.experiments.runner import config_fingerprint, run_header, run_tasks
from causalbandits.policies.ftrl import FTRLHybrid
from causalbandits.policies.ndc_sem import NDCSEM, SEMUCB, TABLE_I_XI
from causalbandits.policies.oracle import Oracle
from causalbandits.policies.semibandit import CTS, CUCB, RandomSuperArm
from causalbandits.random import stable_hash

#: The paper's synthetic setup (Sec. V-A).
PAPER_ARMS = 10
PAPER_BUDGET = 4
PAPER_HORIZON = 5000
PAPER_CHANGE_POINTS = (1000, 2500, 4000)
#: The paper's algorithms (Fig. 2), in the order of tables and legends.
ALGORITHMS = ("NDC-SEM", "SEM-UCB", "CUCB", "CTS", "FTRL", "Random")
#: ``"Oracle"`` plays ``x*_t`` (zero regret, OR = 1): a check of the metric pipeline.
#: Not in the paper: NDC-SEM whose padding also counts the plays in flight (``count_pending``).
PENDING = "NDC-SEM (pending)"
ALL_ALGORITHMS = (*ALGORITHMS, PENDING, "Oracle")
INSTANCE_MODES = ("per-replicate", "fixed")

PAPER_DELAYS = (50, 200, 400)
PAPER_GAMMA = 0.985
PAPER_REPLICATES = 20
#: The paper's lambda grid: decades 1e-5 ... 1e6 (spec §3.1, resolution 2).
LAMBDA_GRID = tuple(10.0 ** np.arange(-5, 7))
#: The chosen lambda: lowest time-averaged MSE(A_hat) of NDC-SEM over LAMBDA_GRID, on 10
#: tuning instances and seeds per delay (root seed TUNING_SEED, disjoint from the reported
#: runs; docs/results/ndc-sem-synthetic/lambda_tuning.csv). Final regret is flat within its
#: standard error for lambda <= 0.1 and grows from lambda = 10 on (A_hat shrinks to 0).
LAMBDA = 1e-2
EVALUATION_SEED = 2023
TUNING_SEED = 7

#: The quick preset: a fifth of the paper's horizon and delays, Table I's xi by position.
QUICK_HORIZON = 1000
QUICK_CHANGE_POINTS = (200, 500, 800)
QUICK_DELAYS = (10, 40, 80)
QUICK_REPLICATES = 4

# Stream identifiers (first element of the spawn key; the replicate is the second).
INSTANCE_STREAM = 0
NOISE_STREAM = 1
POLICY_STREAM = 2


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


@dataclass(frozen=True)
class Task:
    """Replicates ``start..stop-1`` of one (delay, algorithm)."""

    delay: int
    algorithm: str
    chunk: int
    start: int
    stop: int

    @property
    def id(self) -> str:
        return f"d{self.delay:04d}-{slug(self.algorithm)}-c{self.chunk:04d}"


def slug(name: str) -> str:
    """``name`` for file names: lower case, runs of other characters as one ``-``."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def lock_in_length(delay: int) -> int:
    """Shortest run that counts as a lock-in under delay ``D``: ``ceil(D / 2)`` rounds (an arm
    held for a time comparable to the delay; the run of an arm pulled by a growing bonus
    lasts about ``D + 1`` rounds, shorter when a change point ends it); 0 (off) for ``D = 0``."""
    return -(-int(delay) // 2)


def _seeds(root: int, stream: int, replicates: Sequence[int]) -> list[np.random.SeedSequence]:
    return [np.random.SeedSequence(root, spawn_key=(stream, int(r))) for r in replicates]


@dataclass(frozen=True)
class SyntheticExperiment:
    """The synthetic experiment as a run-based paper experiment (``run``, ``plot``, ``report``).

    Parameters
    ----------
    delays: constant feedback delays ``D``.
    xi: NDC-SEM's ``xi`` per delay (default Table I).
    algorithms: a subset of :data:`ALL_ALGORITHMS`.
    replicates: runs per (delay, algorithm).
    instances: ``"per-replicate"`` (own graph and ``beta`` per replicate) or ``"fixed"``.
    horizon, change_points, n_arms, budget, n_edges: the environment (§5.1).
    n_redraw: arms whose means are redrawn at each change point (``None``: ``N // 2``, the
        §5.1 generator's default; the paper's Fig. 5 schedule is not given in numbers).
    gamma, lam: NDC-SEM's discount and the lasso penalty of eq. 9 (NDC-SEM and SEM-UCB).
    seed: root seed; chunk_size: replicates per task; checkpoint_every: spacing of the
        recorded rounds (the rounds before each change point and ``T`` are always recorded).
    name, description: catalogue name and one-line description.
    """

    delays: tuple[int, ...] = PAPER_DELAYS
    xi: dict[int, float] = field(default_factory=lambda: dict(TABLE_I_XI))
    algorithms: tuple[str, ...] = ALGORITHMS
    replicates: int = PAPER_REPLICATES
    instances: str = "per-replicate"
    horizon: int = PAPER_HORIZON
    change_points: tuple[int, ...] = PAPER_CHANGE_POINTS
    n_arms: int = PAPER_ARMS
    budget: int = PAPER_BUDGET
    n_edges: int = 9
    n_redraw: int | None = None
    gamma: float = PAPER_GAMMA
    lam: float = LAMBDA
    seed: int = EVALUATION_SEED
    chunk_size: int = 20
    checkpoint_every: int = 100
    name: str = "ndc-sem-synthetic"
    description: str = (
        "NDC-SEM paper, synthetic experiment (Figs. 2, 6): regret and optimality ratio under "
        "delay D in {50, 200, 400}"
    )

    def __post_init__(self) -> None:
        for name in ("delays", "change_points", "algorithms"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        object.__setattr__(self, "xi", {int(d): float(v) for d, v in dict(self.xi).items()})
        if not self.delays or len(set(self.delays)) != len(self.delays):
            raise ValueError(f"delays must be distinct, got {self.delays}")
        for delay in self.delays:
            if isinstance(delay, bool) or not isinstance(delay, int | np.integer) or delay < 0:
                raise ValueError(f"delays must be non-negative integers, got {delay!r}")
        unknown = [a for a in self.algorithms if a not in ALL_ALGORITHMS]
        if unknown or not self.algorithms or len(set(self.algorithms)) != len(self.algorithms):
            raise ValueError(
                f"algorithms must be distinct names from {ALL_ALGORITHMS}, got {self.algorithms}"
            )
        if {"NDC-SEM", PENDING} & set(self.algorithms):
            missing = [d for d in self.delays if d not in self.xi]
            if missing:
                raise ValueError(f"NDC-SEM needs xi for delay(s) {missing}; give xi={{D: value}}")
        if self.instances not in INSTANCE_MODES:
            raise ValueError(f"instances must be one of {INSTANCE_MODES}, got {self.instances!r}")
        if int(self.replicates) != self.replicates or self.replicates < 1:
            raise ValueError(f"replicates must be a positive integer, got {self.replicates}")
        if self.chunk_size < 1 or self.checkpoint_every < 1:
            raise ValueError("chunk_size and checkpoint_every must be >= 1")
        if not 0 < self.gamma <= 1 or self.lam < 0:
            raise ValueError(f"need 0 < gamma <= 1 and lam >= 0, got {self.gamma}, {self.lam}")
        points = list(self.change_points)
        if points != sorted(set(points)) or (
            points and (points[0] < 2 or points[-1] > self.horizon)
        ):
            raise ValueError(
                f"change points must increase strictly within 2..T = {self.horizon}, got {points}"
            )

    # ---------------------------------------------------------------- configuration

    def config(self) -> dict[str, Any]:
        """Everything that fixes the numbers of a run (JSON-ready)."""
        out = dataclasses.asdict(self)
        out.pop("description")
        for key in ("delays", "change_points", "algorithms"):
            out[key] = list(out[key])
        out["xi"] = {str(d): v for d, v in sorted(self.xi.items())}
        return out

    def fingerprint(self) -> str:
        return config_fingerprint(self.config())

    def with_replicates(self, replicates: int) -> SyntheticExperiment:
        """The same experiment with ``replicates`` runs (``reproduce --replicates``)."""
        return dataclasses.replace(self, replicates=int(replicates))

    def checkpoints(self) -> np.ndarray:
        """Recorded rounds: every ``checkpoint_every``, the last round of each period, the end
        ``N + D`` of NDC-SEM's initialisation for each delay, and ``T``."""
        regular = np.arange(self.checkpoint_every, self.horizon + 1, self.checkpoint_every)
        ends = np.asarray(self.change_points, dtype=np.int64) - 1
        initial = [self.n_arms + d for d in self.delays if self.n_arms + d <= self.horizon]
        rounds = np.concatenate([regular, ends, initial, [self.horizon]])
        return np.unique(rounds).astype(np.int64)

    def periods(self) -> list[tuple[int, int]]:
        """The stationary periods as 1-based ``(first, last)`` rounds."""
        starts = [1, *self.change_points]
        ends = [c - 1 for c in self.change_points] + [self.horizon]
        return list(zip(starts, ends, strict=True))

    def tasks(self) -> list[Task]:
        """All tasks: delays, then algorithms, then chunks of replicates."""
        starts = range(0, self.replicates, self.chunk_size)
        return [
            Task(d, a, c, s, min(s + self.chunk_size, self.replicates))
            for d in self.delays
            for a in self.algorithms
            for c, s in enumerate(starts)
        ]

    # ---------------------------------------------------------------- running

    def environment(self, replicates: Sequence[int], delay: int) -> FeedbackDelay:
        """The delayed environment of ``replicates`` (reset with their reward streams)."""
        keys = [0] * len(replicates) if self.instances == "fixed" else replicates
        env = FeedbackDelay(
            synthetic_instances(
                _seeds(self.seed, INSTANCE_STREAM, keys),
                horizon=self.horizon,
                change_points=self.change_points,
                n_arms=self.n_arms,
                budget=self.budget,
                n_edges=self.n_edges,
                n_redraw=self.n_redraw,
            ),
            delay,
        )
        env.reset(_seeds(self.seed, NOISE_STREAM, replicates))
        return env

    def policy(self, algorithm: str, env: FeedbackDelay, delay: int) -> Any:
        """A fresh policy for ``env`` (not yet reset)."""
        problem = env.problem
        if algorithm in ("NDC-SEM", PENDING):
            return NDCSEM(
                problem,
                gamma=self.gamma,
                xi=self.xi[delay],
                lam=self.lam,
                count_pending=algorithm == PENDING,
            )
        if algorithm == "SEM-UCB":
            return SEMUCB(problem, lam=self.lam)
        if algorithm == "Oracle":
            return Oracle.from_environment(env)
        classes = {"CUCB": CUCB, "CTS": CTS, "FTRL": FTRLHybrid, "Random": RandomSuperArm}
        return classes[algorithm](problem)

    def run_task(self, task: Task) -> pd.DataFrame:
        """The rows of one task (one BLAS thread)."""
        replicates = range(task.start, task.stop)
        with threadpool_limits(limits=1):
            env = self.environment(replicates, task.delay)
            policy = self.policy(task.algorithm, env, task.delay)
            stream = POLICY_STREAM + stable_hash(task.algorithm)
            policy.reset(_seeds(self.seed, stream, replicates))
            record = simulate_semibandit(
                env, policy, self.checkpoints(), lock_in=lock_in_length(task.delay)
            )
        rounds = record.pop("t")
        count = len(replicates)
        uses_xi = task.algorithm in ("NDC-SEM", PENDING)
        uses_lam = task.algorithm in ("NDC-SEM", PENDING, "SEM-UCB")
        frame = pd.DataFrame(
            {
                "experiment": self.name,
                "instances": self.instances,
                "delay": task.delay,
                "algorithm": task.algorithm,
                "lam": self.lam if uses_lam else np.nan,
                "xi": self.xi[task.delay] if uses_xi else np.nan,
                "replicate": np.repeat(np.asarray(replicates), rounds.size),
                "t": np.tile(rounds, count),
                **{name: record[name].T.ravel() for name in VALUE_COLUMNS},
            }
        )
        return frame[[*KEY_COLUMNS, *VALUE_COLUMNS]]

    def run(
        self,
        out_dir: str | Path,
        jobs: int = 1,
        backend: str = "loky",
        progress: bool = True,
    ) -> pd.DataFrame:
        """Run the unfinished tasks into ``out_dir``; return the whole long table.

        The graph learners (slowest) first; the order does not change any number.
        """
        tasks = self.tasks()
        header = run_header(self.name, self.config())
        records = [
            {
                "id": t.id,
                "delay": t.delay,
                "algorithm": t.algorithm,
                "replicates": [t.start, t.stop],
            }
            for t in tasks
        ]
        cost = {"NDC-SEM": 0, PENDING: 0, "SEM-UCB": 0, "FTRL": 1}
        return run_tasks(
            out_dir,
            header,
            tasks,
            records,
            type(self).run_task,
            self,
            jobs=jobs,
            backend=backend,
            progress=progress,
            order=lambda t: (cost.get(t.algorithm, 2), -t.delay, t.chunk),
        )

    # ---------------------------------------------------------------- outputs

    def plot(self, df: pd.DataFrame, out_dir: str | Path) -> list[Path]:
        """Regret curves (one panel per D) and the optimality ratio per period."""
        from causalbandits.papers.ndc_sem.synthetic_report import plot_optimality_ratio, plot_regret

        out_dir = Path(out_dir)
        return [
            plot_regret(df, out_dir / "regret_curves.png", self.change_points),
            plot_optimality_ratio(df, out_dir / "optimality_ratio.png", self.periods()),
        ]

    def report(self, df: pd.DataFrame) -> str:
        from causalbandits.papers.ndc_sem.synthetic_report import build_report

        return build_report(df, self)


# -------------------------------------------------------------------- presets


def synthetic(quick: bool = False) -> SyntheticExperiment:
    """Sec. V-A: N = 10, s = 4, T = 5000, changes at 1000/2500/4000, D in {50, 200, 400},
    20 replicates (quick: T = 1000, changes at 200/500/800, D in {10, 40, 80}, 4 replicates)."""
    if quick:
        return SyntheticExperiment(
            delays=QUICK_DELAYS,
            xi=dict(zip(QUICK_DELAYS, (TABLE_I_XI[d] for d in PAPER_DELAYS), strict=True)),
            replicates=QUICK_REPLICATES,
            horizon=QUICK_HORIZON,
            change_points=QUICK_CHANGE_POINTS,
            checkpoint_every=20,
            name="ndc-sem-synthetic-quick",
            description="NDC-SEM synthetic experiment, quick: T = 1000, D in {10, 40, 80}",
        )
    return SyntheticExperiment()


# -------------------------------------------------------------------- simulation


def simulate_semibandit(
    env: Any, policy: Any, checkpoints: np.ndarray, lock_in: int = 0
) -> dict[str, np.ndarray]:
    """Run ``policy`` on ``env`` (both reset) up to the last of the 1-based ``checkpoints``.

    Returns ``t`` and, per checkpoint and replicate ``(n, R)``: ``cum_regret`` (eq. 7),
    ``optimal_share`` (share of rounds with an optimal super arm), ``matched`` = ``sum_t
    |I(x_t) & I(x*_t)|`` and ``optimal_arms`` = ``sum_t |I(x*_t)|`` (the numerator and
    denominator of OR, cumulative), ``a_mse`` = ``||A - A_hat||_F^2 / N^2`` of the policy's
    last fitted graph (NaN without one). With ``lock_in > 0``, a lock-in is a maximal run of
    at least ``lock_in`` consecutive rounds in which one base arm outside ``x*_t`` is played
    (runs still open at the last round are closed there): ``lock_ins`` and
    ``lock_in_rounds`` count the lock-ins finished by ``t`` and their total length, and
    ``lock_in_regret`` is the regret of rounds ``<= t`` that lie inside some lock-in (in
    hindsight: a round counts once its run has reached ``lock_in`` rounds).
    """
    rounds = np.asarray(checkpoints, dtype=np.int64)
    horizon = int(env.horizon)
    if rounds.size == 0 or rounds[0] < 1 or rounds[-1] > horizon or np.any(np.diff(rounds) <= 0):
        raise ValueError(f"checkpoints must increase strictly within 1..{horizon}")
    truth = np.asarray(env.adjacency)
    replicates, n = truth.shape[0], truth.shape[-1]
    last = int(rounds[-1])
    out = {name: np.zeros((rounds.size, replicates)) for name in VALUE_COLUMNS}
    totals = np.zeros((4, replicates))  # regret, optimal, matched, optimal arms
    locks = np.zeros((2, replicates))  # lock-ins, lock-in rounds
    run = np.zeros((replicates, n), dtype=np.int64)
    regret = np.zeros((last, replicates))
    locked = np.zeros((last, replicates), dtype=bool)
    k = 0
    for t in range(1, last + 1):
        best = np.asarray(env.optimal_action, dtype=bool)
        actions = policy.select()
        regret[t - 1] = env.pseudo_regret(actions)
        totals[1] += env.is_optimal(actions)
        totals[2] += (actions & best).sum(axis=1)
        totals[3] += best.sum(axis=1)
        policy.update(actions, env.step(actions))
        if lock_in > 0:
            off = actions & ~best
            run += off
            closing = ~off | (t == last)
            done = closing & (run >= lock_in)
            for r, i in zip(*np.nonzero(done), strict=True):
                end = t if off[r, i] else t - 1  # the run covers rounds end - run + 1 .. end
                locked[end - run[r, i] : end, r] = True
                locks[0, r] += 1
                locks[1, r] += run[r, i]
            run[closing] = 0
        if t == rounds[k]:
            out["optimal_share"][k] = totals[1] / t
            out["matched"][k] = totals[2]
            out["optimal_arms"][k] = totals[3]
            out["a_mse"][k] = _graph_error(policy, truth)
            out["lock_ins"][k], out["lock_in_rounds"][k] = locks
            k += 1
    out["cum_regret"] = np.cumsum(regret, axis=0)[rounds - 1]
    out["lock_in_regret"] = np.cumsum(np.where(locked, regret, 0.0), axis=0)[rounds - 1]
    return {"t": rounds, **out}


def _graph_error(policy: Any, truth: np.ndarray) -> np.ndarray:
    """``||A - A_hat||_F^2 / N^2`` per replicate of the policy's last fitted graph, else NaN."""
    lasso = getattr(policy, "lasso", None)
    if lasso is None:
        return np.full(truth.shape[0], np.nan)
    return ((lasso.adjacency - truth) ** 2).mean(axis=(1, 2))
