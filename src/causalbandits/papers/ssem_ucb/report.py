"""The SSEM-UCB trials' report: our numbers beside the paper's statements, and the figures.

The paper reports no numbers: its statements are rankings of the time-averaged
regret ``R(t)/t`` in Figs. 2, 4 and 5. Each statement is checked on the final ``R(T)/T``
(mean ± se over replicates; differences between two algorithms are paired over the shared
instances, :func:`~causalbandits.experiments.report.paired_sign`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from causalbandits.experiments.metrics import Z95, final
from causalbandits.experiments.plots import plot_regret_curves
from causalbandits.experiments.report import (
    Claim,
    claims_table,
    final_summary_table,
    grid_table,
    mean_se,
    paired_difference,
    pm,
)


def _final_by_algorithm(df: pd.DataFrame) -> dict[str, pd.Series]:
    """``R(T)/T`` per replicate, by algorithm (first setting of each algorithm)."""
    last = final(df)
    return {
        label: rows.set_index("replicate")["avg_regret"]
        for label, rows in last.groupby("algorithm", sort=False)
    }


def paired(values: dict[str, pd.Series], first: str, second: str) -> tuple[float, float, int]:
    """:func:`~causalbandits.experiments.report.paired_difference` of two algorithms."""
    return paired_difference(values[first], values[second])


def _ranked(values: dict[str, pd.Series], labels: list[str]) -> list[str]:
    return sorted(labels, key=lambda label: values[label].mean())


def _early(df: pd.DataFrame, fraction: float = 0.1) -> dict[str, float]:
    """Mean ``R(t)/t`` at the recorded round nearest ``fraction * T``."""
    rounds = np.sort(df["t"].unique())
    target = rounds[np.argmin(np.abs(rounds - fraction * rounds.max()))]
    rows = df[df["t"] == target]
    return rows.groupby("algorithm", sort=False)["avg_regret"].mean().to_dict()


def claims(df: pd.DataFrame, grid: Any) -> list[Claim]:
    """The paper's statements for ``grid.trial`` with our values."""
    values = _final_by_algorithm(df)
    labels = list(values)
    out: list[Claim] = []
    jo = [label for label in labels if label.startswith("SSEM-UCB-JO")]

    def has(*names: str) -> bool:
        return all(name in values for name in names)

    if grid.trial == "linear" and has("SSEM-UCB-JO q=1"):
        q1 = values["SSEM-UCB-JO q=1"]
        curve = df[df["algorithm"] == "SSEM-UCB-JO q=1"].groupby("t")["avg_regret"].mean()
        half = curve[curve.index <= curve.index.max() / 2].iloc[-1]
        random = values["Random"].mean() if "Random" in values else np.nan
        falls = bool(curve.iloc[-1] < half and curve.iloc[-1] < 0.1 * random)
        out.append(
            Claim(
                "q = 1: R(t)/t falls towards 0 (below R(T/2)/(T/2) and below 10 % of Random's)",
                f"{pm(*mean_se(q1), 3)} at T, {half:.3f} at T/2; Random {random:.3f}",
                falls,
            )
        )
        last = final(df)
        optimal = last[last["algorithm"] == "SSEM-UCB-JO q=1"]["optimal_now"]
        needed = int(np.ceil(0.8 * len(optimal)))
        out.append(
            Claim(
                "q = 1: the final super arm is the top-s by c_i E[b_i] in at least 8 of 10 seeds",
                f"{int(optimal.sum())} of {len(optimal)}",
                bool(optimal.sum() >= needed),
            )
        )
        for q in (2, 3):
            label = f"SSEM-UCB-JO q={q}"
            if has(label):
                mean, se, sign = paired(values, label, "SSEM-UCB-JO q=1")
                out.append(
                    Claim(
                        f"q = {q} does no worse than q = 1 (paired R(T)/T difference)",
                        pm(mean, se, 3),
                        sign <= 0,
                    )
                )
    if grid.trial in ("trial-1", "trial-2"):
        if has("SSEM-UCB-JO q=4", "METS"):
            ranked = _ranked(values, [label for label in labels if "oracle" not in label])
            out.append(
                Claim(
                    "SSEM-UCB-JO q = 4 and METS end with the lowest R(T)/T",
                    "ranking: " + ", ".join(ranked[:4]) + ", ...",
                    set(ranked[:2]) == {"SSEM-UCB-JO q=4", "METS"},
                )
            )
        if has("SSEM-UCB-JO q=4", "SSEM-UCB-JO q=1"):
            mean, se, sign = paired(values, "SSEM-UCB-JO q=4", "SSEM-UCB-JO q=1")
            out.append(
                Claim("q = 4 below q = 1 (paired R(T)/T difference)", pm(mean, se, 3), sign < 0)
            )
        if has("SGB", "IGP-UCB"):
            ranked = _ranked(values, [label for label in labels if "oracle" not in label])
            out.append(
                Claim(
                    "SGB and IGP-UCB end highest",
                    "highest: " + ", ".join(ranked[-2:][::-1]),
                    set(ranked[-2:]) == {"SGB", "IGP-UCB"},
                )
            )
            early = _early(df)
            structured = [label for label in jo + ["METS"] if label in early]
            worst_structured = max(early[label] for label in structured)
            best_unstructured = min(early["SGB"], early["IGP-UCB"])
            out.append(
                Claim(
                    "SSEM and METS incur much less initial regret than SGB and IGP-UCB "
                    "(R(t)/t at t = T/10)",
                    f"worst of SSEM/METS {worst_structured:.3f}; best of SGB/IGP-UCB "
                    f"{best_unstructured:.3f}",
                    bool(worst_structured < best_unstructured),
                )
            )
        widths = {label: 2 * Z95 * mean_se(values[label])[1] for label in sorted(jo)}
        if len(widths) > 1:
            ordered = [widths[label] for label in sorted(widths)]
            out.append(
                Claim(
                    "the 95 % intervals narrow as q grows",
                    ", ".join(
                        f"{label.split()[-1]}: {w:.3f}" for label, w in sorted(widths.items())
                    ),
                    bool(np.all(np.diff(ordered) <= 0)),
                )
            )
    if grid.trial == "trial-2" and has("SSEM-UCB-Norm q=4", "SSEM-UCB-JO q=4"):
        norm_mean = values["SSEM-UCB-Norm q=4"].mean()
        jo_mean, jo_se = mean_se(values["SSEM-UCB-JO q=4"])
        out.append(
            Claim(
                "SSEM-UCB-Norm within SSEM-UCB-JO's 95 % interval, or better",
                f"Norm {norm_mean:.3f}; JO {pm(jo_mean, jo_se, 3)}",
                bool(norm_mean <= jo_mean + Z95 * jo_se),
            )
        )
        cost = final(df).groupby("algorithm")["elapsed"].mean()
        out.append(
            Claim(
                "SSEM-UCB-Norm is cheaper per round than SSEM-UCB-JO",
                f"Norm {cost['SSEM-UCB-Norm q=4']:.1f} s, "
                f"JO {cost['SSEM-UCB-JO q=4']:.1f} s per run",
                bool(cost["SSEM-UCB-Norm q=4"] < cost["SSEM-UCB-JO q=4"]),
            )
        )
        if has("SGB", "IGP-UCB"):
            top = max(norm_mean, values["SSEM-UCB-JO q=4"].mean())
            out.append(
                Claim(
                    "SSEM-UCB-Norm and -JO both below SGB and IGP-UCB",
                    f"max of the two {top:.3f}; SGB {values['SGB'].mean():.3f}, IGP-UCB "
                    f"{values['IGP-UCB'].mean():.3f}",
                    bool(top < min(values["SGB"].mean(), values["IGP-UCB"].mean())),
                )
            )
    if grid.trial == "trial-3":
        for label in jo:
            curve = df[df["algorithm"] == label].groupby("t")["avg_regret"].mean()
            quarter = curve[curve.index <= curve.index.max() / 4].iloc[-1]
            out.append(
                Claim(
                    f"{label}: R(t)/t falls (R(T)/T below R(T/4)/(T/4))",
                    f"{curve.iloc[-1]:.3f} at T, {quarter:.3f} at T/4",
                    bool(curve.iloc[-1] < quarter),
                )
            )
    return out


