"""NDC-SEM (Ghoorchian & Maghsudi, arXiv 2307.09093): the synthetic experiment (Sec. V-A).

Figs. 2 and 6 of the paper: cumulative expected regret (eq. 7) of NDC-SEM, SEM-UCB, CUCB,
CTS, FTRL (HYBRID) and Random on ``N = 10`` base arms, ``s = 4``, ``T = 5000``, change points
at rounds 1000, 2500 and 4000, constant feedback delays ``D`` in {50, 200, 400}; and the
optimality ratio of NDC-SEM and SEM-UCB per stationary period (App. VII-C2)

    OR_k = sum_{t in T_k} |I(x_t) & I(x*_t)| / sum_{t in T_k} |I(x*_t)|,  I(x) = {i : x[i] != 0}.

NDC-SEM uses Table I (``gamma = 0.985``; ``xi`` = 1e-10, 1e-6, 1e-18 for D = 50, 200, 400).
The paper tunes the lasso penalty ``lambda`` of eq. 9 "by grid search over [1e-5, 1e6]"
without the grid, criterion or value; :func:`tune_lambda` runs the decade grid on instances
and seeds disjoint from the reported ones (root seed :data:`TUNING_SEED`) and
:func:`choose_lambda` picks the value with the lowest time-averaged ``MSE(A_hat)``;
:data:`LAMBDA` records the choice (SEM-UCB shares the graph learner and the value).

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
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from causalbandits.envs.delay import FeedbackDelay
from causalbandits.experiments.runner import run_tasks
from causalbandits.papers.ndc_sem_env import (
    PAPER_ARMS,
    PAPER_BUDGET,
    PAPER_CHANGE_POINTS,
    PAPER_HORIZON,
    synthetic_instances,
)
from causalbandits.policies.ftrl import FTRLHybrid
from causalbandits.policies.ndc_sem import NDCSEM, SEMUCB, TABLE_I_XI
from causalbandits.policies.oracle import Oracle
from causalbandits.policies.semibandit import CTS, CUCB, RandomSuperArm
from causalbandits.random import stable_hash

#: The paper's algorithms (Fig. 2), in the order of tables and legends.
ALGORITHMS = ("NDC-SEM", "SEM-UCB", "CUCB", "CTS", "FTRL", "Random")
#: ``"Oracle"`` plays ``x*_t`` (zero regret, OR = 1): a check of the metric pipeline.
ALL_ALGORITHMS = (*ALGORITHMS, "Oracle")
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

#: What the paper reports (Sec. V-A, App. VII-C2): qualitative statements only.
CLAIMS = {
    "lowest": "NDC-SEM outperforms all the other policies (lowest cumulative regret, Fig. 2)",
    "or": "NDC-SEM closely follows the oracle's choices; SEM-UCB cannot always adapt (Fig. 6)",
    "random": "Random's regret grows linearly, near the worst (spec §8.1)",
}
#: Project thresholds of the verdicts (spec §8): "near the worst" and "closely follows".
RANDOM_NEAR_WORST = 0.9
OR_CLOSE = 0.8

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
        return f"d{self.delay:04d}-{self.algorithm.lower()}-c{self.chunk:04d}"


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
        if "NDC-SEM" in self.algorithms:
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
        text = json.dumps(self.config(), sort_keys=True, default=str)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]

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
            ),
            delay,
        )
        env.reset(_seeds(self.seed, NOISE_STREAM, replicates))
        return env

    def policy(self, algorithm: str, env: FeedbackDelay, delay: int) -> Any:
        """A fresh policy for ``env`` (not yet reset)."""
        problem = env.problem
        if algorithm == "NDC-SEM":
            return NDCSEM(problem, gamma=self.gamma, xi=self.xi[delay], lam=self.lam)
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
        uses_xi = task.algorithm == "NDC-SEM"
        uses_lam = task.algorithm in ("NDC-SEM", "SEM-UCB")
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
        header = {
            "experiment": self.name,
            "kind": "run",
            "fingerprint": self.fingerprint(),
            "config": self.config(),
        }
        records = [
            {
                "id": t.id,
                "delay": t.delay,
                "algorithm": t.algorithm,
                "replicates": [t.start, t.stop],
            }
            for t in tasks
        ]
        cost = {"NDC-SEM": 0, "SEM-UCB": 0, "FTRL": 1}
        return run_tasks(
            out_dir,
            header,
            tasks,
            records,
            type(self).run_task,
            self,
            jobs,
            backend,
            progress,
            order=lambda t: (cost.get(t.algorithm, 2), -t.delay, t.chunk),
        )

    # ---------------------------------------------------------------- outputs

    def plot(self, df: pd.DataFrame, out_dir: str | Path) -> list[Path]:
        """Regret curves (one panel per D) and the optimality ratio per period."""
        out_dir = Path(out_dir)
        return [
            plot_regret(df, out_dir / "regret_curves.png", self.change_points),
            plot_optimality_ratio(df, out_dir / "optimality_ratio.png", self.periods()),
        ]

    def report(self, df: pd.DataFrame) -> str:
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


# -------------------------------------------------------------------- summaries


def _algorithm_order(df: pd.DataFrame) -> list[str]:
    present = set(df["algorithm"])
    return [a for a in ALL_ALGORITHMS if a in present]


def final_regret(df: pd.DataFrame) -> pd.DataFrame:
    """Per (delay, algorithm): replicates, mean and standard error of the regret at ``T``."""
    last = df[df["t"] == df["t"].max()]
    grouped = last.groupby(["delay", "algorithm"], sort=False)["cum_regret"]
    out = grouped.agg(replicates="size", mean="mean", std="std").reset_index()
    out["se"] = out["std"].fillna(0.0) / np.sqrt(out["replicates"])
    return out.drop(columns="std")


def optimality_ratio(df: pd.DataFrame, periods: Sequence[tuple[int, int]]) -> pd.DataFrame:
    """OR_k per (delay, algorithm, replicate, period) from the cumulative counts.

    Needs the rounds ``first - 1`` (for ``first > 1``) and ``last`` of every period among the
    checkpoints.
    """
    frames = []
    keys = ["delay", "algorithm", "replicate"]
    table = df.set_index([*keys, "t"])[["matched", "optimal_arms"]]
    for k, (first, last) in enumerate(periods):
        end = table.xs(last, level="t")
        start = table.xs(first - 1, level="t") if first > 1 else end * 0.0
        diff = end - start.reindex(end.index)
        ratio = (diff["matched"] / diff["optimal_arms"]).rename("ratio").reset_index()
        frames.append(ratio.assign(period=k + 1, first=first, last=last))
    return pd.concat(frames, ignore_index=True)


def summarise_ratio(ratios: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard error of OR_k over replicates per (delay, algorithm, period)."""
    grouped = ratios.groupby(["delay", "algorithm", "period"], sort=False)["ratio"]
    out = grouped.agg(replicates="size", mean="mean", std="std").reset_index()
    out["se"] = out["std"].fillna(0.0) / np.sqrt(out["replicates"])
    return out.drop(columns="std")


