"""The interval bound of eq. 18: valid for weights of any sign, greedy's value when signs are
certain, never below a feasible value (block-coordinate ascent)."""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits.envs.actions import ActionSet
from causalbandits.envs.linear_bandit import LinearSEMBandit
from causalbandits.envs.random_systems import random_soft_intervention_sem
from causalbandits.envs.robust_lcb import make_environment
from causalbandits.estimators.interval_bounds import propagate_bounds
from causalbandits.estimators.propagation import (
    PropagationPlan,
    block_coordinate_ascent,
    propagate_means,
)
from causalbandits.graphs.dag import CausalDAG
from causalbandits.policies import LinSEMUCB, RobustLCB


def fitted_learner(n_nodes: int, seed: int, rounds: int) -> LinSEMUCB:
    """LinSEM-UCB after ``rounds`` random rounds (2 replicates) on a random mixed-sign SEM
    with 4 intervenable nodes besides the reward node (32 arms)."""
    rng = np.random.default_rng(seed)
    sem = random_soft_intervention_sem(n_nodes, rng, edge_probability=min(0.5, 3 / n_nodes))
    weights = np.concatenate([sem.weights[sem.weights != 0], sem.intervention_weights.ravel()])
    assert np.mean(weights[weights != 0] < 0) >= 0.3  # mixed signs
    nodes = rng.choice(np.arange(1, n_nodes - 1), size=4, replace=False)
    actions = ActionSet.subsets(n_nodes, sorted(nodes.tolist()) + [n_nodes - 1])
    env = LinearSEMBandit(sem, 1000, actions, reward_node=n_nodes - 1)
    env.reset(seed, 2)
    # the default solver on mixed signs (the interval bound), with the paper's radius
    policy = LinSEMUCB(env.problem, radius="theory")
    policy.reset(np.random.SeedSequence(seed).spawn(2))
    for _ in range(rounds):
        arms = rng.integers(env.n_actions, size=2)
        policy.update(arms, env.step(arms))
    return policy


def target_means(policy: LinSEMUCB, theta: np.ndarray) -> np.ndarray:
    """``[(I - B_a(theta)^T)^{-1} nu]_reward`` of every replicate and arm, by linear solves."""
    plan, masks, nu = policy.plan, policy.masks, policy.noise_mean
    n = nu.size
    b = np.zeros((theta.shape[0], masks.shape[0], n + 1, n + 1))
    for k, node in enumerate(plan.nodes):
        b[:, :, plan.parent_index[k], node] = theta[:, k][:, masks[:, node].astype(int)]
    system = np.eye(n) - np.swapaxes(b[..., :n, :n], -1, -2)
    means = np.linalg.solve(system, np.broadcast_to(nu, system.shape[:-1])[..., None])
    return means[..., policy.reward_node, 0]


def draws_in_the_ellipsoids(policy: LinSEMUCB, rng: np.random.Generator, count: int):
    """Columns on the boundary of (even draws) or inside (odd draws) every ellipsoid."""
    theta, inverse = policy.ridge.theta, policy.ridge.ellipsoid_inv
    factor = np.linalg.cholesky(inverse)
    beta = policy.beta_scale * policy.beta(policy.t + 1)
    for draw in range(count):
        z = rng.standard_normal(theta.shape)
        z /= np.linalg.norm(z, axis=-1, keepdims=True)
        if draw % 2:
            z *= rng.random((*theta.shape[:-1], 1)) ** (1 / theta.shape[-1])
        yield theta + beta * np.einsum("...ij,...j->...i", factor, z)


def bounds(policy: LinSEMUCB, **options) -> tuple[np.ndarray, np.ndarray]:
    beta = policy.beta_scale * policy.beta(policy.t + 1)
    ridge = policy.ridge
    return propagate_bounds(
        policy.plan,
        policy.noise_mean,
        ridge.theta,
        policy.reward_node,
        ridge.ellipsoid_inv,
        beta,
        **options,
    )


@pytest.mark.parametrize(
    ("n_nodes", "seed", "rounds"), [(6, 0, 30), (12, 1, 80), (25, 2, 150), (50, 3, 400)]
)
def test_every_model_in_the_confidence_sets_lies_inside_the_bounds(n_nodes, seed, rounds):
    policy = fitted_learner(n_nodes, seed, rounds)
    lower, upper = bounds(policy)
    rng = np.random.default_rng(seed)
    for theta in draws_in_the_ellipsoids(policy, rng, 60):
        means = target_means(policy, theta)
        assert np.all(means <= upper + 1e-9 * np.abs(upper))
        assert np.all(means >= lower - 1e-9 * np.abs(lower))


def test_greedy_propagation_is_not_optimistic_with_mixed_signs_and_the_interval_bound_is():
    policy = fitted_learner(12, 1, 80)
    beta = policy.beta_scale * policy.beta(policy.t + 1)
    ridge = policy.ridge
    args = (policy.plan, policy.noise_mean, ridge.theta)
    greedy = propagate_means(*args, policy.reward_node, ridge.ellipsoid_inv, beta)
    # Block-coordinate ascent returns the value of columns inside the sets: a feasible mean.
    feasible = block_coordinate_ascent(
        *args[:1], policy.masks, *args[1:], ridge.ellipsoid_inv, beta, policy.reward_node, 3
    )
    assert np.mean(feasible > greedy + 1e-9) > 0.5  # the failure the interval bound exists for
    upper = policy.upper_confidence_bounds()
    assert np.all(upper >= feasible - 1e-9 * np.abs(feasible))
    assert upper == pytest.approx(bounds(policy)[1], rel=1e-12)


