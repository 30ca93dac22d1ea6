"""Robust-LCB (Yan, Mukherjee, Varici, Tajer; arXiv 2405.07795): Fig. 1(b) and Fig. 1(c).

The paper reports curves only (no numbers); its claims are encoded in :data:`CLAIMS` and
checked by :meth:`RobustLCBExperiment.report` against our results.

Deviation design. The paper says only that deviations come "at earlier rounds to simulate
the worst case for a given C" and alter the weights "to change the optimal action" (decisions:
robust-lcb A6). The first plan's default (every intervened column negated in the first
``C/2`` rounds) lets both
baselines recover within a few thousand rounds in our runs, far from the "nearly the worst
possible regret" the paper shows. The preset therefore uses a design that spends the same
budget the way an adversary would (measured in docs/reproductions/robust-lcb.md): the
interventional columns are negated depth by depth, the reward node first and then its
parents, each group for at most 16 rounds (the number of arms) with a per-round deviation
``max(2, C/16)``. The accountant checks that eq. 6 totals exactly ``C``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from causalbandits.envs.robust_lcb import make_environment
from causalbandits.experiments.evidence import (
    PairedComparison,
    against_best_other,
    replicate_table,
    weakest,
)
from causalbandits.experiments.metrics import final
from causalbandits.experiments.plots import plot_final_vs_parameter, plot_regret_curves
from causalbandits.experiments.protocol import SpecExperiment
from causalbandits.experiments.report import (
    Claim,
    claims_table,
    markdown_document,
    markdown_table,
    pm_table,
)
from causalbandits.experiments.spec import AlgorithmSpec, ExperimentSpec

PAPER_HORIZON = 40000
PAPER_REPLICATES = 100
PAPER_BUDGETS = (2, 5, 15, 50, 200, 500, 2000)
QUICK_HORIZON = 10000
QUICK_REPLICATES = 20

#: Environment parameters of the paper preset (see the module docstring).
PAPER_DEVIATIONS = {"design": "negate", "by_depth": True, "max_rounds": 16}

ALGORITHMS = (
    AlgorithmSpec("Robust-LCB", "robust-lcb"),
    AlgorithmSpec("LinSEM-UCB", "linsem-ucb"),
    AlgorithmSpec("UCB", "ucb"),
)

#: What the paper reports (Section VI, text and Fig. 1; no numbers are printed).
CLAIMS = {
    "fig1b": [
        "only Robust-LCB achieves sub-linear regret at C = sqrt(T); the others are linear",
        "LinSEM-UCB exhibits nearly the worst possible regret",
        "ranking: Robust-LCB << UCB, LinSEM-UCB",
    ],
    "fig1c": [
        "at C ~ 0 LinSEM-UCB and UCB are slightly better than Robust-LCB",
        "both baselines begin to fail at C = 15",
        "both baselines reach nearly the worst possible regret at C = 200",
        "Robust-LCB outperforms when the deviation is more than negligible",
        "Robust-LCB's regret grows smoothly with C",
    ],
}


def worst_case_regret(horizon: int) -> float:
    """``T (mu* - min_a mu_a)`` of the paper's environment (about 124,641 at T = 40000)."""
    rewards = make_environment(horizon=1, deviation_budget=0).expected_rewards
    return float(horizon * (rewards.max() - rewards.min()))


@dataclass(frozen=True)
class RobustLCBExperiment(SpecExperiment):
    """One figure of the paper: its spec, plots and report."""

    figure: str = ""

    def plot(self, df: pd.DataFrame, out_dir: Path) -> list[Path]:
        out_dir = Path(out_dir)
        title = f"Robust-LCB paper, {self.figure} (T = {self.spec.horizon})"
        paths = [plot_regret_curves(df, out_dir / "regret_curves.png", title=title)]
        if len(self.spec.settings) > 1:
            paths.append(
                plot_final_vs_parameter(
                    df, "deviation_budget", out_dir / "regret_vs_budget.png", title=title
                )
            )
        return paths

    def report(self, df: pd.DataFrame) -> str:
        return build_report(self.figure, self.spec, df)


