"""The SSEM-UCB trials' report: our numbers beside the paper's statements, and the figures.

The paper reports no numbers: its statements are rankings of the time-averaged regret
``R(t)/t`` in Figs. 2, 4 and 5. A statement comparing methods is decided by the paired
difference of their ``R(T)/T`` over the shared instances
(:class:`~causalbandits.experiments.evidence.PairedComparison`): ``holds`` beyond
:data:`~causalbandits.experiments.evidence.PAIRED_SE` standard errors in the paper's
direction, ``contradicted`` beyond them the other way, ``not significant`` within. A ranking
of a group ("X and Y end lowest") pairs the group's member least favourable to the statement
(by mean) with the most favourable of the rest. "Does no worse" holds when the runs are
identical or better beyond the threshold. A property (a curve that falls, a share of seeds,
intervals that narrow) holds or is not reproduced. The checks of each trial are listed in
:data:`CLAIM_CHECKS`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from causalbandits.experiments.evidence import (
    PairedComparison,
    Verdict,
    by_replicate,
    group_against_rest,
)
from causalbandits.experiments.metrics import Z95, final
from causalbandits.experiments.plots import plot_regret_curves
from causalbandits.experiments.report import (
    Claim,
    claims_table,
    final_summary_table,
    grid_table,
    markdown_document,
    mean_se,
    pm,
    section,
)

#: The SSEM-UCB-JO learners' label prefix and the Taylor oracles'.
JO = "SSEM-UCB-JO"
ORACLE = "Taylor oracle"


@dataclass(frozen=True)
class Results:
    """What the checks read: the long table, the trial's grid, and per algorithm its
    ``R(T)/T`` per replicate (first setting of each algorithm)."""

    df: pd.DataFrame
    grid: Any
    values: dict[str, pd.Series]

    @classmethod
    def of(cls, df: pd.DataFrame, grid: Any) -> Results:
        return cls(df, grid, by_replicate(final(df), "avg_regret"))

    def has(self, *labels: str) -> bool:
        return all(label in self.values for label in labels)

    @property
    def learners(self) -> list[str]:
        """The SSEM-UCB-JO labels with exact jets (``"SSEM-UCB-JO q=<q>"``; not the
        finite-difference variants), in run order."""
        return [label for label in self.values if re.fullmatch(rf"{JO} q=\d+", label)]

    @property
    def competitors(self) -> list[str]:
        """Every algorithm but the Taylor oracles (diagnostics, not competitors)."""
        return [label for label in self.values if not label.startswith(ORACLE)]

    def curve(self, label: str) -> pd.Series:
        """Mean ``R(t)/t`` over replicates per recorded round."""
        return self.df[self.df["algorithm"] == label].groupby("t")["avg_regret"].mean()

    def near(self, fraction: float) -> tuple[int, dict[str, pd.Series]]:
        """The recorded round nearest ``fraction * T`` and ``R(t)/t`` per replicate there."""
        rounds = np.sort(self.df["t"].unique())
        target = int(rounds[np.argmin(np.abs(rounds - fraction * rounds.max()))])
        return target, by_replicate(self.df[self.df["t"] == target], "avg_regret")


def paired(
    values: dict[str, pd.Series], first: str, second: str, direction: int = -1
) -> PairedComparison:
    """The paired comparison of ``first - second`` (``direction -1``: ``first`` below)."""
    return PairedComparison.between(values[first], values[second], direction)


def no_worse(text: str, first: pd.Series, second: pd.Series, ours: str = "") -> Claim:
    """The claim that ``first`` does no worse than ``second`` (lower is better): ``holds``
    when the runs are identical on every shared replicate or ``first`` is lower beyond the
    threshold, ``contradicted`` when higher beyond it, ``not significant`` otherwise."""
    comparison = PairedComparison.between(first, second, direction=-1)
    difference = (first - second).dropna()
    identical = comparison.replicates >= 2 and bool((difference == 0).all())
    test = comparison.test() + ("; identical runs" if identical else "")
    ours = ours or comparison.describe(3)
    if identical:
        return Claim(text, f"{ours} (identical runs)", Verdict.HOLDS, test=test)
    return Claim.compare(text, comparison, ours=ours)


def _difference(comparison: PairedComparison) -> str:
    return f"{comparison.mean:+.3f} ± {comparison.se:.3f}"


# --- the checks: each reads the results and returns its claims (none when the run lacks the
# algorithms it needs) -------------------------------------------------------------------------

Check = Callable[[Results], list[Claim]]


def linear_regret_falls(results: Results) -> list[Claim]:
    """Linear check: q = 1's ``R(t)/t`` falls towards 0."""
    label = f"{JO} q=1"
    if not results.has(label):
        return []
    curve = results.curve(label)
    half = curve[curve.index <= curve.index.max() / 2].iloc[-1]
    random = results.values["Random"].mean() if results.has("Random") else np.nan
    falls = bool(curve.iloc[-1] < half and curve.iloc[-1] < 0.1 * random)
    return [
        Claim.check(
            "q = 1: R(t)/t falls towards 0 (below R(T/2)/(T/2) and below 10 % of Random's)",
            f"{pm(*mean_se(results.values[label]), 3)} at T, {half:.3f} at T/2; "
            f"Random {random:.3f}",
            falls,
        )
    ]


