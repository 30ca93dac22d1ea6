"""Summaries, claims and the report of the NDC-SEM Covid-19 experiment.

Reads the long table of :mod:`causalbandits.papers.ndc_sem.covid`. Windows: the change point
``c = 40`` is the first shifted day, so "before" is days ``1..c-1`` and "from the change
point" days ``c..T``. Region sets before the change point use the learned days only (from day
``N + D + 1``): Algorithm 1 plays every region during its ``H`` phase, so no region could
otherwise appear "only after" the change.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from causalbandits.data.italy_covid import ABBREVIATIONS, REGIONS
from causalbandits.experiments.evidence import PairedComparison
from causalbandits.experiments.report import (
    Claim,
    claims_table,
    frame_table,
    in_order,
    markdown_document,
    markdown_table,
    mean_pm,
    mean_se,
    pm,
    section,
)

if TYPE_CHECKING:
    from causalbandits.papers.ndc_sem.covid import CovidExperiment

POLICIES = ("NDC-SEM", "SEM-UCB")
#: Label of NDC-SEM with the tuned pair in the results table.
TUNED = "NDC-SEM (tuned)"
#: What the paper reports (Sec. V-B, App. VII-D6); every result is qualitative.
CLAIMS = {
    "fig3": "NDC-SEM efficiently estimates the regions' overall daily new cases (Fig. 3)",
    "fig4": "the selected regions adapt after the change point; Marche, Abruzzo and Valle "
    "d'Aosta are selected only after day 40 (Fig. 4)",
    "fig9": "after day 40 NDC-SEM reaches a higher estimated cumulative overall reward than "
    "SEM-UCB (Fig. 9)",
}
#: Days of the eps(t) table; by day 13 every replicate has received its first validation day.
EPS_DAYS = (13, 20, 30, 40, 50, 60, 70, 80)
COLORS = {"NDC-SEM": "tab:blue", TUNED: "tab:green", "SEM-UCB": "tab:orange"}
#: Rows of the tuning table shown in the report.
TUNING_TOP = 10
UNIT_LABELS = {
    "max": "rewards / global max of y (decisions: ndc-sem 23)",
    "cases": "raw daily cases (sensitivity)",
}


def selection_matrix(selected: list[str]) -> np.ndarray:
    """``(days, N)`` booleans from the ``selected`` column (``"ABR;CAM;..."`` per day)."""
    index = {a: i for i, a in enumerate(ABBREVIATIONS)}
    out = np.zeros((len(selected), len(ABBREVIATIONS)), dtype=bool)
    for day, text in enumerate(selected):
        for name in filter(None, str(text).split(";")):
            out[day, index[name]] = True
    return out


def day_rows(df: pd.DataFrame, unit: str | None = None) -> pd.DataFrame:
    days = df[df["record"] == "day"]
    return days if unit is None else days[days["unit"] == unit]


def policies_present(df: pd.DataFrame) -> list[str]:
    """The policies of the day rows: NDC-SEM, NDC-SEM (tuned) when run, SEM-UCB."""
    return in_order((POLICIES[0], TUNED, POLICIES[1]), day_rows(df)["policy"])


def primary_unit(df: pd.DataFrame) -> str:
    units = list(day_rows(df)["unit"].unique())
    return "max" if "max" in units else units[0]


def learned_start(experiment: CovidExperiment) -> int:
    """First day on which the feedback of both policies' ``H`` phase has arrived: ``N + D + 1``."""
    return len(REGIONS) + experiment.delay + 1


def _names(mask: np.ndarray) -> str:
    return ", ".join(np.asarray(ABBREVIATIONS)[mask]) or "none"


# -------------------------------------------------------------------- summaries


