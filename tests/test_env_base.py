"""The environment contract (envs.base) and the guards every environment shares."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from causalbandits.envs import (
    FeedbackDelay,
    LinearSEMBandit,
    ReplicatedEnvironment,
    SemiBanditEnv,
    SyntheticDesign,
    ndc_synthetic_env,
    synthetic_instances,
)
from causalbandits.envs.csl_ucb import csl_system
from causalbandits.envs.csl_ucb import make_environment as csl_environment
from causalbandits.envs.italy_covid import CovidInstance, ItalyCovidBandit
from causalbandits.envs.robust_lcb import make_environment as robust_environment
from causalbandits.estimators.topk import top_s_mask, total_effects
from causalbandits.experiments.simulate import simulate
from causalbandits.policies import RandomPolicy, RandomSuperArm
from causalbandits.random import replicate_seeds
from causalbandits.scm.linear import transfer_matrix

HORIZON, REPLICATES = 6, 3


def covid_instance(n: int = 5, horizon: int = HORIZON) -> CovidInstance:
    """A small synthetic instance (no data file needed), change point at day 4."""
    rng = np.random.default_rng(0)
    kde = rng.uniform(0.1, 0.5, (8, n))
    mean = kde.mean(axis=0)
    return CovidInstance(
        dates=np.arange(horizon).astype("datetime64[D]"),
        overall=rng.uniform(0, 1, (horizon, n)),
        kde_data=kde,
        bandwidths=np.full(n, 0.01),
        means=np.stack([mean, np.roll(mean, -1)]),
        change_point=4,
        shift=1,
        validation=np.arange(horizon) % 3 == 0,
        scale=1.0,
        window=1,
    )


def _semi(env: ReplicatedEnvironment) -> Callable[[int], np.ndarray]:
    n = env.problem.n_arms
    return lambda count: np.eye(count, n, dtype=bool)


def _indexed(env: ReplicatedEnvironment) -> Callable[[int], np.ndarray]:
    return lambda count: np.arange(count) % env.n_actions


ENVIRONMENTS: dict[str, Callable[[], ReplicatedEnvironment]] = {
    "linear-sem": lambda: robust_environment(horizon=HORIZON, deviation_budget=2.0),
    "piecewise": lambda: csl_system(
        np.random.SeedSequence(0), horizon=HORIZON, n_nodes=5, change_points=(3,)
    ),
    "linear-instances": lambda: csl_environment(
        np.random.SeedSequence(1).spawn(REPLICATES), horizon=HORIZON, n_nodes=5, change_points=(3,)
    ),
    "semi-bandit": lambda: ndc_synthetic_env(
        0, SyntheticDesign(horizon=HORIZON, change_points=(3,))
    ),
    "instances": lambda: synthetic_instances(
        np.random.SeedSequence(1).spawn(REPLICATES),
        SyntheticDesign(horizon=HORIZON, change_points=(3,)),
    ),
    "delay": lambda: FeedbackDelay(
        ndc_synthetic_env(0, SyntheticDesign(horizon=HORIZON, change_points=())), 1, 2
    ),
    "covid": lambda: ItalyCovidBandit(
        covid_instance(),
        super_arm_size=2,
        reference_adjacency=np.full((5, 5), 0.1) - 0.1 * np.eye(5),
    ),
}


def _actions(env: ReplicatedEnvironment) -> Callable[[int], np.ndarray]:
    return _indexed(env) if hasattr(env, "n_actions") else _semi(env)


@pytest.mark.parametrize("name", ENVIRONMENTS)
def test_every_environment_shares_the_guards_and_the_round_counter(name: str) -> None:
    env = ENVIRONMENTS[name]()
    assert isinstance(env, ReplicatedEnvironment)
    actions = _actions(env)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(actions(REPLICATES))
    seeds = replicate_seeds(0, 0, range(REPLICATES), 0)
    env.reset(seeds)
    assert env.replicates == REPLICATES and env.t == 0
    with pytest.raises(ValueError, match="replicate|shape"):
        env.step(actions(REPLICATES - 1))
    assert env.t == 0  # a refused round is not counted
    first = []
    for t in range(1, HORIZON + 1):
        assert env.pseudo_regret(actions(REPLICATES)).shape == (REPLICATES,)
        assert env.is_optimal(actions(REPLICATES)).shape == (REPLICATES,)
        first.append(env.step(actions(REPLICATES)))
        assert env.t == t
    with pytest.raises(RuntimeError, match="horizon T = 6 is over"):
        env.step(actions(REPLICATES))
    env.reset(seeds)  # the same seeds replay the same noise (common random numbers)
    assert env.t == 0
    again = env.step(actions(REPLICATES))
    np.testing.assert_array_equal(_values(again), _values(first[0]))


def _values(feedback: object) -> np.ndarray:
    inner = getattr(feedback, "feedback", feedback)  # DelayedFeedback
    return np.asarray(getattr(inner, "y", inner))


@pytest.mark.parametrize("name", ENVIRONMENTS)
def test_every_environment_runs_in_the_round_loop(name: str) -> None:
    env = ENVIRONMENTS[name]()
    env.reset(replicate_seeds(0, 0, range(REPLICATES), 0))
    problem = env.problem
    policy = RandomPolicy(problem) if hasattr(env, "n_actions") else RandomSuperArm(problem)
    policy.reset(replicate_seeds(0, 0, range(REPLICATES), 1))
    result = simulate(env, policy, 3)
    assert result["cum_regret"].shape == (3, REPLICATES)
    assert np.all(np.diff(result["cum_regret"], axis=0) >= -1e-12)


def test_the_replicate_count_needs_a_reset_except_for_stacked_instances() -> None:
    with pytest.raises(RuntimeError, match="reset"):
        _ = ENVIRONMENTS["semi-bandit"]().replicates
    for name, what in (("instances", "instances"), ("linear-instances", "systems")):
        instances = ENVIRONMENTS[name]()
        assert instances.replicates == REPLICATES
        with pytest.raises(ValueError, match=f"seeds for 3 {what}"):
            instances.reset(0, REPLICATES + 1)


def test_the_covid_periods_follow_the_change_point() -> None:
    env = ENVIRONMENTS["covid"]()
    env.reset(0, 1)
    periods = []
    for _ in range(HORIZON):
        periods.append(env.period)
        env.step(np.zeros((1, 5), dtype=bool))
    assert periods == [0, 0, 0, 1, 1, 1]  # day 4 starts the shifted means
    assert env.period == 1  # the last period once the horizon is over
    scores = total_effects(np.full((5, 5), 0.1) - 0.1 * np.eye(5)) * env.instance.means
    np.testing.assert_array_equal(env.optimal_actions, top_s_mask(scores, 2))


def test_one_transfer_matrix_serves_both_conventions(rng) -> None:
    a = np.triu(rng.uniform(0, 0.7, (4, 4)), 1)  # paper's A[i, j]: effect of j on i
    env = SemiBanditEnv(a, np.full((1, 4), 0.5), super_arm_size=2, horizon=3)
    np.testing.assert_allclose(env.transfer @ (np.eye(4) - a), np.eye(4), atol=1e-12)
    np.testing.assert_array_equal(env.transfer, np.linalg.inv(np.eye(4) - a))
    w = a.T  # the library's W = A^T
    np.testing.assert_array_equal(transfer_matrix(np.stack([w, w]))[1], env.transfer)
    np.testing.assert_allclose(env.transfer.T @ np.ones(4), env.total_effects, rtol=1e-12)


def test_the_linear_sem_bandit_refuses_actions_outside_the_set() -> None:
    env: LinearSEMBandit = ENVIRONMENTS["linear-sem"]()
    env.reset(0, 2)
    with pytest.raises(ValueError, match="outside"):
        env.step(np.array([0, env.n_actions]))