def linear_top_s(results: Results) -> list[Claim]:
    """Linear check: q = 1's final super arm is the top-s in most seeds (8 of 10)."""
    label = f"{JO} q=1"
    if not results.has(label):
        return []
    optimal = by_replicate(final(results.df), "optimal_now")[label]
    needed = int(np.ceil(0.8 * len(optimal)))
    return [
        Claim.check(
            "q = 1: the final super arm is the top-s by c_i E[b_i] in at least 8 of 10 seeds",
            f"{int(optimal.sum())} of {len(optimal)}",
            bool(optimal.sum() >= needed),
        )
    ]


def linear_higher_degrees(results: Results) -> list[Claim]:
    """Linear check: q = 2 and q = 3 do no worse than q = 1 (their extra Taylor coefficients
    are 0 on a linear SEM)."""
    base = f"{JO} q=1"
    return [
        no_worse(
            f"q = {q} does no worse than q = 1 (paired R(T)/T difference)",
            results.values[f"{JO} q={q}"],
            results.values[base],
        )
        for q in (2, 3)
        if results.has(base, f"{JO} q={q}")
    ]


def group_ranking(group: list[str], rest: list[str] | None, direction: int, text: str) -> Check:
    """The check of the claim ``text`` that ``group`` ends lowest (``direction -1``) or
    highest (``+1``) against ``rest`` (default: every other competitor), by
    :func:`~causalbandits.experiments.evidence.group_against_rest`; no claim when the run
    lacks an algorithm of ``group`` or of ``rest``."""

    def check(results: Results) -> list[Claim]:
        others = rest or [label for label in results.competitors if label not in group]
        if not results.has(*group, *others):
            return []
        weakest, strongest, comparison = group_against_rest(
            results.values, group, others, direction
        )
        ours = f"{weakest} minus {strongest}: {_difference(comparison)}"
        return [Claim.compare(text, comparison, ours=ours)]

    return check


#: Figs. 2 and 4: "only SSEM-UCB-JO of degree 4 and METS achieved near-zero regret".
q4_and_mets_lowest = group_ranking(
    [f"{JO} q=4", "METS"],
    None,
    -1,
    "SSEM-UCB-JO q = 4 and METS end with the lowest R(T)/T (paired: the worse of the two "
    "against the best of the rest)",
)


def q4_below_q1(results: Results) -> list[Claim]:
    """Figs. 2 and 4: q = 4 better than q = 1, as measured by SSEM-UCB-JO's Taylor-moment
    estimate of the payoff on these instances; beside it the Taylor oracles' difference
    (true SEM, exact moments: what the truncation alone costs)."""
    first, second = f"{JO} q=4", f"{JO} q=1"
    if not results.has(first, second):
        return []
    comparison = paired(results.values, first, second)
    ours = f"q = 4 minus q = 1: {_difference(comparison)}"
    oracles = f"{ORACLE} q=4", f"{ORACLE} q=1"
    if results.has(*oracles):
        ours += f"; Taylor oracles: {_difference(paired(results.values, *oracles))}"
    return [
        Claim.compare(
            "q = 4 below q = 1 (paired R(T)/T difference; SSEM-UCB-JO's degree-q "
            "Taylor-moment estimate of the payoff on these instances)",
            comparison,
            ours=ours,
        )
    ]


