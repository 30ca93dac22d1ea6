"""Persistent studies (issue 30): a study asked and told in turn plays exactly the policy's
in-memory loop; resuming gives the same next action; pending evaluations are believed; the
command line speaks JSON. Reliability with real processes: tests/test_study_reliability.py."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("botorch")
pytest.importorskip("sqlalchemy")

from causalbandits.cli import main  # noqa: E402
from causalbandits.envs.bo_problems import dropwave  # noqa: E402
from causalbandits.envs.epidemic import calibration_problem, epidemic_calibration  # noqa: E402
from causalbandits.envs.mixed_sign import mixed_sign_bandit  # noqa: E402
from causalbandits.policies import POLICIES  # noqa: E402
from causalbandits.policies.causal_bo import AcquisitionOptimiser  # noqa: E402
from causalbandits.policies.excbo import EXCBO  # noqa: E402
from causalbandits.random import as_seed_sequences  # noqa: E402
from causalbandits.studies import Study, StudyError, StudySpec  # noqa: E402
from causalbandits.studies.pending import believed_values  # noqa: E402

DROPWAVE = "causalbandits.envs.bo_problems:dropwave"
#: Small acquisition budgets: the tests check identities, not optimisation quality.
SMALL = {"optimiser": {"restarts": 1, "raw_samples": 8}}


def url(tmp_path: Path, name: str = "study") -> str:
    return f"sqlite:///{tmp_path / name}.db"


def copy_database(source: str, target: str) -> None:
    """A consistent copy of an SQLite study (its write-ahead log included)."""
    with sqlite3.connect(source) as src, sqlite3.connect(target) as dst:
        src.backup(dst)


def dropwave_feedback(actions: list) -> list[list[float]]:
    env = dropwave(horizon=len(actions))
    env.reset(seed=1, replicates=1)
    return [env.step(np.asarray(a)[None])[0].tolist() for a in actions]


def play(study: Study, env: object, rounds: int, seed: int = 1) -> list:
    """Ask and tell ``rounds`` times, the feedback from ``env`` (reset with ``seed``); the
    actions played."""
    env.reset(seed=seed, replicates=1)
    played = []
    for _ in range(rounds):
        number, action = study.ask()
        study.tell(number, env.step(np.asarray(action)[None])[0].tolist())
        played.append(action)
    return played


@pytest.mark.parametrize("policy", ["gp-ucb", "eicf", "mcbo", "excbo", "nmcbo"])
def test_bo_study_in_turn_plays_the_in_memory_loop(tmp_path: Path, policy: str) -> None:
    options = {"reinits": 3, "max_steps": 20, "selection_samples": 16} if policy == "nmcbo" else {}
    options.update({} if policy == "nmcbo" else {**SMALL, "samples": 8})
    options["n_init"] = 3
    study = Study.create("s", StudySpec(DROPWAVE, policy, options=options, seed=4), url(tmp_path))
    env = dropwave(horizon=6)
    played = play(study, env, 6)
    reference = POLICIES.build(policy, dropwave(horizon=6), **options)
    reference.reset(4)
    env.reset(seed=1, replicates=1)
    for t in range(6):
        action = reference.suggest()
        reference.observe(action, env.step(action[None])[0])
        assert np.array_equal(action, played[t]), f"round {t}"


def test_bandit_study_in_turn_plays_the_round_loop(tmp_path: Path) -> None:
    spec = StudySpec("mixed-sign", "linsem-ucb", params={"horizon": 100, "instance": 1}, seed=5)
    study = Study.create("b", spec, url(tmp_path))
    env = mixed_sign_bandit(horizon=100, instance=1)
    played = play(study, env, 30, seed=2)
    policy = POLICIES.build("linsem-ucb", env)
    policy.reset(as_seed_sequences(5, 1))
    env.reset(seed=2, replicates=1)
    for t in range(30):
        actions = policy.select()
        policy.update(actions, env.step(actions))
        assert np.array_equal(actions[0], played[t]), f"round {t}"


@pytest.mark.parametrize("policy", ["gp-ucb", "nmcbo", "linsem-ucb"])
def test_a_resumed_study_asks_what_the_uninterrupted_one_asks(tmp_path: Path, policy: str) -> None:
    """NMCBO warm-starts from its earlier proposals' networks: stored as their memories."""
    if policy == "gp-ucb":
        spec = StudySpec(DROPWAVE, policy, options={**SMALL, "n_init": 3}, seed=2)
    elif policy == "nmcbo":
        options = {"reinits": 3, "max_steps": 20, "selection_samples": 16, "n_init": 3}
        spec = StudySpec(DROPWAVE, policy, options=options, seed=2)
    else:
        spec = StudySpec("mixed-sign", policy, params={"horizon": 50, "instance": 2}, seed=2)
    study = Study.create("s", spec, url(tmp_path, "a"))
    for _ in range(5):
        number, action = study.ask()
        feedback = study.check.feedback_shape(action) if policy == "linsem-ucb" else None
        observation = dropwave_feedback([action])[0] if feedback is None else np.ones(feedback)
        study.tell(number, np.asarray(observation).tolist())
    study.ask()  # one pending evaluation
    copy_database(str(tmp_path / "a.db"), str(tmp_path / "b.db"))
    resumed = Study.load("s", url(tmp_path, "b"))
    assert resumed.ask() == study.ask()
    if policy == "nmcbo":  # the same warm starts, in the same order
        ours, theirs = resumed.engine.policy.chosen, study.engine.policy.chosen
        assert len(ours) == len(theirs) == 4
        for mine, other in zip(ours, theirs, strict=True):
            assert all(torch.equal(mine[name], other[name]) for name in other)