def tuning_summary(rows: pd.DataFrame, unit: str) -> pd.DataFrame:
    """Per ``(gamma, xi)`` of unit ``unit``'s tuning rows, in grid order: mean and standard
    error over tuning replicates of the reward of days ``1..T`` (``reward``, the criterion) and
    from the change point on, the rank by the criterion (1 = chosen, ties in grid order) and
    the gap to the chosen pair, paired by replicate (``gap``, ``gap_se``)."""
    mine = rows[(rows["record"] == "tuning") & (rows["unit"] == unit)]
    if mine.empty:
        raise ValueError(f"no tuning rows for unit {unit!r}")
    by_replicate = mine.pivot_table(index=["gamma", "xi"], columns="replicate", values="reward")
    after = mine.pivot_table(
        index=["gamma", "xi"], columns="replicate", values="reward_from_change"
    )
    out = by_replicate.index.to_frame(index=False)
    for name, table in (("reward", by_replicate), ("reward_from_change", after)):
        out[name], out[f"{name}_se"] = np.transpose([mean_se(v) for v in table.to_numpy()])
    out["replicates"] = by_replicate.count(axis=1).to_numpy()
    order = np.argsort(-out["reward"].to_numpy(), kind="stable")
    out["rank"] = np.argsort(order) + 1
    gap = by_replicate.to_numpy() - by_replicate.to_numpy()[order[0]]
    out["gap"], out["gap_se"] = np.transpose([mean_se(v) for v in gap])
    return out


def choose_exploration(rows: pd.DataFrame, unit: str) -> tuple[float, float]:
    """The ``(gamma, xi)`` with the highest mean estimated cumulative overall reward over the
    tuning replicates (App. VII-D5); ties go to the first pair in grid order."""
    best = tuning_summary(rows, unit).set_index("rank").loc[1]
    return float(best["gamma"]), float(best["xi"])


def windows(change_point: int, horizon: int) -> dict[str, tuple[int, int]]:
    """The report's windows of days (first, last): ``before`` the change point ``c``
    (``1..c-1``), ``after`` (``c..T``) and ``total``."""
    return {
        "before": (1, change_point - 1),
        "after": (change_point, horizon),
        "total": (1, horizon),
    }


def reward_summary(
    df: pd.DataFrame, unit: str, change_point: int, ndc: str = POLICIES[0]
) -> pd.DataFrame:
    """Per window of :func:`windows`: mean and se over replicates of the summed estimated
    overall reward of NDC-SEM (``ndc``: Table I's or :data:`TUNED`) and SEM-UCB, and their
    difference paired by replicate."""
    horizon = int(day_rows(df, unit)["day"].max())
    rows = []
    for window, (first, last) in windows(change_point, horizon).items():
        sums = reward_sums(df, unit, first, last)
        values = {"NDC-SEM": sums[ndc].to_numpy(), "SEM-UCB": sums[POLICIES[1]].to_numpy()}
        difference = values["NDC-SEM"] - values["SEM-UCB"]
        row: dict[str, object] = {"window": window, "days": f"days {first}-{last}"}
        for name, v in [*values.items(), ("diff", difference)]:
            row[f"{name}_mean"], row[f"{name}_se"] = mean_se(v)
        rows.append(row | {"ndc_wins": int((difference > 0).sum()), "replicates": difference.size})
    return pd.DataFrame(rows)


def selection_dynamics(
    df: pd.DataFrame, unit: str, policy: str, start: int, change_point: int
) -> pd.DataFrame:
    """Per replicate: the regions chosen on days ``start..c-1`` (``before_set``) and ``c..T``
    (``after_set``) as masks, their counts, the regions only from ``c`` on, and the days
    ``c+1..T`` whose super arm differs from the previous day's."""
    days = day_rows(df, unit)
    rows = []
    for replicate, mine in days[days["policy"] == policy].groupby("replicate"):
        mine = mine.sort_values("day")
        chosen, day = selection_matrix(mine["selected"].tolist()), mine["day"].to_numpy()
        before = chosen[(day >= start) & (day < change_point)].any(axis=0)
        after_days = chosen[day >= change_point]
        after = after_days.any(axis=0)
        rows.append(
            {"replicate": replicate, "before_set": before, "after_set": after}
            | {"before": int(before.sum()), "after": int(after.sum())}
            | {"only_after": int((after & ~before).sum())}
            | {"switches": int((after_days[1:] != after_days[:-1]).any(axis=1).sum())}
        )
    return pd.DataFrame(rows).set_index("replicate")