def finite_differences_q4_below_q1(results: Results) -> list[Claim]:
    """Figs. 2 and 4 on the paper's route (App. -G1: numerical derivatives): q = 4 with
    central differences of each step below q = 1 with exact jets (degree-1 coefficients, which
    differences of any of these steps give to within ``1e-4``)."""
    base = f"{JO} q=1"
    variants = [label for label in results.values if re.fullmatch(rf"{JO} q=4 fd=\S+", label)]
    if not results.has(base):
        return []
    claims = []
    for label in variants:
        comparison = paired(results.values, label, base)
        step = label.rsplit("fd=", 1)[1]
        claims.append(
            Claim.compare(
                f"q = 4 below q = 1 with finite-difference derivatives, step {step} (paired "
                "R(T)/T difference)",
                comparison,
                ours=f"q = 4 (step {step}) minus q = 1: {_difference(comparison)}",
            )
        )
    return claims


#: Figs. 2 and 4: SGB and IGP-UCB plateau highest.
sgb_and_igp_highest = group_ranking(
    ["SGB", "IGP-UCB"],
    None,
    +1,
    "SGB and IGP-UCB end highest (paired: the lower of the two against the highest of the rest)",
)


def initial_regret(results: Results) -> list[Claim]:
    """Figs. 2 and 4: SSEM and METS incur much less initial regret than SGB and IGP-UCB
    (``R(t)/t`` at the recorded round nearest ``T/10``)."""
    if not results.has("SGB", "IGP-UCB"):
        return []
    t, early = results.near(0.1)
    structured = [label for label in [*results.learners, "METS"] if label in early]
    if not structured:
        return []
    worst = max(structured, key=lambda label: early[label].mean())
    best = min(("SGB", "IGP-UCB"), key=lambda label: early[label].mean())
    comparison = paired(early, worst, best)
    return [
        Claim.compare(
            "SSEM and METS incur much less initial regret than SGB and IGP-UCB "
            f"(R(t)/t at t = {t}; paired: the worst of SSEM/METS against the best of "
            "SGB/IGP-UCB)",
            comparison,
            ours=f"{worst} {early[worst].mean():.3f}, {best} {early[best].mean():.3f}: "
            f"{_difference(comparison)}",
        )
    ]


def intervals_narrow(results: Results) -> list[Claim]:
    """Fig. 2: the 95 % intervals of SSEM-UCB-JO narrow as q grows."""
    widths = {
        label: 2 * Z95 * mean_se(results.values[label])[1] for label in sorted(results.learners)
    }
    if len(widths) < 2:
        return []
    ordered = [widths[label] for label in sorted(widths)]
    return [
        Claim.check(
            "the 95 % intervals narrow as q grows",
            ", ".join(f"{label.split()[-1]}: {w:.3f}" for label, w in sorted(widths.items())),
            bool(np.all(np.diff(ordered) <= 0)),
        )
    ]


def norm_no_worse(results: Results) -> list[Claim]:
    """Fig. 4: SSEM-UCB-Norm is competitive with SSEM-UCB-JO (same degree)."""
    norm, jo = "SSEM-UCB-Norm q=4", f"{JO} q=4"
    if not results.has(norm, jo):
        return []
    return [
        no_worse(
            "SSEM-UCB-Norm does no worse than SSEM-UCB-JO (q = 4; paired R(T)/T difference)",
            results.values[norm],
            results.values[jo],
        )
    ]


def norm_cheaper(results: Results) -> list[Claim]:
    """Fig. 4: SSEM-UCB-Norm is cheaper per round: the wall time of each task (a chunk of
    replicates run together), paired over the tasks."""
    norm, jo = "SSEM-UCB-Norm q=4", f"{JO} q=4"
    if not results.has(norm, jo):
        return []
    last = final(results.df)
    chunk = last["replicate"] // max(1, int(getattr(results.grid, "chunk_size", 1)))
    times = by_replicate(last.assign(task=chunk), "elapsed", index="task")
    comparison = paired(times, norm, jo)
    return [
        Claim.compare(
            "SSEM-UCB-Norm is cheaper per round than SSEM-UCB-JO (wall time per task, paired "
            "over the tasks)",
            comparison,
            ours=f"Norm {times[norm].mean():.1f} s, JO {times[jo].mean():.1f} s per task "
            f"(mean of {len(times[norm])} task{'s' if len(times[norm]) > 1 else ''})",
        )
    ]


