"""User errors end in one line on standard error, no traceback, a non-zero exit code and no
output folder."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml

from causalbandits.cli import main
from causalbandits.experiments import AlgorithmSpec, ExperimentSpec


def good_spec() -> dict:
    spec = ExperimentSpec(
        name="errors",
        environment="robust-lcb",
        env_params={},
        settings=[{"deviation_budget": 2.0}],
        algorithms=[AlgorithmSpec("UCB", "ucb")],
        horizon=50,
        replicates=2,
        checkpoints=5,
    )
    return spec.to_dict()


def broken(change) -> dict:
    data = good_spec()
    change(data)
    return data


CASES = {
    "malformed YAML": ("name: [unclosed\n", "not valid YAML"),
    "unknown key": (broken(lambda d: d.update(colour="red")), "unknown experiment spec keys"),
    "missing key": (broken(lambda d: d.pop("horizon")), "lacks the keys ['horizon']"),
    "unknown environment parameter": (
        broken(lambda d: d["env_params"].update(flavour=1)),
        "unexpected keyword argument 'flavour'",
    ),
    "unknown policy parameter": (
        broken(lambda d: d["algorithms"][0]["params"].update(speed=2)),
        "algorithms[0].params.speed: unexpected keyword argument 'speed'",
    ),
    "mistyped value": (
        broken(lambda d: d["settings"][0].update(deviation_budget="ten")),
        "settings[0].deviation_budget must be a number",
    ),
    "mistyped horizon": (broken(lambda d: d.update(horizon="long")), "horizon T must be"),
    "NaN budget": (
        broken(lambda d: d["settings"][0].update(deviation_budget=float("nan"))),
        "must be finite",
    ),
    "NaN policy parameter": (
        broken(lambda d: d["algorithms"][0]["params"].update(exploration=float("inf"))),
        "must be finite",
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_bad_specs_fail_in_one_line_without_output(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    content, expected = CASES[case]
    path = tmp_path / "spec.yaml"
    path.write_text(content if isinstance(content, str) else yaml.safe_dump(content), "utf-8")
    out = tmp_path / "out"
    start = time.perf_counter()
    assert main(["run", str(path), "--out", str(out), "--no-progress"]) == 1
    assert time.perf_counter() - start < 2.0
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    assert expected in lines[0] and "Traceback" not in lines[0]
    assert not out.exists()


def test_missing_spec_file_and_out_on_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(tmp_path / "absent.yaml")]) == 1
    assert "cannot read the spec" in capsys.readouterr().err
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(good_spec()), "utf-8")
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", "utf-8")
    assert main(["run", str(path), "--out", str(blocker), "--no-progress"]) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and str(blocker) in lines[0]


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="cannot read the spec"):
        main(["--debug", "run", str(tmp_path / "absent.yaml")])


def test_data_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    argv = ["reproduce", "ndc-sem-covid", "--quick", "--data", str(tmp_path / "absent.csv.gz")]
    assert main([*argv, "--out", str(out), "--no-progress"]) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "absent.csv.gz" in lines[0]
    assert not out.exists()
    argv = ["reproduce", "robust-lcb-fig1b", "--quick", "--data", "x.csv", "--out", str(out)]
    assert main(argv) == 1
    assert "reads no data file" in capsys.readouterr().err
    assert main(["list"]) == 0
    listing = capsys.readouterr().out.splitlines()
    assert any(line.startswith("ndc-sem-covid ") and "--data" in line for line in listing)
