"""The shared report-kit helpers: markdown assembly, ordering, paired samples by replicate,
group rankings, the comparison claim's test prefix, and the figure scaffolding."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from causalbandits.experiments.evidence import (
    PairedComparison,
    Verdict,
    against_best_other,
    by_replicate,
    group_against_rest,
    replicate_table,
    weakest,
)
from causalbandits.experiments.metrics import final, summarise
from causalbandits.experiments.plots import (
    band,
    error_lines,
    grouped_bars,
    panel_figure,
    plot_choices,
)
from causalbandits.experiments.report import (
    Claim,
    claims_table,
    collecting_claims,
    in_order,
    lowest_claim,
    markdown_document,
    pm_table,
    section,
)


def test_markdown_document_and_sections_skip_absent_blocks() -> None:
    text = markdown_document("# title", "", None, section("part", "a", None, "b"), "end")
    assert text == "# title\n\n## part\n\na\n\nb\n\nend\n"
    assert section("empty") == "## empty"


def test_claims_are_collected_in_the_order_the_blocks_are_built() -> None:
    first = Claim.check("first", "1", True)
    second = Claim.check("second", "2", False)
    with collecting_claims() as claims:
        markdown_document(claims_table([first]), section("more", claims_table([second])))
    assert [c.text for c in claims] == ["first", "second"]


def test_in_order_keeps_the_given_order() -> None:
    assert in_order(("CSL", "GOLEM", "DAGMA"), ["DAGMA", "CSL", "DAGMA"]) == ["CSL", "DAGMA"]
    assert in_order(("a", "b"), []) == []


def test_by_replicate_pairs_first_rows_per_label() -> None:
    rows = pd.DataFrame(
        {
            "algorithm": ["B", "A", "B", "A", "B"],
            "replicate": [0, 0, 1, 1, 1],
            "value": [1.0, 2.0, 3.0, 4.0, 99.0],
        }
    )
    values = by_replicate(rows, "value")
    assert list(values) == ["B", "A"]  # order of appearance
    assert values["B"].to_dict() == {0: 1.0, 1: 3.0}  # a replicate's first row
    tasks = by_replicate(rows.assign(task=rows["replicate"] // 2), "value", index="task")
    assert tasks["A"].to_dict() == {0: 2.0}


def test_group_against_rest_pairs_the_least_favourable_member_with_the_best_other() -> None:
    index = range(4)
    values = {
        "x": pd.Series([1.0, 1.1, 0.9, 1.0], index),
        "y": pd.Series([2.0, 2.1, 1.9, 2.0], index),
        "z": pd.Series([5.0, 5.0, 5.0, 5.0], index),
        "w": pd.Series([5.0, 5.0, 5.0, 5.0], index),
    }
    member, other, comparison = group_against_rest(values, ["x", "y"], ["z", "w"], -1)
    assert (member, other) == ("y", "z")  # y: the group's highest; z: first of equal means
    assert comparison.verdict is Verdict.HOLDS and comparison.mean == pytest.approx(-3.0)
    member, other, _ = group_against_rest(values, ["z"], ["x", "y"], +1)
    assert (member, other) == ("z", "y")  # "z is the highest" against the highest other
    other, comparison = against_best_other(values, "y")
    assert other == "x" and comparison.verdict is Verdict.CONTRADICTED  # y is not the lowest
    assert against_best_other(values, "x", +1)[0] == "z"


def test_compare_puts_the_prefix_before_the_test() -> None:
    comparisons = {
        k: PairedComparison.of(np.array(d)) for k, d in ((1, [3.0, 3.2]), (2, [-1.0, 1.0]))
    }
    k = weakest(comparisons)
    claim = Claim.compare("text", comparisons[k], ours="o", test_prefix=f"weakest P{k}: ")
    assert claim.test == "weakest P2: " + comparisons[2].test()
    assert (claim.verdict, claim.label) == (comparisons[2].verdict, comparisons[2].label)


def test_summarise_takes_named_metrics() -> None:
    df = pd.DataFrame({"method": ["a", "a", "b"], "recall": [1.0, 0.5, 0.2], "other": [0, 0, 0]})
    out = summarise(df, ["method"], metrics=["recall"]).set_index("method")
    assert out.loc["a", "recall_mean"] == 0.75 and np.isnan(out.loc["b", "recall_se"])
    assert "other_mean" not in out


def test_panel_figure_grouped_bars_and_choices() -> None:
    figure, axes = panel_figure(2, 3, (2.0, 1.5), sharex=True)
    assert axes.shape == (6,) and tuple(figure.get_size_inches()) == (6.0, 3.0)
    grouped_bars(axes[0], {"a": ([1.0, 2.0], [0.1, np.nan]), "b": ([3.0, 4.0], [0.0, 0.0])})
    bars = [patch.get_x() + patch.get_width() / 2 for patch in axes[0].patches]
    np.testing.assert_allclose(bars, [-0.2, 0.8, 0.2, 1.2])
    plot_choices(axes[1], np.array([[True, False, True], [False, False, True]]), "xyz", 6)
    image = axes[1].get_images()[0]
    assert image.get_array().shape == (3, 2)  # arms down, rounds across
    assert [t.get_text() for t in axes[1].get_yticklabels()] == ["x", "y", "z"]


def test_replicate_table_and_lowest_claim() -> None:
    rows = pd.DataFrame(
        {
            "delay": [5] * 6,
            "algorithm": ["a", "b", "c"] * 2,
            "replicate": [0, 0, 0, 1, 1, 1],
            "regret": [1.0, 5.0, 3.0, 1.2, 5.5, 3.1],
        }
    )
    table = replicate_table(rows, "regret", ["delay"])
    assert list(table.columns) == ["a", "b", "c"] and table.loc[(5, 1), "b"] == 5.5
    claim = lowest_claim("a is lowest", table.loc[5], "a")
    assert claim.ours.startswith("lowest: a; a - c: difference -2")
    assert claim.verdict is Verdict.HOLDS


def test_pm_table_sorts_and_marks_missing_cells() -> None:
    rows = pd.DataFrame({"g": ["y", "y", "x", "x"], "d": [2, 2, 1, 1], "v": [1.0, 3.0, 2.0, 2.0]})
    table = pm_table(rows, "g", "d", "v")
    assert list(table.index) == ["x", "y"] and list(table.columns) == [1, 2]
    assert table.loc["y", 2] == "2 ± 1" and table.loc["x", 2] == "-"


def test_final_without_setting_or_algorithm_keeps_the_last_round() -> None:
    rows = pd.DataFrame({"algorithm": ["a", "a", "b"], "t": [1, 2, 1], "v": [0, 1, 2]})
    assert final(rows)["v"].tolist() == [1, 2]  # each algorithm's last round
    assert final(rows.drop(columns="algorithm"))["v"].tolist() == [1]


def test_error_lines_and_band_draw_on_the_axes() -> None:
    _, (ax,) = panel_figure(1, 1, (2.0, 2.0))
    summary = pd.DataFrame({"n": [2, 1], "m_mean": [3.0, 1.0], "m_se": [0.1, np.nan]})
    error_lines(ax, {"a": summary}, "n", "m")
    assert ax.lines[0].get_xydata().tolist() == [[1.0, 1.0], [2.0, 3.0]]  # sorted by x
    band(ax, pd.Series([1.0, 2.0], index=[0, 1]), np.array([0.5, 0.5]), label="b")
    assert ax.lines[-1].get_label() == "b" and len(ax.collections) >= 1
