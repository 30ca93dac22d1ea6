"""LinSEM-UCB's self-normalised radius (Abbasi-Yadkori et al. 2011, Thm 2; issue 33): the
default off the paper's non-negative model, per (node, mode) from ``log det V`` and the
node's noise scale, never wider than the paper's at unit noise, and covering the truth where
the paper's unit-noise radius does not."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from causalbandits.envs.actions import ActionSet
from causalbandits.envs.linear_bandit import LinearSEMBandit
from causalbandits.envs.linear_instances import LinearSEMInstances
from causalbandits.envs.mixed_sign import mixed_sign_bandit
from causalbandits.envs.robust_lcb import make_environment
from causalbandits.experiments.recorders import BoundCoverage
from causalbandits.experiments.simulate import simulate
from causalbandits.graphs.dag import CausalDAG
from causalbandits.policies import LinSEMTS, LinSEMUCB, RandomPolicy, RobustLCB
from causalbandits.scm.linear import LinearSEM
from causalbandits.scm.noise import GaussianNoise


def true_columns(policy: LinSEMUCB, sem: LinearSEM) -> np.ndarray:
    """The true weights in the learner's layout ``(n, 2, width)`` (padding 0)."""
    plan = policy.plan
    weights = np.vstack([sem.weights, np.zeros(sem.n_nodes)])  # row N: the zero slot
    interventional = np.vstack([sem.intervention_weights, np.zeros(sem.n_nodes)])
    columns = np.zeros((plan.nodes.size, 2, plan.width))
    for k, node in enumerate(plan.nodes):
        columns[k, 0] = weights[plan.parent_index[k], node]
        columns[k, 1] = interventional[plan.parent_index[k], node]
    return columns


def played(policy: LinSEMUCB, env: LinearSEMBandit, rounds: int, seed: int) -> LinSEMUCB:
    rng = np.random.default_rng(seed)
    policy.reset(np.random.SeedSequence(seed).spawn(env.replicates))
    for _ in range(rounds):
        arms = rng.integers(env.n_actions, size=env.replicates)
        policy.update(arms, env.step(arms))
    return policy


def chain(std: float, horizon: int = 400, cut: bool = False) -> LinearSEMBandit:
    """A 6-node chain-with-shortcuts SEM of both signs, every noise std ``std``; ``cut``:
    intervening on node 1 removes its edge from node 0."""
    adjacency = np.triu(np.ones((6, 6), dtype=bool), k=1) & ~np.eye(6, k=3, dtype=bool)
    rng = np.random.default_rng(11)
    signs = np.where(rng.random((6, 6)) < 0.4, -1.0, 1.0)
    weights = adjacency * signs * rng.uniform(0.2, 0.5, (6, 6))
    intervention = adjacency * signs.T * rng.uniform(0.2, 0.5, (6, 6))
    if cut:
        intervention[0, 1] = 0.0
    noise = GaussianNoise(np.linspace(-1.0, 1.0, 6), np.full(6, std))
    sem = LinearSEM(CausalDAG(adjacency), weights, intervention, noise)
    env = LinearSEMBandit(sem, horizon, ActionSet.subsets(6, [1, 2, 5]), reward_node=5)
    env.reset(5, 40)
    return env


def test_the_default_radius_is_the_papers_on_the_papers_model_and_self_normalised_elsewhere():
    assert LinSEMUCB(make_environment(100, deviation_budget=2.0).problem).radius == "theory"
    assert LinSEMUCB(mixed_sign_bandit(100, 0).problem).radius == "self-normalised"
    assert RobustLCB(mixed_sign_bandit(100, 0).problem).radius == "theory"  # Lemma 1's
    with pytest.raises(
        ValueError, match=r"unknown radius 'self-normalised'; .* \('auto', 'theory'\)$"
    ):
        RobustLCB(mixed_sign_bandit(100, 0).problem, radius="self-normalised")
    choices = r"\('auto', 'theory', 'self-normalised'\)"
    with pytest.raises(ValueError, match=f"^unknown radius 'wide'; choose from {choices}$"):
        LinSEMUCB(mixed_sign_bandit(100, 0).problem, radius="wide")


def test_at_unit_noise_the_slot_radii_never_exceed_the_papers_radius():
    env = chain(1.0)
    policy = played(LinSEMUCB(env.problem, radius="self-normalised"), env, 300, 2)
    radii = policy.slot_radii()
    assert radii.shape == (40, policy.plan.nodes.size, 2)
    assert np.all(radii <= policy.beta(policy.t) + 1e-12)
    assert np.all(radii >= 1.0 + np.sqrt(2 * np.log(1 / policy.delta)) - 1e-12)
    assert radii.max() < 0.9 * policy.beta(policy.t)  # features far below m: much tighter


@pytest.mark.parametrize("std", [0.3, 4.0])
def test_the_ellipsoids_cover_the_true_columns_at_any_noise_scale(std):
    """Every (replicate, node, mode) ellipsoid holds its true column: with noise std 4 the
    paper's unit-noise radius misses many, the self-normalised one (scaled by the node's std)
    none; with std 0.3 it is also narrower than the paper's."""
    env = chain(std)
    policy = played(LinSEMUCB(env.problem, radius="self-normalised"), env, 300, 3)
    error = policy.ridge.theta - true_columns(policy, env.sem)
    gram = np.linalg.inv(policy.ridge.gram_inv)
    distance = np.sqrt(np.einsum("...i,...ij,...j->...", error, gram, error))
    assert np.all(distance <= policy.slot_radii())
    paper_misses = np.mean(distance > policy.beta(policy.t))
    if std > 1:
        assert paper_misses > 0.05
    else:
        assert np.all(policy.slot_radii() < policy.beta(policy.t))


