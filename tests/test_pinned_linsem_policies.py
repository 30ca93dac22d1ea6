"""LinSEM-UCB, Robust-LCB and LinSEM-TS beyond the fresh round: the radius index ``t + 1``
after updates, the default scale, the bca solver against the greedy one, which ridge each
policy keeps, LinSEM-TS's posterior draws, and the values the options may take."""

from __future__ import annotations

import numpy as np
import pytest

import causalbandits.policies.linsem as linsem_module
from causalbandits.estimators import block_coordinate_ascent, propagate_means
from causalbandits.policies import LinSEMTS, LinSEMUCB, RobustLCB

from .test_pinned_linsem import NU, _fresh, _run, small_environment


def greedy_ucb(policy, beta: float) -> np.ndarray:
    ridge = policy.ridge
    return propagate_means(
        policy.plan, NU, ridge.theta, policy.reward_node, ridge.ellipsoid_inv, beta
    )


@pytest.mark.parametrize("policy_class", [LinSEMUCB, RobustLCB])
def test_ucb_after_k_updates_uses_the_radius_at_k_plus_1(policy_class):
    """Round ``t + 1`` after ``t`` updates: ``UCB = propagate(theta_hat, M, scale beta(t+1))``."""
    env = small_environment()
    policy = policy_class(env.problem, beta_scale=0.5, solver="greedy", radius="theory")
    _run(env, policy, 7, 2)
    assert policy.t == 7
    expected = greedy_ucb(policy, 0.5 * policy.beta(8))
    np.testing.assert_allclose(policy.upper_confidence_bounds(), expected, rtol=1e-12)
    assert not np.allclose(greedy_ucb(policy, 0.5 * policy.beta(7)), expected)


def test_default_beta_scale_is_one():
    env = small_environment()
    policy = _fresh(LinSEMUCB, env)
    assert policy.beta_scale == 1.0
    np.testing.assert_allclose(
        policy.upper_confidence_bounds(), greedy_ucb(policy, policy.beta(1)), rtol=1e-12
    )


def test_zero_beta_scale_gives_the_plain_means_of_the_estimates():
    env = small_environment()
    policy = _fresh(LinSEMUCB, env, beta_scale=0.0)
    # theta_hat = 0: every node at its noise mean, the reward node at nu_2
    np.testing.assert_allclose(policy.upper_confidence_bounds(), NU[2], rtol=1e-12)


@pytest.mark.parametrize("delta", [0.0, 1.0, 1.5, -0.1])
def test_delta_must_lie_strictly_between_0_and_1(delta):
    with pytest.raises(ValueError, match=r"delta must lie in \(0, 1\), got"):
        LinSEMUCB(small_environment().problem, delta=delta)


def test_delta_just_inside_the_interval_is_accepted():
    problem = small_environment().problem
    assert LinSEMUCB(problem, delta=1e-300).delta == 1e-300
    assert LinSEMUCB(problem, delta=0.999).delta == 0.999


def test_ball_cap_with_bca_is_refused():
    message = "^the unit-ball cap is available with the greedy and interval solvers only$"
    with pytest.raises(ValueError, match=message):
        LinSEMUCB(small_environment().problem, solver="bca", ball=True)


def test_bca_solver_is_block_coordinate_ascent_and_beats_greedy_on_learnt_columns():
    """After 60 rounds the learnt weight of edge 1 -> 2 is negative (true -0.6): greedy
    maximises mu_1 while the ascent lowers it, so the two UCBs differ; ``sweeps`` reaches
    the solver and ``sweeps = 0`` is the greedy start."""
    env = small_environment()
    policy = LinSEMUCB(env.problem, solver="bca", beta_scale=0.3, radius="theory")
    _run(env, policy, 60, 2)
    beta = 0.3 * policy.beta(61)
    ridge = policy.ridge
    bca = block_coordinate_ascent(
        policy.plan, policy.masks, NU, ridge.theta, ridge.ellipsoid_inv, beta, 2, sweeps=2
    )
    ucb = policy.upper_confidence_bounds()
    np.testing.assert_allclose(ucb, bca, rtol=1e-12)
    greedy = greedy_ucb(policy, beta)
    assert np.all(ucb >= greedy - 1e-12) and np.max(ucb - greedy) > 0.1
    policy.sweeps = 0
    np.testing.assert_allclose(policy.upper_confidence_bounds(), greedy, rtol=1e-12)


def test_linsem_ucb_keeps_one_gram_matrix_robust_lcb_two():
    env = small_environment()
    assert _fresh(LinSEMUCB, env).ridge.unit_weights is True
    assert _fresh(RobustLCB, env).ridge.unit_weights is False


@pytest.mark.parametrize("variance", [1.0, 2.5])
def test_linsem_ts_draws_theta_hat_plus_a_cholesky_factor_of_var_v_inverse(variance, monkeypatch):
    """``theta ~ N(theta_hat, var V^{-1})`` as ``theta_hat + L z`` with ``L L^T = var V^{-1}``
    (``L`` lower triangular) and ``z`` the round's standard normals; the action maximises
    the mean under the drawn columns (ties broken at random)."""
    env = small_environment()
    options = {} if variance == 1.0 else {"variance": variance}
    policy = LinSEMTS(env.problem, **options)
    _run(env, policy, 5, 2)
    z = np.random.default_rng(3).standard_normal(policy.ridge.theta.shape)
    policy.standard_normals = lambda: z
    drawn = []

    def capture(plan, noise_mean, theta, target, *args, **kwargs):
        drawn.append(theta)
        return propagate_means(plan, noise_mean, theta, target, *args, **kwargs)

    monkeypatch.setattr(linsem_module, "propagate_means", capture)
    chosen = policy.select()
    gram_inv = policy.ridge.gram_inv
    factor = np.linalg.cholesky(variance * gram_inv)
    expected = policy.ridge.theta + np.einsum("...ij,...j->...i", factor, z)
    np.testing.assert_allclose(drawn[0], expected, rtol=1e-10, atol=1e-12)
    means = propagate_means(policy.plan, NU, expected, 2)
    # ties (the mode of node 3 does not reach the reward node) are broken at random
    np.testing.assert_allclose(means[[0, 1], chosen], means.max(axis=1), rtol=1e-12)
