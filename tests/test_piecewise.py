import numpy as np
import pytest

from causalbandits.envs import ActionSet, LinearSEMBandit, negated_interventions
from causalbandits.envs.piecewise import (
    ChangeRecord,
    MechanismChange,
    PiecewiseStationaryBandit,
    change_mechanisms,
    optimal_arms,
)
from causalbandits.envs.random_systems import random_csl_bandit
from causalbandits.graphs import CausalDAG
from causalbandits.scm import GaussianNoise, LinearSEM

from .conftest import random_sem

CHANGES = [100, 200]


@pytest.fixture
def wrapped() -> PiecewiseStationaryBandit:
    return PiecewiseStationaryBandit(random_csl_bandit(6, 300, 1), CHANGES, n_columns=2, rng=2)


def _changed_columns(old, new) -> set[tuple[int, int]]:
    pairs = zip(
        (old.weights, old.intervention_weights),
        (new.weights, new.intervention_weights),
        strict=True,
    )
    return {
        (int(node), mode)
        for mode, (a, b) in enumerate(pairs)
        for node in np.flatnonzero(np.any(a != b, axis=0))
    }


def test_the_optimal_arms_change_at_every_change_point(wrapped):
    assert len(wrapped.sems) == len(CHANGES) + 1
    tolerance = wrapped.optimal_tolerance
    assert tolerance == 1e-2
    rewards = wrapped.segment_rewards
    for before, after in zip(rewards[:-1], rewards[1:], strict=True):
        old, new = optimal_arms(before, tolerance), optimal_arms(after, tolerance)
        assert not set(old) & set(new)
        assert np.all(after[old] < after.max() - tolerance)


def test_only_the_recorded_columns_differ_and_follow_the_recipe(wrapped):
    masks = wrapped.actions.masks
    n = wrapped.sems[0].n_nodes
    for k, point in enumerate(CHANGES):
        old, new = wrapped.sems[k], wrapped.sems[k + 1]
        recorded = {(c.node, c.mode) for c in wrapped.changes if c.round == point}
        assert recorded and recorded == _changed_columns(old, new)
        best = masks[optimal_arms(wrapped.segment_rewards[k], 1e-2)]
        for node, mode in recorded:
            assert np.all(best[:, node] == mode)  # all optimal arms use this column
            column = (new.weights, new.intervention_weights)[mode][:, node]
            assert np.all(column[node:] == 0)  # parents among earlier nodes only
            present = np.abs(column[column != 0])
            assert np.all((present >= 0.5) & (present <= 2))
        assert new.dag.sinks[-1] == n - 1 and not new.dag.adjacency[n - 1].any()
    assert all(isinstance(c, ChangeRecord) for c in wrapped.changes)


def test_the_model_switches_exactly_at_the_change_point(wrapped):
    base = wrapped.env
    replicates = 3
    seeds = np.random.SeedSequence(9).spawn(replicates)
    base.reset(seeds)
    wrapped.reset(seeds)
    rng = np.random.default_rng(0)
    masks = wrapped.actions.masks
    n = base.sem.n_nodes
    for t in range(wrapped.horizon):
        actions = rng.integers(wrapped.n_actions, size=replicates)
        segment = np.searchsorted(CHANGES, t, side="right")
        if t in CHANGES:  # the old optimal arm uses every changed column
            actions[:] = np.argmax(wrapped.segment_rewards[segment - 1])
        rewards = wrapped.segment_rewards[segment]
        assert wrapped.segment == segment
        np.testing.assert_array_equal(wrapped.expected_rewards, rewards)
        np.testing.assert_allclose(wrapped.pseudo_regret(actions), rewards.max() - rewards[actions])
        np.testing.assert_array_equal(
            wrapped.is_optimal(actions), rewards[actions] >= rewards.max() - 1e-2
        )
        x_base, x_wrapped = base.step(actions), wrapped.step(actions)
        b_a = base.sem.weights_under(masks[actions])  # recover the common noise
        eps = np.einsum("rij,ri->rj", np.eye(n) - b_a, x_base)
        sem = wrapped.sems[segment]
        expected = np.einsum("rij,rj->ri", sem.transfer_matrices(masks[actions]), eps)
        np.testing.assert_allclose(x_wrapped, expected, rtol=1e-9, atol=1e-9)
        if t < CHANGES[0]:
            np.testing.assert_array_equal(x_wrapped, x_base)
        if t in CHANGES:
            stale = wrapped.sems[segment - 1].transfer_matrices(masks[actions])
            nodes = [c.node for c in wrapped.changes if c.round == t]
            stale_x = np.einsum("rij,rj->ri", stale, eps)
            assert np.all(np.abs(x_wrapped - stale_x)[:, nodes].max(axis=1) > 1e-9)
    assert wrapped.segment == len(CHANGES)
    with pytest.raises(RuntimeError, match="horizon"):
        wrapped.step(np.zeros(replicates, dtype=int))


def test_changes_are_drawn_once_and_reproducibly():
    env = random_csl_bandit(6, 300, 1)
    first = PiecewiseStationaryBandit(env, CHANGES, rng=5)
    second = PiecewiseStationaryBandit(env, CHANGES, rng=5)
    assert first.changes == second.changes
    np.testing.assert_array_equal(first.segment_rewards, second.segment_rewards)
    assert first.problem is env.problem
    first.reset(0, 2)
    first.step(np.zeros(2, dtype=int))
    np.testing.assert_array_equal(first.segment_rewards, second.segment_rewards)


