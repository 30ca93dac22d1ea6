"""Fault injection on a small run: every disturbance ends in the undisturbed table, bit for
bit, or in a one-line error with a non-zero exit code, never in a silently different table."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from causalbandits.cli import main
from causalbandits.experiments import AlgorithmSpec, ExperimentSpec
from causalbandits.experiments.store import MANIFEST, TASKS

ROOT = Path(__file__).resolve().parents[1]


def spec_file(tmp_path: Path, horizon: int = 300) -> Path:
    spec = ExperimentSpec(
        name="faults",
        environment="robust-lcb",
        env_params={"design": "negate"},
        settings=[{"deviation_budget": 5}, {"deviation_budget": 50}],
        algorithms=[AlgorithmSpec("LinSEM-UCB", "linsem-ucb"), AlgorithmSpec("UCB", "ucb")],
        horizon=horizon,
        replicates=4,
        seed=11,
        chunk_size=2,
        checkpoints=10,
    )
    return spec.to_yaml(tmp_path / "spec.yaml")


def run(spec: Path, out: Path) -> int:
    return main(["run", str(spec), "--out", str(out), "--no-progress"])


@pytest.fixture(scope="module")
def undisturbed(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    tmp = tmp_path_factory.mktemp("undisturbed")
    assert run(spec_file(tmp), tmp / "out") == 0
    return pd.read_csv(tmp / "out" / "results.csv")


def first_task(out: Path) -> Path:
    return sorted((out / TASKS).glob("*.parquet"))[0]


def flip_bytes(path: Path) -> None:
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    for k in range(middle, min(middle + 400, len(data) - 8)):
        data[k] ^= 0xFF
    path.write_bytes(bytes(data))


DISTURBANCES = {
    "flipped bytes": lambda out: flip_bytes(first_task(out)),
    "truncated task": lambda out: first_task(out).write_bytes(b""),
    "deleted task": lambda out: first_task(out).unlink(),
    "truncated manifest": lambda out: (out / MANIFEST).write_text('{"tasks": [', "utf-8"),
    "deleted manifest": lambda out: (out / MANIFEST).unlink(),
    "manifest and task gone": lambda out: [(out / MANIFEST).unlink(), first_task(out).unlink()],
}


@pytest.mark.parametrize("name", DISTURBANCES)
def test_resume_after_a_disturbance_gives_the_same_table(
    name: str, undisturbed: pd.DataFrame, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec, out = spec_file(tmp_path), tmp_path / "out"
    assert run(spec, out) == 0
    DISTURBANCES[name](out)
    capsys.readouterr()
    assert run(spec, out) == 0
    pd.testing.assert_frame_equal(pd.read_csv(out / "results.csv"), undisturbed)
    manifest = json.loads((out / MANIFEST).read_text("utf-8"))
    assert all(task["status"] == "done" for task in manifest["tasks"])


def test_a_corrupt_task_is_refused_when_plotting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec, out = spec_file(tmp_path), tmp_path / "out"
    assert run(spec, out) == 0
    flip_bytes(first_task(out))
    capsys.readouterr()
    assert main(["plot", str(out)]) == 1
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and "does not match its checksum" in error[0]


def test_task_files_of_another_configuration_are_not_adopted(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run(spec_file(tmp_path), out) == 0
    (out / MANIFEST).unlink()
    other = tmp_path / "other"
    other.mkdir()
    assert run(spec_file(other, horizon=200), out) == 1


def test_sigkill_mid_run_then_resume(undisturbed: pd.DataFrame, tmp_path: Path) -> None:
    spec, out = spec_file(tmp_path), tmp_path / "out"
    command = [sys.executable, "-m", "causalbandits.cli", "run", str(spec), "--out", str(out)]
    command.append("--no-progress")
    process = subprocess.Popen(command, cwd=ROOT, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not list((out / TASKS).glob("*.parquet")):
        time.sleep(0.01)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    assert run(spec, out) == 0
    pd.testing.assert_frame_equal(pd.read_csv(out / "results.csv"), undisturbed)
