"""Tuning runs and sensitivities of the NDC-SEM synthetic experiment, as catalogue entries.

The paper tunes ``lambda`` of eq. 9 "by grid search over [1e-5, 1e6]" without the grid,
criterion or value. :class:`LambdaTuning` runs NDC-SEM for every value of the decade grid on
instances and reward seeds disjoint from the reported ones (root seed
:data:`~causalbandits.papers.ndc_sem.paper.TUNING_SEED`); :func:`choose_lambda` picks the
value with the lowest time-averaged ``MSE(A_hat)``.

Table I's ``xi`` were tuned by the authors on their own instance, whose ``beta`` schedule is
not given in numbers. :class:`XiTuning` repeats that tuning on our tuning instances (lowest
mean final regret per delay, :func:`choose_xi`) and :class:`TunedXi` evaluates with the
tuned values on the reported seeds: a sensitivity beside the Table I run, not a
replacement. The presets in :data:`EXPERIMENTS` also run the instance sensitivities (one
instance for all replicates, all arms redrawn, the incumbent optimal arms' means dropping at
each change point with Table I's and re-tuned ``xi``) and the ``count_pending`` variant of
NDC-SEM (not in the paper), each through ``causalbandits reproduce NAME``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from causalbandits.experiments.grid import Grid
from causalbandits.experiments.metrics import final
from causalbandits.experiments.report import (
    Claim,
    claims_table,
    markdown_document,
    markdown_table,
    pm_table,
    standard_error,
)
from causalbandits.papers.ndc_sem.paper import (
    ALGORITHMS,
    EVALUATION_SEED,
    PAPER_XI,
    PENDING,
    TUNED_XI,
    TUNING_SEED,
)
from causalbandits.papers.ndc_sem.synthetic import SyntheticExperiment, synthetic
from causalbandits.papers.ndc_sem.synthetic_report import per_delay

#: The paper's lambda grid: decades 1e-5 ... 1e6 (Sec. V-A; decisions: ndc-sem 2).
LAMBDA_GRID = tuple(10.0 ** np.arange(-5, 7))
#: ``xi`` values tried per delay: Table I's three, their neighbours and Theorem 1's range.
XI_GRID = (0.0, 1e-18, 1e-14, 1e-10, 1e-6, 1e-3, 1e-1)
#: Tuning instances per delay (quick: 2), and the grids of the quick presets.
TUNING_REPLICATES = 10
QUICK_LAMBDA_GRID = (1e-4, 1e-2, 1.0, 100.0)
QUICK_XI_GRID = (0.0, 1e-10, 1e-6, 1e-1)
#: The largest lambda at which the synthetic report reads the final regret as flat.
FLAT_LAMBDA = 0.1


# -------------------------------------------------------------------- lambda


def lambda_runs(df: pd.DataFrame) -> pd.DataFrame:
    """Per (delay, lam, replicate): the final regret, the time-averaged and final
    ``MSE(A_hat)`` (over the checkpoints)."""
    grouped = df.groupby(["delay", "lam", "replicate"])
    return pd.DataFrame(
        {
            "final_regret": grouped["cum_regret"].last(),
            "mean_mse": grouped["a_mse"].mean(),
            "final_mse": grouped["a_mse"].last(),
        }
    ).reset_index()


def choose_lambda(tuning: pd.DataFrame) -> float:
    """The ``lambda`` with the lowest time-averaged ``MSE(A_hat)`` over delays and replicates
    (the criterion of decisions: ndc-sem 2, which measures what lambda controls; regret is flat
    for small lambda); ties go to the smaller value."""
    score = tuning.groupby("lam")["mean_mse"].mean().sort_index()
    return float(score.idxmin())


def tuning_summary(tuning: pd.DataFrame) -> pd.DataFrame:
    """Mean final regret (± se) and MSEs per (delay, lam)."""
    grouped = tuning.groupby(["delay", "lam"])
    out = grouped.agg(
        final_regret=("final_regret", "mean"),
        regret_se=("final_regret", standard_error),
        replicates=("final_regret", "size"),
        mean_mse=("mean_mse", "mean"),
        final_mse=("final_mse", "mean"),
    ).reset_index()
    return out[["delay", "lam", "final_regret", "replicates", "mean_mse", "final_mse", "regret_se"]]


def flat_regret(summary: pd.DataFrame, chosen: float) -> Claim:
    """Is the final regret of every ``lambda <= FLAT_LAMBDA`` within two standard errors of
    the chosen value's, at every delay?"""
    table = summary.set_index(["delay", "lam"])
    worst = 0.0
    for (delay, lam), row in table.iterrows():
        if lam <= FLAT_LAMBDA:
            ref = table.loc[(delay, chosen)]
            spread = np.hypot(row["regret_se"], ref["regret_se"])
            worst = max(worst, abs(row["final_regret"] - ref["final_regret"]) / spread)
    return Claim.check(
        f"final regret flat for lambda <= {FLAT_LAMBDA:g} (within 2 se of lambda = {chosen:g})",
        f"largest gap {worst:.1f} se",
        bool(worst <= 2.0),
        test="property: the largest absolute mean difference over delays, in unpaired se "
        "(hypot of the two), at most 2",
    )