def epsilon_table(df: pd.DataFrame, unit: str) -> pd.DataFrame:
    """``eps(t)``, the error on all 8 validation days and ``lam(t)`` at :data:`EPS_DAYS`
    (NDC-SEM's learner; SEM-UCB's is identical), over replicates."""
    days = day_rows(df, unit)
    days = days[days["policy"] == POLICIES[0]]
    rows = []
    for t in EPS_DAYS:
        at = days[days["day"] == t]
        if at.empty:
            continue
        lam = at["lam"].to_numpy()
        values, counts = np.unique(lam, return_counts=True)
        rows.append(
            {
                "day": t,
                "K(t): validation days received (mean)": at["n_validation"].mean(),
                "eps(t) on them": mean_pm(at["eps"].dropna(), 4),
                "eps, all 8 validation days": mean_pm(at["eps_all"], 4),
                "eps, empty graph (y_hat = b)": mean_pm(at["eps_empty"], 4),
                "median lambda": f"{np.median(lam):.0e}",
                "most frequent lambda": f"{values[np.argmax(counts)]:.0e} "
                f"({counts.max()}/{lam.size})",
                "radius >= 1": int((at["radius"] >= 1).sum()),
                "edges (mean)": f"{at['edges'].mean():.1f}",
            }
        )
    return pd.DataFrame(rows)


def bonus_floor(experiment: CovidExperiment, gamma: float, xi: float) -> float:
    """NDC-SEM's smallest bonus (eq. 11) with ``(gamma, xi)``: an arm pulled every day, in
    the long run (``M -> gamma^D / (1 - gamma)``, ``m -> 1 / (1 - gamma)``)."""
    counts = gamma**experiment.delay / (1 - gamma)
    return 2 * float(
        np.sqrt(xi * (experiment.super_arm_size + 1) * np.log(1 / (1 - gamma)) / counts)
    )


def daily_gap(df: pd.DataFrame, unit: str, ndc: str, first: int, last: int) -> str:
    """Mean ± se over replicates of (``ndc`` - SEM-UCB) estimated reward per day on days
    ``first..last``, paired by replicate."""
    sums = reward_sums(df, unit, first, last)
    return mean_pm((sums[ndc] - sums[POLICIES[1]]).to_numpy() / (last - first + 1), 3)


# -------------------------------------------------------------------- claims and tables


