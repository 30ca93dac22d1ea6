"""Faults of the runner and the results store (issue 27, items 1, 2, 5, 8 and 10): a resume
after a code change, a corrupt task file behind a lost manifest, bad data before the first
task, plots of a folder with missing tasks, and Ctrl-C. Each ends in the undisturbed table or
in one line with a non-zero exit code, and leaves nothing misleading on disk."""

from __future__ import annotations

import json
import shutil
import signal
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from causalbandits.cli import main
from causalbandits.experiments import AlgorithmSpec, ExperimentSpec, run_experiment, runner
from causalbandits.experiments.store import (
    CODE_KEY,
    CONTENT_KEY,
    MANIFEST,
    TASKS,
    file_digest,
    load_results,
    task_path,
)

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data"
THIS = "tests.faults.test_runner_faults"
OTHER_CODE = "0123456789abcdef"


class CrashingPolicy:
    """Fails in its first round: a run whose every task fails."""

    def __init__(self, problem: object) -> None:
        self.problem = problem

    def reset(self, seeds: Sequence[np.random.SeedSequence]) -> None:
        self.replicates = len(seeds)

    def select(self) -> np.ndarray:
        raise RuntimeError("simulated crash in the first task")


def tiny_spec(**changes: object) -> ExperimentSpec:
    """Eight tasks of a few milliseconds each."""
    spec = ExperimentSpec(
        name="runner-faults",
        environment="robust-lcb",
        env_params={"design": "negate"},
        settings=[{"deviation_budget": 5}, {"deviation_budget": 50}],
        algorithms=[AlgorithmSpec("LinSEM-UCB", "linsem-ucb"), AlgorithmSpec("UCB", "ucb")],
        horizon=60,
        replicates=4,
        seed=11,
        chunk_size=2,
        checkpoints=6,
    )
    return spec.replace(**changes)


def run(spec_path: Path, out: Path, *options: str) -> int:
    return main(["run", str(spec_path), "--out", str(out), "--no-progress", *options])


def one_line(capsys: pytest.CaptureFixture[str]) -> str:
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


