"""GOLEM-MAB (explore-then-commit) and GOLEM-MAB-CD (whole-graph GLR restarts), spec 001 §4.5."""

from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from causalbandits.envs import ActionSet, LinearSEMBandit
from causalbandits.graphs.dag import CausalDAG
from causalbandits.policies.golem_mab import GolemMAB, GolemMABCD, mixture_means
from causalbandits.random import replicate_seeds
from causalbandits.scm import GaussianNoise, LinearSEM


@pytest.fixture(autouse=True)
def _one_blas_thread():
    """Small matrices: multi-threaded BLAS only slows these tests down (a lot, under load)."""
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def make_bandit(weights: np.ndarray, star: np.ndarray, horizon: int) -> LinearSEMBandit:
    n = weights.shape[0]
    dag = CausalDAG(((weights != 0) | (star != 0)).astype(int))
    sem = LinearSEM(dag, weights, star, GaussianNoise.iid(n, 1.0, 1.0))
    return LinearSEMBandit(sem, horizon=horizon, actions=ActionSet.all_subsets(n))


def four_node_weights() -> tuple[np.ndarray, np.ndarray]:
    B = np.zeros((4, 4))
    B[0, 1], B[1, 2], B[0, 3], B[2, 3], B[1, 3] = 1.5, -1.0, 0.8, 1.2, 0.7
    Bs = np.zeros((4, 4))
    Bs[0, 1], Bs[1, 2], Bs[0, 3], Bs[2, 3], Bs[1, 3] = -1.2, 1.4, -0.9, 1.6, -0.6
    return B, Bs


def run(policy, env, rounds, replicates, root=0, start=True):
    if start:
        env.reset(seed=root, replicates=replicates)
        policy.reset(replicate_seeds(root, 0, range(replicates), 1))
    for _ in range(rounds):
        actions = policy.select()
        policy.update(actions, env.step(actions))


def test_mixture_means_matches_the_environment_oracle():
    B, Bs = four_node_weights()
    env = make_bandit(B, Bs, horizon=10)
    means = mixture_means(env.actions.masks, B, Bs, np.ones(4))
    np.testing.assert_allclose(means, env.expected_values, rtol=1e-12)
    # a 2-cycle mixture: 0 -> 1 in B, 1 -> 0 in B*; arm {0} mixes them into a cycle
    cyc, cyc_star = np.zeros((2, 2)), np.zeros((2, 2))
    cyc[0, 1], cyc_star[1, 0] = 0.5, 0.5
    masks = ActionSet.all_subsets(2).masks
    plain = mixture_means(masks, cyc, cyc_star, np.ones(2))
    assert np.isfinite(plain).all()  # (I - B_a) invertible: solved, as in the authors' code
    excl = mixture_means(masks, cyc, cyc_star, np.ones(2), exclude_cyclic=True)
    cyclic_arm = ActionSet.all_subsets(2).index_of([0])
    assert np.isneginf(excl[cyclic_arm]).all() and np.isfinite(np.delete(excl, cyclic_arm, 0)).all()
    # a singular mixture gets -inf
    sing, sing_star = np.zeros((2, 2)), np.zeros((2, 2))
    sing[0, 1], sing_star[1, 0] = 1.0, 1.0
    assert np.isneginf(mixture_means(masks, sing, sing_star, np.ones(2))[cyclic_arm]).all()


def test_explores_then_commits_to_an_optimal_arm():
    B, Bs = four_node_weights()
    n_learn, replicates = 150, 6
    env = make_bandit(B, Bs, horizon=2 * n_learn + 20)
    policy = GolemMAB(env.problem, n_learn=n_learn)
    env.reset(seed=3, replicates=replicates)
    policy.reset(replicate_seeds(3, 0, range(replicates), 1))
    empty, full = env.actions.index_of([]), env.actions.index_of(range(4))
    for t in range(2 * n_learn + 20):
        actions = policy.select()
        expected = empty if t < n_learn else full if t < 2 * n_learn else None
        if expected is not None:
            assert np.all(actions == expected)
        policy.update(actions, env.step(actions))
    assert [t for _, t in policy.commits] == [2 * n_learn] * replicates
    assert env.is_optimal(policy.committed).mean() >= 0.8
    # the fitted graphs are the true ones (support)
    b_hat, b_star = policy.estimates[0]
    np.testing.assert_array_equal(b_hat != 0, B != 0)
    np.testing.assert_array_equal(b_star != 0, Bs != 0)
    assert policy.detections == []


def test_needs_empty_and_full_interventions():
    B, Bs = four_node_weights()
    n = 4
    dag = CausalDAG(((B != 0) | (Bs != 0)).astype(int))
    sem = LinearSEM(dag, B, Bs, GaussianNoise.iid(n, 1.0, 1.0))
    singles = ActionSet(np.eye(n, dtype=bool))
    env = LinearSEMBandit(sem, horizon=10, actions=singles)
    with pytest.raises(ValueError, match="empty intervention"):
        GolemMAB(env.problem)
    with pytest.raises(ValueError, match="window"):
        GolemMABCD(make_bandit(B, Bs, 10).problem, window=4)


def test_cd_restarts_after_a_change_and_not_under_the_null():
    B, Bs = four_node_weights()
    n_learn, replicates = 100, 4
    before = make_bandit(B, Bs, horizon=2000)
    # the reward mechanism changes in both modes, strongly
    B2, Bs2 = B.copy(), Bs.copy()
    B2[:3, 3] = [-3.0, 4.0, -3.5]
    Bs2[:3, 3] = [4.0, -3.0, 3.5]
    after = make_bandit(B2, Bs2, horizon=2000)

    policy = GolemMABCD(before.problem, n_learn=n_learn)
    change = 2 * n_learn + 300
    run(policy, before, change, replicates)  # 300 committed rounds under the null
    assert policy.detections == []
    assert np.all(policy.committed >= 0)
    after.reset(seed=99, replicates=replicates)
    run(policy, after, 40, replicates, start=False)
    rounds = np.array([t for _, t in policy.detections])
    assert sorted(r for r, _ in policy.detections) == list(range(replicates))
    assert np.all((rounds > change) & (rounds <= change + 40))
    # each replicate re-learns from scratch on the new system and commits again
    assert np.all(policy.select() == after.actions.index_of([]))
    run(policy, after, 2 * n_learn + 5, replicates, start=False)
    assert len(policy.commits) == 2 * replicates
    assert after.is_optimal(policy.committed).mean() >= 0.75