def claim_checks(
    df: pd.DataFrame, experiment: CovidExperiment, unit: str, ndc: str = POLICIES[0]
) -> list[Claim]:
    """The claims for one reward unit, with NDC-SEM = ``ndc`` (Table I's or :data:`TUNED`);
    the graph checks (Fig. 3) for Table I's in the primary unit only. Fig. 9 and the graph
    errors are compared by replicate (:class:`~causalbandits.experiments.evidence.
    PairedComparison`); Fig. 4 is a property of the featured replicate."""
    c, featured = experiment.change_point, experiment.featured_replicate
    start = learned_start(experiment)
    days = day_rows(df, unit)
    horizon = int(days["day"].max())
    stats = selection_dynamics(df, unit, ndc, start, c)
    only = stats.loc[featured, "after_set"] & ~stats.loc[featured, "before_set"]
    sums = reward_sums(df, unit, c, horizon)
    fig9 = PairedComparison.between(sums[ndc], sums[POLICIES[1]], 1)
    checks = [
        Claim.check(
            f"{CLAIMS['fig4']} -- check: at least one region chosen by {ndc} on days "
            f"{c}-{horizon} but not on days {start}-{c - 1} (featured replicate {featured})",
            f"replicate {featured}: {_names(only)}; replicates with >= 1 such region: "
            f"{int((stats['only_after'] > 0).sum())}/{len(stats)}",
            bool(only.any()),
            test=f"property of the featured replicate {featured}",
        ),
        Claim.compare(
            f"{CLAIMS['fig9']} -- check: mean over replicates of the sum over days {c}-{horizon}",
            fig9,
            ours=f"{ndc} {mean_pm(sums[ndc], 3)}, SEM-UCB {mean_pm(sums[POLICIES[1]], 3)} "
            f"(paired difference {pm(fig9.mean, fig9.se, 3)})",
        ),
    ]
    if unit != primary_unit(df) or ndc != POLICIES[0]:
        return checks
    learner = days[days["policy"] == POLICIES[0]]
    first, last = EPS_DAYS[0], horizon
    early = learner[learner["day"] == first].set_index("replicate")
    late = learner[learner["day"] == last].set_index("replicate")
    eps_early, eps_late = mean_pm(early["eps"].dropna(), 4), mean_pm(late["eps"], 4)
    all_early, all_late = mean_pm(early["eps_all"], 4), mean_pm(late["eps_all"], 4)
    return [
        *checks,
        Claim.compare(
            f"{CLAIMS['fig3']} -- check: eps(t) lower at day {last} than at day {first}",
            PairedComparison.between(late["eps"], early["eps"], -1),
            ours=f"eps({first}) = {eps_early}, eps({last}) = {eps_late}",
        ),
        Claim.compare(
            "the same on a fixed set: error of A_hat(t) on all 8 validation days lower at day "
            f"{last} than at day {first}",
            PairedComparison.between(late["eps_all"], early["eps_all"], -1),
            ours=f"{all_early} -> {all_late}",
        ),
        Claim.compare(
            "the final graph predicts the validation days better than the empty graph (y_hat = b)",
            PairedComparison.between(late["eps_all"], late["eps_empty"], -1),
            ours=f"{all_late} vs {mean_pm(late['eps_empty'], 4)}",
        ),
    ]


def reward_sums(df: pd.DataFrame, unit: str, first: int, last: int) -> pd.DataFrame:
    """The estimated overall reward summed over days ``first..last`` per replicate (rows) and
    policy (columns)."""
    days = day_rows(df, unit)
    days = days[(days["day"] >= first) & (days["day"] <= last)]
    return days.groupby(["replicate", "policy"])["reward"].sum().unstack("policy")


def _pm(frame: pd.DataFrame, name: str) -> list[str]:
    """``mean ± se`` of the columns ``<name>`` (or ``<name>_mean``) and ``<name>_se``."""
    mean = frame[name] if name in frame else frame[f"{name}_mean"]
    return [pm(m, s, 3) for m, s in zip(mean, frame[f"{name}_se"], strict=True)]


def reward_table(df: pd.DataFrame, experiment: CovidExperiment, unit: str) -> str:
    """Per window: each NDC-SEM variant and SEM-UCB, and each variant's paired difference to
    SEM-UCB with the replicates where it is higher."""
    variants = [p for p in policies_present(df) if p != POLICIES[1]]
    summaries = {v: reward_summary(df, unit, experiment.change_point, v) for v in variants}
    columns = {"window": summaries[variants[0]]["days"]}
    columns |= {v: _pm(summaries[v], "NDC-SEM") for v in variants}
    columns["SEM-UCB"] = _pm(summaries[variants[0]], "SEM-UCB")
    for v, summary in summaries.items():
        columns[f"{v} - SEM-UCB (paired)"] = _pm(summary, "diff")
        wins = zip(summary["ndc_wins"], summary["replicates"], strict=True)
        columns[f"replicates {v} higher"] = [f"{w}/{r}" for w, r in wins]
    return frame_table(pd.DataFrame(columns))


