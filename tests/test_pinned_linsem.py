"""Pinned values for Robust-LCB / LinSEM-UCB: weights, radii, fresh UCBs, ball cap, BCA, ridge.

Every expected value is derived here from the formulas of the Robust-LCB paper (Lemma 1,
eq. 17) and docs/decisions/robust-lcb.md (``m`` = worst-case ``||X||``, ``delta = 1/(2NT)``),
never by calling
the function under test.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from causalbandits.envs import ActionSet, LinearSEMBandit
from causalbandits.envs.robust_lcb import make_environment
from causalbandits.estimators import (
    PropagationPlan,
    WeightedRidge,
    block_coordinate_ascent,
    propagate_means,
)
from causalbandits.graphs import CausalDAG
from causalbandits.policies import LinSEMUCB, RobustLCB
from causalbandits.scm import LinearSEM, UniformNoise

# A 4-node SEM whose reward node (2) is not the last node, with unequal, non-unit noise means.
EDGES = [(0, 1), (1, 2), (0, 2), (0, 3)]
NOISE_LOW, NOISE_HIGH = np.array([1.0, -1.0, 2.0, 0.0]), np.array([3.0, 0.0, 3.0, 1.0])
NU = (NOISE_LOW + NOISE_HIGH) / 2  # [2, -0.5, 2.5, 0.5]


def small_environment(horizon: int = 100) -> LinearSEMBandit:
    dag = CausalDAG.from_edges(4, EDGES)
    weights, star = np.zeros((4, 4)), np.zeros((4, 4))
    for (i, j), w, s in zip(EDGES, [0.8, -0.6, 0.5, 0.7], [-0.4, 0.9, 0.3, -0.2], strict=True):
        weights[i, j], star[i, j] = w, s
    sem = LinearSEM(dag, weights, star, UniformNoise(NOISE_LOW, NOISE_HIGH))
    return LinearSEMBandit(sem, horizon, ActionSet.non_root(dag), reward_node=2)


# ---------------------------------------------------------------- weights (eq. 17, A1)


def test_robust_lcb_weight_rule_is_min_of_one_over_c_and_one_over_c_bonus():
    policy = RobustLCB(make_environment(horizon=10, deviation_budget=0).problem, 4.0)
    bonus = np.array([0.1, 1.0, 2.0, 8.0, 100.0])
    np.testing.assert_allclose(policy.weight_rule(bonus), [0.25, 0.25, 0.125, 0.03125, 0.0025])
    # C < 1 is clamped to C_alg = 1 (decisions: robust-lcb, C_alg)
    clamped = RobustLCB(make_environment(horizon=10, deviation_budget=0).problem, 0.5)
    np.testing.assert_allclose(clamped.weight_rule(np.array([0.5, 4.0])), [1.0, 0.25])


def _run(env, policy, rounds, replicates, seed=0):
    env.reset(seed, replicates)
    policy.reset(np.random.SeedSequence(seed + 1).spawn(replicates))
    actions, samples = [], []
    for _ in range(rounds):
        a = policy.select()
        x = env.step(a)
        policy.update(a, x)
        actions.append(a)
        samples.append(x)
    return np.array(actions), np.array(samples)


def test_robust_lcb_estimates_replay_weighted_ols_with_bonus_weights():
    """Eq. 7-12 and 17 recomputed from the recorded plays: per (replicate, node, mode),
    ``w = min(1/C, 1/(C ||x||_{Vt^{-1}}))`` with ``Vt`` before the sample, then
    ``V += w x x^T``, ``Vt += w^2 x x^T``, ``g += w x (X_i - nu_i)``."""
    env = small_environment(horizon=60)
    budget = 3.0
    policy = RobustLCB(env.problem, deviation_budget=budget, beta_scale=0.2)
    actions, samples = _run(env, policy, 60, 3)
    dag, width = env.sem.dag, 2
    seen_small = 0
    for k, node in enumerate(policy.plan.nodes):
        parents = dag.parents(node)
        for r in range(3):
            for mode in (0, 1):
                gram, sq_gram, cross = np.eye(width), np.eye(width), np.zeros(width)
                for t in range(60):
                    if env.actions.masks[actions[t, r], node] != mode:
                        continue
                    x = np.zeros(width)
                    x[: parents.size] = samples[t, r, parents]
                    bonus = np.sqrt(x @ np.linalg.solve(sq_gram, x))
                    w = min(1 / budget, 1 / (budget * bonus))
                    seen_small += w < 0.99 / budget
                    gram += w * np.outer(x, x)
                    sq_gram += w * w * np.outer(x, x)
                    cross += w * x * (samples[t, r, node] - NU[node])
                gram_inv = np.linalg.inv(gram)
                np.testing.assert_allclose(
                    policy.ridge.theta[r, k, mode], gram_inv @ cross, rtol=1e-8, atol=1e-10
                )
                np.testing.assert_allclose(
                    policy.ridge.ellipsoid_inv[r, k, mode],
                    gram_inv @ sq_gram @ gram_inv,
                    rtol=1e-8,
                    atol=1e-10,
                )
    assert seen_small > 20  # the bonus really lowered many weights below 1/C


# ---------------------------------------------------------------- radii (Lemma 1, §4.1)


def test_robust_lcb_radius_is_lemma_1_with_delta_one_over_2nt():
    base = make_environment(horizon=1000, deviation_budget=0).problem
    problem = replace(base, x_norm_bound=2.5)
    n_nodes, d, horizon, m = 13, 3, 1000, 2.5
    for budget in (1.0, 5.0):
        policy = RobustLCB(problem, deviation_budget=budget)
        assert policy.delta == pytest.approx(1 / (2 * n_nodes * horizon), rel=1e-15)
        for t in (1, 10, 1000):
            log_term = 2 * np.log(2 * n_nodes * horizon)
            log_term += d * np.log(1 + m**2 * t / (d * budget**2))
            assert policy.beta(t) == pytest.approx(np.sqrt(log_term) + 1 + m, rel=1e-12)


def test_robust_lcb_radius_on_the_paper_setup_matches_the_spec_numbers():
    """Spec §3.1: beta_T ~ 25.6 (C = 1), 25.3 (2), 24.6 (15), 23.4 (200), 22.5 (2000)."""
    problem = make_environment(horizon=40000, deviation_budget=0).problem
    # m = worst-case ||X|| of the nominal model: every noise at its upper bound 2 and
    # (transfer matrices non-negative) the largest norm over the actions
    sem = make_environment(horizon=10, deviation_budget=0).sem
    worst = max(
        np.linalg.norm(
            np.linalg.solve(
                np.eye(13) - np.where(mask[None, :], sem.intervention_weights, sem.weights).T,
                np.full(13, 2.0),
            )
        )
        for mask in problem.actions.masks
    )
    assert problem.x_norm_bound == pytest.approx(worst, rel=1e-12)
    assert worst == pytest.approx(16.03, abs=0.01)
    for budget, expected in [(1, 25.6), (2, 25.3), (15, 24.6), (200, 23.4), (2000, 22.5)]:
        assert RobustLCB(problem, deviation_budget=budget).beta(40000) == pytest.approx(
            expected, abs=0.05
        )


def test_linsem_ucb_radius_is_the_oful_radius():
    problem = replace(make_environment(horizon=500, deviation_budget=7).problem, x_norm_bound=3.0)
    n_nodes, d, horizon, m = 13, 3, 500, 3.0
    policy = LinSEMUCB(problem)
    delta = 1 / (2 * n_nodes * horizon)
    assert policy.delta == pytest.approx(delta, rel=1e-15)
    for t in (1, 7, 500):
        expected = 1 + np.sqrt(2 * np.log(1 / delta) + d * np.log(1 + m * m * t / d))
        assert policy.beta(t) == pytest.approx(expected, rel=1e-12)
    explicit = LinSEMUCB(problem, delta=0.01)
    expected = 1 + np.sqrt(2 * np.log(100) + d * np.log(1 + m * m * 4 / d))
    assert explicit.beta(4) == pytest.approx(expected, rel=1e-12)


# ------------------------------------------ fresh UCBs: radius, reward node and noise mean


def _fresh(policy_class, env, **options):
    """A reset policy; greedy propagation (eq. 18 as pinned here) unless ``solver`` says."""
    policy = policy_class(env.problem, **{"solver": "greedy", "radius": "theory", **options})
    policy.reset(np.random.SeedSequence(0).spawn(2))
    return policy


@pytest.mark.parametrize("policy_class", [LinSEMUCB, RobustLCB])
def test_fresh_ucb_is_the_prior_ellipsoid_support_at_the_reward_node(policy_class):
    """Before any data ``theta_hat = 0`` and ``M = I``: node 1 gets ``nu_1 + beta |nu_0|``,
    the reward node 2 ``nu_2 + beta ||(nu_0, mu_1)||`` (greedy eq. 18), beta = scale beta(1)."""
    env = small_environment()
    policy = _fresh(policy_class, env, beta_scale=0.7)
    m, d, delta = env.problem.x_norm_bound, 2, 1 / (2 * 4 * 100)
    if policy_class is LinSEMUCB:
        beta = 1 + np.sqrt(2 * np.log(1 / delta) + d * np.log(1 + m * m / d))
    else:  # C_alg = max(0, 1) = 1
        beta = np.sqrt(2 * np.log(1 / delta) + d * np.log(1 + m * m / d)) + 1 + m
    beta *= 0.7
    mu_1 = NU[1] + beta * abs(NU[0])
    expected = NU[2] + beta * np.hypot(NU[0], mu_1)
    np.testing.assert_allclose(policy.upper_confidence_bounds(), expected, rtol=1e-12)


@pytest.mark.parametrize("policy_class", [LinSEMUCB, RobustLCB])
def test_ball_cap_is_the_euclidean_norm_of_the_parent_means(policy_class):
    """With ``beta > 1`` and ``theta_hat = 0`` the cap ``min(., ||u||)`` binds at every node:
    ``mu_1 = nu_1 + |nu_0| = 1.5``, ``UCB = nu_2 + ||(nu_0, mu_1)|| = 2.5 + 2.5 = 5``."""
    env = small_environment()
    capped = _fresh(policy_class, env, ball=True)
    np.testing.assert_allclose(capped.upper_confidence_bounds(), 5.0, rtol=1e-12)
    assert np.all(_fresh(policy_class, env).upper_confidence_bounds() > 5.0 + 1.0)


# ---------------------------------------------------------------- block-coordinate ascent


def test_block_coordinate_ascent_minimises_a_parent_with_a_negative_effect():
    """Chain 0 -> 1 -> 2 with ``theta_2 ~ -1`` (almost pinned) and a wide ellipsoid on
    ``theta_1``. Greedy maximises ``mu_1`` (wrong: node 1 lowers the reward); the ascent
    flips to ``sign(gamma_1) = -1`` and reaches the exact maximum of eq. 18, the corner
    ``(theta_1, theta_2) = (0.5 - beta sd_1, -1 + beta sd_2)``."""
    dag = CausalDAG.from_edges(3, [(0, 1), (1, 2)])
    actions = ActionSet.non_root(dag)
    plan = PropagationPlan.build(dag, actions.masks)
    nu = np.array([2.0, 3.0, 0.5])
    beta, var_1, var_2 = 2.0, 0.04, 1e-12
    theta = np.zeros((1, 2, 2, 1))
    theta[0, 0], theta[0, 1] = 0.5, -1.0
    ellipsoid_inv = np.zeros((1, 2, 2, 1, 1))
    ellipsoid_inv[0, 0], ellipsoid_inv[0, 1] = var_1, var_2
    corners = [
        nu[2] + t2 * (nu[1] + t1 * nu[0])
        for t1 in (0.5 - beta * np.sqrt(var_1), 0.5 + beta * np.sqrt(var_1))
        for t2 in (-1 - beta * np.sqrt(var_2), -1 + beta * np.sqrt(var_2))
    ]
    exact = max(corners)  # a bilinear function on a box peaks at a corner
    assert exact == pytest.approx(0.5 - (3.0 + 2.0 * 0.1), abs=1e-5)  # -2.7
    greedy = propagate_means(plan, nu, theta, 2, ellipsoid_inv, beta)
    bca = block_coordinate_ascent(plan, actions.masks, nu, theta, ellipsoid_inv, beta, 2)
    np.testing.assert_allclose(greedy, 0.5 - (3.0 + 2.0 * 0.9), atol=1e-5)  # -4.3
    np.testing.assert_allclose(bca, exact, rtol=1e-9)
    assert np.all(bca - greedy > 1.5)  # a gain of 2 beta sd_1 |nu_0| = 1.6


# ---------------------------------------------------------------- weighted ridge


@pytest.mark.parametrize("unit", [True, False])
def test_weighted_ridge_equals_a_direct_regularised_weighted_least_squares(unit, rng):
    """``theta = argmin sum w (y - x^T theta)^2 + lam ||theta||^2``, ``V = lam I + X^T W X``,
    ``Vt = lam I + X^T W^2 X`` (the regulariser in both), bonus under ``Vt`` before."""
    n, d, lam = 40, 3, 2.5
    x = rng.normal(size=(n, d)) * 2.0
    y = x @ np.array([0.5, -1.0, 2.0]) + rng.normal(size=n)
    w = np.ones(n) if unit else rng.uniform(0.05, 1.0, n)
    ridge = WeightedRidge((2,), d, regularisation=lam, unit_weights=unit)
    bonuses = []
    for k in range(n):
        rule = None if unit else (lambda b, k=k: bonuses.append(b[0]) or w[k : k + 1])
        ridge.update(np.array([1]), x[k : k + 1], y[k : k + 1], rule)
    root_w = np.sqrt(w)
    design = np.vstack([root_w[:, None] * x, np.sqrt(lam) * np.eye(d)])
    target = np.concatenate([root_w * y, np.zeros(d)])
    theta = np.linalg.lstsq(design, target, rcond=None)[0]
    gram = lam * np.eye(d) + (w[:, None] * x).T @ x
    sq_gram = lam * np.eye(d) + (w[:, None] ** 2 * x).T @ x
    np.testing.assert_allclose(ridge.theta[1], theta, rtol=1e-9)
    np.testing.assert_allclose(ridge.gram_inv[1], np.linalg.inv(gram), rtol=1e-8, atol=1e-14)
    expected_ellipsoid = np.linalg.inv(gram) @ (gram if unit else sq_gram) @ np.linalg.inv(gram)
    np.testing.assert_allclose(ridge.ellipsoid_inv[1], expected_ellipsoid, rtol=1e-8, atol=1e-14)
    np.testing.assert_array_equal(ridge.theta[0], 0.0)  # the untouched slot keeps the prior
    np.testing.assert_allclose(ridge.gram_inv[0], np.eye(d) / lam)
    if not unit:
        for k in (0, 1, 17, n - 1):
            before = lam * np.eye(d) + (w[:k, None] ** 2 * x[:k]).T @ x[:k]
            expected = np.sqrt(x[k] @ np.linalg.solve(before, x[k]))
            assert bonuses[k] == pytest.approx(expected, rel=1e-9)
