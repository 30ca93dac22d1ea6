"""LinearSEMBandit at its boundaries: the values its arguments may take (with the messages a
user sees), what the learner is told, deviated rounds with changed observational weights,
and the optimal-action test at zero tolerance."""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits.envs import ActionSet, LinearSEMBandit
from causalbandits.envs.deviations import DeviatedModel, DeviationSchedule
from causalbandits.graphs import CausalDAG
from causalbandits.scm import LinearSEM, UniformNoise
from causalbandits.scm.linear import transfer_matrix

from .test_pinned_linsem import small_environment


def sem() -> LinearSEM:
    return small_environment().sem


def test_zero_tolerance_still_counts_the_best_action_as_optimal():
    env = LinearSEMBandit(sem(), 10, reward_node=2, optimal_tolerance=0.0)
    best = int(np.argmax(env.expected_rewards))
    others = [a for a in range(env.n_actions) if env.expected_rewards[a] < env.optimal_value]
    np.testing.assert_array_equal(env.is_optimal(np.array([best])), [True])
    assert not env.is_optimal(np.array(others)).any()


def test_the_learner_is_told_the_deviation_budget():
    assert LinearSEMBandit(sem(), 10, reward_node=2).problem.deviation_budget == 0.0
    env = LinearSEMBandit(sem(), 10, reward_node=2, deviation_budget=5)
    assert env.deviation_budget == 5.0 and env.problem.deviation_budget == 5.0


def test_horizon_must_be_a_positive_integer():
    assert LinearSEMBandit(sem(), 1, reward_node=2).horizon == 1
    for horizon in (0, -3, 2.5):
        with pytest.raises(ValueError, match="horizon T must be a positive integer, got"):
            LinearSEMBandit(sem(), horizon, reward_node=2)


@pytest.mark.parametrize("budget", [np.inf, np.nan, -1.0])
def test_deviation_budget_must_be_finite_and_non_negative(budget):
    with pytest.raises(ValueError, match="the deviation budget C must be finite and >= 0"):
        LinearSEMBandit(sem(), 10, reward_node=2, deviation_budget=budget)


@pytest.mark.parametrize("tolerance", [np.inf, np.nan, -1e-12])
def test_optimal_tolerance_must_be_finite_and_non_negative(tolerance):
    with pytest.raises(ValueError, match="optimal_tolerance must be finite and >= 0"):
        LinearSEMBandit(sem(), 10, reward_node=2, optimal_tolerance=tolerance)


def test_mismatched_action_set_and_schedule_are_refused():
    with pytest.raises(
        ValueError, match="^the action set and the SEM have different numbers of nodes$"
    ):
        LinearSEMBandit(sem(), 10, ActionSet.all_subsets(3), reward_node=2)
    with pytest.raises(ValueError, match="^the deviation schedule has a different horizon$"):
        LinearSEMBandit(sem(), 10, reward_node=2, deviations=DeviationSchedule.none(11))


def test_a_deviated_round_uses_the_deviated_observational_weights():
    """Round 2 of 3 is deviated with doubled observational weights and unchanged
    interventional ones; every replicate plays the empty action (all columns observational).
    The noise of the round is recovered from the nominal run with the same seed."""
    nominal = sem()
    model = DeviatedModel(2.0 * nominal.weights, nominal.intervention_weights.copy())
    schedule = DeviationSchedule(3, np.array([1]), np.array([0]), (model,))
    deviated = LinearSEMBandit(nominal, 3, reward_node=2, deviations=schedule)
    plain = LinearSEMBandit(nominal, 3, reward_node=2)
    empty = np.zeros(4, dtype=int)
    for env in (deviated, plain):
        env.reset(9, 4)
    for t in range(3):
        x_dev, x_nom = deviated.step(empty), plain.step(empty)
        eps = x_nom @ (np.eye(4) - nominal.weights)  # X = (I - B^T)^{-1} eps, row-wise
        transfer = transfer_matrix(2.0 * nominal.weights if t == 1 else nominal.weights)
        np.testing.assert_allclose(x_dev, eps @ transfer.T, rtol=1e-10, atol=1e-12)
    assert not np.allclose(transfer_matrix(2.0 * nominal.weights), transfer_matrix(nominal.weights))


def test_reward_node_defaults_to_the_last_node():
    dag = CausalDAG.from_edges(3, [(0, 1), (0, 2)])
    weights = np.zeros((3, 3))
    weights[0, 1], weights[0, 2] = 1.0, -1.0
    noise = UniformNoise(np.zeros(3), np.full(3, 2.0))
    env = LinearSEMBandit(LinearSEM(dag, weights, weights, noise), 5)
    assert env.reward_node == 2 and env.problem.reward_node == 2