def dynamics_table(df: pd.DataFrame, unit: str, experiment: CovidExperiment) -> str:
    """Per policy: regions chosen before / after the change point (featured replicate, and mean ±
    se over replicates), regions only after it, and days with a new super arm."""
    c, featured = experiment.change_point, experiment.featured_replicate
    start = learned_start(experiment)
    horizon = int(day_rows(df, unit)["day"].max())
    header = [
        "policy",
        f"replicate {featured}: days {start}-{c - 1}",
        f"replicate {featured}: days {c}-{horizon}",
        f"replicate {featured}: only after",
        f"replicate {featured}: only before",
        f"regions chosen, days {start}-{c - 1}",
        f"regions chosen, days {c}-{horizon}",
        "regions only from the change point",
        f"days {c + 1}-{horizon} with a new super arm",
        "replicates with a region only after",
    ]
    rows = []
    for policy in policies_present(df):
        stats = selection_dynamics(df, unit, policy, start, c)
        before, after = stats.loc[featured, "before_set"], stats.loc[featured, "after_set"]
        rows.append(
            [policy, _names(before), _names(after), f"**{_names(after & ~before)}**"]
            + [_names(before & ~after), mean_pm(stats["before"], 1), mean_pm(stats["after"], 1)]
            + [mean_pm(stats["only_after"], 2), mean_pm(stats["switches"], 1)]
            + [f"{int((stats['only_after'] > 0).sum())}/{len(stats)}"]
        )
    return markdown_table(header, rows)


def tuning_section(df: pd.DataFrame, experiment: CovidExperiment, unit: str) -> str:
    """The tuned pair of ``unit``: how it was chosen, the top of the grid, the evaluation."""
    c, horizon = experiment.change_point, int(day_rows(df, unit)["day"].max())
    summary = tuning_summary(df, unit)
    best = summary.set_index("rank").loc[1]
    gamma, xi = float(best["gamma"]), float(best["xi"])
    table_i = (summary["gamma"] == experiment.gamma) & (summary["xi"] == experiment.xi)
    close = summary[summary["gap"] + 2 * summary["gap_se"] >= 0]
    grids = (("gamma", gamma, experiment.gamma_grid), ("xi", xi, experiment.xi_grid))
    edges = [name for name, value, grid in grids if value in (grid[0], grid[-1])]
    floor = functools.partial(bonus_floor, experiment)
    first = learned_start(experiment)
    facts = {
        "grid (App. VII-D5)": f"gamma in {{{', '.join(f'{g:g}' for g in experiment.gamma_grid)}}}"
        f" x xi in {{{', '.join(f'{x:g}' for x in experiment.xi_grid)}}} ({len(summary)} pairs)",
        "tuning replicates (root seed; evaluation root seed)": (
            f"{int(summary['replicates'].max())} ({experiment.tuning_seed}; {experiment.seed})"
        ),
        "chosen (gamma, xi)": f"**gamma = {gamma:g}, xi = {xi:g}**",
        f"its mean, days 1-{horizon} (criterion)": pm(best["reward"], best["reward_se"], 3),
        "pairs sharing the top mean": int((summary["reward"] == best["reward"]).sum()),
        "pairs within two paired se of it": f"{len(close)}/{len(summary)} (gamma "
        f"{close['gamma'].min():g}-{close['gamma'].max():g}, xi {close['xi'].min():g}-"
        f"{close['xi'].max():g})",
        "chosen value on the grid's edge": " and ".join(edges) or "none",
        "bonus floor (eq. 11, arm pulled every day): chosen / Table I": f"{floor(gamma, xi):.2g}"
        f" / {floor(experiment.gamma, experiment.xi):.2f}",
        f"per day, {TUNED} - SEM-UCB (paired), days {first}-{c - 1}": daily_gap(
            df, unit, TUNED, first, c - 1
        ),
        f"per day, {TUNED} - SEM-UCB (paired), days {c}-{horizon}": daily_gap(
            df, unit, TUNED, c, horizon
        ),
    }
    shown = pd.concat([summary[summary["rank"] <= TUNING_TOP], summary[table_i]])
    shown = shown.drop_duplicates().sort_values("rank")
    top = pd.DataFrame(
        {
            "rank": [
                f"{r}/{len(summary)}" + (" (Table I)" if t else "")
                for r, t in zip(shown["rank"], table_i[shown.index], strict=True)
            ],
            "gamma": shown["gamma"].map("{:g}".format),
            "xi": shown["xi"].map("{:g}".format),
            f"days 1-{horizon} (criterion)": _pm(shown, "reward"),
            "minus rank 1 (paired)": _pm(shown, "gap"),
            f"days {c}-{horizon}": _pm(shown, "reward_from_change"),
            "bonus floor": [f"{floor(g, x):.2g}" for g, x in shown[["gamma", "xi"]].to_numpy()],
        }
    )
    return section(
        f"Added row: {TUNED}, (gamma, xi) by the paper's grid search ({UNIT_LABELS[unit]})",
        markdown_table(["", ""], facts.items()),
        frame_table(top),
        claims_table(claim_checks(df, experiment, unit, TUNED)),
    )