def _spec(name: str, budgets: list[float], quick: bool, description: str) -> ExperimentSpec:
    return ExperimentSpec(
        name=name,
        environment="robust-lcb",
        env_params=dict(PAPER_DEVIATIONS),
        settings=[{"deviation_budget": float(c)} for c in budgets],
        algorithms=list(ALGORITHMS),
        horizon=QUICK_HORIZON if quick else PAPER_HORIZON,
        replicates=QUICK_REPLICATES if quick else PAPER_REPLICATES,
        seed=2024,
        chunk_size=QUICK_REPLICATES if quick else PAPER_REPLICATES,
        checkpoints=100 if quick else 200,
        sweep="deviation_budget" if len(budgets) > 1 else None,
        description=description,
    )


def fig1b(quick: bool = False) -> RobustLCBExperiment:
    """Fig. 1(b): cumulative regret vs t at C = sqrt(T) (T = 40000, C = 200)."""
    horizon = QUICK_HORIZON if quick else PAPER_HORIZON
    budget = float(np.sqrt(horizon))
    spec = _spec(
        "robust-lcb-fig1b", [budget], quick, "Robust-LCB Fig. 1(b): regret vs t at C = sqrt(T)"
    )
    return RobustLCBExperiment(spec, "Fig. 1(b)")


def fig1c(quick: bool = False) -> RobustLCBExperiment:
    """Fig. 1(c): cumulative regret at T = 40000 vs C in {2, 5, 15, 50, 200, 500, 2000}."""
    spec = _spec(
        "robust-lcb-fig1c",
        list(PAPER_BUDGETS),
        quick,
        "Robust-LCB Fig. 1(c): regret at T vs the deviation budget C",
    )
    return RobustLCBExperiment(spec, "Fig. 1(c)")


def _late_slopes(df: pd.DataFrame, budget: float) -> pd.DataFrame:
    """Regret per round over the last quarter of the horizon, per replicate (rows) and
    algorithm (columns); the mean over replicates is the slope of the mean curve."""
    rows = df[df["deviation_budget"] == budget]
    curves = rows.pivot_table(index="t", columns=["algorithm", "replicate"], values="cum_regret")
    t_end = curves.index.max()
    t_start = curves.index[curves.index >= 0.75 * t_end].min()
    slopes = (curves.loc[t_end] - curves.loc[t_start]) / max(t_end - t_start, 1)
    return slopes.unstack("algorithm")


def build_report(figure: str, spec: ExperimentSpec, df: pd.DataFrame) -> str:
    """Our regret at T beside the paper's claims, with a verdict per checkable claim."""
    worst = worst_case_regret(spec.horizon)
    last = final(df)
    means = last.pivot_table(index="deviation_budget", columns="algorithm", values="cum_regret")
    cells = pm_table(last, "deviation_budget", "algorithm", "cum_regret")
    header = ["C", *(f"{a} regret at T (± se)" for a in cells.columns)]
    rows = [[f"{c:g}", *row] for c, row in cells.iterrows()]
    return markdown_document(
        f"# Robust-LCB paper, {figure}: our results beside the paper's",
        f"T = {spec.horizon}, {spec.replicates} replicates, deviations: {PAPER_DEVIATIONS}; "
        f"worst possible cumulative regret {worst:,.0f}.",
        markdown_table(header, rows),
        claims_table(_checks(figure, spec, df, means, worst)),
    )


