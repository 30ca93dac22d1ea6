"""E2 of the CSL-UCB paper: FN flags, reward errors, resume and the report's arithmetic."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from causalbandits.envs.csl_ucb import csl_system
from causalbandits.experiments import read_manifest
from causalbandits.experiments.bandit_grid import BanditRun
from causalbandits.papers.csl_ucb.bandits import E3_SEED, e3
from causalbandits.papers.csl_ucb.fn_errors import (
    FNImpactExperiment,
    build_report,
    e2,
    error_gap,
    score_model,
    thirds_trend,
)
from causalbandits.random import Stream, replicate_seeds

SMALL = FNImpactExperiment(replicates=2, horizon=240)


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    return SMALL.run(tmp_path_factory.mktemp("e2"), progress=False)


def test_rows_are_decision_rounds_with_consistent_flags(traces: pd.DataFrame) -> None:
    assert set(traces["replicate"]) == {0, 1}
    assert (traces["t"] % 20 == 0).all()
    assert (traces["fn_any"] == (traces["n_fn"] > 0)).all()
    assert np.isfinite(traces["reward_error"]).all() and (traces["reward_error"] >= 0).all()


def test_same_numbers_with_two_workers(traces: pd.DataFrame, tmp_path: Path) -> None:
    pd.testing.assert_frame_equal(traces, SMALL.run(tmp_path, jobs=2, progress=False))


def test_a_killed_run_resumes_with_the_same_table(
    traces: pd.DataFrame, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_loop = FNImpactExperiment.run_loop

    def dies_on_replicate_1(self: FNImpactExperiment, run: BanditRun) -> pd.DataFrame:
        if list(run.replicates) == [1]:
            raise KeyboardInterrupt
        return run_loop(self, run)

    monkeypatch.setattr(FNImpactExperiment, "run_loop", dies_on_replicate_1)
    with pytest.raises(KeyboardInterrupt):
        SMALL.run(tmp_path, progress=False)
    assert [r["status"] for r in read_manifest(tmp_path)["tasks"]] == ["done", "pending"]
    monkeypatch.setattr(FNImpactExperiment, "run_loop", run_loop)
    pd.testing.assert_frame_equal(traces, SMALL.run(tmp_path, progress=False))
    assert read_manifest(tmp_path)["runs"][-1]["tasks_run"] == 1


def test_the_true_model_has_zero_error_and_no_fn() -> None:
    env = csl_system(replicate_seeds(E3_SEED, 0, [3], Stream.INSTANCE)[0], 100)
    graphs = np.stack([env.sem.weights, env.sem.intervention_weights]) != 0
    weights = np.stack([env.sem.weights, env.sem.intervention_weights])
    error, missed = score_model(env, graphs, weights)
    assert error == pytest.approx(0.0, abs=1e-12) and missed == 0
    graphs[0][np.argwhere(graphs[0])[0][0], np.argwhere(graphs[0])[0][1]] = False
    assert score_model(env, graphs, weights)[1] == 1


def test_gap_trend_and_report_against_hand_numbers() -> None:
    df = pd.DataFrame(
        {
            "replicate": [0] * 6,
            "t": [20, 40, 60, 20, 40, 60],
            "fn_any": [False] * 3 + [True] * 3,
            "n_fn": [0, 0, 0, 1, 2, 1],
            "reward_error": [0.4, 0.2, 0.1, 1.0, 1.0, 0.9],
        }
    )
    assert error_gap(df) == pytest.approx(1 - (0.7 / 3) / (2.9 / 3))
    assert thirds_trend(df, False) == (0.4, 0.1)
    report = build_report(df)
    within = "within 10 percentage points of the paper's"
    assert (
        f"| error 62.8% lower without FN errors | 62.8% lower | 75.9% lower | not reproduced | "
        f"{within} |"
    ) in report
    assert (
        "| without FN errors the error decreases over time | - | 0.400 -> 0.100 | holds | - |"
    ) in report


def test_systems_are_the_replicates_and_bad_sizes_are_rejected() -> None:
    assert e2(True).with_replicates(4).replicates == 4 and len(e2(True).tasks()) == 10
    with pytest.raises(ValueError, match="replicates must be"):
        FNImpactExperiment(replicates=0)
    with pytest.raises(ValueError, match="horizon must be"):
        FNImpactExperiment(horizon=0)


@pytest.mark.parametrize("replicate", [0, 7])
def test_system_r_its_noise_and_policy_stream_are_those_of_e3_replicate_r(replicate: int) -> None:
    experiment = e3(True)
    e2_run = e2(True).prepare(BanditRun({}, 0, [replicate]))  # reset with their streams
    e2_env, e2_policy = e2_run.env, e2_run.policy
    e3_run = experiment.setup(0, "CSL-UCB", [replicate])
    e3_env, e3_policy = e3_run.env, e3_run.policy
    e3_sem = e3_env.systems[0].sem
    for name in ("weights", "intervention_weights"):
        assert np.array_equal(getattr(e2_env.sem, name), getattr(e3_sem, name))
    other = experiment.setup(0, "CSL-UCB", [replicate + 1]).env
    assert not np.array_equal(e2_env.sem.weights, other.systems[0].sem.weights)
    # Both presets start with the same random exploration, drawn from the policy stream, and
    # the same noise: the first rounds agree arm by arm and sample by sample.
    for _ in range(10):
        arms = e2_policy.select()
        np.testing.assert_array_equal(arms, e3_policy.select())
        feedback = e2_env.step(arms)
        np.testing.assert_array_equal(feedback, e3_env.step(arms))
        e2_policy.update(arms, feedback)
        e3_policy.update(arms, feedback)