#: Fig. 4: SSEM-UCB-Norm and -JO both below SGB and IGP-UCB.
norm_and_jo_below_baselines = group_ranking(
    ["SSEM-UCB-Norm q=4", f"{JO} q=4"],
    ["SGB", "IGP-UCB"],
    -1,
    "SSEM-UCB-Norm and -JO both below SGB and IGP-UCB (paired: the higher of the two "
    "against the lower of SGB and IGP-UCB)",
)


def learners_converge(results: Results) -> list[Claim]:
    """Fig. 5: SSEM-UCB-JO converges: its mean ``R(t)/t`` falls, ``R(T)/T`` below
    ``R(T/4)/(T/4)``."""
    claims = []
    for label in results.learners:
        curve = results.curve(label)
        quarter = curve[curve.index <= curve.index.max() / 4].iloc[-1]
        claims.append(
            Claim.check(
                f"{label}: R(t)/t falls (R(T)/T below R(T/4)/(T/4))",
                f"{curve.iloc[-1]:.3f} at T, {quarter:.3f} at T/4",
                bool(curve.iloc[-1] < quarter),
            )
        )
    return claims


_FIGURES_2_4: tuple[Check, ...] = (
    q4_and_mets_lowest,
    q4_below_q1,
    finite_differences_q4_below_q1,
    sgb_and_igp_highest,
    initial_regret,
    intervals_narrow,
)
#: The checks of each trial, in the order of the report.
CLAIM_CHECKS: dict[str, tuple[Check, ...]] = {
    "linear": (linear_regret_falls, linear_top_s, linear_higher_degrees),
    "trial-1": _FIGURES_2_4,
    "trial-2": (*_FIGURES_2_4, norm_no_worse, norm_cheaper, norm_and_jo_below_baselines),
    "trial-3": (learners_converge,),
}


def claims(df: pd.DataFrame, grid: Any) -> list[Claim]:
    """The paper's statements for ``grid.trial`` with our values."""
    results = Results.of(df, grid)
    return [claim for check in CLAIM_CHECKS.get(grid.trial, ()) for claim in check(results)]


def build_report(df: pd.DataFrame, grid: Any) -> str:
    """The markdown report of one trial (or of a scale-tuning grid)."""
    if grid.radius_grid or grid.bonus_grid:
        return markdown_document(
            f"# {grid.description or grid.name}",
            f"{df['replicate'].nunique()} instances, T = {grid.horizon}; R(T)/T:",
            grid_table(final(df), ("radius_scale", "bonus_scale"), "avg_regret"),
        )
    return markdown_document(
        f"# {grid.description or grid.name}",
        f"{df['replicate'].nunique()} replicates (one instance each, shared by all algorithms), "
        f"T = {grid.horizon}, s = {grid.super_arm_size}; radius scale {grid.radius_scale}, "
        f"bonus scale {grid.bonus_scale}.",
        section("The paper's statements", claims_table(claims(df, grid))),
        section(
            "Final time-averaged regret",
            final_summary_table(
                final(df), grid.horizon, min(int(grid.chunk_size), int(grid.replicates))
            ),
        ),
    )


def plot_all(df: pd.DataFrame, out_dir: Path, grid: Any) -> list[Path]:
    """``R(t)/t`` with 95 % bands (the paper's figures) and the cumulative regret; the Taylor
    oracles dashed."""
    title = grid.description or grid.name
    oracles = [label for label in grid.algorithms if label.startswith("Taylor oracle")]
    if "scale_point" not in df.columns:
        # Tables saved before issue 28 have no scale_point: their ``setting`` held it.
        df = df.assign(scale_point=df["setting"])
    options = {"title": title, "dashed": oracles, "panel_by": "scale_point"}
    return [
        plot_regret_curves(df, out_dir / "avg_regret.png", metric="avg_regret", **options),
        plot_regret_curves(df, out_dir / "cum_regret.png", **options),
    ]