def _checks(
    figure: str, spec: ExperimentSpec, df: pd.DataFrame, means: pd.DataFrame, worst: float
) -> list[Claim]:
    robust, linsem, ucb = means["Robust-LCB"], means["LinSEM-UCB"], means["UCB"]
    gap = worst / spec.horizon
    by_replicate = replicate_table(final(df), "cum_regret", ["deviation_budget"])
    checks = []
    if figure == "Fig. 1(b)":
        c = means.index[0]
        slopes = _late_slopes(df, c)
        slope_text = ", ".join(f"{a} {s / gap:.1%}" for a, s in slopes.mean().items())
        flattest, slope_vs = against_best_other(slopes / gap, "Robust-LCB")
        final_at = by_replicate.loc[c]
        best, regret_vs = against_best_other(final_at, "Robust-LCB")
        checks += [
            Claim.compare(
                CLAIMS["fig1b"][0],
                slope_vs,
                ours=f"late regret per round as a share of the worst gap: {slope_text}; "
                f"Robust-LCB - {flattest}: {slope_vs.describe()}",
            ),
            Claim.check(
                CLAIMS["fig1b"][1],
                f"LinSEM-UCB at {linsem[c] / worst:.0%} of the worst case",
                bool(linsem[c] >= 0.6 * worst),
            ),
            Claim.compare(
                CLAIMS["fig1b"][2],
                regret_vs,
                ours=f"Robust-LCB / LinSEM-UCB = {robust[c] / linsem[c]:.2f}, "
                f"Robust-LCB / UCB = {robust[c] / ucb[c]:.2f}; Robust-LCB - {best}: "
                f"{regret_vs.describe(0)}",
            ),
        ]
        return checks
    smallest = means.index.min()
    first = by_replicate.loc[smallest]
    weaker = str(first[["LinSEM-UCB", "UCB"]].mean().idxmax())
    small_vs = PairedComparison.between(first[weaker], first["Robust-LCB"], direction=-1)
    checks.append(
        Claim.compare(
            CLAIMS["fig1c"][0],
            small_vs,
            ours=f"C = {smallest:g}: LinSEM-UCB {linsem[smallest]:,.0f}, UCB "
            f"{ucb[smallest]:,.0f}, Robust-LCB {robust[smallest]:,.0f}; {weaker} - Robust-LCB: "
            f"{small_vs.describe(0)}",
        )
    )
    if 15 in means.index:
        checks.append(
            Claim.check(
                CLAIMS["fig1c"][1],
                f"from C = {smallest:g} to 15: LinSEM-UCB x{linsem[15] / linsem[smallest]:.1f}, "
                f"UCB x{ucb[15] / ucb[smallest]:.1f}",
                bool(linsem[15] > 2 * linsem[smallest] and ucb[15] > 2 * ucb[smallest]),
            )
        )
    if 200 in means.index:
        checks.append(
            Claim.check(
                CLAIMS["fig1c"][2],
                f"C = 200: LinSEM-UCB {linsem[200] / worst:.0%}, UCB {ucb[200] / worst:.0%} "
                "of the worst case",
                bool(min(linsem[200], ucb[200]) >= 0.6 * worst),
            )
        )
    beyond = [c for c in means.index if c >= 15]
    ratios = ", ".join(f"C={c:g}: {robust[c] / min(linsem[c], ucb[c]):.2f}" for c in beyond)
    if beyond:
        versus = {c: against_best_other(by_replicate.loc[c], "Robust-LCB") for c in beyond}
        c = weakest({budget: versus[budget][1] for budget in beyond})
        best, deciding = versus[c]
        checks.append(
            Claim.compare(
                CLAIMS["fig1c"][3],
                deciding,
                ours=f"Robust-LCB / best baseline: {ratios}; weakest, C = {c:g}: Robust-LCB - "
                f"{best}: {deciding.describe(0)}",
                test_prefix="at every C >= 15 against the baseline of lowest mean; weakest: ",
            )
        )
    else:
        checks.append(Claim.not_checkable(CLAIMS["fig1c"][3], "no C >= 15 in the results"))
    increasing = bool(np.all(np.diff(robust.sort_index().to_numpy()) >= -0.02 * worst))
    regrets = ", ".join(f"C={c:g}: {robust[c]:,.0f}" for c in robust.sort_index().index)
    checks.append(
        Claim.check(
            CLAIMS["fig1c"][4],
            f"{regrets}; non-decreasing in C (dips within 2% of the worst case): {increasing}",
            increasing,
        )
    )
    return checks