def lambda_report(tuning: pd.DataFrame) -> str:
    """Markdown of :func:`tuning_summary` with the value :func:`choose_lambda` picks."""
    summary = tuning_summary(tuning)
    chosen = choose_lambda(tuning)
    overall = tuning.groupby("lam")["mean_mse"].mean()
    delays = sorted(summary["delay"].unique())
    cells = pm_table(tuning, "lam", "delay", "final_regret")
    rows = [[f"{lam:g}", f"{overall.loc[lam]:.2e}", *row] for lam, row in cells.iterrows()]
    header = ["lambda", "time-averaged MSE (all D)", *(f"final regret D = {d}" for d in delays)]
    return markdown_document(
        "# NDC-SEM synthetic experiment: the lasso penalty lambda (eq. 9)",
        f"NDC-SEM (Table I gamma and xi) on {int(summary['replicates'].max())} tuning instances "
        f"and reward seeds per delay (root seed {TUNING_SEED}; the reported runs use "
        f"{EVALUATION_SEED}), one run per lambda of the grid. Criterion (decisions: ndc-sem 2): "
        "the lowest time-averaged MSE(A_hat) = ||A - A_hat||_F^2 / N^2 over the checkpoints, "
        f"averaged over delays and instances. Chosen: **lambda = {chosen:g}**.",
        markdown_table(header, rows),
        claims_table([flat_regret(summary, chosen)]),
    )


@dataclass(frozen=True, kw_only=True)
class LambdaTuning(SyntheticExperiment):
    """The synthetic experiment over ``lam_grid``; tables, no figures, the choice report."""

    FIGURES = None

    def write_tables(self, df: pd.DataFrame, out_dir: Path) -> list[Path]:
        runs = lambda_runs(df)
        paths = [Path(out_dir) / "lambda_tuning_runs.csv", Path(out_dir) / "lambda_tuning.csv"]
        runs.to_csv(paths[0], index=False)
        tuning_summary(runs).to_csv(paths[1], index=False)
        return [*super().write_tables(df, out_dir), *paths]

    def report(self, df: pd.DataFrame) -> str:
        return lambda_report(lambda_runs(df))


# -------------------------------------------------------------------- xi


def xi_runs(df: pd.DataFrame) -> pd.DataFrame:
    """The final regret per (delay, xi, replicate)."""
    last = final(df)
    return last[["delay", "replicate", "xi"]].assign(final_regret=last["cum_regret"].to_numpy())


def choose_xi(tuning: pd.DataFrame) -> dict[int, float]:
    """Per delay, the ``xi`` with the lowest mean final regret (ties: the smaller ``xi``)."""
    means = tuning.groupby(["delay", "xi"])["final_regret"].mean().sort_index()
    return {int(d): float(group.idxmin()[1]) for d, group in means.groupby(level="delay")}