# -------------------------------------------------------------------- plots


def plot_regret(df: pd.DataFrame, out_path: str | Path, change_points: Sequence[int]) -> Path:
    """Mean cumulative regret with a 95% band: one panel per delay, change points marked."""
    from matplotlib.figure import Figure  # here: workers that only compute skip matplotlib

    delays = sorted(df["delay"].unique())
    grouped = df.groupby(["delay", "algorithm", "t"], sort=False)["cum_regret"]
    stats = grouped.agg(["mean", "std", "size"]).reset_index()
    stats["half"] = 1.96 * stats["std"].fillna(0.0) / np.sqrt(stats["size"])
    figure = Figure(figsize=(4.6 * len(delays), 3.8), layout="constrained")
    axes = figure.subplots(1, len(delays), squeeze=False, sharey=True).ravel()
    for ax, delay in zip(axes, delays, strict=True):
        for algorithm in _algorithm_order(df):
            curve = stats[(stats["delay"] == delay) & (stats["algorithm"] == algorithm)]
            line = ax.plot(curve["t"], curve["mean"], label=algorithm)[0]
            ax.fill_between(
                curve["t"],
                curve["mean"] - curve["half"],
                curve["mean"] + curve["half"],
                color=line.get_color(),
                alpha=0.2,
                linewidth=0,
            )
        for point in change_points:
            ax.axvline(point, color="grey", linestyle="--", linewidth=0.8)
        ax.set_title(f"D = {delay}", fontsize="medium")
        ax.set_xlabel("round t")
    axes[0].set_ylabel("cumulative expected regret")
    axes[0].legend(fontsize="small")
    figure.suptitle("NDC-SEM paper, synthetic experiment (Fig. 2)")
    return _save(figure, out_path)


