"""The epidemic-calibration problem (EXCBO Sec. 7.3): the dynamics against the spec's derived
target, the network against the closed-form dynamics, the optimum against random actions and
the closed form under observation noise, and bad input."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from causalbandits.envs import MonteCarloReward, epidemic_calibration
from causalbandits.envs.bo_problems import make_noise
from causalbandits.envs.epidemic import (
    SquaredErrorToTarget,
    epidemic_network,
    epidemic_step,
    history,
    target_history,
    true_action,
)

#: The spec's target history (x100), derived from the ground truth (spec 002 §5.4).
SPEC_TARGET = [0.8465, 1.2920, 0.99090, 1.74980, 0.77829, 1.31609]


def test_ground_truth_reproduces_the_specs_target_history() -> None:
    assert np.allclose(target_history(), SPEC_TARGET, atol=1e-4)


def test_one_period_by_hand() -> None:
    infected = np.array([0.01, 0.01])
    contacts = np.array([[0.30, 0.05], [0.10, 0.7]])
    expected = [0.01 * 0.5 + 0.99 * 0.0035, 0.01 * 0.5 + 0.99 * 0.008]
    assert np.allclose(epidemic_step(infected, contacts, 0.5), expected)


def test_network_without_noise_is_the_history(rng) -> None:
    actions = rng.random((50, 13))
    values = epidemic_network().evaluate(actions, np.zeros(6))
    assert np.allclose(values, 100 * history(actions).reshape(50, 6))


def test_process_noise_reaches_the_next_period_and_observation_noise_does_not() -> None:
    network, noise = epidemic_network(), np.array([0.5, 0, 0, 0, 0, 0])
    process = network.evaluate(true_action(), noise)
    observed = network.evaluate(true_action(), noise, propagate_noise=False)
    clean = target_history()
    assert observed[0] == pytest.approx(clean[0] + 0.5)
    assert np.allclose(observed[1:], clean[1:])
    assert not np.isclose(process[2], clean[2])


def test_objective_is_the_negative_sum_of_squares_for_numpy_and_torch(rng) -> None:
    target = tuple(rng.random(6))
    x = rng.random((4, 6))
    objective = SquaredErrorToTarget(target)
    expected = -((x - np.array(target)) ** 2).sum(axis=-1)
    assert np.allclose(objective(x), expected)
    assert np.allclose(objective(torch.as_tensor(x)).numpy(), expected)


@pytest.mark.parametrize("sigma", [0.2, 0.3])
def test_observation_noise_leaves_the_ground_truth_optimal_with_the_closed_form(sigma) -> None:
    env = epidemic_calibration(sigma, propagate_noise=False)
    assert np.array_equal(env.optimal_action, true_action())
    # E[y | a*] = -6 Var(u), Var(u) = sigma^2 + (2 sigma)^2 for eq. 11's mixture
    objective = SquaredErrorToTarget(tuple(target_history()))
    noise = make_noise("mixture", 6, sigma)
    reward = MonteCarloReward(epidemic_network(), noise, objective, 20_000, 1, False)
    mean, se = reward.estimate(true_action())
    assert abs(mean + 6 * 5 * sigma**2) < 4 * se


def test_process_noise_optimum_beats_the_ground_truth_and_random_actions(rng) -> None:
    env = epidemic_calibration(0.2)
    assert env.optimum > float(env.expected_reward(true_action()))
    assert env.expected_reward(rng.random((2000, 13))).max() < env.optimum


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="6 values"):
        epidemic_calibration(target=[1.0, 2.0])
    with pytest.raises(ValueError, match="finite"):
        epidemic_calibration(target=[np.nan] * 6)
    with pytest.raises(ValueError, match="sigma"):
        epidemic_calibration(sigma=-0.1)
    env = epidemic_calibration(0.2, propagate_noise=False)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        env.expected_reward(np.full(13, 1.5))
    with pytest.raises(ValueError, match="13"):
        history(np.zeros(12))
