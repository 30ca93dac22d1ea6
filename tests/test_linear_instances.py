"""Linear-SEM bandits with one system per replicate: each replicate behaves as it would alone."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from causalbandits.envs.csl_ucb import csl_system, make_environment
from causalbandits.envs.deviations import DeviatedModel, DeviationSchedule
from causalbandits.envs.linear_bandit import LinearSEMProblem
from causalbandits.envs.linear_instances import LinearSEMInstances
from causalbandits.envs.random_systems import random_csl_bandit
from causalbandits.estimators.propagation import PropagationPlan
from causalbandits.experiments import AlgorithmSpec, ExperimentSpec, run_experiment
from causalbandits.policies import LinSEMTS, LinSEMUCB
from causalbandits.random import Stream, replicate_seeds

HORIZON, SYSTEMS, NODES = 120, 3, 6


def seeds(stream: int) -> list[np.random.SeedSequence]:
    return replicate_seeds(11, 0, range(SYSTEMS), stream)


def stack(**options) -> LinearSEMInstances:
    return make_environment(seeds(Stream.INSTANCE), horizon=HORIZON, n_nodes=NODES, **options)


def alone(replicate: int, **options):
    """System ``replicate`` of :func:`stack`, in an environment of its own."""
    seed = seeds(Stream.INSTANCE)[replicate]
    return make_environment([seed], horizon=HORIZON, n_nodes=NODES, **options)


def play(env, policy, policy_seeds) -> tuple[np.ndarray, np.ndarray]:
    """Actions and pseudo-regrets ``(T, R)`` of ``policy`` on ``env``."""
    policy.reset(policy_seeds)
    actions, regrets = [], []
    for _ in range(env.horizon):
        chosen = policy.select()
        actions.append(chosen)
        regrets.append(env.pseudo_regret(chosen))
        policy.update(chosen, env.step(chosen))
    return np.array(actions), np.array(regrets)


def test_each_system_of_a_stack_gives_the_feedback_and_regret_it_gives_alone():
    env = stack(change_points=[60])
    env.reset(seeds(Stream.NOISE))
    singles = [alone(r, change_points=[60]) for r in range(SYSTEMS)]
    for r, single in enumerate(singles):
        single.reset(seeds(Stream.NOISE)[r : r + 1])
    arms = np.random.default_rng(0).integers(env.n_actions, size=(HORIZON, SYSTEMS))
    for t in range(HORIZON):
        regret, optimal, x = env.pseudo_regret(arms[t]), env.is_optimal(arms[t]), env.step(arms[t])
        for r, single in enumerate(singles):
            assert regret[r] == single.pseudo_regret(arms[t, r : r + 1])[0]
            assert optimal[r] == single.is_optimal(arms[t, r : r + 1])[0]
            np.testing.assert_array_equal(x[r], single.step(arms[t, r : r + 1])[0])
    assert len({tuple(c) for c in env.changes_per_replicate}) == SYSTEMS  # own changes each


def test_the_learner_is_told_the_union_graph_and_each_replicates_own():
    problem = stack().problem
    own = np.stack([g.adjacency for g in problem.replicate_dags])
    assert np.array_equal(problem.dag.adjacency, own.any(axis=0))
    assert not np.array_equal(own[0], own[1])
    bounds = [alone(r).problem.x_norm_bound for r in range(SYSTEMS)]
    assert problem.x_norm_bound == max(bounds)


@pytest.mark.parametrize("options", [{}, {"variance": 0.3}, {"mode_parents": True}])
def test_linsem_ts_on_a_stack_plays_as_on_each_system_alone(options):
    env = stack(change_points=[60])
    env.reset(seeds(Stream.NOISE))
    actions, regrets = play(env, LinSEMTS(env.problem, **options), seeds(5))
    for r in range(SYSTEMS):
        single = alone(r, change_points=[60])
        single.reset(seeds(Stream.NOISE)[r : r + 1])
        own_actions, own_regrets = play(
            single, LinSEMTS(single.problem, **options), seeds(5)[r:][:1]
        )
        np.testing.assert_array_equal(actions[:, r], own_actions[:, 0])
        np.testing.assert_allclose(regrets[:, r], own_regrets[:, 0], rtol=0, atol=1e-12)


@pytest.mark.parametrize("solver", ["greedy", "interval"])
def test_linsem_ucb_bounds_on_a_stack_are_those_of_each_system_alone(solver):
    env = stack()
    env.reset(seeds(Stream.NOISE))
    policy = LinSEMUCB(env.problem, solver=solver)
    actions, _ = play(env, policy, seeds(5))
    for r in range(SYSTEMS):
        single = alone(r)
        problem = dataclasses.replace(single.problem, x_norm_bound=env.problem.x_norm_bound)
        single.reset(seeds(Stream.NOISE)[r : r + 1])
        own = LinSEMUCB(problem, solver=solver)
        own_actions, _ = play(single, own, seeds(5)[r:][:1])
        np.testing.assert_array_equal(actions[:, r], own_actions[:, 0])
        np.testing.assert_allclose(
            policy.upper_confidence_bounds()[r], own.upper_confidence_bounds()[0], rtol=1e-12
        )


def test_parent_masks_and_embeddings_of_a_sub_graph():
    problem = stack().problem
    plan = PropagationPlan.build(problem.dag, problem.actions.masks)
    for graph in problem.replicate_dags:
        mask = plan.parent_mask(graph.adjacency)
        for k, node in enumerate(plan.nodes):
            chosen = set(plan.parent_index[k][mask[k]].tolist())
            assert chosen == set(graph.parents(node).tolist())
        shape, own, here = plan.embedding(graph)
        assert shape == (np.count_nonzero(graph.adjacency.any(axis=0)), max(graph.max_in_degree, 1))
        assert own.shape == here.shape == (2, graph.adjacency.sum())
        assert np.all(mask[here[0], here[1]])  # every own coordinate lands on a masked-in slot


def test_systems_that_cannot_share_an_environment_are_refused():
    systems = [random_csl_bandit(5, 50, rng=r) for r in range(2)]
    with pytest.raises(ValueError, match="horizon"):
        LinearSEMInstances([systems[0], random_csl_bandit(5, 60, rng=1)])
    with pytest.raises(ValueError, match="action set"):
        LinearSEMInstances([systems[0], random_csl_bandit(6, 50, rng=1)])
    seed = np.random.SeedSequence(0)
    with pytest.raises(ValueError, match="change points"):
        LinearSEMInstances([csl_system(seed, 50, 5), csl_system(seed, 50, 5, change_points=[9])])
    deviated = random_csl_bandit(5, 50, rng=0)
    model = DeviatedModel(deviated.sem.weights, deviated.sem.intervention_weights)
    schedule = DeviationSchedule(50, np.array([3]), np.array([0]), (model,))
    with pytest.raises(ValueError, match="deviation"):
        LinearSEMInstances([type(deviated)(deviated.sem, 50, deviations=schedule)])
    with pytest.raises(ValueError, match="at least one"):
        LinearSEMInstances([])
    problem = stack().problem
    with pytest.raises(ValueError, match="sub-graph"):
        LinearSEMProblem(**{**vars(problem), "dag": problem.replicate_dags[0]})
    with pytest.raises(ValueError, match="^the bca solver needs one graph shared by all"):
        ucb = LinSEMUCB(problem, solver="bca")
        ucb.reset(seeds(5))
        ucb.select()
    with pytest.raises(ValueError, match="seeds for 3 systems"):
        LinSEMTS(problem).reset(seeds(5)[:2])


def test_results_do_not_depend_on_how_many_systems_a_task_holds(tmp_path: Path) -> None:
    def spec(chunk_size: int) -> ExperimentSpec:
        return ExperimentSpec(
            name="systems",
            environment="csl-ucb",
            env_params={"n_nodes": 5, "change_points": [100]},
            settings=[{}],
            algorithms=[
                AlgorithmSpec("LinSEM-TS", "linsem-ts"),
                AlgorithmSpec("UCB", "ucb", {"exploration": 1.0, "window": 10}),
                AlgorithmSpec("GOLEM-MAB-CD", "golem-mab-cd", {"n_learn": 20}),
                AlgorithmSpec("CSL-UCB-CD", "csl-ucb", {"detector": "windowed", "warmup": 50}),
            ],
            horizon=200,
            replicates=3,
            seed=5,
            chunk_size=chunk_size,
            checkpoints=4,
        )

    one, three = (run_experiment(spec(c), tmp_path / str(c), progress=False) for c in (1, 3))
    pd.testing.assert_frame_equal(one, three)
    assert {"detection_changes", "detection_hits"} <= set(one.columns)


def test_mode_parents_regress_each_mode_on_its_own_parents_by_closed_form_ridge():
    env = alone(0)
    env.reset(seeds(Stream.NOISE)[:1])
    policy = LinSEMTS(env.problem, mode_parents=True)
    policy.reset(seeds(5)[:1])
    samples, played = [], []
    for _ in range(HORIZON):
        arm = policy.select()
        x = env.step(arm)
        policy.update(arm, x)
        samples.append(x[0])
        played.append(env.actions.masks[arm[0]])
    samples, played = np.array(samples), np.array(played)
    parents_of = env.problem.mode_parents[0]  # a stack of one system
    plan, theta = policy.plan, policy.ridge.theta[0]
    for k, node in enumerate(plan.nodes):
        for mode in (0, 1):
            rows = played[:, node] == mode
            parents = np.flatnonzero(parents_of[mode][:, node])
            x = samples[rows][:, parents]
            y = samples[rows, node] - env.problem.noise_mean[node]
            expected = np.linalg.solve(np.eye(parents.size) + x.T @ x, x.T @ y)
            slots = [np.flatnonzero(plan.parent_index[k] == p)[0] for p in parents]
            np.testing.assert_allclose(theta[k, mode, slots], expected, rtol=1e-8, atol=1e-10)
            others = np.setdiff1d(np.arange(plan.width), slots)
            assert np.all(theta[k, mode, others] == 0)
    with pytest.raises(ValueError, match="^the problem does not tell each mode's parents$"):
        LinSEMTS(dataclasses.replace(env.problem, mode_parents=None), mode_parents=True)


def test_linsem_ts_regresses_on_each_modes_parents_by_default_when_told_them():
    """``LinSEMTS(problem)`` takes the per-mode parents whenever the problem tells them (the
    better choice a user should not have to know); without them, the union of the modes'."""
    env = alone(0)
    told = LinSEMTS(env.problem)
    np.testing.assert_array_equal(
        told.parent_mask, LinSEMTS(env.problem, mode_parents=True).parent_mask
    )
    untold = dataclasses.replace(env.problem, mode_parents=None)
    np.testing.assert_array_equal(
        LinSEMTS(untold).parent_mask, LinSEMTS(untold, mode_parents=False).parent_mask
    )
    assert not np.array_equal(told.parent_mask, LinSEMTS(untold).parent_mask)