@pytest.fixture(scope="module")
def undisturbed(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    out = tmp_path_factory.mktemp("undisturbed")
    return run_experiment(tiny_spec(), out, progress=False)


@pytest.fixture
def finished(tmp_path: Path) -> tuple[Path, Path]:
    """The spec file and the results folder of a finished run."""
    spec_path = tiny_spec().to_yaml(tmp_path / "spec.yaml")
    run_experiment(tiny_spec(), tmp_path / "out", progress=False)
    return spec_path, tmp_path / "out"


def first_task(out: Path) -> Path:
    return sorted((out / TASKS).glob("*.parquet"))[0]


def xor_column_bytes(path: Path, column: str, count: int) -> None:
    """XOR ``count`` bytes in the middle of ``column``'s data in the first row group."""
    chunk = pq.ParquetFile(path).metadata.row_group(0)
    names = [chunk.column(i).path_in_schema for i in range(chunk.num_columns)]
    meta = chunk.column(names.index(column))
    start = meta.dictionary_page_offset or meta.data_page_offset
    middle = start + meta.total_compressed_size // 2
    data = bytearray(path.read_bytes())
    for k in range(middle, middle + count):
        data[k] ^= 0xFF
    path.write_bytes(bytes(data))


# ------------------------------------------------------------------ 1. code changes


def written_by_older_code(out: Path) -> None:
    """Strip the code and content digests from the task files, as the code before them wrote
    (the manifest's checksums follow: the files count as finished)."""
    manifest = json.loads((out / MANIFEST).read_text("utf-8"))
    manifest.pop("code", None)
    for record in manifest["tasks"]:
        path = task_path(out, record["id"])
        table = pq.read_table(path)
        kept = {k: v for k, v in table.schema.metadata.items() if k not in (CODE_KEY, CONTENT_KEY)}
        pq.write_table(table.replace_schema_metadata(kept), path)
        record["sha256"] = file_digest(path)
    (out / MANIFEST).write_text(json.dumps(manifest), "utf-8")


@pytest.mark.parametrize("older", [False, True], ids=["other code", "no digest"])
def test_a_resume_after_a_code_change_is_refused_unless_allowed(
    older: bool,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    spec_path, out = tiny_spec().to_yaml(tmp_path / "spec.yaml"), tmp_path / "out"
    with monkeypatch.context() as patch:
        patch.setattr(runner, "code_digest", lambda: OTHER_CODE)
        run_experiment(tiny_spec(), out, progress=False)
    if older:
        written_by_older_code(out)
    previous = "unknown" if older else OTHER_CODE
    first_task(out).unlink()
    manifest = (out / MANIFEST).read_bytes()
    capsys.readouterr()

    assert run(spec_path, out) == 1
    line = one_line(capsys)
    assert "the code changed since 7 of the 7 finished tasks" in line and previous in line
    assert "another --out folder" in line and "--allow-code-change" in line
    assert (out / MANIFEST).read_bytes() == manifest  # refused before anything changed

    assert run(spec_path, out, "--allow-code-change") == 0
    recorded = json.loads((out / MANIFEST).read_text("utf-8"))
    assert recorded["code"] == [previous, runner.code_digest()]
    assert recorded["runs"][-1]["allow_code_change"] is True
    assert recorded["runs"][-1]["tasks_run"] == 1


def test_the_code_digest_follows_the_source_files_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "causalbandits"
    (package / "policies").mkdir(parents=True)
    (package / "__init__.py").write_text("", "utf-8")
    (package / "policies" / "ucb.py").write_text("BONUS = 2.0\n", "utf-8")
    monkeypatch.setattr(runner.causalbandits, "__file__", str(package / "__init__.py"))
    digest = runner.code_digest.__wrapped__  # uncached
    before = digest()
    (package / "notes.md").write_text("not code", "utf-8")
    assert digest() == before
    (package / "policies" / "ucb.py").write_text("BONUS = 2.5\n", "utf-8")
    assert digest() != before and len(before) == 16
    fingerprint = runner.config_fingerprint({"a": 1})
    monkeypatch.setattr(runner, "code_digest", lambda: OTHER_CODE)  # not in the fingerprint
    assert runner.config_fingerprint({"a": 1}) == fingerprint


# ------------------------------------------------------------------ 2. self-checking files


@pytest.mark.parametrize("count", [1, 200], ids=["one byte", "coarse"])
def test_a_corrupt_task_behind_a_lost_manifest_is_recomputed(
    count: int,
    finished: tuple[Path, Path],
    undisturbed: pd.DataFrame,
    capsys: pytest.CaptureFixture[str],
) -> None:
    spec_path, out = finished
    victim = first_task(out)
    xor_column_bytes(victim, "cum_regret", count)
    (out / MANIFEST).unlink()
    capsys.readouterr()

    assert run(spec_path, out) == 0
    notices = [line for line in capsys.readouterr().err.splitlines() if str(victim) in line]
    assert len(notices) == 1 and "recomputing it" in notices[0]
    pd.testing.assert_frame_equal(load_results(out), undisturbed)


def test_a_corrupt_task_read_by_plot_names_its_file(
    finished: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    _, out = finished
    victim = first_task(out)
    xor_column_bytes(victim, "cum_regret", 200)
    manifest = json.loads((out / MANIFEST).read_text("utf-8"))
    for record in manifest["tasks"]:  # a manifest that checksummed the corrupt file
        if record["id"] == victim.stem:
            record["sha256"] = file_digest(victim)
    (out / MANIFEST).write_text(json.dumps(manifest), "utf-8")
    capsys.readouterr()

    assert main(["plot", str(out)]) == 1
    line = one_line(capsys)
    assert str(victim) in line and "cannot be read" in line


# ------------------------------------------------------------------ 5. a failed first task


def test_a_run_that_fails_in_its_first_task_leaves_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tiny_spec(algorithms=[AlgorithmSpec("crash", f"{THIS}:CrashingPolicy")])
    out = tmp_path / "out"
    assert run(spec.to_yaml(tmp_path / "spec.yaml"), out) == 1
    assert "simulated crash" in one_line(capsys)
    assert not out.exists()


def garbage_bulletins(folder: Path) -> Path:
    path = folder / "bulletins.csv"
    path.write_text("data,denominazione_regione\n2020-02-24,Lombardia\n", "utf-8")
    return path


def garbage_delays(folder: Path) -> Path:
    source = DATA / "train_delays"
    if not source.is_dir():
        pytest.skip(f"the train-delay data are not available at {source}")
    shutil.copytree(source, folder / "delays")
    hourly = folder / "delays" / "hourly_20_stations.csv.gz"
    hourly.chmod(0o644)
    hourly.write_bytes(b"not a gzip file")
    return folder / "delays"


@pytest.mark.parametrize(
    ("experiment", "bad_data"),
    [("ndc-sem-covid", garbage_bulletins), ("ssem-ucb-train-delays", garbage_delays)],
    ids=["covid", "train delays"],
)
def test_bad_data_leave_nothing_on_disk(
    experiment: str, bad_data: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, out = bad_data(tmp_path), tmp_path / "out"  # type: ignore[operator]
    argv = ["reproduce", experiment, "--quick", "--data", str(data), "--out", str(out)]
    assert main([*argv, "--no-progress"]) == 1
    assert str(data) in one_line(capsys)
    assert not out.exists()
    out.mkdir()  # an existing empty folder stays empty
    assert main([*argv, "--no-progress"]) == 1
    assert list(out.iterdir()) == []


# ------------------------------------------------------------------ 8. missing task files


def test_plot_refuses_a_folder_with_missing_task_files(
    finished: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    _, out = finished
    for path in sorted((out / TASKS).glob("*.parquet"))[:2]:
        path.unlink()
    capsys.readouterr()
    assert main(["plot", str(out)]) == 1
    line = one_line(capsys)
    assert "2 of its 8 tasks" in line and "run the same command again" in line
    assert not list(out.glob("*.png"))


# ------------------------------------------------------------------ 10. Ctrl-C


def signal_in_worker(context: object, task: object) -> object:
    return signal.getsignal(signal.SIGINT)


def test_workers_ignore_sigint() -> None:
    before = signal.getsignal(signal.SIGINT)
    results = list(runner.execute_tasks(signal_in_worker, None, [0, 1, 2], jobs=2))
    assert [handler for _, handler, _, _ in results] == [signal.SIG_IGN] * 3
    assert signal.getsignal(signal.SIGINT) is before


def test_an_interrupt_during_the_parallel_map_is_one_line_and_130(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(*args: object, **kwargs: object) -> str:
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "write_task_frame", interrupted)
    spec_path, out = tiny_spec().to_yaml(tmp_path / "spec.yaml"), tmp_path / "out"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert run(spec_path, out, "--jobs", "2") == 130
    assert "interrupted" in one_line(capsys)
    assert [str(w.message) for w in caught] == []
    assert not out.exists()  # no task had finished


def test_data_for_a_catalogue_experiment_that_reads_none_is_refused(tmp_path, capsys) -> None:
    """``plot --data`` on the results of an experiment without a data file: one line."""
    manifest = {"metadata": {"catalogue": "robust-lcb-fig1b", "quick": True}, "tasks": []}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert main(["plot", str(tmp_path), "--data", str(tmp_path / "other.csv")]) == 1
    error = capsys.readouterr().err.strip()
    assert error.endswith("robust-lcb-fig1b reads no data file; drop --data")
    assert "\n" not in error