def build_report(df: pd.DataFrame, experiment: CovidExperiment) -> str:
    """Markdown: setup, claims, eps(t), rewards per unit, the tuned row, region choices."""
    c, unit = experiment.change_point, primary_unit(df)
    days = day_rows(df, unit)
    horizon = int(days["day"].max())
    shifts = days.groupby("replicate")["shift"].first()
    units = list(day_rows(df)["unit"].unique())
    headline = claims_table(claim_checks(df, experiment, unit))  # first: the claims' order
    reward_sections = [
        section(
            f"Estimated cumulative overall reward, mean ± se over replicates ({UNIT_LABELS[each]})",
            reward_table(df, experiment, each),
            claims_table(claim_checks(df, experiment, each)) if each != unit else None,
        )
        for each in units
    ]
    why = None
    if len(units) > 1:
        b_mean = df[(df["record"] == "prediction") & (df["unit"] == unit)].groupby("region")["b"]
        b_mean = b_mean.mean()
        sem_bonus = np.sqrt((experiment.super_arm_size + 1) * np.log(horizon) / horizon)
        facts = {
            "NDC-SEM bonus floor, 2 sqrt(xi (s+1) log m / M), M -> gamma^D / (1 - gamma)": (
                f"{bonus_floor(experiment, experiment.gamma, experiment.xi):.2f}"
            ),
            f"SEM-UCB bonus sqrt((s+1) ln t / m_i), arm pulled every day to day {horizon}": (
                f"{sem_bonus:.2f}"
            ),
            "mean b per region (validation days, all replicates, normalised)": (
                f"{b_mean.min():.3f} - {b_mean.max():.3f}"
            ),
        }
        why = section("Why the reward unit matters", markdown_table(["", ""], facts.items()))
    tuned = (df["record"] == "tuning").any()
    return markdown_document(
        f"# {experiment.name}: NDC-SEM paper, Covid-19 Italy (Sec. V-B, App. VII-D)",
        f"N = {len(REGIONS)} regions, T = {horizon} days ({days['date'].min()} to "
        f"{days['date'].max()}), s = {experiment.super_arm_size}, D = "
        f"{experiment.delay}, change point at day {c}; NDC-SEM gamma = {experiment.gamma}, xi = "
        f"{experiment.xi} (Table I); lambda grid "
        f"{', '.join(f'{v:.0e}' for v in experiment.lambda_grid)}; {len(shifts)} replicates, "
        f"shifts k = {', '.join(map(str, shifts.tolist()))}; rewards: {UNIT_LABELS[unit]}. "
        "The paper reports no numbers for this experiment (Figs. 3, 4, 9 are qualitative).",
        headline,
        section(
            f"Validation error eps(t) and lambda(t) ({unit} unit, over replicates)",
            frame_table(epsilon_table(df, unit)),
        ),
        *reward_sections,
        why,
        *(tuning_section(df, experiment, each) for each in units if tuned),
        section(
            f"Regions chosen (replicate {experiment.featured_replicate} and over replicates, "
            f"{unit} unit; days 1-{learned_start(experiment) - 1}, the initialisation, excluded)",
            dynamics_table(df, unit, experiment),
        ),
    )