def plot_optimality_ratio(
    df: pd.DataFrame, out_path: str | Path, periods: Sequence[tuple[int, int]]
) -> Path:
    """OR_k per period (bars, 95% error bars) of NDC-SEM, SEM-UCB (and the oracle if run)."""
    from matplotlib.figure import Figure

    shown = [a for a in ("NDC-SEM", "SEM-UCB", "Oracle") if a in set(df["algorithm"])]
    summary = summarise_ratio(optimality_ratio(df[df["algorithm"].isin(shown)], periods))
    delays = sorted(df["delay"].unique())
    figure = Figure(figsize=(5.2, 2.4 * len(delays)), layout="constrained")
    axes = figure.subplots(len(delays), 1, squeeze=False, sharex=True).ravel()
    width = 0.8 / max(len(shown), 1)
    positions = np.arange(len(periods))
    for ax, delay in zip(axes, delays, strict=True):
        for j, algorithm in enumerate(shown):
            rows = summary[(summary["delay"] == delay) & (summary["algorithm"] == algorithm)]
            rows = rows.sort_values("period")
            ax.bar(
                positions + (j - (len(shown) - 1) / 2) * width,
                rows["mean"],
                width,
                yerr=1.96 * rows["se"],
                capsize=2,
                label=algorithm,
            )
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("optimality ratio")
        ax.set_title(f"D = {delay}", fontsize="medium")
    axes[-1].set_xticks(positions, [f"period {k + 1}\n{a}-{b}" for k, (a, b) in enumerate(periods)])
    axes[0].legend(fontsize="small", ncols=len(shown))
    figure.suptitle("Optimality ratio per stationary period (Fig. 6)")
    return _save(figure, out_path)


def _save(figure: Any, out_path: str | Path) -> Path:
    path = Path(out_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=150, bbox_inches="tight")
    return path


# -------------------------------------------------------------------- report


def _verdict(holds: bool | None) -> str:
    return "n/a" if holds is None else ("yes" if holds else "NO")


def _pm(mean: float, se: float, digits: int = 0) -> str:
    return f"{mean:,.{digits}f} ± {se:,.{digits}f}"


def claim_checks(
    df: pd.DataFrame, periods: Sequence[tuple[int, int]]
) -> list[tuple[str, str, str]]:
    """``(claim, our numbers, verdict)`` per delay for each claim the algorithms present allow."""
    finals = final_regret(df).set_index(["delay", "algorithm"])
    present = set(df["algorithm"])
    learners = [a for a in _algorithm_order(df) if a != "Oracle"]
    checks: list[tuple[str, str, str]] = []
    for delay in sorted(df["delay"].unique()):
        regret = {a: float(finals.loc[(delay, a), "mean"]) for a in learners}
        if "NDC-SEM" in present and len(learners) > 1:
            best = min(regret, key=regret.get)
            others = {a: r for a, r in regret.items() if a != "NDC-SEM"}
            runner_up = min(others, key=others.get)
            checks.append(
                (
                    f"D = {delay}: NDC-SEM has the lowest final mean regret",
                    f"NDC-SEM {regret['NDC-SEM']:,.0f}; best other {runner_up} "
                    f"{others[runner_up]:,.0f}",
                    _verdict(best == "NDC-SEM"),
                )
            )
        if {"NDC-SEM", "SEM-UCB"} <= present and len(periods) > 1:
            summary = summarise_ratio(
                optimality_ratio(
                    df[(df["delay"] == delay) & df["algorithm"].isin(["NDC-SEM", "SEM-UCB"])],
                    periods,
                )
            ).set_index(["algorithm", "period"])
            post = range(2, len(periods) + 1)
            ndc = [float(summary.loc[("NDC-SEM", k), "mean"]) for k in post]
            sem = [float(summary.loc[("SEM-UCB", k), "mean"]) for k in post]
            pairs = ", ".join(
                f"P{k}: {a:.2f} vs {b:.2f}" for k, a, b in zip(post, ndc, sem, strict=True)
            )
            checks.append(
                (
                    f"D = {delay}: NDC-SEM's OR above SEM-UCB's in every post-change period",
                    pairs,
                    _verdict(all(a > b for a, b in zip(ndc, sem, strict=True))),
                )
            )
            checks.append(
                (
                    f"D = {delay}: NDC-SEM's OR >= {OR_CLOSE} after the first period "
                    "(spec §8.2 reading of 'closely follows')",
                    f"min {min(ndc):.2f}",
                    _verdict(min(ndc) >= OR_CLOSE),
                )
            )
        if "Random" in present and len(learners) > 1:
            worst = max(regret.values())
            checks.append(
                (
                    f"D = {delay}: Random near the worst (>= {RANDOM_NEAR_WORST:.0%} of the "
                    "worst final regret)",
                    f"Random {regret['Random']:,.0f}; worst {worst:,.0f} "
                    f"({max(regret, key=regret.get)})",
                    _verdict(regret["Random"] >= RANDOM_NEAR_WORST * worst),
                )
            )
        if "Oracle" in present:
            value = float(finals.loc[(delay, "Oracle"), "mean"])
            checks.append(
                (
                    f"D = {delay}: the oracle has zero regret (pipeline check)",
                    f"{value:.3g}",
                    _verdict(abs(value) < 1e-6),
                )
            )
    return checks