def test_with_every_sign_certain_the_bound_is_greedy_propagations_value():
    # A positive chain-with-shortcuts SEM whose confidence sets are small, positive balls.
    adjacency = np.triu(np.ones((6, 6), dtype=bool), k=1) & (
        np.random.default_rng(0).random((6, 6)) < 0.6
    )
    adjacency[:-1, -1] = True
    dag = CausalDAG(adjacency)
    masks = ActionSet.non_root(dag).masks
    plan = PropagationPlan.build(dag, masks)
    rng = np.random.default_rng(1)
    theta = rng.uniform(0.5, 1.5, (3, plan.nodes.size, 2, plan.width))
    theta *= plan.parent_index[None, :, None, :] < 6  # padding stays zero
    inverse = np.broadcast_to(0.01 * np.eye(plan.width), (*theta.shape, plan.width)).copy()
    noise_mean = rng.uniform(-1.0, 1.0, 6)  # node values of both signs
    options = dict(ellipsoid_inv=inverse, beta=0.5)
    greedy = propagate_means(plan, noise_mean, theta, 5, **options)
    _, upper = propagate_bounds(plan, noise_mean, theta, 5, **options)
    np.testing.assert_allclose(upper, greedy, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("n_nodes", "seed", "rounds"), [(6, 4, 40), (10, 5, 100)])
def test_the_bound_is_never_below_a_feasible_value_and_relaxing_only_loosens_it(
    n_nodes, seed, rounds
):
    policy = fitted_learner(n_nodes, seed, rounds)
    beta = policy.beta_scale * policy.beta(policy.t + 1)
    ridge = policy.ridge
    feasible = block_coordinate_ascent(
        policy.plan,
        policy.masks,
        policy.noise_mean,
        ridge.theta,
        ridge.ellipsoid_inv,
        beta,
        policy.reward_node,
        sweeps=3,
    )
    lower, upper = bounds(policy, max_branch=20)
    assert np.all(upper >= feasible - 1e-9 * np.abs(feasible))
    relaxed_lower, relaxed_upper = bounds(policy, max_branch=0)
    assert np.all(relaxed_upper >= upper - 1e-9) and np.all(relaxed_lower <= lower + 1e-9)
    _, capped = bounds(policy, max_branch=20, ball=True)
    assert np.all(capped <= upper + 1e-9)
    with pytest.raises(ValueError, match="max_branch"):
        bounds(policy, max_branch=-1)


def test_a_plan_for_the_reward_skips_its_non_ancestors_without_changing_its_bounds():
    # 0 -> 1 -> 4 (reward), 0 -> 2 -> 3: nodes 2 and 3 do not reach the reward.
    dag = CausalDAG.from_edges(5, [(0, 1), (1, 4), (0, 2), (2, 3), (0, 4)])
    masks = ActionSet.non_root(dag).masks
    full, reduced = PropagationPlan.build(dag, masks), PropagationPlan.build(dag, masks, 4)
    assert reduced.nodes.tolist() == [1, 4] and full.nodes.size == 4
    rng = np.random.default_rng(0)
    theta = rng.normal(size=(2, 4, 2, full.width))
    inverse = np.broadcast_to(0.2 * np.eye(full.width), (*theta.shape, full.width))
    keep = [full.node_position(v) for v in reduced.nodes]
    noise_mean = rng.normal(size=5)
    for solve in (propagate_means, propagate_bounds):
        np.testing.assert_allclose(
            solve(full, noise_mean, theta, 4, inverse, 0.7),
            solve(reduced, noise_mean, theta[:, keep], 4, inverse[:, keep], 0.7),
            rtol=1e-12,
        )


def test_the_default_solver_follows_the_sign_assumption_of_the_problem() -> None:
    """``solver="auto"``: a mixed-sign system (``problem.nonnegative`` False) gets the interval
    bound (the learner of the tests above is built with the default); the Robust-LCB paper's
    non-negative instance keeps greedy propagation, so its reproductions are unchanged."""
    mixed = fitted_learner(12, 1, 0)
    assert not mixed.problem.nonnegative and mixed.solver == "interval"
    assert RobustLCB(mixed.problem).solver == "interval"
    paper = make_environment(horizon=100, deviation_budget=0).problem
    assert paper.nonnegative
    assert LinSEMUCB(paper).solver == "greedy" and RobustLCB(paper).solver == "greedy"
    assert LinSEMUCB(paper, solver="interval").solver == "interval"
    choices = r"\('auto', 'greedy', 'interval', 'bca'\)"
    with pytest.raises(ValueError, match=f"^unknown solver 'exact'; choose from {choices}$"):
        LinSEMUCB(paper, solver="exact")


def test_the_unit_ball_cap_applies_to_the_interval_bound():
    """``ball=True`` caps every support value by ``||u||`` (eq. 14-15): never above the
    uncapped bound, below it somewhere, and the value of :func:`propagate_bounds` with it."""
    policy = fitted_learner(12, 1, 80)
    uncapped = policy.upper_confidence_bounds()
    policy.ball = True
    capped = policy.upper_confidence_bounds()
    assert capped == pytest.approx(bounds(policy, ball=True)[1], rel=1e-12)
    assert np.all(capped <= uncapped + 1e-12) and np.any(capped < uncapped - 1e-6)