def xi_report(tuning: pd.DataFrame, algorithm: str, change: str = "redraw") -> str:
    """Markdown: ``algorithm``'s mean final regret (± se) per (xi, delay) on the tuning
    instances (means changing as ``change`` says), Table I's and the chosen values."""
    variant = (
        ""
        if algorithm == "NDC-SEM"
        else " (not in the paper: the padding of eq. 11 also counts the plays in flight)"
    )
    chosen = choose_xi(tuning)
    delays = sorted(chosen)
    cells = pm_table(tuning, "xi", "delay", "final_regret")
    rows = [[f"{xi:g}", *row] for xi, row in cells.iterrows()]
    replicates = int(tuning.groupby(["xi", "delay"]).size().max())
    return markdown_document(
        f"# NDC-SEM synthetic experiment: the exploration constant xi (eq. 11) of {algorithm}",
        f"{algorithm}{variant}, gamma and lambda of the main run, on {replicates} tuning "
        f"instances per delay (mean schedule: change = {change}; root seed {TUNING_SEED}; the "
        f"reported runs use {EVALUATION_SEED}), final regret at T (mean ± standard error). "
        f"Table I: {per_delay(PAPER_XI)}. Lowest mean regret: "
        + ", ".join(f"D = {d}: **{chosen[d]:g}**" for d in delays)
        + ".",
        markdown_table(["xi", *(f"D = {d}" for d in delays)], rows),
    )


@dataclass(frozen=True, kw_only=True)
class XiTuning(SyntheticExperiment):
    """One algorithm (NDC-SEM or its pending variant) over ``xi_grid``; the choice report."""

    FIGURES = None

    def write_tables(self, df: pd.DataFrame, out_dir: Path) -> list[Path]:
        path = Path(out_dir) / "xi_tuning_runs.csv"
        xi_runs(df).to_csv(path, index=False)
        return [*super().write_tables(df, out_dir), path]

    def report(self, df: pd.DataFrame) -> str:
        return xi_report(xi_runs(df), self.algorithms[0], self.change)


@dataclass(frozen=True, kw_only=True)
class TunedXi(SyntheticExperiment):
    """The synthetic experiment with ``xi`` chosen by ``tuning`` (run first, into
    ``out_dir/xi-tuning``): the chosen values are those of :data:`~causalbandits.papers.
    ndc_sem.paper.TUNED_XI` when it is among the algorithms (beside Table I's NDC-SEM), else
    they replace ``xi``; the report shows the ``xi`` used."""

    tuning: XiTuning

    def run(self, out_dir: str | Path, **options: Any) -> pd.DataFrame:
        tuned = choose_xi(xi_runs(self.tuning.run(Path(out_dir) / "xi-tuning", **options)))
        target = "tuned_xi" if TUNED_XI in self.algorithms else "xi"
        setup = dataclasses.replace(self, **{target: tuned})
        return super(TunedXi, setup).run(out_dir, **options)


# -------------------------------------------------------------------- presets


def _tuning(quick: bool, label: str, kind: type[Grid], **changes: Any) -> Grid:
    """NDC-SEM on the tuning instances (root seed :data:`~causalbandits.papers.ndc_sem.paper.
    TUNING_SEED`), named ``<synthetic>-<label>-tuning``, with ``changes``."""
    tuning = {"seed": TUNING_SEED, "replicates": 2 if quick else TUNING_REPLICATES}
    tuning |= {"algorithms": ("NDC-SEM",), **changes}
    description = f"NDC-SEM synthetic experiment: {label} tuning on the tuning instances"
    return synthetic(quick).variant(f"{label}-tuning", description, kind, **tuning)


def lambda_tuning(quick: bool = False) -> LambdaTuning:
    """NDC-SEM for every lambda of the decade grid on the tuning instances."""
    grid = QUICK_LAMBDA_GRID if quick else LAMBDA_GRID
    return _tuning(quick, "lambda", LambdaTuning, lam_grid=grid)


