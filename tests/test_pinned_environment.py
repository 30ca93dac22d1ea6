"""The linear-SEM bandit against closed forms written out by hand: a reward node that is not
the last node, unequal non-unit noise means, and the optimal-action tolerance."""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits.envs import ActionSet, LinearSEMBandit
from causalbandits.estimators import PropagationPlan, propagate_means
from causalbandits.graphs import CausalDAG
from causalbandits.scm import GaussianNoise, LinearSEM

from .test_pinned_linsem import NU, small_environment

W = {(0, 1): 0.8, (1, 2): -0.6, (0, 2): 0.5, (0, 3): 0.7}
W_STAR = {(0, 1): -0.4, (1, 2): 0.9, (0, 2): 0.3, (0, 3): -0.2}


def hand_means(mask: np.ndarray) -> np.ndarray:
    """``E_a[X]`` node by node: ``mu_j = nu_j + sum_i b_ij(a) mu_i`` with the column of ``j``
    interventional iff ``j`` is in ``a`` (eq. 2-3)."""

    def b(i: int, j: int) -> float:
        return (W_STAR if mask[j] else W)[i, j]

    mu0 = NU[0]
    mu1 = NU[1] + b(0, 1) * mu0
    mu2 = NU[2] + b(1, 2) * mu1 + b(0, 2) * mu0
    mu3 = NU[3] + b(0, 3) * mu0
    return np.array([mu0, mu1, mu2, mu3])


def test_expected_rewards_use_the_reward_node_and_the_noise_means():
    env = small_environment()
    assert env.reward_node == 2 and env.problem.reward_node == 2
    np.testing.assert_array_equal(env.problem.noise_mean, NU)
    expected = np.array([hand_means(mask) for mask in env.actions.masks])
    np.testing.assert_allclose(env.expected_values, expected, rtol=1e-12)
    np.testing.assert_allclose(env.expected_rewards, expected[:, 2], rtol=1e-12)
    np.testing.assert_allclose(env.sem.mean_values(env.actions.masks), expected, rtol=1e-12)
    # e.g. the empty action: 2.5 - 0.6 (-0.5 + 0.8 * 2) + 0.5 * 2 = 2.84
    assert env.expected_rewards[0] == pytest.approx(2.84, abs=1e-12)
    best = expected[:, 2].max()
    assert env.optimal_value == pytest.approx(best, rel=1e-12)
    env.reset(0, len(expected))
    actions = np.arange(len(expected))
    np.testing.assert_allclose(env.pseudo_regret(actions), best - expected[:, 2], atol=1e-12)


def test_samples_agree_with_the_hand_means_by_monte_carlo():
    env = small_environment(horizon=8)
    replicates = 20000
    env.reset(4, replicates)
    for a in range(env.n_actions):
        draws = env.step(np.full(replicates, a))
        se = draws.std(axis=0, ddof=1) / np.sqrt(replicates)
        gap = np.abs(draws.mean(axis=0) - hand_means(env.actions.masks[a]))
        assert np.all(gap <= 4 * se), (a, gap / se)
        assert np.all(se < 0.02)  # tight enough to see a unit shift of any noise mean


def test_propagation_of_the_true_columns_to_a_non_last_reward_node():
    env = small_environment()
    plan = PropagationPlan.build(env.sem.dag, env.actions.masks)
    theta = np.zeros((1, plan.nodes.size, 2, plan.width))
    for k, node in enumerate(plan.nodes):
        parents = env.sem.dag.parents(node)
        theta[0, k, 0, : parents.size] = [W[p, node] for p in parents]
        theta[0, k, 1, : parents.size] = [W_STAR[p, node] for p in parents]
    got = propagate_means(plan, NU, theta, 2)[0]
    expected = [hand_means(mask)[2] for mask in env.actions.masks]
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def near_tie_environment(tolerance: float | None) -> LinearSEMBandit:
    """0 -> 1, reward node 1: E[X_1] = 0.3 + 0.5 = 0.8 (observed), 0.3 + 0.504 (intervened)."""
    dag = CausalDAG.from_edges(2, [(0, 1)])
    weights = np.array([[0.0, 0.5], [0.0, 0.0]])
    star = np.array([[0.0, 0.504], [0.0, 0.0]])
    sem = LinearSEM(dag, weights, star, GaussianNoise(np.array([1.0, 0.3]), np.ones(2)))
    options = {} if tolerance is None else {"optimal_tolerance": tolerance}
    return LinearSEMBandit(sem, 10, ActionSet.non_root(dag), **options)


def test_optimal_tolerance_counts_near_optimal_actions_as_optimal():
    both = np.array([0, 1])
    np.testing.assert_allclose(near_tie_environment(None).expected_rewards, [0.8, 0.804])
    np.testing.assert_array_equal(near_tie_environment(1e-2).is_optimal(both), [True, True])
    np.testing.assert_array_equal(near_tie_environment(5e-3).is_optimal(both), [True, True])
    np.testing.assert_array_equal(near_tie_environment(3e-3).is_optimal(both), [False, True])
    np.testing.assert_array_equal(near_tie_environment(None).is_optimal(both), [False, True])
    with pytest.raises(ValueError, match="optimal_tolerance"):
        near_tie_environment(-1.0)
