import numpy as np
import pytest

from causalbandits.envs import ActionSet, InvalidActionError, LinearSEMBandit
from causalbandits.envs.robust_lcb import make_environment, robust_lcb_sem
from causalbandits.graphs import CausalDAG
from causalbandits.scm import LinearSEM, UniformNoise

from .conftest import random_sem


def test_regret_oracle_matches_brute_force(rng):
    for n in range(2, 7):
        sem = random_sem(n, rng)
        sinks = sem.dag.sinks
        env = LinearSEMBandit(sem, 10, ActionSet.all_subsets(n), reward_node=int(sinks[-1]))
        brute = []
        for mask in env.actions.masks:
            b_a = np.where(mask[None, :], sem.intervention_weights, sem.weights)
            brute.append(np.linalg.solve(np.eye(n) - b_a.T, sem.noise.mean)[env.reward_node])
        np.testing.assert_allclose(env.expected_rewards, brute, atol=1e-12)
        best = np.argmax(brute)
        assert env.optimal_value == pytest.approx(brute[best])
        env.reset(0, 3)
        actions = np.array([best, 0, n % env.n_actions])
        np.testing.assert_allclose(
            env.pseudo_regret(actions), brute[best] - np.asarray(brute)[actions]
        )


def test_common_random_numbers_do_not_depend_on_the_actions():
    env = make_environment(horizon=50, deviation_budget=0)
    seeds = np.random.SeedSequence(3).spawn(5)
    env.reset(seeds)
    first = env.step(np.zeros(5, dtype=int))
    env.reset(seeds)
    second = env.step(np.full(5, 15))
    # roots are never intervened: their values are the noise itself, shared by both runs
    np.testing.assert_array_equal(first[:, :9], second[:, :9])
    env.reset(seeds[2:3])
    np.testing.assert_array_equal(env.step(np.zeros(1, dtype=int))[0], first[2])


def test_actions_outside_the_action_set_are_rejected():
    env = make_environment(horizon=10, deviation_budget=0)
    env.reset(0, 2)
    with pytest.raises(InvalidActionError, match="outside the action set"):
        env.step(np.array([0, 16]))
    with pytest.raises(InvalidActionError, match="outside"):
        env.step(np.array([-1, 0]))
    with pytest.raises(InvalidActionError, match="integer"):
        env.step(np.array([0.5, 1.0]))
    with pytest.raises(ValueError, match="one action per replicate"):
        env.step(np.array([0, 1, 2]))
    with pytest.raises(InvalidActionError, match="no action intervenes"):
        env.actions.index_of([0])


def test_horizon_and_reset_are_enforced():
    env = make_environment(horizon=2, deviation_budget=0)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.zeros(1, dtype=int))
    env.reset(0, 1)
    env.step(np.zeros(1, dtype=int))
    env.step(np.zeros(1, dtype=int))
    with pytest.raises(RuntimeError, match="horizon"):
        env.step(np.zeros(1, dtype=int))


def test_the_reward_node_may_have_children():
    dag = CausalDAG.from_edges(3, [(0, 1), (1, 2)], names=["a", "b", "c"])
    sem = LinearSEM(dag, dag.adjacency * 0.5, dag.adjacency * 1.0, UniformNoise.iid(3))
    env = LinearSEMBandit(sem, 10, reward_node=1)
    np.testing.assert_allclose(env.expected_rewards, sem.mean_values(env.actions.masks)[:, 1])
    assert env.problem.dag.names == ["a", "b", "c"]
    with pytest.raises(ValueError, match="outside 0..2"):
        LinearSEMBandit(sem, 10, reward_node=3)


def test_unknown_options_of_the_paper_environment():
    with pytest.raises(ValueError, match="unknown deviation design"):
        make_environment(horizon=10, deviation_budget=0, design="nope")
    with pytest.raises(ValueError, match="unknown action set"):
        make_environment(horizon=10, deviation_budget=0, action_set="nope")
    assert make_environment(horizon=10, deviation_budget=0, action_set="all").n_actions == 2**13
    assert (
        make_environment(horizon=10, deviation_budget=0, action_set="non-root-no-reward").n_actions
        == 8
    )
    sem = robust_lcb_sem()
    assert sem.n_nodes == 13
