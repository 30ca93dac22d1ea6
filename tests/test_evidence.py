"""The verdict rule (holds / not significant / contradicted / not reproduced / n/a) on
constructed differences, the claims table, and the scoreboard built from saved claims."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from causalbandits.experiments.evidence import (
    PAIRED_SE,
    PairedComparison,
    Verdict,
    paired_sign,
    strength,
    weakest,
)
from causalbandits.experiments.report import Claim, claims_table, collecting_claims
from causalbandits.experiments.scoreboard import (
    collect,
    count_table,
    read_causes,
    save_claims,
    scoreboard,
    stale_causes,
)
from causalbandits.papers.catalogue import PAPER_TITLES

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results"


def differences(mean: float, se: float, n: int = 8) -> np.ndarray:
    """``n`` values whose mean and standard error are exactly ``mean`` and ``se``."""
    base = np.linspace(-1.0, 1.0, n)
    base = (base - base.mean()) / (base.std(ddof=1) / np.sqrt(n))
    return mean + se * base


@pytest.mark.parametrize(
    ("mean", "direction", "verdict", "label"),
    [
        (3.0, 1, Verdict.HOLDS, "holds"),
        (1.0, 1, Verdict.NOT_SIGNIFICANT, "same direction, not significant"),
        (-1.0, 1, Verdict.NOT_SIGNIFICANT, "opposite direction, not significant"),
        (-3.0, 1, Verdict.CONTRADICTED, "contradicted"),
        (-3.0, -1, Verdict.HOLDS, "holds"),
        (-1.0, -1, Verdict.NOT_SIGNIFICANT, "same direction, not significant"),
        (3.0, -1, Verdict.CONTRADICTED, "contradicted"),
    ],
)
def test_paired_verdict_beyond_within_and_opposite(
    mean: float, direction: int, verdict: Verdict, label: str
) -> None:
    comparison = PairedComparison.of(differences(mean, 1.0), direction)
    assert comparison.mean == pytest.approx(mean)
    assert comparison.se == pytest.approx(1.0)
    assert comparison.verdict is verdict
    assert comparison.label == label


def test_threshold_is_two_standard_errors() -> None:
    assert PAIRED_SE == 2.0
    assert PairedComparison.of(differences(2.01, 1.0)).verdict is Verdict.HOLDS
    assert PairedComparison.of(differences(1.99, 1.0)).verdict is Verdict.NOT_SIGNIFICANT
    assert paired_sign(-2.01, 1.0) == -1
    assert paired_sign(0.5, float("nan")) == 0


def test_test_text_counts_agreeing_replicates() -> None:
    comparison = PairedComparison.of([0.5, -0.1, 0.3, float("nan"), 0.2], direction=1)
    assert comparison.replicates == 4  # the NaN (a replicate one side lacks) is dropped
    assert comparison.agreeing == 3
    assert (
        comparison.test() == "paired difference over 4 replicates, threshold 2 se; higher in 3 of 4"
    )
    lower = PairedComparison.of([0.5, -0.1, 0.3, 0.2], direction=-1)
    assert lower.test().endswith("lower in 1 of 4")


def test_between_pairs_on_common_replicates() -> None:
    first = pd.Series([1.0, 2.0, 3.0, 9.0], index=[0, 1, 2, 3])
    second = pd.Series([0.0, 1.5, 2.0], index=[0, 1, 2])
    comparison = PairedComparison.between(first, second)
    assert comparison.replicates == 3
    assert comparison.mean == pytest.approx((1.0 + 0.5 + 1.0) / 3)


def test_an_exact_tie_points_nowhere() -> None:
    tie = PairedComparison.of([0.0, 0.0, 0.0])
    assert tie.verdict is Verdict.NOT_SIGNIFICANT
    assert tie.label == "no difference, not significant"


def test_too_few_replicates_cannot_decide() -> None:
    assert PairedComparison.of([5.0]).verdict is Verdict.NA
    assert PairedComparison.of([]).verdict is Verdict.NA
    with pytest.raises(ValueError, match="direction"):
        PairedComparison.of([1.0, 2.0], direction=0)


def test_property_claims_and_bad_verdicts() -> None:
    assert Claim.check("x", "1", True).verdict is Verdict.HOLDS
    assert Claim.check("x", "1", False).verdict is Verdict.NOT_REPRODUCED
    assert Claim.check("x", "1", None).verdict is Verdict.NA
    assert Claim.not_checkable("x").ours == "not run"
    with pytest.raises(TypeError, match="Verdict"):
        Claim("x", "1", True)  # type: ignore[arg-type]


def test_claims_table_states_the_test_and_collects() -> None:
    comparison = PairedComparison.of(differences(1.0, 1.0, 4))
    claims = [
        Claim.compare("A above B", comparison, paper="0.8"),
        Claim.check("the curve falls", "yes, 3 -> 1", True),
    ]
    with collecting_claims() as collected:
        table = claims_table(claims)
    assert collected == claims
    lines = table.splitlines()
    assert lines[0] == "| paper's claim | paper | ours | verdict | test |"
    assert "same direction, not significant" in lines[2]
    assert "threshold 2 se; higher in" in lines[2]
    assert lines[3].endswith("| holds | - |")
    assert claims_table(claims[1:]).splitlines()[0] == "| paper's claim | ours | verdict |"


def test_scoreboard_counts_causes_and_stale_entries(tmp_path: Path) -> None:
    first = tmp_path / "paper-a-fig1"
    second = tmp_path / "paper-b" / "nested"
    first.mkdir()
    second.mkdir(parents=True)
    beyond = PairedComparison.of(differences(-3.0, 1.0))
    save_claims(
        first,
        [Claim.compare("A above B", beyond), Claim.check("falls", "no", False)],
        "Paper A",
        "Fig. 1",
    )
    save_claims(second, [Claim.check("p", "1", True)], "Paper B", "Table 2")
    (first / "causes.yaml").write_text(
        "A above B:\n  cause: B is tuned\n  link: docs/decisions/a.md#1\n"
        "gone claim:\n  cause: old\n",
        encoding="utf-8",
    )
    (second / "causes.yaml").write_text("'*':\n  cause: a sensitivity run\n", encoding="utf-8")
    saved = collect(tmp_path)
    assert [s.experiment for s in saved] == ["paper-a-fig1", "paper-b/nested"]
    # "gone claim" names no claim; "*" of a folder whose claims all hold covers nothing
    assert stale_causes(tmp_path) == [("paper-a-fig1", "gone claim"), ("paper-b/nested", "*")]
    page = scoreboard(tmp_path, ["Paper B", "Paper A"])
    assert page.index("## Paper B") < page.index("## Paper A")
    assert "| Paper A | 0 | 0 | 1 | 1 | 0 | 2 |" in page
    assert "| all | 1 | 0 | 1 | 1 | 0 | 3 |" in page
    assert "B is tuned ([source](../decisions/a.md#1))" in page
    assert "no cause recorded yet" in page  # "falls" has none
    save_claims(second, [Claim.check("p", "1", False)], "Paper B", "Table 2")
    assert "| p | - | 1 | not reproduced | - | a sensitivity run |" in scoreboard(tmp_path)
    payload = json.loads((first / "claims.json").read_text(encoding="utf-8"))
    assert payload["claims"][0]["verdict"] == "contradicted"


def test_a_cause_needs_its_text(tmp_path: Path) -> None:
    (tmp_path / "causes.yaml").write_text("claim:\n  link: a.md\n", encoding="utf-8")
    with pytest.raises(ValueError, match="needs a 'cause'"):
        read_causes(tmp_path)


def test_committed_scoreboard_is_generated_from_docs_results() -> None:
    """``docs/results/CLAIMS.md`` is what ``causalbandits claims --write`` makes of the saved
    claims; every recorded cause names a claim that needs one."""
    committed = (RESULTS / "CLAIMS.md").read_text(encoding="utf-8")
    assert committed == scoreboard(RESULTS, PAPER_TITLES), (
        "docs/results/CLAIMS.md is out of date: run 'causalbandits claims --write'"
    )
    assert stale_causes(RESULTS) == []
    assert "no cause recorded yet" not in committed, "a claim that does not hold needs a cause"


def test_the_readme_shows_the_scoreboard_counts() -> None:
    readme = (RESULTS.parents[1] / "README.md").read_text(encoding="utf-8")
    assert count_table(RESULTS, PAPER_TITLES) in readme, (
        "README.md's claim counts differ from the scoreboard's: copy its first table"
    )


def test_every_saved_report_has_its_claims() -> None:
    for report in RESULTS.rglob("report.md"):
        assert (report.parent / "claims.json").is_file(), f"{report} has no claims.json"


def test_the_weakest_of_several_comparisons_decides() -> None:
    holds = PairedComparison.of(differences(5.0, 1.0))
    barely = PairedComparison.of(differences(2.5, 1.0))
    tie = PairedComparison.of(differences(1.0, 1.0))
    against = PairedComparison.of(differences(-3.0, 1.0))
    assert strength(holds) == pytest.approx(5.0) and strength(against) == pytest.approx(-3.0)
    assert strength(PairedComparison.of([1.0])) == -np.inf
    assert strength(PairedComparison.of([1.0, 1.0])) == np.inf  # zero se, nonzero mean
    assert weakest({"a": holds, "b": barely}) == "b"
    assert weakest({"a": holds, "b": tie, "c": against}) == "c"
    assert weakest({"a": tie, "b": PairedComparison.of([1.0])}) == "a"
    with pytest.raises(ValueError, match="no comparison"):
        weakest({})


def test_an_unpaired_comparison_uses_welchs_standard_error() -> None:
    """Closed form: means 3 and 1, sample variances 1 and 5 over 3 and 5 replicates (a
    missing value dropped); a paired test would have needed shared replicates."""
    first = pd.Series([2.0, 3.0, 4.0])
    second = pd.Series([-2.0, 0.0, 1.0, 2.0, 4.0, np.nan])
    comparison = PairedComparison.unpaired(first, second)
    assert comparison.mean == pytest.approx(2.0)
    assert comparison.se == pytest.approx(np.sqrt(1 / 3 + 5 / 5))
    assert (comparison.agreeing, comparison.replicates, comparison.direction) == (0, 3, 1)
    assert comparison.verdict is Verdict.NOT_SIGNIFICANT  # 2.0 < 2 x 1.155
    assert PairedComparison.unpaired(first + 1.0, second).verdict is Verdict.HOLDS
