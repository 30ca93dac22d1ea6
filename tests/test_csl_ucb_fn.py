"""E2 of the CSL-UCB paper: FN flags, reward errors and the report's arithmetic."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from causalbandits.envs.csl_ucb import make_environment
from causalbandits.papers.csl_ucb.fn_errors import (
    FNImpactExperiment,
    build_report,
    error_gap,
    thirds_trend,
)


@pytest.fixture(scope="module")
def traces() -> pd.DataFrame:
    return FNImpactExperiment(systems=2, horizon=240).run_tables(jobs=1)


def test_rows_are_decision_rounds_with_consistent_flags(traces: pd.DataFrame) -> None:
    assert set(traces["system"]) == {0, 1}
    assert (traces["t"] % 20 == 0).all()
    assert (traces["fn_any"] == (traces["n_fn"] > 0)).all()
    assert np.isfinite(traces["reward_error"]).all() and (traces["reward_error"] >= 0).all()


def test_same_numbers_with_two_workers(traces: pd.DataFrame) -> None:
    again = FNImpactExperiment(systems=2, horizon=240).run_tables(jobs=2)
    pd.testing.assert_frame_equal(traces, again)


def test_the_true_model_has_zero_error_and_no_fn() -> None:
    env = make_environment(100, system=3)
    graphs = np.stack([env.sem.weights, env.sem.intervention_weights]) != 0
    weights = np.stack([env.sem.weights, env.sem.intervention_weights])
    error, missed = FNImpactExperiment.score(env, graphs, weights)
    assert error == pytest.approx(0.0, abs=1e-12) and missed == 0
    graphs[0][np.argwhere(graphs[0])[0][0], np.argwhere(graphs[0])[0][1]] = False
    assert FNImpactExperiment.score(env, graphs, weights)[1] == 1


def test_gap_trend_and_report_against_hand_numbers() -> None:
    df = pd.DataFrame(
        {
            "system": [0] * 6,
            "t": [20, 40, 60, 20, 40, 60],
            "fn_any": [False] * 3 + [True] * 3,
            "n_fn": [0, 0, 0, 1, 2, 1],
            "reward_error": [0.4, 0.2, 0.1, 1.0, 1.0, 0.9],
        }
    )
    assert error_gap(df) == pytest.approx(1 - (0.7 / 3) / (2.9 / 3))
    assert thirds_trend(df, False) == (0.4, 0.1)
    report = build_report(df)
    assert "75.9% lower" in report and "| yes |" in report


def test_bad_sizes_are_rejected() -> None:
    with pytest.raises(ValueError, match="systems and horizon"):
        FNImpactExperiment(systems=0)
