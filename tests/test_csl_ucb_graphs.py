"""CSL-UCB E1 (graph identification): determinism, metrics pipeline, report, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from causalbandits.cli import main
from causalbandits.estimators import graph_metrics
from causalbandits.experiments import read_manifest
from causalbandits.experiments.evidence import Verdict
from causalbandits.papers.catalogue import EXPERIMENTS
from causalbandits.papers.csl_ucb.graphs import (
    METHODS,
    METRIC_COLUMNS,
    GraphIdentificationExperiment,
    build_report,
    claim_checks,
    e1,
)

#: Short DAGMA paths keep the tests fast; the pipeline is the same.
FAST_DAGMA = {"warm_iter": 1000, "max_iter": 2000}


def tiny(replicates: int = 3, **options) -> GraphIdentificationExperiment:
    options.setdefault("dagma_options", FAST_DAGMA)
    options.setdefault("chunk_size", 2)
    return GraphIdentificationExperiment(
        nodes=(5,), samples=(200,), replicates=replicates, **options
    )


def tiny_e1(quick: bool) -> GraphIdentificationExperiment:
    """The shrunk E1 preset used by the CLI test (DAGMA is covered by the tests above)."""
    return tiny(2 if quick else 3, methods=("CSL", "CSL-nw", "GOLEM"))


@pytest.fixture(scope="module")
def tiny_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[int, pd.DataFrame]:
    base = tmp_path_factory.mktemp("e1")
    return {jobs: tiny().run(base / f"jobs{jobs}", jobs=jobs, progress=False) for jobs in (1, 2)}


def test_one_and_two_workers_give_identical_tables(tiny_runs: dict[int, pd.DataFrame]) -> None:
    pd.testing.assert_frame_equal(tiny_runs[1], tiny_runs[2])
    df = tiny_runs[1]
    assert len(df) == 3 * len(METHODS)
    assert list(df["method"].unique()) == list(METHODS)
    assert set(df["replicate"]) == {0, 1, 2} and set(df["n_nodes"]) == {5}
    assert df[["precision", "recall", "nshd"]].notna().all().all()


def test_interventional_regime_gives_csl_about_half_the_rounds(
    tiny_runs: dict[int, pd.DataFrame],
) -> None:
    df = tiny_runs[1].set_index("method")
    assert np.all(np.abs(df.loc["CSL", "node_samples"] - 100) < 25)
    assert np.all(df.loc["GOLEM", "node_samples"] == 200)


def test_report_contains_the_claims_table(tiny_runs: dict[int, pd.DataFrame]) -> None:
    report = build_report(tiny_runs[1], FAST_DAGMA)
    assert "| paper's claim | paper | ours | verdict |" in report
    assert "| N | T | method | graph-FN rate | precision | recall | NSHD |" in report
    assert "interventional" in report and "warm_iter = 1000" in report
    for text in ("CSL's average recall 99.6%", "CSL-nw's graph-FN rate 100%", "than GOLEM's"):
        assert text in report
    checks = claim_checks(tiny_runs[1])
    assert len(checks) == 4  # one N: no trend claims
    assert all(isinstance(claim.verdict, Verdict) for claim in checks)


def test_perfect_estimate_scores_perfectly() -> None:
    b = np.triu(np.random.default_rng(0).normal(size=(6, 6)), k=1)
    metrics = graph_metrics(b, b)
    assert [metrics[c] for c in METRIC_COLUMNS[:6]] == [False, 1.0, 1.0, 0.0, 0, 0]
    assert metrics["n_true"] == metrics["n_est"] == np.count_nonzero(b)

    oracle = GraphIdentificationExperiment(
        nodes=(4, 6), samples=(50, 100), replicates=3, methods=("oracle",)
    )
    df = pd.concat([oracle.run_task(task) for task in oracle.tasks()], ignore_index=True)
    assert len(df) == 2 * 2 * 3
    assert not df["fn_any"].any()
    assert (df["precision"] == 1).all() and (df["recall"] == 1).all() and (df["nshd"] == 0).all()
    assert "| 6 | 100 | oracle | 0.0% | 1.000 | 1.000 | 0.0000 |" in build_report(df)


def test_systems_depend_on_replicate_and_size_not_on_the_chunking() -> None:
    one = GraphIdentificationExperiment(
        nodes=(5,), samples=(60,), replicates=2, methods=("CSL", "oracle"), chunk_size=1
    )
    two = GraphIdentificationExperiment(
        nodes=(5,), samples=(60,), replicates=2, methods=("CSL", "oracle"), chunk_size=2
    )
    chunked = pd.concat([one.run_task(t) for t in one.tasks()], ignore_index=True)
    assert [t.id for t in one.tasks()] == ["p000-c00000", "p000-c00001"]
    pd.testing.assert_frame_equal(chunked, two.run_chunk({"n_nodes": 5}, 0, range(2)))


def test_every_sample_size_and_method_of_a_replicate_sees_its_one_system() -> None:
    experiment = GraphIdentificationExperiment(
        nodes=(5, 6), samples=(40, 80), replicates=3, methods=("oracle", "CSL")
    )
    df = pd.concat([experiment.run_task(t) for t in experiment.tasks()], ignore_index=True)
    for (n, replicate), rows in df.groupby(["n_nodes", "replicate"]):
        assert len(rows) == 2 * 2  # sample sizes x methods
        system = experiment.system(experiment.nodes.index(n), replicate)
        assert system.n_nodes == n
        assert (rows["n_true"] == np.count_nonzero(system.weights)).all()
    systems = [experiment.system(0, r).weights for r in range(3)]
    assert not np.array_equal(systems[0], systems[1])
    assert not np.array_equal(systems[1], systems[2])


def test_observational_regime_uses_t_samples_for_every_method() -> None:
    experiment = GraphIdentificationExperiment(
        nodes=(5,), samples=(80,), replicates=1, regime="observational", methods=("CSL", "CSL-nw")
    )
    df = experiment.run_task(experiment.tasks()[0])
    assert set(df["regime"]) == {"observational"}
    assert (df["node_samples"] == 80).all()


def test_validation() -> None:
    with pytest.raises(ValueError, match="regime"):
        GraphIdentificationExperiment(regime="both")
    with pytest.raises(ValueError, match="methods"):
        GraphIdentificationExperiment(methods=("CSL", "PC"))
    assert e1(True).replicates == 10 and e1(False).nodes == (6, 10, 14)
    assert e1(False).with_replicates(30).replicates == 30


def test_resume_skips_finished_tasks_and_refuses_another_configuration(tmp_path: Path) -> None:
    experiment = GraphIdentificationExperiment(
        nodes=(5,), samples=(60,), replicates=2, methods=("CSL",), chunk_size=1
    )
    first = experiment.run(tmp_path, progress=False)
    manifest = read_manifest(tmp_path)
    assert [record["status"] for record in manifest["tasks"]] == ["done", "done"]
    second = experiment.run(tmp_path, progress=False)
    pd.testing.assert_frame_equal(first, second)
    assert read_manifest(tmp_path)["runs"][-1]["tasks_run"] == 0
    with pytest.raises(ValueError, match="another configuration"):
        experiment.with_replicates(3).run(tmp_path, progress=False)


@pytest.fixture
def catalogue(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(EXPERIMENTS, "tiny-e1", tiny_e1)


def test_cli_reproduce_of_a_run_based_experiment(
    catalogue: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "e1"
    argv = ["reproduce", "tiny-e1", "--quick", "--replicates", "3", "--out", str(out)]
    assert main([*argv, "--no-progress", "--jobs", "1"]) == 0
    printed = capsys.readouterr().out
    assert "| paper's claim | paper | ours | verdict |" in printed
    names = {p.name for p in out.iterdir()}
    expected = {"results.parquet", "results.csv", "report.md", "fn_rate_vs_n.png"}
    assert expected | {"recall_vs_n.png", "manifest.json"} <= names
    table = pd.read_parquet(out / "results.parquet")
    assert set(table["replicate"]) == {0, 1, 2}  # --replicates counts runs
    pd.testing.assert_frame_equal(table, pd.read_csv(out / "results.csv"), check_dtype=False)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["metadata"] == {"catalogue": "tiny-e1", "quick": True, "replicates": 3}
    assert (out / "report.md").read_text().startswith("# CSL-UCB paper, E1")

    (out / "recall_vs_n.png").unlink()
    assert main(["plot", str(out)]) == 0
    assert (out / "recall_vs_n.png").stat().st_size > 0


def test_cli_lists_the_run_based_experiments(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    listing = capsys.readouterr().out
    assert "csl-ucb-e1 " in listing and "graph identification" in listing
    assert "csl-ucb-e2 " in listing and "FN errors" in listing


def hand_table(csl_misses: int, systems: int = 6) -> pd.DataFrame:
    """One N and T: GOLEM misses an edge on every system, CSL on the first ``csl_misses``."""
    rows = [
        {
            "n_nodes": 6,
            "samples": 200,
            "replicate": r,
            "method": method,
            "fn_any": method == "GOLEM" or r < csl_misses,
            "precision": 1.0,
            "recall": 1.0,
            "nshd": 0.0,
        }
        for r in range(systems)
        for method in ("CSL", "GOLEM")
    ]
    return pd.DataFrame(rows)


@pytest.mark.parametrize(
    ("csl_misses", "verdict", "label"),
    [
        (0, Verdict.HOLDS, "holds"),  # CSL - GOLEM / 3 = -1/3 on every system
        (1, Verdict.NOT_SIGNIFICANT, "same direction, not significant"),  # -1/6 ± 1/6
        (5, Verdict.CONTRADICTED, "contradicted"),  # +1/2 ± 1/6
    ],
)
def test_csl_fn_rate_against_a_third_of_golems_is_paired_over_systems(
    csl_misses: int, verdict: Verdict, label: str
) -> None:
    claim = next(c for c in claim_checks(hand_table(csl_misses)) if "than GOLEM's" in c.text)
    assert claim.verdict is verdict and claim.label == label
    assert claim.paper == "81.1% lower"
    assert claim.test.endswith(f"over 6 replicates, threshold 2 se; lower in {6 - csl_misses} of 6")
