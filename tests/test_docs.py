"""The walk-through ``docs/adding-a-paper.md`` runs as written and gives the stated results."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import numpy as np
import pytest

from causalbandits.cli import main
from causalbandits.papers import catalogue

DOC = Path(__file__).resolve().parents[1] / "docs" / "adding-a-paper.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def python_blocks(text: str) -> list[str]:
    """The fenced ``python`` code blocks of a markdown text, in order."""
    return BLOCK.findall(text)


def claim_verdicts(report: str) -> dict[str, str]:
    """Claim text -> verdict of the "paper's claim | ... | verdict | ..." table of a report."""
    lines = report.split("| paper's claim |", 1)[1].strip().splitlines()
    header = ["paper's claim", *(c.strip() for c in lines[0].strip().strip("|").split("|"))]
    rows = [line for line in lines[2:] if line.startswith("|")]
    cells = [
        dict(zip(header, (c.strip() for c in row.strip("|").split("|")), strict=True))
        for row in rows
    ]
    return {row["paper's claim"]: row["verdict"] for row in cells}


@pytest.fixture(scope="module")
def walkthrough(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The globals of the doc's code blocks, run as one module in a fresh directory."""
    blocks = python_blocks(DOC.read_text(encoding="utf-8"))
    assert len(blocks) >= 4
    directory = tmp_path_factory.mktemp("walkthrough")
    script = directory / "toy_paper.py"
    script.write_text("\n".join(blocks), encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(directory)
        namespace = runpy.run_path(str(script), run_name="toy_paper")
    namespace["directory"] = directory
    return namespace


def test_bandit_experiment_table_and_verdicts(walkthrough: dict) -> None:
    df = walkthrough["results"]["toy-robust"]
    # 2 budgets x 3 algorithms x 4 replicates x 3 checkpoints.
    assert len(df) == 2 * 3 * 4 * 3
    assert sorted(df["t"].unique()) == [100, 500, 1000]
    assert set(df["algorithm"]) == {"Robust-LCB", "LinSEM-UCB", "UCB"}
    assert set(df["deviation_budget"]) == {0.0, 60.0}
    assert (
        df.groupby(["setting", "algorithm", "replicate"])["cum_regret"].diff().dropna() >= 0
    ).all()
    verdicts = claim_verdicts(walkthrough["reports"]["toy-robust"])
    assert verdicts == {
        "without deviations LinSEM-UCB beats Robust-LCB": "holds",
        "with deviations Robust-LCB has the lowest regret": "holds",
    }
    assert (walkthrough["directory"] / "results" / "toy-robust-quick" / "results.csv").is_file()


def test_task_grid_matches_the_closed_form(walkthrough: dict) -> None:
    df = walkthrough["results"]["toy-mean-reward"]
    assert len(df) == 2 * 2 * 20
    # The hierarchical graph: roots of mean 1 (U[0, 2]), 3 parents per node, weights
    # 0.5 / sqrt(3) (observational) and 1 / sqrt(3) (the intervened reward node).
    middle = 1 + 3 * 0.5 / np.sqrt(3)
    exact = {"none": 1 + 3 * 0.5 / np.sqrt(3) * middle, "reward": 1 + 3 / np.sqrt(3) * middle}
    for intervention, value in exact.items():
        rows = df[df["intervention"] == intervention]
        np.testing.assert_allclose(rows["exact"], value, rtol=1e-12)
        large = rows[rows["samples"] == 1000]["estimate"]
        assert abs(large.mean() - value) < 4 * large.std(ddof=1) / np.sqrt(len(large))
    verdicts = claim_verdicts(walkthrough["reports"]["toy-mean-reward"])
    assert verdicts == {"the error of a sample mean shrinks like 1/sqrt(n)": "holds"}
    assert (
        walkthrough["directory"] / "results" / "toy-mean-reward-quick" / "results.parquet"
    ).is_file()


def test_registered_experiments_are_listed(
    walkthrough: dict, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, preset in walkthrough["EXPERIMENTS"].items():
        monkeypatch.setitem(catalogue.EXPERIMENTS, name, preset)
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert {"toy-robust", "toy-mean-reward"} <= {line.split()[0] for line in out.splitlines()}
    assert "Toy: the sample mean of the reward node against its closed form" in out
    assert catalogue.load_experiment("toy-robust", quick=True).name == "toy-robust"
