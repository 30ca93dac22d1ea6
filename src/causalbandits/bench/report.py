"""The benchmark's outputs: the long table, the outcomes, the report and its figures.

Scores are the leaderboard's (:mod:`~causalbandits.bench.leaderboard`): regret at ``T``
normalised between the oracle (0) and the family's random play (1), per family the mean
with its two-level bootstrap interval and the share of draws in which each policy ranks
first, over all instances the performance profiles, and beside every score the cost per
replicate and round.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from causalbandits.bench.families import FAMILIES
from causalbandits.bench.leaderboard import Leaderboard, normalised_regret, performance_profile
from causalbandits.bench.suite import BenchResults
from causalbandits.experiments.plots import panel_figure, save_figure
from causalbandits.experiments.report import markdown_document, markdown_table, section

#: The ratios of the profile table (the figure draws 1 to 10).
TAUS = (1.0, 1.5, 2.0, 4.0)


def family_boards(results: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Per (family, policy): normalised regret mean, its 95 % interval, the share of draws
    ranking first (the family's own policies), and ``n`` (instances x replicates)."""
    rows = []
    for family, group in results.groupby("family", sort=False):
        board = Leaderboard.of(group, seed=seed)
        means = board.means.loc[family]
        for policy, row in means.iterrows():
            first = board.ranks.loc[policy, 1]
            n = int((group["policy"] == policy).sum())
            rows.append(
                {"family": family, "policy": policy, **row.to_dict(), "first": first, "n": n}
            )
    return pd.DataFrame(rows)


def failed_rows(bench: BenchResults) -> pd.DataFrame:
    """Infinite-regret rows for the instances of policies that errored or were too slow
    (they count as failures in the profiles, never silently dropped)."""
    failed = bench.outcomes[bench.outcomes["status"].isin(["error", "too slow"])]
    instances = bench.results[
        ["family", "instance", "replicate", "random_regret"]
    ].drop_duplicates()
    rows = failed[["family", "policy"]].merge(instances, on="family")
    return rows.assign(regret=np.inf)


def heat_map(boards: pd.DataFrame, outcomes: pd.DataFrame, out_dir: Path) -> Path:
    """Family x policy mean normalised regret; a policy that did not run on a family it can
    play is marked ``slow`` or ``error``, one it cannot play is blank."""
    families = list(dict.fromkeys(outcomes["family"]))
    policies = list(dict.fromkeys(outcomes["policy"]))
    table = boards.pivot(index="family", columns="policy", values="mean")
    table = table.reindex(index=families, columns=policies)
    status = outcomes.set_index(["family", "policy"])["status"]
    figure = Figure(figsize=(1.0 + 0.6 * len(policies), 1.2 + 0.45 * len(families)))
    ax = figure.subplots()
    values = table.to_numpy(dtype=float)
    image = ax.imshow(np.minimum(values, 1.5), cmap="viridis_r", vmin=0, vmax=1.5, aspect="auto")
    for (i, j), value in np.ndenumerate(values):
        mark = status.get((families[i], policies[j]), "incompatible")
        if np.isfinite(value):
            colour = "k" if value < 0.5 else "w"
            ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=7, color=colour)
        elif mark in ("error", "too slow"):
            text = "slow" if mark == "too slow" else mark
            ax.text(j, i, text, ha="center", va="center", fontsize=7, color="0.4")
    ax.set_xticks(range(len(policies)), policies, rotation=60, ha="right", fontsize=8)
    ax.set_yticks(range(len(families)), families, fontsize=8)
    figure.colorbar(image, ax=ax, label="normalised regret (0 oracle, 1 random)")
    return save_figure(figure, out_dir / "heat_map.png")


def action_group(family: str) -> str:
    """The panel of a family's policies in the profile figure: its kind of action."""
    kind = FAMILIES[family].kind
    return "super arms" if kind.endswith("super-arms") else kind


def profile_figure(profiles: pd.DataFrame, results: pd.DataFrame, out_dir: Path) -> Path:
    """The performance profiles ``rho(tau)``, ``tau`` from 1 to 10 (log axis), one panel per
    kind of action (policies of different kinds never meet on an instance)."""
    group = results.drop_duplicates("policy").set_index("policy")["family"].map(action_group)
    panels = list(dict.fromkeys(group))
    figure, axes = panel_figure(1, len(panels), (4.2, 3.6), sharey=True)
    for ax, panel in zip(axes, panels, strict=True):
        for policy, row in profiles.loc[group.index[group == panel]].iterrows():
            ax.step(profiles.columns, row.to_numpy(), where="post", label=policy)
        ax.set_xscale("log")
        ax.set_title(panel, fontsize=9)
        ax.set_xlabel("tau (ratio to the instance's best)")
        ax.legend(fontsize=6)
    axes[0].set_ylabel("share of the policy's instances")
    return save_figure(figure, out_dir / "profiles.png")