def build_report(df: pd.DataFrame, experiment: SyntheticExperiment) -> str:
    """Our numbers beside the paper's qualitative claims, with the delay diagnostics."""
    periods = experiment.periods()
    algorithms = _algorithm_order(df)
    delays = sorted(df["delay"].unique())
    finals = final_regret(df).set_index(["delay", "algorithm"])
    replicates = int(df["replicate"].nunique())
    instance_text = (
        "every replicate draws its own instance (graph and beta schedule)"
        if experiment.instances == "per-replicate"
        else "one fixed instance shared by all replicates"
    )
    xi_text = ", ".join(f"D = {d}: {experiment.xi[d]:g}" for d in delays if d in experiment.xi)
    lines = [
        "# NDC-SEM paper, synthetic experiment (Sec. V-A, Figs. 2 and 6): ours beside the paper",
        "",
        f"N = {experiment.n_arms}, s = {experiment.budget}, T = {experiment.horizon}, change "
        f"points {', '.join(map(str, experiment.change_points))}; {experiment.n_edges}-edge "
        "upper-triangular DAG with weights U[0.4, 0.7], Bernoulli rewards whose optimal super "
        f"arm changes at every change point (§5.1 generator); {instance_text}; "
        f"{replicates} replicates, root seed {experiment.seed}. NDC-SEM: gamma = "
        f"{experiment.gamma}, xi per Table I ({xi_text}); lasso lambda = {experiment.lam:g} "
        "for NDC-SEM and SEM-UCB (chosen on separate tuning instances: lambda_tuning.md). The "
        "paper reports figures only, no numbers: the checks compare rankings and shapes.",
        "",
        "## Final cumulative regret at T (mean ± standard error)",
        "",
        "| algorithm | " + " | ".join(f"D = {d}" for d in delays) + " |",
        "|---|" + "---|" * len(delays),
    ]
    for algorithm in algorithms:
        cells = [
            _pm(finals.loc[(d, algorithm), "mean"], finals.loc[(d, algorithm), "se"])
            if (d, algorithm) in finals.index
            else "-"
            for d in delays
        ]
        lines.append(f"| {algorithm} | " + " | ".join(cells) + " |")
    shown = [a for a in ("NDC-SEM", "SEM-UCB", "Oracle") if a in algorithms]
    if shown:
        ratios = summarise_ratio(
            optimality_ratio(df[df["algorithm"].isin(shown)], periods)
        ).set_index(["delay", "algorithm", "period"])
        lines += [
            "",
            "## Optimality ratio per stationary period (mean ± standard error)",
            "",
            "| D | algorithm | "
            + " | ".join(f"period {k + 1} ({a}-{b})" for k, (a, b) in enumerate(periods))
            + " |",
            "|---|---|" + "---|" * len(periods),
        ]
        for delay in delays:
            for algorithm in shown:
                cells = [
                    _pm(*ratios.loc[(delay, algorithm, k + 1), ["mean", "se"]], digits=3)
                    for k in range(len(periods))
                ]
                lines.append(f"| {delay} | {algorithm} | " + " | ".join(cells) + " |")
    learners = [a for a in ("NDC-SEM", "SEM-UCB") if a in algorithms]
    if learners:
        lines += ["", *diagnostic_lines(df, experiment, learners)]
    lines += [
        "",
        "## The paper's claims",
        "",
        *(f"- {text}" for text in CLAIMS.values()),
        "",
        "| claim (paper / spec §8) | ours | holds |",
        "|---|---|---|",
    ]
    for claim, ours, verdict in claim_checks(df, periods):
        lines.append(f"| {claim} | {ours} | {verdict} |")
    lines += ["", *explanation_lines(df, experiment)]
    return "\n".join(lines) + "\n"