def test_pending_evaluations_are_believed_and_asks_differ(tmp_path: Path) -> None:
    spec = StudySpec(DROPWAVE, "gp-ucb", options={**SMALL, "n_init": 4}, seed=1)
    study = Study.create("s", spec, url(tmp_path))
    asked = [study.ask() for _ in range(4)]
    for (number, _), values in zip(asked, dropwave_feedback([a for _, a in asked]), strict=True):
        study.tell(number, values)
    first, second = study.ask(), study.ask()
    assert (first[0], second[0]) == (4, 5)
    assert not np.allclose(first[1], second[1])
    assert study.summary()["pending_ids"] == [4, 5]


def test_asks_beyond_the_design_before_its_data_extend_it(tmp_path: Path) -> None:
    """With fewer than ``n_init`` observations told, an ask past the design gets a uniform
    point drawn from its own proposal seed (the models need the design's data)."""
    spec = StudySpec(DROPWAVE, "gp-ucb", options={"n_init": 2}, seed=6)
    study = Study.create("s", spec, url(tmp_path))
    actions = [study.ask()[1] for _ in range(3)]
    policy = study.engine.policy
    np.testing.assert_array_equal(actions[:2], policy.design)
    seed = int(policy.proposal_seeds(1)[0])
    np.testing.assert_array_equal(actions[2], np.random.default_rng(seed).random(2))


def test_believed_values_follow_the_data_through_the_network() -> None:
    """On a noiseless chain ``X = 2 a, Y = X^2`` sampled densely, the believed values at a
    new action are the mechanisms' values there (the GP network's propagated means)."""
    policy = EXCBO(dropwave(horizon=5).problem)
    actions = np.random.default_rng(0).random((60, 2))
    x = 2 * actions[:, 0] + actions[:, 1]
    values = np.column_stack([x, np.sin(x)])
    pending = np.array([[0.3, 0.6], [0.7, 0.2]])
    believed = believed_values(policy.specs, policy.order, actions, values, pending)
    x_new = 2 * pending[:, 0] + pending[:, 1]
    np.testing.assert_allclose(believed, np.column_stack([x_new, np.sin(x_new)]), atol=0.02)


def test_bad_requests_raise_one_clear_error(tmp_path: Path) -> None:
    spec = StudySpec(DROPWAVE, "gp-ucb", seed=0)
    study = Study.create("s", spec, url(tmp_path))
    number, _ = study.ask()
    for observation, words in [
        ([1.0, float("nan")], "finite"),
        ([1.0], "shape"),
        ("text", "numbers"),
        ({"X": 1.0}, "missing"),
    ]:
        with pytest.raises(StudyError, match=words):
            study.tell(number, observation)
    with pytest.raises(StudyError, match="no evaluation 7"):
        study.tell(7, [1.0, 2.0])
    assert study.tell(number, {"X": 1.0, "Y": 0.25}) == 0.25
    assert study.tell(number, [1.0, 0.25]) == 0.25  # a retried tell
    with pytest.raises(StudyError, match="already told"):
        study.tell(number, [1.0, 0.5])
    with pytest.raises(StudyError, match="cannot fail"):
        study.fail(number, "late")
    with pytest.raises(StudyError, match="already exists"):
        Study.create("s", spec, url(tmp_path))
    with pytest.raises(StudyError, match="differs in: seed"):
        Study.create("s", StudySpec(DROPWAVE, "gp-ucb", seed=1), url(tmp_path), True)
    with pytest.raises(StudyError, match="true model"):
        Study.create("o", StudySpec("mixed-sign", "oracle", params={"horizon": 5}), url(tmp_path))
    with pytest.raises(StudyError, match="no study 'other'"):
        Study.load("other", url(tmp_path))
    assert [e.state for e in Study.load("s", url(tmp_path)).evaluations()] == ["complete"]