def findings(boards: pd.DataFrame) -> list[str]:
    """One sentence per family from the numbers: the policy of lowest mean (its interval and
    rank-1 share; "not decided" below 95 % of draws) and the policies no better than random
    play (their interval's lower end at least 1)."""
    lines = []
    for family, group in boards.groupby("family", sort=False):
        best = group.loc[group["mean"].idxmin()]
        text = (
            f"{family}: {best['policy']} lowest ({best['mean']:.2f} "
            f"[{best['low']:.2f}, {best['high']:.2f}], first in {best['first']:.0%} of draws"
            + ("" if best["first"] >= 0.95 else ": not decided")
            + ")"
        )
        poor = group.loc[(group["low"] >= 1) & (group["policy"] != FAMILIES[family].random)]
        if len(poor):
            text += f"; no better than random: {', '.join(poor['policy'])}"
        lines.append(f"- {text}.")
    return lines


def milliseconds(seconds: float) -> str:
    """A cost in milliseconds, two significant digits (``-``: not measured)."""
    return f"{1000 * seconds:.2g}" if np.isfinite(seconds) else "-"


def build_report(bench: BenchResults, boards: pd.DataFrame, profiles: pd.DataFrame) -> str:
    """The markdown report of a bench run."""
    cost = bench.outcomes.set_index(["family", "policy"])["cost"]
    sizes = [
        [
            name,
            f.kind,
            ", ".join(sorted(f.offers)) or "-",
            "yes" if f.stationary else "no",
            *vars(f.sizes[bench.suite]).values(),
        ]
        for name, f in FAMILIES.items()
        if name in set(bench.outcomes["family"])
    ]
    board_rows = [
        [
            row.family,
            row.policy,
            f"{row.mean:.3f} [{row.low:.3f}, {row.high:.3f}]",
            f"{row.first:.0%}",
            row.n,
            milliseconds(cost.get((row.family, row.policy), np.nan)),
        ]
        for row in boards.itertuples()
    ]
    profile_rows = [[p, *(f"{v:.2f}" for v in row)] for p, row in profiles.iterrows()]
    skipped = bench.outcomes[bench.outcomes["status"] != "ran"]
    skipped_rows = [
        [r.family, r.policy, r.status, r.reason, milliseconds(r.cost)] for r in skipped.itertuples()
    ]
    return markdown_document(
        f"# Causal-bandit benchmark ({bench.suite} suite)",
        "Regret at T normalised per instance between the oracle (0) and the family's random "
        "play (1) on the same instance and noise; mean over instances and replicates with "
        "its 95 % two-level bootstrap interval (instances, then replicates; 1,000 draws); "
        "'first': the share of draws in which the policy has the lowest mean of its family; "
        "cost: milliseconds per replicate and round.",
        section(
            "Families",
            markdown_table(
                ["family", "actions", "told", "stationary", "T", "instances", "replicates"]
                + ["budget (CPU-s)"],
                sizes,
            ),
        ),
        section("Findings", "\n".join(findings(boards))),
        section(
            "Leaderboard per family",
            markdown_table(
                ["family", "policy", "normalised regret [95 % CI]", "first", "n", "ms/round"],
                board_rows,
            ),
            "![heat map](heat_map.png)",
        ),
        section(
            "Performance profiles",
            "Share of the instances a policy ran on which its normalised regret is within "
            "tau times the best policy's there (a policy that errored or was too slow counts "
            "as failing on its family's instances).",
            markdown_table(["policy", *(f"tau = {t:g}" for t in TAUS)], profile_rows),
            "![profiles](profiles.png)",
        ),
        section(
            "Not run",
            markdown_table(["family", "policy", "status", "reason", "ms/round"], skipped_rows)
            if skipped_rows
            else "Every policy ran on every family.",
        ),
    )


def write_outputs(bench: BenchResults, out_dir: str | Path) -> list[Path]:
    """``results.parquet`` (the long table with ``score``), ``outcomes.csv``, the figures
    and ``leaderboard.md``; return their paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    ran = bench.results.dropna(subset=["random_regret"])
    scored = ran.assign(score=normalised_regret(ran))
    paths = [out_dir / "results.parquet", out_dir / "outcomes.csv"]
    scored.to_parquet(paths[0], index=False)
    bench.outcomes.assign(suite=bench.suite).to_csv(paths[1], index=False)
    boards = family_boards(ran)
    profiles_all = pd.concat([ran, failed_rows(bench)], ignore_index=True)
    taus = np.unique(np.concatenate([TAUS, np.geomspace(1, 10, 60)]))
    profiles = performance_profile(profiles_all, taus)
    paths += [
        heat_map(boards, bench.outcomes, out_dir),
        profile_figure(profiles, profiles_all, out_dir),
    ]
    report = build_report(bench, boards, profiles[list(TAUS)])
    paths.append(out_dir / "leaderboard.md")
    paths[-1].write_text(report, encoding="utf-8")
    return paths


def read_outputs(out_dir: str | Path) -> BenchResults:
    """The :class:`BenchResults` that :func:`write_outputs` wrote into ``out_dir`` (to
    re-render a saved run)."""
    out_dir = Path(out_dir)
    outcomes = pd.read_csv(out_dir / "outcomes.csv", keep_default_na=False, na_values=[""])
    outcomes["reason"] = outcomes["reason"].fillna("")
    (suite,) = outcomes.pop("suite").unique()
    results = pd.read_parquet(out_dir / "results.parquet").drop(columns="score")
    return BenchResults(results, outcomes, str(suite))