def xi_tuning(quick: bool = False, algorithm: str = "NDC-SEM", change: str = "redraw") -> XiTuning:
    """``algorithm`` for every xi of the grid (the same at every delay), tuning instances
    whose means change as ``change`` says."""
    label = "xi" if algorithm == "NDC-SEM" else "xi-pending"
    if change != "redraw":
        label = f"{change}-{label}"
    grid = QUICK_XI_GRID if quick else XI_GRID
    return _tuning(quick, label, XiTuning, algorithms=(algorithm,), xi_grid=grid, change=change)


def _variant(quick: bool, label: str, what: str, kind: type[Grid], **changes: Any) -> Grid:
    """The synthetic experiment with ``changes``, named ``<synthetic>-<label>``."""
    description = f"NDC-SEM synthetic experiment, sensitivity: {what}"
    return synthetic(quick).variant(label, description, kind, **changes)


def xi_tuned(quick: bool = False) -> TunedXi:
    """NDC-SEM with xi tuned per delay (and SEM-UCB), on the reported seeds."""
    algorithms = ("NDC-SEM", "SEM-UCB")
    return _variant(
        quick, "xi", "xi tuned per delay", TunedXi, algorithms=algorithms, tuning=xi_tuning(quick)
    )


def pending_counts(quick: bool = False) -> TunedXi:
    """NDC-SEM whose padding counts the plays in flight (not the paper's), its xi tuned the
    same way, beside SEM-UCB."""
    what = "NDC-SEM counting pending plays (not the paper's), xi tuned"
    tuning = xi_tuning(quick, PENDING)
    return _variant(quick, "pending", what, TunedXi, algorithms=(PENDING, "SEM-UCB"), tuning=tuning)


def fixed_instance(quick: bool = False) -> SyntheticExperiment:
    """One instance shared by all replicates (the paper's single Fig. 5 schedule)."""
    what = "one instance for all replicates"
    return _variant(quick, "fixed", what, SyntheticExperiment, instances="fixed")


def all_arms_redrawn(quick: bool = False) -> SyntheticExperiment:
    """Every arm gets new means at each change point (the default redraws half)."""
    what = "all arms redrawn at each change point"
    n_arms = synthetic(quick).n_arms
    return _variant(quick, "redraw-all", what, SyntheticExperiment, n_redraw=n_arms)


def incumbent_drop(quick: bool = False) -> TunedXi:
    """The incumbent optimal arms' means drop at each change point (``change=
    "incumbent-drop"``): the paper's algorithms with Table I's xi, and NDC-SEM with xi
    re-tuned on incumbent-drop tuning instances (:data:`~causalbandits.papers.ndc_sem.paper.
    TUNED_XI`)."""
    what = "the incumbent optimal arms' means drop at each change point; Table I's and tuned xi"
    algorithms = (ALGORITHMS[0], TUNED_XI, *ALGORITHMS[1:])
    tuning = xi_tuning(quick, change="incumbent-drop")
    options = {"algorithms": algorithms, "change": "incumbent-drop", "tuning": tuning}
    return _variant(quick, "incumbent-drop", what, TunedXi, **options)


EXPERIMENTS: dict[str, Callable[[bool], Any]] = {
    "ndc-sem-synthetic-lambda-tuning": lambda_tuning,
    "ndc-sem-synthetic-xi-tuning": xi_tuning,
    "ndc-sem-synthetic-xi-tuning-pending": lambda quick: xi_tuning(quick, PENDING),
    "ndc-sem-synthetic-xi-tuned": xi_tuned,
    "ndc-sem-synthetic-pending-counts": pending_counts,
    "ndc-sem-synthetic-fixed-instance": fixed_instance,
    "ndc-sem-synthetic-all-arms-redrawn": all_arms_redrawn,
    "ndc-sem-synthetic-incumbent-drop": incumbent_drop,
    "ndc-sem-synthetic-incumbent-drop-xi-tuning": lambda quick: xi_tuning(
        quick, change="incumbent-drop"
    ),
}