def build_report(df: pd.DataFrame, grid: Any) -> str:
    """The markdown report of one trial (or of a scale-tuning grid)."""
    if grid.radius_grid or grid.bonus_grid:
        return "\n".join(
            [
                f"# {grid.description or grid.name}",
                "",
                f"{df['replicate'].nunique()} instances, T = {grid.horizon}; R(T)/T:",
                "",
                grid_table(final(df), ("radius_scale", "bonus_scale"), "avg_regret"),
                "",
            ]
        )
    parts = [
        f"# {grid.description or grid.name}",
        "",
        f"{df['replicate'].nunique()} replicates (one instance each, shared by all algorithms), "
        f"T = {grid.horizon}, s = {grid.super_arm_size}; radius scale {grid.radius_scale}, "
        f"bonus scale {grid.bonus_scale}.",
        "",
        "## The paper's statements",
        "",
        claims_table(claims(df, grid)),
        "",
        "## Final time-averaged regret",
        "",
        final_summary_table(
            final(df), grid.horizon, min(int(grid.chunk_size), int(grid.replicates))
        ),
        "",
    ]
    return "\n".join(parts)


def plot_all(df: pd.DataFrame, out_dir: Path, grid: Any) -> list[Path]:
    """``R(t)/t`` with 95 % bands (the paper's figures) and the cumulative regret; the Taylor
    oracles dashed."""
    title = grid.description or grid.name
    oracles = [label for label in grid.algorithms if label.startswith("Taylor oracle")]
    return [
        plot_regret_curves(
            df, out_dir / "avg_regret.png", metric="avg_regret", title=title, dashed=oracles
        ),
        plot_regret_curves(df, out_dir / "cum_regret.png", title=title, dashed=oracles),
    ]
