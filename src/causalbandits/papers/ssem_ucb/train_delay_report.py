"""The train-delay runs' report and figures (SSEM-UCB Sec. V-B, Figs. 3 and 6).

The paper reports no numbers on this data: its statements are checked on our runs as
follows. "Super-arm switches become rarer": the switches per block of 50 rounds after the
``ceil(N/s)`` initial rounds, first block against last. "The final super arm contains 3
stations with high inherent delay and 3 city stops in close proximity": the final super arm's
three stations of highest mean exogenous delay against the 20 stations' ranking, and the
largest distance between its other three against the median distance of two of the 20
stations. "The reconstruction improves" (Fig. 3, "reconstructing the overall delay from the
immediate delay based on earlier observations"): the mean prequential error (each round
rebuilt through the fit that chose it, which has seen the earlier rounds only) over the first
block of :data:`BLOCK` rounds after the initial ones against the last block; and, beside it,
the error at ``T`` against the error 10 rounds after the initial ones in sample (the rounds so
far) and on fixed held-out rounds. A round whose in-sample error is undefined (NaN) is a round
under a fit of ``F_hat`` that is no contraction (the policy then plays at random). These
are properties of the runs (``holds`` or ``not reproduced``); the one comparison, ours (the
learner's ``R(T)`` lowest on the simulator), is the paired difference over the runs against
the other algorithm of lowest mean (``n/a`` with one run).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from causalbandits.data.train_delays import TrainDelayData
from causalbandits.experiments.evidence import against_best_other, by_replicate
from causalbandits.experiments.plots import (
    panel_figure,
    plot_choices,
    plot_regret_curves,
    save_figure,
)
from causalbandits.experiments.report import (
    Claim,
    claims_table,
    markdown_document,
    markdown_table,
    mean_pm,
    section,
)

#: Rounds per block of the switch counts (Fig. 6 spans 150 rounds).
BLOCK = 50
#: How many of the final super arm's stations count as "high inherent delay" (the paper: 3).
HIGH_DELAY = 3
EARTH_RADIUS_KM = 6371.0
COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple")


def distances_km(lat: np.ndarray, long: np.ndarray) -> np.ndarray:
    """Great-circle (haversine) distances between every two stations, ``(N, N)`` km."""
    phi, lam = np.radians(lat), np.radians(long)
    dphi, dlam = phi[:, None] - phi[None], lam[:, None] - lam[None]
    a = np.sin(dphi / 2) ** 2 + np.cos(phi)[:, None] * np.cos(phi)[None] * np.sin(dlam / 2) ** 2
    return 2 * EARTH_RADIUS_KM * np.arcsin(np.sqrt(np.clip(a, 0.0, 1.0)))


def decode(code: int, n_arms: int) -> np.ndarray:
    """The stations of a super arm code (bit ``i`` is station ``i``)."""
    return np.flatnonzero((int(code) >> np.arange(n_arms)) & 1)


def switches_per_block(codes: np.ndarray, start: int, block: int = BLOCK) -> np.ndarray:
    """The rounds whose super arm differs from the previous round's, per ``block`` rounds, in
    consecutive blocks of ``block`` rounds after round ``start`` (1-based rounds; ``codes[t -
    1]`` is round ``t``'s); a shorter last block is scaled to ``block`` rounds."""
    changed = codes[start:] != codes[start - 1 : -1]
    count = -(-changed.size // block)
    blocks = [changed[b * block : (b + 1) * block] for b in range(count)]
    return np.array([block * part.mean() for part in blocks])


def final_arm_summary(code: int, data: TrainDelayData) -> dict[str, Any]:
    """The final super arm against the stations' mean exogenous delays and distances."""
    n = len(data.names)
    members = decode(code, n)
    delays = np.nanmean(data.exogenous, axis=0)  # minutes
    order = np.argsort(-delays)
    rank = np.empty(n, dtype=int)
    rank[order] = np.arange(1, n + 1)
    by_delay = members[np.argsort(-delays[members])]
    high, rest = by_delay[:HIGH_DELAY], by_delay[HIGH_DELAY:]
    distance = distances_km(data.lat, data.long)
    pairs = distance[np.triu_indices(n, k=1)]
    spread = float(distance[np.ix_(rest, rest)].max()) if rest.size > 1 else 0.0
    return {
        "members": by_delay,
        "delays": delays,
        "rank": rank,
        "high": high,
        "rest": rest,
        "rest_spread_km": spread,
        "median_pair_km": float(np.median(pairs)),
        "distance": distance,
    }


def lowest_regret(last: pd.DataFrame, learner: str) -> Claim:
    """(Ours; the paper reports no baseline.) ``learner`` ends with the lowest ``R(T)``: its
    paired difference over the runs against the other algorithm of lowest mean (``n/a`` with
    one run)."""
    totals = by_replicate(last, "cum_regret")
    best_other, comparison = against_best_other(totals, learner)
    means = ", ".join(f"{label} {totals[label].mean():.2f}" for label in sorted(totals))
    return Claim.compare(
        f"(ours; the paper reports no baseline) {learner} has the lowest R(T) (paired against "
        "the best of the others)",
        comparison,
        ours=f"{means}; {learner} minus {best_other}: "
        + (
            comparison.describe(2)
            if comparison.replicates >= 2
            else f"{comparison.mean:,.2f} (one run: no se)"
        ),
    )


def _mean_or_dash(values: pd.Series) -> str:
    return "-" if values.isna().all() else f"{values.mean():.4g}"


def _improves(first: float, last: float) -> bool | None:
    """Whether an error falls from ``first`` to ``last`` (``None``: one is undefined)."""
    return None if np.isnan(first) or np.isnan(last) else bool(last < first)


def build_report(df: pd.DataFrame, grid: Any, data: TrainDelayData) -> str:
    """The markdown report of a train-delay run."""
    n = len(data.names)
    initial = -(-n // grid.super_arm_size)
    horizon = int(df["t"].max())
    last = df[df["t"] == horizon]
    rows = []
    for label, group in last.groupby("algorithm", sort=False):
        runs = df.loc[(df["algorithm"] == label) & (df["t"] > initial), "reconstruction_mse"]
        rows.append(
            [
                label,
                mean_pm(group["cum_regret"], 2),
                f"{int(group['optimal_now'].sum())} of {len(group)}",
                _mean_or_dash(group["reconstruction_mse"]),
                _mean_or_dash(group["heldout_mse"]),
                "-" if runs.isna().all() else f"{int(runs.isna().sum())} of {len(runs)}",
                f"{group['elapsed'].mean():.1f}",
            ]
        )
    header = ["algorithm", "R(T)", "final super arm optimal", "reconstruction MSE at T (in sample)"]
    header += ["on held-out rounds", "rounds under a non-contracting fit", "s"]

    switches = {  # mean over the runs per block
        label: np.mean(
            [
                switches_per_block(run.sort_values("t")["super_arm"].to_numpy(), initial)
                for _, run in group.groupby("replicate")
            ],
            axis=0,
        )
        for label, group in df.groupby("algorithm", sort=False)
    }
    blocks = len(next(iter(switches.values())))
    block_names = [
        f"{initial + b * BLOCK + 1}-{min(initial + (b + 1) * BLOCK, horizon)}"
        for b in range(blocks)
    ]
    switch_rows = [[label, *(f"{m:.1f}" for m in means)] for label, means in switches.items()]

    learner = next(label for label in df["algorithm"].unique() if label.startswith("SSEM"))
    final = last[(last["algorithm"] == learner)].sort_values("replicate")
    summary = final_arm_summary(int(final["super_arm"].iloc[0]), data)
    member_rows = [
        [
            data.short_names[i],
            data.names[i],
            f"{summary['delays'][i]:.2f}",
            int(summary["rank"][i]),
            ", ".join(
                f"{data.short_names[j]} {summary['distance'][i, j]:.0f}"
                for j in summary["members"]
                if j != i
            ),
        ]
        for i in summary["members"]
    ]
    member_header = ["station", "name", "mean exogenous delay (min)", "rank of 20"]
    best = final_arm_summary(int(final["optimal_super_arm"].iloc[0]), data)

    runs = df[df["algorithm"] == learner].groupby("t")
    early_round = min(initial + 10, horizon)
    prequential = runs["prequential_mse"].mean()
    first_block = prequential.loc[initial + 1 : initial + BLOCK].mean()
    last_block = prequential.loc[max(initial + 1, horizon - BLOCK + 1) :].mean()
    first_switches, last_switches = switches[learner][0], switches[learner][-1]
    claims = [
        Claim.check(
            f"super-arm switches become rarer ({learner}, first vs last block of {BLOCK})",
            f"{first_switches:.1f} -> {last_switches:.1f}",
            bool(last_switches < first_switches) if blocks > 1 else None,
        ),
        Claim.check(
            f"the final super arm has {HIGH_DELAY} stations of high inherent delay",
            "ranks "
            + ", ".join(str(int(summary["rank"][i])) for i in summary["high"])
            + " of 20 by mean exogenous delay",
            bool(np.all(summary["rank"][summary["high"]] <= 2 * HIGH_DELAY)),
            paper=f"{HIGH_DELAY} of the 6 stations",
        ),
        Claim.check(
            "and the others are stops in close proximity",
            f"largest distance between them {summary['rest_spread_km']:.0f} km (median of two "
            f"of the 20: {summary['median_pair_km']:.0f} km)",
            bool(summary["rest_spread_km"] < summary["median_pair_km"]),
            paper="3 city stops",
        ),
        Claim.check(
            "the reconstruction of y from z based on earlier observations improves "
            f"(Fig. 3; prequential, first vs last block of {BLOCK})",
            f"MSE {first_block:.4g} -> {last_block:.4g}",
            _improves(first_block, last_block),
        ),
    ]
    for kind, column in (("in sample", "reconstruction_mse"), ("held out", "heldout_mse")):
        means = runs[column].mean()
        early, late = float(means.loc[early_round]), float(means.loc[horizon])
        claims.append(
            Claim.check(
                f"the reconstruction of y from z improves over time (Fig. 3; {kind})",
                f"MSE {early:.4g} at t = {early_round}, {late:.4g} at T",
                _improves(early, late),
            )
        )
    if grid.environment == "simulator":
        claims.append(lowest_regret(last, learner))
    return markdown_document(
        f"# SSEM-UCB on the German train delays: {grid.environment}",
        f"{n} stations, T = {horizon}, s = {grid.super_arm_size}, bonus form "
        f"{grid.bonus_form!r}, radius scale {grid.radius_scale:g}, bonus scale "
        f"{grid.bonus_scale:g}, {grid.replicates} run(s) per algorithm. "
        + (
            "The regret is the simulator's (its optimum is known)."
            if grid.environment == "simulator"
            else "The replay's regret is unknown: the regret shown is the simulator's mu of "
            "the super arms played (a diagnostic)."
        ),
        section("Regret, reconstruction error and time", markdown_table(header, rows)),
        section(
            f"Super-arm switches per {BLOCK} rounds after round {initial}",
            markdown_table(["algorithm", *block_names], switch_rows),
        ),
        section(
            f"The final super arm of {learner} (run 0)",
            markdown_table([*member_header, "distances (km)"], member_rows),
            "The simulator's optimal super arm: "
            + ", ".join(f"{data.short_names[i]} (rank {best['rank'][i]})" for i in best["members"])
            + f"; the largest distance between its {len(best['rest'])} stations of lower delay: "
            + f"{best['rest_spread_km']:.0f} km.",
        ),
        section("Beside the paper's statements", claims_table(claims)),
    )


def plot_selection(df: pd.DataFrame, data: TrainDelayData, out_path: Path) -> Path:
    """Fig. 6: the stations of the super arm played at every round, one panel per algorithm
    (run 0)."""
    labels = list(df["algorithm"].unique())
    figure, axes = panel_figure(len(labels), 1, (10, 2.6))
    for ax, label in zip(axes, labels, strict=True):
        run = df[(df["algorithm"] == label) & (df["replicate"] == df["replicate"].min())]
        codes = run.sort_values("t")["super_arm"].to_numpy()
        chosen = (codes[:, None] >> np.arange(len(data.names))[None, :]) & 1  # (rounds, arms)
        plot_choices(ax, chosen, data.short_names, fontsize=6)
        ax.set_title(label, fontsize="medium")
        ax.set_xlabel("round t")
    return save_figure(figure, out_path)


#: Rounds of the moving mean of the prequential error in Fig. 3.
SMOOTHING = 10


def plot_reconstruction(df: pd.DataFrame, out_path: Path) -> Path:
    """Fig. 3: the error of rebuilding y from z over time, mean over runs: prequential (each
    round through the fit that chose it; moving mean over :data:`SMOOTHING` rounds, solid),
    in sample (dotted) and on the held-out rounds (dashed)."""
    figure, (ax,) = panel_figure(1, 1, (6, 4))
    styles = (
        ("prequential_mse", "-", "prequential"),
        ("reconstruction_mse", ":", "in sample"),
        ("heldout_mse", "--", "held out"),
    )
    for (label, group), colour in zip(df.groupby("algorithm", sort=False), COLOURS, strict=False):
        for column, style, kind in styles:
            errors = group.groupby("t")[column].mean()
            if column == "prequential_mse":
                errors = errors.rolling(SMOOTHING, min_periods=1).mean()
            if errors.notna().any():
                ax.plot(
                    errors.index, errors.to_numpy(), style, color=colour, label=f"{label}, {kind}"
                )
    ax.set(yscale="log", xlabel="round t", ylabel="reconstruction MSE (normalised)")
    ax.legend(fontsize="small")
    return save_figure(figure, out_path)


def plot_final_map(df: pd.DataFrame, data: TrainDelayData, out_path: Path) -> Path:
    """The final super arm of the SSEM-UCB learner (run 0) on the stations' coordinates."""
    horizon = df["t"].max()
    learner = next(label for label in df["algorithm"].unique() if label.startswith("SSEM"))
    row = df[(df["algorithm"] == learner) & (df["t"] == horizon)].sort_values("replicate")
    chosen = decode(int(row["super_arm"].iloc[0]), len(data.names))
    figure, (ax,) = panel_figure(1, 1, (6, 5))
    ax.scatter(data.long, data.lat, color="lightgrey", edgecolor="grey")
    ax.scatter(data.long[chosen], data.lat[chosen], color="tab:red", zorder=3)
    for i, name in enumerate(data.short_names):
        ax.annotate(
            name, (data.long[i], data.lat[i]), fontsize=7, xytext=(3, 3), textcoords="offset points"
        )
    ax.set(xlabel="longitude (deg E)", ylabel="latitude (deg N)")
    ax.set_title(f"final super arm of {learner} (red)", fontsize="medium")
    return save_figure(figure, out_path)


def plot_all(df: pd.DataFrame, out_dir: Path, data: TrainDelayData) -> list[Path]:
    """The regret curves, Figs. 6 and 3 and the map."""
    return [
        plot_regret_curves(
            df, out_dir / "regret.png", "cum_regret", "SSEM-UCB: train delays", panel_by=None
        ),
        plot_selection(df, data, out_dir / "selection.png"),
        plot_reconstruction(df, out_dir / "reconstruction.png"),
        plot_final_map(df, data, out_dir / "final_super_arm.png"),
    ]
