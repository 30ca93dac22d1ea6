"""The command line: list, run, reproduce, plot and its error codes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

from causalbandits.cli import main
from causalbandits.experiments import (
    AlgorithmSpec,
    Claim,
    ExperimentSpec,
    SpecExperiment,
    claims_table,
    load_results,
    plot_regret_curves,
    read_manifest,
)
from causalbandits.papers.catalogue import EXPERIMENTS


def small_spec(replicates: int = 4) -> ExperimentSpec:
    return ExperimentSpec(
        name="cli-demo",
        environment="robust-lcb",
        env_params={},
        settings=[{"deviation_budget": 2}, {"deviation_budget": 10}],
        algorithms=[AlgorithmSpec("random", "random")],
        horizon=100,
        replicates=replicates,
        chunk_size=2,
        checkpoints=10,
        sweep="deviation_budget",
        description="A tiny experiment for the CLI tests.",
    )


@dataclass(frozen=True)
class TinyPaperExperiment(SpecExperiment):
    def plot(self, df: pd.DataFrame, out_dir: Path) -> list[Path]:
        return [plot_regret_curves(df, out_dir / "tiny.png")]

    def report(self, df: pd.DataFrame) -> str:
        replicates = df.replicate.nunique()
        claim = Claim.check("three replicates", str(replicates), replicates == 3)
        return f"| replicates | {replicates} |\n\n" + claims_table([claim])


def tiny(quick: bool) -> TinyPaperExperiment:
    """The tiny preset used by the CLI tests."""
    return TinyPaperExperiment(small_spec(2 if quick else 4))


@pytest.fixture
def catalogue(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(EXPERIMENTS, "tiny", tiny)


def test_unknown_experiment_exits_2_and_lists_known_names(
    catalogue: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["reproduce", "no-such-experiment", "--quick"]) == 2
    error = capsys.readouterr().err
    assert "unknown experiment 'no-such-experiment'" in error
    for name in ("robust-lcb-fig1b", "robust-lcb-fig1c", "tiny"):
        assert name in error


def test_bad_usage_exits_2() -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["reproduce", "tiny", "--backend", "dask"])
    assert exit_info.value.code == 2


def test_list_prints_names_and_descriptions(
    catalogue: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.startswith("robust-lcb-fig1b") for line in lines)
    assert any(line.startswith("tiny") and "A tiny experiment" in line for line in lines)


def test_list_leaves_the_matplotlib_backend_alone() -> None:
    """Loading every catalogue entry (the EXCBO modules too) must not switch a user's
    interactive backend (issue 28): run in a fresh interpreter with the SVG backend chosen."""
    code = (
        "import matplotlib; from causalbandits.cli import main; main(['list']); "
        "print(matplotlib.get_backend())"
    )
    env = {**os.environ, "MPLBACKEND": "svg"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert out.stdout.splitlines()[-1].lower() == "svg"


def test_reproduce_writes_results_report_and_plots(
    catalogue: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "tiny"
    argv = ["reproduce", "tiny", "--quick", "--replicates", "3", "--out", str(out), "--no-progress"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "| replicates | 3 |" in printed
    report = (out / "report.md").read_text()
    assert report.startswith("| replicates | 3 |\n")
    assert "| three replicates | 3 | holds |" in report
    saved = json.loads((out / "claims.json").read_text())
    assert saved["paper"] == __name__ and saved["description"].startswith("A tiny experiment")
    assert [c["verdict"] for c in saved["claims"]] == ["holds"]
    table = pd.read_csv(out / "results.csv")
    assert list(table.deviation_budget) == [2, 10]
    assert (table.t == 100).all() and (table.replicates == 3).all()
    assert (out / "tiny.png").stat().st_size > 0
    metadata = {"catalogue": "tiny", "quick": True, "replicates": 3}
    assert read_manifest(out)["metadata"] == metadata

    (out / "tiny.png").unlink()
    assert main(["plot", str(out)]) == 0
    assert (out / "tiny.png").stat().st_size > 0


def test_report_re_renders_a_results_directory(
    catalogue: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "tiny"
    argv = ["reproduce", "tiny", "--quick", "--replicates", "3", "--out", str(out), "--no-progress"]
    assert main(argv) == 0
    report, claims = (out / "report.md").read_text(), (out / "claims.json").read_text()
    (out / "report.md").unlink()
    (out / "claims.json").unlink()
    assert main(["report", str(out)]) == 0
    assert (out / "report.md").read_text() == report
    assert (out / "claims.json").read_text() == claims

    variant = tmp_path / "variant"  # a long table kept without a manifest
    variant.mkdir()
    load_results(out).to_parquet(variant / "results.parquet")
    assert main(["report", str(variant), "--experiment", "tiny"]) == 0
    assert (variant / "report.md").read_text() == report

    original = (out / "manifest.json").read_text()
    manifest = json.loads(original)
    manifest["spec"]["horizon"] = 50  # written by another configuration than the catalogue's
    (out / "manifest.json").write_text(json.dumps(manifest))
    assert main(["report", str(out)]) == 1
    assert "another configuration of 'cli-demo'" in capsys.readouterr().err
    (out / "manifest.json").write_text(original)

    shutil.rmtree(out / "tasks")  # a bandit spec's summary alone cannot be re-rendered
    assert main(["report", str(out)]) == 1
    assert "keeps only the summary" in capsys.readouterr().err


def test_claims_prints_and_writes_the_scoreboard(
    catalogue: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "results" / "tiny"
    argv = ["reproduce", "tiny", "--quick", "--replicates", "2", "--out", str(out), "--no-progress"]
    assert main(argv) == 0
    capsys.readouterr()
    assert main(["claims", "--results", str(out.parent)]) == 0
    page = capsys.readouterr().out
    assert "| three replicates | - | 2 | not reproduced | - | no cause recorded yet |" in page
    assert main(["claims", "--results", str(out.parent), "--write"]) == 0
    assert (out.parent / "CLAIMS.md").read_text() == page
    assert main(["claims", "--results", str(tmp_path / "absent")]) == 1


def test_run_and_plot_a_yaml_spec(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec_path = small_spec().to_yaml(tmp_path / "spec.yaml")
    out = tmp_path / "out"
    assert main(["run", str(spec_path), "--out", str(out), "--no-progress", "--jobs", "1"]) == 0
    names = {"results.csv", "regret_curves.png", "final_vs_deviation_budget.png"}
    assert names <= {p.name for p in out.iterdir()}
    assert "final_vs_deviation_budget.png" in capsys.readouterr().out

    (out / "regret_curves.png").unlink()
    assert main(["plot", str(out)]) == 0
    assert (out / "regret_curves.png").stat().st_size > 0


def test_run_into_a_directory_of_another_spec_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    first = small_spec(replicates=2).to_yaml(tmp_path / "first.yaml")
    second = small_spec(replicates=3).to_yaml(tmp_path / "second.yaml")
    assert main(["run", str(first), "--out", str(out), "--no-progress"]) == 0
    assert main(["run", str(second), "--out", str(out), "--no-progress"]) == 1
    assert "another configuration" in capsys.readouterr().err


def test_plot_of_a_non_results_directory_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plot", str(tmp_path)]) == 1
    assert "not a results directory" in capsys.readouterr().err