def diagnostics(
    df: pd.DataFrame, experiment: SyntheticExperiment, algorithms: Sequence[str]
) -> pd.DataFrame:
    """Per (delay, algorithm), means over replicates: regret in the first ``N + D`` rounds
    (NDC-SEM's initialisation), regret per period, lock-ins (count, total length, their
    regret), the total regret and ``MSE(A_hat)`` at ``T``."""
    rows = []
    periods = experiment.periods()
    for delay in sorted(df["delay"].unique()):
        for algorithm in algorithms:
            part = df[(df["delay"] == delay) & (df["algorithm"] == algorithm)]
            if part.empty:
                continue
            mean = part.groupby("t")[["cum_regret", *VALUE_COLUMNS[2:]]].mean()
            end = mean.loc[mean.index.max()]
            initial = experiment.n_arms + int(delay)
            row = {
                "delay": int(delay),
                "algorithm": algorithm,
                "initial_regret": mean.loc[initial, "cum_regret"]
                if initial in mean.index
                else np.nan,
            }
            for k, (first, last) in enumerate(periods):
                before = mean.loc[first - 1, "cum_regret"] if first > 1 else 0.0
                row[f"period_{k + 1}"] = mean.loc[last, "cum_regret"] - before
            row.update(
                lock_ins=end["lock_ins"],
                lock_in_rounds=end["lock_in_rounds"],
                lock_in_regret=end["lock_in_regret"],
                regret=end["cum_regret"],
                a_mse=end["a_mse"],
            )
            rows.append(row)
    return pd.DataFrame(rows)


def diagnostic_lines(
    df: pd.DataFrame, experiment: SyntheticExperiment, algorithms: Sequence[str]
) -> list[str]:
    """The table of :func:`diagnostics` in markdown."""
    table = diagnostics(df, experiment, algorithms)
    periods = experiment.periods()
    lines = [
        "## Where the graph learners lose regret",
        "",
        "Means over replicates. Initialisation: regret of rounds 1..N+D (NDC-SEM cycles "
        "through H until its first feedback arrives; SEM-UCB plays H once, then arms with "
        "no feedback have index +inf, ties at random). Lock-ins: maximal runs of at least D/2 "
        "consecutive rounds playing one base arm outside x*_t; their count, mean length and "
        "the regret of the rounds inside them.",
        "",
        "| D | algorithm | initialisation | "
        + " | ".join(f"period {k + 1}" for k in range(len(periods)))
        + " | lock-ins | mean length | regret in lock-ins | total | MSE(A_hat) at T |",
        "|---|---|---|" + "---|" * (len(periods) + 5),
    ]
    for _, row in table.iterrows():
        count = row["lock_ins"]
        length = row["lock_in_rounds"] / count if count > 0 else float("nan")
        cells = [f"{row[f'period_{k + 1}']:,.0f}" for k in range(len(periods))]
        share = row["lock_in_regret"] / row["regret"] if row["regret"] > 0 else float("nan")
        lines.append(
            f"| {row['delay']} | {row['algorithm']} | {row['initial_regret']:,.0f} | "
            + " | ".join(cells)
            + f" | {count:.1f} | {length:,.0f} | {row['lock_in_regret']:,.0f} ({share:.0%})"
            f" | {row['regret']:,.0f} | {row['a_mse']:.1e} |"
        )
    return lines


def reexploration_age(
    gamma: float, xi: float, budget: int, delay: int, level: float = 0.1
) -> float:
    """Rounds without feedback after which NDC-SEM's bonus of an arm that was always played
    reaches ``level`` (spec §3.5): ``ln(4 xi (s+1) ln m / (level^2 M_0)) / ln gamma`` with
    ``M_0 = gamma^D / (1 - gamma)`` and ``m = 1 / (1 - gamma)``; 0 if it starts above."""
    if gamma >= 1 or xi <= 0:
        return float("inf") if xi <= 0 else 0.0
    m0 = gamma**delay / (1 - gamma)
    ratio = 4 * xi * (budget + 1) * np.log(1 / (1 - gamma)) / (level**2 * m0)
    return max(float(np.log(ratio) / np.log(gamma)), 0.0)