def test_a_failed_evaluation_teaches_nothing(tmp_path: Path) -> None:
    spec = StudySpec("mixed-sign", "ucb", params={"horizon": 50, "instance": 1}, seed=3)
    study = Study.create("s", spec, url(tmp_path))
    number, _ = study.ask()
    study.fail(number, "the pump broke")
    study.fail(number, "the pump broke")  # idempotent
    with pytest.raises(StudyError, match="failed"):
        study.tell(number, np.zeros(study.check.feedback_shape(0)).tolist())
    summary = Study.load("s", url(tmp_path)).summary()
    assert (summary["failed"], summary["complete"], summary["best"]) == (1, 0, None)


def test_the_calibration_problem_is_the_environment_s() -> None:
    assert calibration_problem(sigma=0.3) == epidemic_calibration(sigma=0.3).problem


def test_acquisition_settings_may_be_given_as_a_mapping() -> None:
    policy = EXCBO(dropwave(horizon=5).problem, optimiser={"restarts": 2, "raw_samples": 9})
    assert policy.optimiser == AcquisitionOptimiser(restarts=2, raw_samples=9)
    with pytest.raises(TypeError, match="AcquisitionOptimiser"):
        EXCBO(dropwave(horizon=5).problem, optimiser=3)


def run_cli(capsys: pytest.CaptureFixture, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_command_line_speaks_json(
    tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage = ["--storage", url(tmp_path)]
    code, out, _ = run_cli(
        capsys, "study", "create", "cli", *storage, "--problem", DROPWAVE, "--policy", "gp-ucb",
        "--seed", "7", "--options", json.dumps(SMALL),
    )  # fmt: skip
    assert code == 0 and json.loads(out)["seed"] == 7
    code, out, _ = run_cli(capsys, "study", "ask", "cli", *storage)
    asked = json.loads(out)
    assert (code, asked["id"], len(asked["action"])) == (0, 0, 2)
    code, out, _ = run_cli(capsys, "study", "tell", "cli", "0", "[0.5, 0.3]", *storage)
    assert json.loads(out) == {"id": 0, "state": "complete", "objective": 0.3}
    run_cli(capsys, "study", "ask", "cli", *storage)
    monkeypatch.setattr("sys.stdin", __import__("io").StringIO('{"X": 0.1, "Y": 0.9}'))
    code, out, _ = run_cli(capsys, "study", "tell", "cli", "1", "-", *storage)
    assert json.loads(out)["objective"] == 0.9
    code, out, err = run_cli(capsys, "study", "tell", "cli", "1", "[0.1, NaN]", *storage)
    assert code == 1 and out == "" and err.startswith("causalbandits: error:") and "finite" in err
    run_cli(capsys, "study", "ask", "cli", *storage)
    code, out, _ = run_cli(capsys, "study", "fail", "cli", "2", "--reason", "spilled", *storage)
    assert json.loads(out)["state"] == "failed"
    plot = tmp_path / "progress.png"
    code, out, _ = run_cli(capsys, "study", "show", "cli", "--json", "--plot", str(plot), *storage)
    summary = json.loads(out)
    assert (summary["complete"], summary["failed"], summary["best"]["id"]) == (2, 1, 1)
    assert plot.stat().st_size > 1000
    code, out, _ = run_cli(capsys, "study", "show", "cli", *storage)
    assert "best: evaluation 1, objective 0.9" in out
    code, out, _ = run_cli(capsys, "study", "export", "cli", *storage)
    rows = json.loads(out)
    assert [row["state"] for row in rows] == ["complete", "complete", "failed"]
    assert rows[1]["observation"] == [0.1, 0.9]
    csv_path = tmp_path / "study.csv"
    run_cli(capsys, "study", "export", "cli", "--format", "csv", "--out", str(csv_path), *storage)
    assert csv_path.read_text().splitlines()[0].startswith("number,action,state,observation")


def test_the_lab_loop_killed_and_restarted_ends_where_an_uninterrupted_one_does(
    tmp_path: Path,
) -> None:
    """examples/study/restart_demo.sh (the worked example, at tiny budgets): the shell loop
    over the command line, SIGKILLed after 2 of 3 told evaluations (the third is the first
    BO proposal) and started again."""
    command = tmp_path / "causalbandits"
    command.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m causalbandits.cli "$@"\n')
    command.chmod(0o755)
    options = {"n_init": 2, "samples": 8, "optimiser": {"restarts": 1, "raw_samples": 8}}
    settings = {"CB": str(command), "PYTHON": sys.executable, "OPTIONS": json.dumps(options)}
    script = Path(__file__).parents[1] / "examples" / "study" / "restart_demo.sh"
    result = subprocess.run(
        [str(script), str(tmp_path / "demo")],
        env={**os.environ, **settings, "EVALUATIONS": "3", "KILL_AFTER": "2"},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "same best action: yes" in result.stdout
    for run in ("uninterrupted", "restarted"):
        assert json.loads((tmp_path / "demo" / f"{run}.json").read_text())["complete"] == 3