def test_the_self_normalised_upper_bounds_cover_every_arms_mean():
    env = chain(4.0)
    policy = played(LinSEMUCB(env.problem), env, 300, 4)
    assert policy.radius == "self-normalised"
    assert np.all(policy.upper_confidence_bounds() >= env.expected_rewards[None] - 1e-9)


def test_the_coverage_recorder_counts_the_rounds_whose_bounds_cover_the_true_means():
    """The default bounds cover every arm in every round; the plug-in means (radius 0) fall
    below some arm's true mean in most rounds; a policy without bounds is refused."""
    shares = {}
    for scale in (1.0, 0.0):
        env = chain(1.0, horizon=200)
        policy = LinSEMUCB(env.problem, beta_scale=scale)
        policy.reset(np.random.SeedSequence(6).spawn(env.replicates))
        out = simulate(env, policy, np.array([100, 200]), [BoundCoverage()])
        assert out["covers_best"].shape == out["covers_all"].shape == (2, env.replicates)
        assert np.all(out["covers_all"] <= out["covers_best"])
        shares[scale] = out["covers_all"]
    assert np.all(shares[1.0] == 1.0)
    assert shares[0.0].mean() < 0.5
    env = chain(1.0, horizon=10)
    random_play = RandomPolicy(env.problem)
    random_play.reset(np.random.SeedSequence(0).spawn(env.replicates))
    with pytest.raises(ValueError, match="RandomPolicy states no upper confidence bounds"):
        simulate(env, random_play, 5, [BoundCoverage()])


@pytest.mark.parametrize("told", [True, False])
def test_the_upper_bound_of_one_learned_node_is_its_closed_form(told):
    """Root ``X0`` (mean 1.5, std 0.5), reward ``X1 = b_m X0 + eps`` (std 0.5) in mode ``m``:
    ``UCB = nu_1 + theta_m nu_0 + r_m |nu_0| sqrt(V_m^{-1})`` with ``r_m = 1 + sigma_1
    sqrt(2 log(1/delta) + log det V_m)``, ``sigma_1`` the told std (0.5) or, untold, 1."""
    adjacency = np.array([[False, True], [False, False]])
    noise = GaussianNoise(np.array([1.5, -0.2]), np.array([0.5, 0.5]))
    sem = LinearSEM(CausalDAG(adjacency), 0.8 * adjacency, -0.6 * adjacency, noise)
    env = LinearSEMBandit(sem, 100, ActionSet.subsets(2, [1]), reward_node=1)
    env.reset(2, 3)
    problem = env.problem if told else dataclasses.replace(env.problem, noise_variance=None)
    policy = played(LinSEMUCB(problem), env, 40, 7)
    assert policy.radius == "self-normalised"
    theta, inverse = policy.ridge.theta[:, 0, :, 0], policy.ridge.gram_inv[:, 0, :, 0, 0]
    log_det = np.log(1 + 0 * inverse) - np.log(inverse)  # one dimension: det V = 1 / V^-1
    sigma = 0.5 if told else 1.0
    radius = 1 + sigma * np.sqrt(2 * np.log(1 / policy.delta) + log_det)
    modes = policy.masks[:, 1].astype(int)  # arm 0 observational, arm 1 intervened
    expected = -0.2 + 1.5 * theta[:, modes] + radius[:, modes] * 1.5 * np.sqrt(inverse[:, modes])
    np.testing.assert_allclose(policy.upper_confidence_bounds(), expected, rtol=1e-12)


def test_linsem_ts_draws_every_nodes_columns_from_its_own_normals():
    """LinSEM-TS's standard normals of two nodes are never copies of each other."""
    env = chain(1.0)
    policy = LinSEMTS(env.problem)
    policy.reset(np.random.SeedSequence(1).spawn(env.replicates))
    z = policy.standard_normals()
    first = z[:, :, :, 0]  # every non-root node has a first parent
    for a in range(first.shape[1]):
        for b in range(a):
            assert not np.allclose(first[:, a], first[:, b])


def test_linsem_ts_ignores_the_draws_of_parents_a_mode_does_not_have(monkeypatch):
    """Node 1's interventional mode has no parent 0: huge normals in that slot (and in every
    padding slot) change no action, since each mode regresses on its own parents only."""
    env = chain(1.0, cut=True)
    policy = played(LinSEMTS(env.problem), env, 50, 8)
    shape = (env.replicates, *policy.parent_mask.shape[1:])
    absent = np.broadcast_to(policy.parent_mask == 0, shape)
    assert absent[:, 0, 1].any()  # node 1, mode 1: parent 0 is absent
    monkeypatch.setattr(policy, "standard_normals", lambda: np.where(absent, 1e6, 0.0))
    with_huge = policy.select()
    monkeypatch.setattr(policy, "standard_normals", lambda: np.zeros(shape))
    np.testing.assert_array_equal(with_huge, policy.select())


def test_linsem_ts_on_stacked_systems_draws_finite_distinct_normals_per_node():
    systems = [chain(1.0, cut=cut) for cut in (False, True)]
    stacked = LinearSEMInstances(systems)
    policy = LinSEMTS(stacked.problem)
    policy.reset(np.random.SeedSequence(2).spawn(2))
    z = policy.standard_normals()[:, :, :, 0]
    assert np.all(np.isfinite(z))
    for a in range(z.shape[1]):
        for b in range(a):
            assert not np.allclose(z[:, a], z[:, b])