def explanation_lines(df: pd.DataFrame, experiment: SyntheticExperiment) -> list[str]:
    """Why NDC-SEM wins or loses: the delay lock-in of eq. 10-11, with the measured numbers."""
    if not {"NDC-SEM", "SEM-UCB"} <= set(df["algorithm"]):
        return []
    delays = sorted(int(d) for d in df["delay"].unique())
    finals = final_regret(df).set_index(["delay", "algorithm"])["mean"]
    learners = [a for a in _algorithm_order(df) if a != "Oracle"]
    best = {d: min(learners, key=lambda a, d=d: finals.loc[(d, a)]) for d in delays}
    table = diagnostics(df, experiment, ["NDC-SEM", "SEM-UCB"]).set_index(["delay", "algorithm"])

    def cell(algorithm: str, column: str, delay: int) -> float:
        return float(table.loc[(delay, algorithm), column])

    def lock_text(algorithm: str) -> str:
        return ", ".join(
            f"{cell(algorithm, 'lock_in_regret', d):,.0f} of {cell(algorithm, 'regret', d):,.0f}"
            f" (D = {d})"
            for d in delays
        )

    ages = ", ".join(
        f"{reexploration_age(experiment.gamma, experiment.xi[d], experiment.budget, d):,.0f} "
        f"rounds at D = {d}"
        for d in delays
    )
    gaps = []
    for d in delays:
        total = cell("NDC-SEM", "regret", d) - cell("SEM-UCB", "regret", d)
        locked = cell("NDC-SEM", "lock_in_regret", d) - cell("SEM-UCB", "lock_in_regret", d)
        start = cell("NDC-SEM", "initial_regret", d) - cell("SEM-UCB", "initial_regret", d)
        gaps.append(
            f"D = {d}: {total:+,.0f} in total, {start:+,.0f} in the first N + D rounds, "
            f"{locked:+,.0f} inside lock-ins, {total - start - locked:+,.0f} elsewhere"
        )
    mse = ", ".join(f"{cell('NDC-SEM', 'a_mse', d):.0e} (D = {d})" for d in delays)
    lines = [
        "## Why NDC-SEM wins or loses",
        "",
        f"The graph is not the problem: NDC-SEM's MSE(A_hat) at T is {mse}. What costs "
        "regret is how eq. 10-11 treat an arm whose feedback is in flight. Its discounted "
        "count M[i] grows only when the feedback arrives, D rounds after the play, while "
        "every M decays by gamma each round. An arm not played for a while has a tiny M and "
        "a bonus growing like gamma^(-age/2); once its index tops the others it is played, "
        "yet its M keeps decaying for the next D rounds, so its index stays on top and "
        "NDC-SEM holds the arm for about D + 1 rounds before the first observation can push "
        "it out. A switch caused by the noise of the short-memory discounted means (about "
        f"1/(1 - gamma) = {1 / (1 - experiment.gamma):.0f} rounds) is held just as long. Each "
        "such lock-in costs about D times the arm's gap. Table I's tiny xi (far below "
        f"Theorem 1's xi > 1/(2(s+1)) = {1 / (2 * (experiment.budget + 1)):.2g}) only sets how "
        f"long an arm must go unobserved before its bonus reaches 0.1 ({ages}); it does not "
        "shorten the D-round hold. SEM-UCB's undiscounted counts and log t bonus grow "
        "slowly, so a stale arm never becomes irresistible; its lock-ins come from leaving "
        "the old optimum slowly after a change.",
        "",
        f"Regret inside lock-ins: NDC-SEM {lock_text('NDC-SEM')}; SEM-UCB "
        f"{lock_text('SEM-UCB')}. NDC-SEM minus SEM-UCB: " + "; ".join(gaps) + " ('elsewhere': "
        "shorter excursions, mostly switches on noisy discounted means). The first "
        "N + D rounds differ because NDC-SEM cycles through the columns of H (which favour "
        "low-index arms, the sinks of the known order with small total effects) while "
        "SEM-UCB plays at random (spec §3.5, resolution 7 and its alternative). The lasso "
        "penalty cannot change any of this: on the tuning instances every lambda <= 0.1 "
        "gives the same regret within its standard error (lambda_tuning.csv).",
        "",
    ]
    lost = [d for d in delays if best[d] != "NDC-SEM"]
    won = [d for d in delays if best[d] == "NDC-SEM"]
    if lost:
        lines.append(
            "Verdict: the paper's 'NDC-SEM outperforms all the other policies' does **not** "
            "hold at "
            + ", ".join(f"D = {d} (best: {best[d]})" for d in lost)
            + (f"; it holds at D = {', '.join(map(str, won))}." if won else ".")
        )
    else:
        lines.append("Verdict: NDC-SEM has the lowest final regret at every delay.")
    return lines


