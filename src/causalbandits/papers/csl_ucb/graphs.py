"""CSL-UCB (Peng, Zhang, Mitra, IEEE TSP 2025): experiment E1, graph identification (Figs. 2-5).

For each graph size ``N`` and each of ``M`` replicates (runs), a system is drawn with the
authors' generator (A1: ``B``, ``B*`` strictly upper-triangular, edges w.p. 0.5, weights
U(0.5, 2) with a random sign, noise N(1, 1)), and for each sample size ``T`` four methods
estimate its observational weights ``B`` (mode 0):

* CSL (Algorithm 1, ``w = 1``, KSG with ``k = 5``) and CSL-nw (``w = 0``);
* GOLEM-EV (``lambda1 = 0.02``, ``lambda2 = 5``, threshold 0.3, B2);
* DAGMA (linear, least squares, the package's defaults as in :func:`dagma_linear`, A13).

Per replicate, ``T`` and method the table holds the metrics of :func:`graph_metrics`: the
graph-FN indicator (eq. 60; its mean over replicates is the graph-FN rate), precision (61),
recall (62) and NSHD (63).

Ids (A1, A9, A13, B2) and [code] refer to the entries of docs/decisions/csl-ucb.md.

Data regime (A9; the paper does not say which data Figs. 2-5 used)
-------------------------------------------------------------------
``regime="interventional"`` (the default, A9-ii): CSL and CSL-nw see ``T`` rounds in which
every round plays a uniformly random arm (each node intervened on independently w.p. 1/2),
and learn mode 0 from the rounds in which node ``i`` was not intervened on (about ``T/2``
samples per sub-graph ``(i, 0)``). GOLEM and DAGMA assume one observational distribution and
get ``T`` observational samples (``a = 0``).

``regime="observational"`` (A9-i, the project's first plan): every method gets the same ``T``
observational samples.

Why the default departs from A9-i: on purely observational data CSL regresses
every node on all the others, its children included, which shrinks the coefficients of true
parents; the −log|B̂| term then tends to remove true edges, and CSL misses at least one true
edge in most small random graphs even with many samples (measured: graph-FN rate 75% over 20
systems at N = 6, T = 3000; 85% and recall 72% in the quick preset) -- far from the paper's
99.6% recall. On random-intervention data CSL almost never misses an edge (full preset:
graph-FN rate 4.8%, recall 99.6%). A plausible reason, not analysed further: each child of
node ``i`` follows its interventional mechanism in about half of node ``i``'s mode-0 rounds,
which weakens the children's pull on the regression of ``x_i``. The paper's sub-graph
argument (CSL learns from the per-(node, mode) data of a bandit run) also points to this
regime. Both regimes are available (catalogue: ``csl-ucb-e1`` and
``csl-ucb-e1-observational``); the report states which one ran. GOLEM's and DAGMA's numbers
do not depend on the regime (their data stream is the same).

Randomness: the library's one layout (:mod:`causalbandits.random`). The experiment is a
:class:`~causalbandits.experiments.grid.TaskGrid` over ``N`` (the setting ``s`` is the index
of ``N`` in ``nodes``) with the runs as replicates (tasks of ``chunk_size`` replicates; the
DAGMA fits of a task run as one batch). Replicate ``r`` draws its system from the stream
``(s, r, INSTANCE)``, its observational samples from ``(s, r, OBSERVATIONAL)``, its
interventional rounds (arms and samples) from ``(s, r, INTERVENTIONAL)``, and each CSL
variant's KSG jitter from ``(s, r, ESTIMATOR)`` derived by ``stable_hash(method)`` and ``T``.
Every sample size and method of a replicate sees the same system, and the samples for
``T = 200`` are the first 200 of the ``T = 400`` draw (common random numbers across ``T``).
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from causalbandits.envs.random_systems import random_soft_intervention_sem
from causalbandits.estimators.csl import learn_graph, learn_subgraphs
from causalbandits.estimators.structure_learning import dagma_linear_batch, golem_ev, graph_metrics
from causalbandits.estimators.subgraph import SubgraphData
from causalbandits.experiments.evidence import PairedComparison, replicate_table
from causalbandits.experiments.grid import TaskGrid
from causalbandits.experiments.metrics import summarise
from causalbandits.experiments.plots import error_lines, panel_figure, save_figure
from causalbandits.experiments.report import (
    Claim,
    claims_table,
    in_order,
    markdown_document,
    markdown_table,
    section,
)
from causalbandits.papers.csl_ucb.bandits import percent
from causalbandits.random import Stream, derive, stable_hash
from causalbandits.scm.linear import LinearSEM

#: The paper's methods, in the order of the tables and plots.
METHODS = ("CSL", "CSL-nw", "GOLEM", "DAGMA")
#: ``"oracle"`` returns the true ``B`` (a check of the metric pipeline, not a paper method).
ALL_METHODS = (*METHODS, "oracle")
REGIMES = ("interventional", "observational")

PAPER_NODES = (6, 10, 14)
PAPER_SAMPLES = (200, 400)
PAPER_REPLICATES = 100
QUICK_NODES = (6, 10)
QUICK_SAMPLES = (200,)
QUICK_REPLICATES = 10

#: CSL weight ``w`` of eq. 25 per CSL variant.
CSL_WEIGHTS = {"CSL": 1.0, "CSL-nw": 0.0}
#: GOLEM-EV settings [code] (B2).
GOLEM_PARAMS = {"lambda1": 0.02, "lambda2": 5.0, "threshold": 0.3}

#: What the paper reports (Sec. VI-A; averages over all graph and sample sizes).
CLAIMS = {
    "recall": {"GOLEM": 0.927, "DAGMA": 0.938, "CSL": 0.996},
    "precision": {"GOLEM": 0.935, "DAGMA": 0.909, "CSL": 0.967},
    "fn_rate": {"CSL-nw": 1.0},
    "fn_reduction": {"GOLEM": 0.811, "DAGMA": 0.869},
}
#: Thresholds of our verdicts (project thresholds, not the paper's).
CSL_MIN_RECALL = 0.98
CSL_NW_MIN_FN_RATE = 0.9
MAX_FN_RATIO = 1 / 3

#: Long-table columns: the configuration of a row, then its metrics.
KEY_COLUMNS = ("experiment", "regime", "n_nodes", "samples", "replicate", "method")
METRIC_COLUMNS = ("fn_any", "precision", "recall", "nshd", "n_fn", "n_fp", "n_true", "n_est")
LABELS = {
    "fn_any": "graph-FN rate",
    "precision": "precision",
    "recall": "recall",
    "nshd": "NSHD",
}
#: What each data regime means (A9), stated in the report.
REGIME_TEXT = {
    "interventional": (
        "Data regime: **interventional** (the project's default; decisions: csl-ucb A9). "
        "CSL and CSL-nw learn B from T rounds of uniformly random arms, using for node i "
        "the rounds in which i was not intervened on (about T/2 per node); GOLEM and DAGMA "
        "get T observational samples. On purely observational data "
        "(`csl-ucb-e1-observational`) CSL misses true edges far more often: regressing a "
        "node on all others, children included, shrinks true-edge weights."
    ),
    "observational": (
        "Data regime: **observational** (decisions: csl-ucb A9): every method gets the "
        "same T observational samples (a = 0)."
    ),
}


@dataclass(frozen=True, kw_only=True)
class GraphIdentificationExperiment(TaskGrid):
    """E1: a task grid over the graph sizes ``nodes``, ``replicates`` independent runs each.

    Parameters
    ----------
    nodes: graph sizes ``N`` (the grid's axis).
    samples: sample sizes ``T`` (rounds, for the interventional regime).
    replicates: Monte-Carlo runs ``M`` per ``N`` (one random system each, shared by every
        ``T`` and method).
    regime: ``"interventional"`` or ``"observational"`` (module docstring).
    methods: a subset of :data:`ALL_METHODS`.
    seed: root seed.
    chunk_size: replicates per task (one DAGMA batch).
    k: KSG neighbours of CSL.
    preset: the generator's weight preset (``"authors"`` [code] or ``"paper"``).
    dagma_options: keyword arguments for :func:`dagma_linear_batch` (default: its defaults).
    name, description: catalogue name and one-line description.
    """

    nodes: tuple[int, ...] = PAPER_NODES
    samples: tuple[int, ...] = PAPER_SAMPLES
    replicates: int = PAPER_REPLICATES
    regime: str = "interventional"
    methods: tuple[str, ...] = METHODS
    seed: int = 2025
    chunk_size: int = 20
    k: int = 5
    preset: str = "authors"
    dagma_options: dict[str, Any] = field(default_factory=dict)
    name: str = "csl-ucb-e1"
    description: str = "CSL-UCB paper E1 (Figs. 2-5): graph identification, CSL vs GOLEM/DAGMA"

    def check(self) -> None:
        object.__setattr__(self, "nodes", tuple(int(n) for n in self.nodes))
        object.__setattr__(self, "samples", tuple(int(t) for t in self.samples))
        if not self.nodes or min(self.nodes) < 2 or len(set(self.nodes)) != len(self.nodes):
            raise ValueError(f"nodes must be distinct graph sizes >= 2, got {self.nodes}")
        if not self.samples or min(self.samples) < 2 or len(set(self.samples)) != len(self.samples):
            raise ValueError(f"samples must be distinct sizes >= 2, got {self.samples}")
        if self.regime not in REGIMES:
            raise ValueError(f"unknown regime {self.regime!r}; use one of {REGIMES}")
        self.distinct("methods", ALL_METHODS)

    def axes(self) -> Mapping[str, Sequence[Any]]:
        return {"n_nodes": self.nodes}

    def task_cost(self, point: Mapping[str, Any]) -> float:
        return float(point["n_nodes"])  # the largest graphs take longest

    def config(self) -> dict[str, Any]:
        """The fields plus the method constants that fix the numbers."""
        csl = {m: CSL_WEIGHTS[m] for m in self.methods if m in CSL_WEIGHTS}
        return {**super().config(), "golem": dict(GOLEM_PARAMS), "csl_weights": csl}

    def system(self, setting: int, replicate: int) -> LinearSEM:
        """The random system of ``replicate`` at grid point ``setting`` (A1; stream
        ``INSTANCE``), shared by every sample size and method."""
        n = int(self.points()[setting]["n_nodes"])
        rng = self.generator(setting, replicate, Stream.INSTANCE)
        return random_soft_intervention_sem(n, rng, self.preset)

    def ksg_generator(
        self, setting: int, replicate: int, method: str, samples: int
    ) -> np.random.Generator:
        """The KSG jitter of CSL variant ``method`` at sample size ``samples`` (stream
        ``ESTIMATOR``, derived by the method's label and ``samples``)."""
        seeds = self.seeds(setting, [replicate], Stream.ESTIMATOR)
        (seed,) = derive(derive(seeds, stable_hash(method)), samples)
        return np.random.default_rng(seed)

    def run_chunk(self, point: Mapping[str, Any], setting: int, replicates: range) -> pd.DataFrame:
        """The rows of ``replicates`` at ``N = point["n_nodes"]``."""
        rows = self._rows(setting, replicates)
        return pd.DataFrame(rows, columns=[*KEY_COLUMNS, *METRIC_COLUMNS, "node_samples"])

    def _rows(self, setting: int, replicates: range) -> list[tuple]:
        fits = [fit for r in replicates for fit in self._fits(setting, r)]
        dagma = [i for i, (key, *_) in enumerate(fits) if key[-1] == "DAGMA"]
        if dagma:  # all DAGMA fits of the task in one batch
            estimates = dagma_linear_batch([fits[i][2] for i in dagma], **self.dagma_options)
            for i, b_hat in zip(dagma, estimates, strict=True):
                fits[i] = (*fits[i][:2], b_hat, fits[i][3])
        metrics = operator.itemgetter(*METRIC_COLUMNS)
        return [
            (*key, *metrics(graph_metrics(b_true, b_hat)), used)
            for key, b_true, b_hat, used in fits
        ]

    def _fits(self, setting: int, r: int) -> list[tuple]:
        """Per sample size and method of replicate ``r``: the row's key, the true ``B``, its
        estimate (DAGMA: the data it is fitted to, later) and the samples used per node."""
        sem = self.system(setting, r)
        horizon, n = max(self.samples), sem.n_nodes
        no_arm = np.zeros((horizon, n), dtype=bool)
        observational = sem.sample(no_arm, self.generator(setting, r, Stream.OBSERVATIONAL))
        if self.regime == "interventional":
            rng = self.generator(setting, r, Stream.INTERVENTIONAL)
            masks = rng.random((horizon, n)) < 0.5  # a uniformly random arm every round
            rounds = sem.sample(masks, rng)
        fits = []
        for samples in self.samples:
            x_obs = observational[:samples]
            for method in self.methods:
                used = float(samples)
                if method in CSL_WEIGHTS:
                    ksg = self.ksg_generator(setting, r, method, samples)
                    options = {"k": self.k, "weight": CSL_WEIGHTS[method], "rng": ksg}
                    if self.regime == "interventional":
                        data = SubgraphData(n, sem.noise.mean)
                        data.extend(rounds[:samples], masks[:samples])
                        b_hat = learn_subgraphs(data, 0, **options).adjacency
                        used = float(data.counts[:, 0].mean())
                    else:
                        b_hat = learn_graph(x_obs, sem.noise.mean, **options).adjacency
                elif method == "GOLEM":
                    b_hat = golem_ev(x_obs, **GOLEM_PARAMS)
                else:  # DAGMA: fitted by _rows; the oracle: the truth
                    b_hat = x_obs if method == "DAGMA" else sem.weights
                key = (self.name, self.regime, n, samples, r, method)
                fits.append((key, sem.weights, b_hat, used))
        return fits

    def plot(self, df: pd.DataFrame, out_dir: Path) -> list[Path]:
        """Graph-FN rate, recall, precision and NSHD vs ``N``: one panel per ``T``."""
        title = f"CSL-UCB paper, E1 ({'/'.join(sorted(set(df['regime'])))} regime)"
        names = {"fn_any": "fn_rate", "recall": "recall", "precision": "precision", "nshd": "nshd"}
        return [
            plot_metric_vs_nodes(df, metric, Path(out_dir) / f"{name}_vs_n.png", title=title)
            for metric, name in names.items()
        ]

    def report(self, df: pd.DataFrame) -> str:
        return build_report(df, self.dagma_options)


def e1(quick: bool = False) -> GraphIdentificationExperiment:
    """E1 (Figs. 2-5): graph identification, N in {6, 10, 14}, T in {200, 400}, 100 runs."""
    if quick:
        return GraphIdentificationExperiment(
            nodes=QUICK_NODES, samples=QUICK_SAMPLES, replicates=QUICK_REPLICATES
        )
    return GraphIdentificationExperiment()


def e1_observational(quick: bool = False) -> GraphIdentificationExperiment:
    """E1 on observational data for every method (A9-i)."""
    return replace(
        e1(quick),
        regime="observational",
        name="csl-ucb-e1-observational",
        description="CSL-UCB paper E1 on observational data for all methods (A9-i)",
    )


# -------------------------------------------------------------------- summaries


def _method_order(df: pd.DataFrame) -> list[str]:
    return in_order(ALL_METHODS, df["method"])


def fn_rate_per_system(df: pd.DataFrame) -> pd.DataFrame:
    """The graph-FN rate over the sample sizes per system (rows: ``N`` and replicate) and
    method (columns): a system's sample sizes share its data (common random numbers), so the
    systems, not the (system, T) rows, are the independent replicates."""
    frame = df.assign(fn_any=df["fn_any"].astype(float))
    return replicate_table(frame, "fn_any", ["n_nodes"], key="method")


def summarise_graphs(df: pd.DataFrame, by: Sequence[str] = ("n_nodes", "samples", "method")):
    """Per group: replicates, and mean and standard error of each metric (``fn_any`` mean =
    rate)."""
    frame = df.assign(fn_any=df["fn_any"].astype(float))
    return summarise(frame, list(by), metrics=list(LABELS))


def plot_metric_vs_nodes(
    df: pd.DataFrame, metric: str, out_path: str | Path, title: str | None = None
) -> Path:
    """``metric`` (mean over replicates, 95% error bars) vs ``N``: one line per method, one
    panel per sample size ``T``."""
    summary = summarise_graphs(df)
    sizes = sorted(summary["samples"].unique())
    figure, axes = panel_figure(1, len(sizes), (4.4, 3.6), sharey=True)
    for ax, samples in zip(axes, sizes, strict=True):
        rows = summary[summary["samples"] == samples]
        lines = {method: rows[rows["method"] == method] for method in _method_order(df)}
        error_lines(ax, lines, "n_nodes", metric)
        ax.set_title(f"T = {samples}", fontsize="medium")
        ax.set_xlabel("number of nodes N")
        ax.set_xticks(sorted(summary["n_nodes"].unique()))
    axes[0].set_ylabel(LABELS[metric])
    axes[0].legend(fontsize="small")
    if title:
        figure.suptitle(title)
    return save_figure(figure, out_path)


# -------------------------------------------------------------------- report


def build_report(df: pd.DataFrame, dagma_options: dict[str, Any] | None = None) -> str:
    """Per (N, T) and method, averages beside the paper's, and a verdict per claim.

    ``dagma_options``: overrides of DAGMA's defaults used by the run (named in the text).
    """
    dagma = "package defaults"
    if dagma_options:
        dagma += " except " + ", ".join(f"{k} = {v}" for k, v in sorted(dagma_options.items()))
    methods = _method_order(df)
    rank = {m: i for i, m in enumerate(methods)}
    cells = summarise_graphs(df).sort_values(
        ["n_nodes", "samples", "method"], key=lambda c: c.map(rank) if c.name == "method" else c
    )
    overall = summarise_graphs(df, by=("method",)).set_index("method")
    regimes = sorted(set(df["regime"]))
    per_cell = [
        [row.n_nodes, row.samples, row.method, f"{row.fn_any_mean:.1%}"]
        + [f"{row.precision_mean:.3f}", f"{row.recall_mean:.3f}", f"{row.nshd_mean:.4f}"]
        for row in cells.itertuples()
    ]
    averages = [
        [
            method,
            f"{row['fn_any_mean']:.1%} "
            f"({'lowest' if method == 'CSL' else percent(CLAIMS['fn_rate'].get(method))})",
            f"{row['precision_mean']:.1%} ({percent(CLAIMS['precision'].get(method))})",
            f"{row['recall_mean']:.1%} ({percent(CLAIMS['recall'].get(method))})",
            f"{row['nshd_mean']:.4f}",
        ]
        for method, row in overall.loc[methods].iterrows()
    ]
    averages_header = ["method", "graph-FN rate (paper)", "precision (paper)", "recall (paper)"]
    return markdown_document(
        "# CSL-UCB paper, E1 (graph identification, Figs. 2-5): our results beside the paper's",
        f"{df['replicate'].nunique()} replicates (random systems) per (N, T); "
        f"N in {{{', '.join(map(str, sorted(df['n_nodes'].unique())))}}}, "
        f"T in {{{', '.join(map(str, sorted(df['samples'].unique())))}}}; the authors' "
        "generator (decisions: csl-ucb A1), noise N(1, 1); estimating B (mode 0). "
        "CSL: w = 1, k = 5; CSL-nw: "
        f"w = 0; GOLEM-EV: lambda1 = 0.02, lambda2 = 5, threshold 0.3; DAGMA: {dagma}.",
        REGIME_TEXT[regimes[0]] if len(regimes) == 1 else f"Data regimes: {regimes}.",
        section("Per (N, T)", markdown_table(["N", "T", "method", *LABELS.values()], per_cell)),
        section("Averages over all (N, T)", markdown_table([*averages_header, "NSHD"], averages)),
        section("The paper's claims", claims_table(claim_checks(df))),
    )


def claim_checks(df: pd.DataFrame) -> list[Claim]:
    """One :class:`Claim` for each claim the present methods can check: properties (a share,
    a trend) and CSL's graph-FN rate against a third of another method's, paired over the
    systems."""
    overall = summarise_graphs(df, by=("method",)).set_index("method")
    present = set(overall.index)
    checks: list[Claim] = []
    if "CSL" in present:
        recall = overall.loc["CSL", "recall_mean"]
        paper = CLAIMS["recall"]["CSL"]
        text = f"CSL's average recall {paper:.1%} (check: >= {CSL_MIN_RECALL:.0%})"
        checks.append(
            Claim.check(text, f"{recall:.1%}", bool(recall >= CSL_MIN_RECALL), f"{paper:.1%}")
        )
    if "CSL-nw" in present:
        rate = overall.loc["CSL-nw", "fn_any_mean"]
        paper = CLAIMS["fn_rate"]["CSL-nw"]
        text = f"CSL-nw's graph-FN rate 100% (check: >= {CSL_NW_MIN_FN_RATE:.0%})"
        checks.append(
            Claim.check(text, f"{rate:.1%}", bool(rate >= CSL_NW_MIN_FN_RATE), f"{paper:.0%}")
        )
    per_system = fn_rate_per_system(df)
    for other, paper in CLAIMS["fn_reduction"].items():
        if not {"CSL", other} <= present:
            continue
        csl, base = overall.loc["CSL", "fn_any_mean"], overall.loc[other, "fn_any_mean"]
        text = f"CSL's graph-FN rate {paper:.1%} lower than {other}'s (check: at most 1/3 of it)"
        if base == 0:
            ours = f"CSL {csl:.1%}, {other} 0.0%"
            checks.append(Claim.check(text, ours, None, f"{paper:.1%} lower"))
            continue
        change = 1 - csl / base
        direction = f"{change:.1%} lower" if change >= 0 else f"{-change:.1%} higher"
        versus = PairedComparison.of(
            per_system["CSL"] - MAX_FN_RATIO * per_system[other], direction=-1
        )
        checks.append(
            Claim.compare(
                text,
                versus,
                paper=f"{paper:.1%} lower",
                ours=f"{direction} (CSL {csl:.1%}, {other} {base:.1%}); CSL - {other} / 3: "
                f"{versus.describe()}",
                test_prefix="per system, its rate over the sample sizes; ",
            )
        )
    nodes = sorted(df["n_nodes"].unique())
    if len(nodes) < 2:
        return checks
    by_n = summarise_graphs(df, by=("method", "n_nodes")).set_index(["method", "n_nodes"])
    small, large = nodes[0], nodes[-1]
    for method in in_order(("CSL", "GOLEM", "DAGMA"), present):
        low = float(by_n.loc[(method, small), "recall_mean"])
        high = float(by_n.loc[(method, large), "recall_mean"])
        ours = f"N = {small}: {low:.3f}, N = {large}: {high:.3f}"
        if method == "CSL":
            text = (
                "CSL's recall does not decrease with N (check: recall at the largest N >= "
                "at the smallest - 0.01)"
            )
            checks.append(Claim.check(text, ours, bool(high >= low - 0.01)))
        else:
            text = f"{method}'s recall decreases as N grows"
            checks.append(Claim.check(text, ours, bool(high < low)))
    return checks
