"""Summaries, figures and the report of the NDC-SEM synthetic experiment (Figs. 2 and 6).

Final regret and the optimality ratio per stationary period (App. VII-C2), the regret curves
and OR bars, the paper's qualitative claims beside our numbers, and the delay diagnostics
(initialisation, lock-ins) that explain where NDC-SEM and SEM-UCB lose regret.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from causalbandits.papers.ndc_sem.synthetic import (
    ALL_ALGORITHMS,
    PENDING,
    VALUE_COLUMNS,
    SyntheticExperiment,
)
from causalbandits.policies.ndc_sem import TABLE_I_XI

#: What the paper reports (Sec. V-A, App. VII-C2): qualitative statements only.
CLAIMS = {
    "lowest": "NDC-SEM outperforms all the other policies (lowest cumulative regret, Fig. 2)",
    "or": "NDC-SEM closely follows the oracle's choices; SEM-UCB cannot always adapt (Fig. 6)",
    "random": "Random's regret grows linearly, near the worst (spec §8.1)",
}
#: Project thresholds of the verdicts (spec §8): "near the worst" and "closely follows".
RANDOM_NEAR_WORST = 0.9
OR_CLOSE = 0.8

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

    shown = [a for a in ("NDC-SEM", PENDING, "SEM-UCB", "Oracle") if a in set(df["algorithm"])]
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


def mean_pm(mean: float, se: float, digits: int = 0) -> str:
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
    table_i = ", ".join(f"D = {d}: {v:g}" for d, v in TABLE_I_XI.items())
    redraw = experiment.n_arms // 2 if experiment.n_redraw is None else experiment.n_redraw
    lines = [
        "# NDC-SEM paper, synthetic experiment (Sec. V-A, Figs. 2 and 6): ours beside the paper",
        "",
        f"N = {experiment.n_arms}, s = {experiment.budget}, T = {experiment.horizon}, change "
        f"points {', '.join(map(str, experiment.change_points))}; {experiment.n_edges}-edge "
        "upper-triangular DAG with weights U[0.4, 0.7], Bernoulli rewards whose optimal super "
        f"arm changes at every change point ({redraw} of {experiment.n_arms} arms get new "
        f"means; §5.1 generator); {instance_text}; {replicates} replicates, root seed "
        f"{experiment.seed}. NDC-SEM: gamma = {experiment.gamma}, xi: {xi_text} (Table I: "
        f"{table_i}); lasso lambda = {experiment.lam:g} "
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
            mean_pm(finals.loc[(d, algorithm), "mean"], finals.loc[(d, algorithm), "se"])
            if (d, algorithm) in finals.index
            else "-"
            for d in delays
        ]
        lines.append(f"| {algorithm} | " + " | ".join(cells) + " |")
    shown = [a for a in ("NDC-SEM", PENDING, "SEM-UCB", "Oracle") if a in algorithms]
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
                    mean_pm(*ratios.loc[(delay, algorithm, k + 1), ["mean", "se"]], digits=3)
                    for k in range(len(periods))
                ]
                lines.append(f"| {delay} | {algorithm} | " + " | ".join(cells) + " |")
    learners = [a for a in ("NDC-SEM", PENDING, "SEM-UCB") if a in algorithms]
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