# -------------------------------------------------------------------- lambda tuning


def tune_lambda(
    out_dir: str | Path,
    grid: Sequence[float] = LAMBDA_GRID,
    replicates: int = 10,
    jobs: int = 1,
    progress: bool = False,
    base: SyntheticExperiment | None = None,
) -> pd.DataFrame:
    """NDC-SEM for every ``lambda`` of ``grid`` on tuning instances (root :data:`TUNING_SEED`).

    One run per value into ``out_dir/lam=<value>`` (resumable); returns per (delay, lam,
    replicate) the final regret, the time-averaged and the final ``MSE(A_hat)``.
    """
    base = base or SyntheticExperiment()
    frames = []
    for lam in grid:
        experiment = dataclasses.replace(
            base,
            lam=float(lam),
            seed=TUNING_SEED,
            algorithms=("NDC-SEM",),
            replicates=replicates,
            name=f"{base.name}-lambda-tuning",
        )
        df = experiment.run(Path(out_dir) / f"lam={lam:g}", jobs=jobs, progress=progress)
        grouped = df.groupby(["delay", "replicate"])
        frames.append(
            pd.DataFrame(
                {
                    "final_regret": grouped["cum_regret"].last(),
                    "mean_mse": grouped["a_mse"].mean(),
                    "final_mse": grouped["a_mse"].last(),
                }
            )
            .reset_index()
            .assign(lam=float(lam))
        )
    return pd.concat(frames, ignore_index=True)


def choose_lambda(tuning: pd.DataFrame) -> float:
    """The ``lambda`` with the lowest time-averaged ``MSE(A_hat)`` over delays and replicates
    (the criterion of spec §3.1 that measures what lambda controls; regret is flat for small
    lambda); ties go to the smaller value."""
    score = tuning.groupby("lam")["mean_mse"].mean().sort_index()
    return float(score.idxmin())


def tuning_summary(tuning: pd.DataFrame) -> pd.DataFrame:
    """Mean final regret (± se) and MSEs per (delay, lam)."""
    grouped = tuning.groupby(["delay", "lam"])
    out = grouped.agg(
        final_regret=("final_regret", "mean"),
        regret_sd=("final_regret", "std"),
        replicates=("final_regret", "size"),
        mean_mse=("mean_mse", "mean"),
        final_mse=("final_mse", "mean"),
    ).reset_index()
    out["regret_se"] = out.pop("regret_sd") / np.sqrt(out["replicates"])
    return out


def tuning_report(tuning: pd.DataFrame) -> str:
    """Markdown of :func:`tuning_summary` with the value :func:`choose_lambda` picks."""
    summary = tuning_summary(tuning)
    chosen = choose_lambda(tuning)
    overall = tuning.groupby("lam")["mean_mse"].mean()
    replicates = int(summary["replicates"].max())
    lines = [
        "# NDC-SEM synthetic experiment: the lasso penalty lambda (eq. 9)",
        "",
        f"NDC-SEM (Table I gamma and xi) on {replicates} tuning instances and reward seeds per "
        f"delay (root seed {TUNING_SEED}; the reported runs use {EVALUATION_SEED}), one run "
        "per lambda of the paper's grid. Criterion (spec §3.1): the lowest time-averaged "
        "MSE(A_hat) = ||A - A_hat||_F^2 / N^2 over the checkpoints, averaged over delays and "
        f"instances. Chosen: **lambda = {chosen:g}**.",
        "",
        "| lambda | time-averaged MSE (all D) | "
        + " | ".join(f"final regret D = {d}" for d in sorted(summary["delay"].unique()))
        + " |",
        "|---|---|" + "---|" * summary["delay"].nunique(),
    ]
    table = summary.set_index(["lam", "delay"])
    for lam in sorted(summary["lam"].unique()):
        cells = [
            _pm(table.loc[(lam, d), "final_regret"], table.loc[(lam, d), "regret_se"])
            for d in sorted(summary["delay"].unique())
        ]
        lines.append(f"| {lam:g} | {overall.loc[lam]:.2e} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
