"""NaN and infinite hyper-parameters and budgets are rejected where they enter."""

from __future__ import annotations

import math

import pytest

from causalbandits.envs.linear_bandit import LinearSEMBandit
from causalbandits.envs.robust_lcb import make_environment, robust_lcb_sem
from causalbandits.policies import UCB1, LinSEMTS, LinSEMUCB, RobustLCB

BAD = (math.nan, math.inf)


@pytest.fixture(scope="module")
def problem():
    return make_environment(horizon=100, deviation_budget=1.0).problem


@pytest.mark.parametrize("value", BAD)
def test_policies_reject_non_finite_parameters(problem, value: float) -> None:
    with pytest.raises(ValueError, match="beta_scale"):
        LinSEMUCB(problem, beta_scale=value)
    with pytest.raises(ValueError, match="deviation budget"):
        RobustLCB(problem, deviation_budget=value)
    with pytest.raises(ValueError, match="variance"):
        LinSEMTS(problem, variance=value)
    with pytest.raises(ValueError, match="exploration"):
        UCB1(problem, exploration=value)
    with pytest.raises(ValueError, match="delta"):
        UCB1(problem, delta=value)


@pytest.mark.parametrize("value", BAD)
def test_environment_rejects_a_non_finite_budget(value: float) -> None:
    sem = robust_lcb_sem()
    with pytest.raises(ValueError, match="deviation budget"):
        LinearSEMBandit(sem, 100, deviation_budget=value)
    with pytest.raises(ValueError, match="optimal_tolerance"):
        LinearSEMBandit(sem, 100, optimal_tolerance=value)