def test_works_on_a_general_linear_sem_bandit():
    rng = np.random.default_rng(4)
    sem = random_sem(6, rng)
    env = LinearSEMBandit(sem, 50, reward_node=int(sem.dag.sinks[-1]))
    wrapped = PiecewiseStationaryBandit(env, [20], n_columns=3, rng=rng)
    assert {c.round for c in wrapped.changes} == {20}
    new = wrapped.sems[1]
    assert wrapped.reward_node in new.dag.sinks
    order = sem.dag.topological_order
    position = np.argsort(order)
    for change in wrapped.changes:
        column = (new.weights, new.intervention_weights)[change.mode][:, change.node]
        assert np.all(position[np.flatnonzero(column)] < position[change.node])


def test_change_mechanisms_reports_its_columns():
    env = random_csl_bandit(5, 10, 3)
    one = MechanismChange(n_columns=1)
    new, changed = change_mechanisms(env.sem, env.actions, env.reward_node, rng=0, change=one)
    assert changed and set(changed) == _changed_columns(env.sem, new)
    with pytest.raises(ValueError, match="n_columns"):
        MechanismChange(n_columns=0)


def test_impossible_changes_raise():
    env = random_csl_bandit(4, 10, 0)
    both_optimal = ActionSet.subsets(4, [0])  # node 0 never matters: both arms stay optimal
    with pytest.raises(ValueError, match="every arm is optimal"):
        change_mechanisms(env.sem, both_optimal, env.reward_node)
    # x1 = x0 + e1 (B) or e1 (B*); x2 = x1 + e2 (B) or 2 x1 + e2 (B*): rewards 3, 3 and 2
    dag = CausalDAG.from_edges(3, [(0, 1), (1, 2)])
    weights = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]], float)
    star = np.array([[0, 0, 0], [0, 0, 2], [0, 0, 0]], float)
    sem = LinearSEM(dag, weights, star, GaussianNoise.iid(3, 1.0, 1.0))
    arms = ActionSet(np.array([[1, 0, 0], [0, 1, 1], [0, 1, 0]]))
    np.testing.assert_allclose(sem.mean_values(arms.masks)[:, 2], [3, 3, 2])
    with pytest.raises(ValueError, match="agree on no node"):
        change_mechanisms(sem, arms, 2)


@pytest.mark.parametrize(
    ("points", "message"),
    [
        ([0], "must lie in 1..299"),
        ([300], "must lie in 1..299"),
        ([-5], "must lie in 1..299"),
        ([200, 100], "strictly increasing"),
        ([100, 100], "strictly increasing"),
        ([100.5], "integers"),
    ],
)
def test_bad_change_points_raise(points, message):
    env = random_csl_bandit(4, 300, 0)
    with pytest.raises(ValueError, match=message):
        PiecewiseStationaryBandit(env, points)


def test_other_bad_inputs_raise():
    env = random_csl_bandit(4, 300, 0)
    with pytest.raises(ValueError, match="n_columns"):
        PiecewiseStationaryBandit(env, [100], n_columns=0)
    with pytest.raises(ValueError, match="optimal_tolerance"):
        PiecewiseStationaryBandit(env, [100], optimal_tolerance=-1)
    deviated = LinearSEMBandit(
        env.sem,
        300,
        env.actions,
        deviations=negated_interventions(env.sem, 5.0, 300),
        deviation_budget=5.0,
    )
    with pytest.raises(ValueError, match="without deviations"):
        PiecewiseStationaryBandit(deviated, [100])
    wrapped = PiecewiseStationaryBandit(env, [100], rng=0)
    with pytest.raises(RuntimeError, match="reset"):
        wrapped.step(np.zeros(1, dtype=int))
    wrapped.reset(0, 2)
    with pytest.raises(ValueError, match="one action per replicate"):
        wrapped.step(np.zeros(3, dtype=int))


def test_a_users_own_change_schedule():
    dag = CausalDAG.from_edges(3, [(0, 1), (1, 2), (0, 2)])
    weights = dag.adjacency * 0.5
    sem = LinearSEM(dag, weights, dag.adjacency * 1.0, GaussianNoise.iid(3, 1.0, 1.0))
    env = LinearSEMBandit(sem, 100, ActionSet.subsets(3, [1, 2]), reward_node=2)
    star = sem.intervention_weights.copy()
    star[0, 2] = -2.0  # the reward's interventional mechanism changes
    later = LinearSEM(dag, weights, star, sem.noise)
    piecewise = PiecewiseStationaryBandit(env, [40], models=[later])
    assert [(c.round, c.node, c.mode) for c in piecewise.changes] == [(40, 2, 1)]
    np.testing.assert_allclose(
        piecewise.segment_rewards[1], later.mean_values(env.actions.masks)[:, 2]
    )
    with pytest.raises(ValueError, match="2 models for 1 change points"):
        PiecewiseStationaryBandit(env, [40], models=[later, later])
    other = LinearSEM(dag, weights, star, GaussianNoise.iid(3, 0.0, 1.0))
    with pytest.raises(ValueError, match="nodes and noise"):
        PiecewiseStationaryBandit(env, [40], models=[other])
