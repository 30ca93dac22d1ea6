"""Summaries and plots of the long results table."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from causalbandits.experiments import (
    final,
    plot_final_vs_parameter,
    plot_regret_curves,
    standard_plots,
    summarise,
)
from causalbandits.experiments.report import markdown_table


def synthetic_results(budgets: tuple[float, ...] = (2.0, 20.0, 200.0)) -> pd.DataFrame:
    """Three replicates with regret ``(1, 2, 3) * c * t / 10`` for algorithm ``a`` and ``b``."""
    rows = []
    for s, budget in enumerate(budgets):
        for algorithm, scale in (("a", 1.0), ("b", 2.0)):
            for replicate in range(3):
                for t in (10, 20, 30):
                    rows.append(
                        {
                            "experiment": "synthetic",
                            "setting": s,
                            "deviation_budget": budget,
                            "algorithm": algorithm,
                            "replicate": replicate,
                            "t": t,
                            "cum_regret": scale * (replicate + 1) * t / 10,
                            "optimal_share": 0.25 * replicate,
                        }
                    )
    return pd.DataFrame(rows)


def test_summary_mean_standard_error_and_band() -> None:
    summary = summarise(synthetic_results())
    assert list(summary.columns[:5]) == [
        "setting",
        "deviation_budget",
        "algorithm",
        "t",
        "replicates",
    ]
    assert len(summary) == 3 * 2 * 3
    row = summary[(summary.setting == 1) & (summary.algorithm == "b") & (summary.t == 30)].iloc[0]
    values = np.array([6.0, 12.0, 18.0])
    se = values.std(ddof=1) / np.sqrt(3)
    assert row.replicates == 3
    assert row.cum_regret_mean == pytest.approx(12.0)
    assert row.cum_regret_se == pytest.approx(se)
    assert (row.cum_regret_low, row.cum_regret_high) == pytest.approx(
        (12 - 1.96 * se, 12 + 1.96 * se)
    )
    assert row.optimal_share_mean == pytest.approx(0.25)
    # groups keep the order of the results table (spec order), not alphabetical order
    assert list(summary.algorithm.unique()) == ["a", "b"]


def test_final_keeps_the_last_round_of_each_setting() -> None:
    df = synthetic_results()
    df = df[~((df.setting == 2) & (df.t == 30))]
    last = final(df)
    assert set(last[last.setting < 2].t) == {30}
    assert set(last[last.setting == 2].t) == {20}
    assert len(last) == 3 * 2 * 3


def assert_png(path: Path) -> None:
    assert path.exists()
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert path.stat().st_size > 2000


def test_plots_write_png_files(tmp_path: Path) -> None:
    df = synthetic_results()
    assert_png(plot_regret_curves(df, tmp_path / "curves.png", title="synthetic"))
    assert_png(plot_regret_curves(df, tmp_path / "share.png", metric="optimal_share"))
    assert_png(plot_final_vs_parameter(df, "deviation_budget", tmp_path / "sub" / "final.png"))
    paths = standard_plots(df, tmp_path / "std", sweep="deviation_budget")
    assert [p.name for p in paths] == ["regret_curves.png", "final_vs_deviation_budget.png"]
    for path in paths:
        assert_png(path)


def test_final_vs_parameter_refuses_a_second_varying_parameter(tmp_path: Path) -> None:
    df = synthetic_results()
    df["design"] = np.where(df.setting == 0, "negate", "swap")
    with pytest.raises(ValueError, match=r"also vary in \['design'\]"):
        plot_final_vs_parameter(df, "deviation_budget", tmp_path / "x.png")
    with pytest.raises(ValueError, match="no column 'rho'"):
        plot_final_vs_parameter(df, "rho", tmp_path / "x.png")


def test_markdown_table_escapes_pipes_inside_cells() -> None:
    table = markdown_table(["E[y | a]", "n"], [["|mu_a|", 3]])
    assert table.splitlines() == [r"| E[y \| a] | n |", "|---|---|", r"| \|mu_a\| | 3 |"]
