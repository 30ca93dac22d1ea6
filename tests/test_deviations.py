import numpy as np
import pytest

from causalbandits.envs import (
    ActionSet,
    DeviatedModel,
    DeviationSchedule,
    LinearSEMBandit,
    check_budget,
    deviation_budget,
    negated_interventions,
    node_deviation_totals,
    swapped_mechanisms,
)
from causalbandits.envs.deviations import depth_groups
from causalbandits.envs.robust_lcb import make_environment, robust_lcb_sem


@pytest.fixture
def sem():
    return robust_lcb_sem()


@pytest.mark.parametrize("budget", [0, 1, 2, 5, 15, 15.5, 200, 2000])
@pytest.mark.parametrize(
    "build",
    [
        lambda sem, c: negated_interventions(sem, c, 40000),
        lambda sem, c: negated_interventions(sem, c, 40000, max_rounds=16),
        lambda sem, c: negated_interventions(
            sem, c, 40000, max_rounds=16, groups=depth_groups(sem.dag)
        ),
        lambda sem, c: negated_interventions(
            sem, c, 40000, groups=depth_groups(sem.dag, False), interleave=True
        ),
        lambda sem, c: swapped_mechanisms(sem, c, 40000),
    ],
)
def test_accountant_reproduces_the_intended_budget(sem, budget, build):
    actions = ActionSet.non_root(sem.dag)
    schedule = build(sem, budget)
    assert deviation_budget(schedule, sem, actions) == pytest.approx(budget, abs=1e-9)
    assert check_budget(schedule, sem, actions, budget) == pytest.approx(budget, abs=1e-9)


def test_a6_design_negates_intervened_columns_in_the_first_rounds(sem):
    schedule = negated_interventions(sem, 15, 1000)
    # 7 full rounds of deviation 2 and one partial round of deviation 1 (A6)
    assert list(schedule.rounds) == list(range(8))
    full = schedule.models[schedule.model_of_round[0]]
    np.testing.assert_allclose(full.intervention_weights, -sem.intervention_weights)
    np.testing.assert_array_equal(full.weights, sem.weights)
    partial = schedule.models[schedule.model_of_round[-1]]
    np.testing.assert_allclose(partial.intervention_weights, 0 * sem.intervention_weights)


def test_accountant_takes_the_max_over_actions_and_nodes_against_brute_force(sem, rng):
    actions = ActionSet.non_root(sem.dag)
    models = tuple(
        DeviatedModel(
            sem.weights + sem.dag.adjacency * rng.normal(size=sem.weights.shape),
            sem.intervention_weights + sem.dag.adjacency * rng.normal(size=sem.weights.shape),
        )
        for _ in range(3)
    )
    schedule = DeviationSchedule(50, np.array([0, 4, 9, 10]), np.array([0, 2, 1, 2]), models)
    expected = np.zeros(sem.n_nodes)
    for k in schedule.model_of_round:
        nominal = sem.weights_under(actions.masks)
        actual = sem.weights_under(actions.masks, models[k].weights, models[k].intervention_weights)
        expected += np.linalg.norm(actual - nominal, axis=1).max(axis=0)
    np.testing.assert_allclose(node_deviation_totals(schedule, sem, actions), expected)
    assert deviation_budget(schedule, sem, actions) == pytest.approx(expected.max())


def test_over_budget_schedule_is_rejected(sem):
    actions = ActionSet.non_root(sem.dag)
    schedule = negated_interventions(sem, 20, 100)
    with pytest.raises(ValueError, match="more than the budget"):
        check_budget(schedule, sem, actions, 15)


def test_bad_budgets_and_horizons(sem):
    with pytest.raises(ValueError, match="C must be"):
        negated_interventions(sem, -1, 100)
    with pytest.raises(ValueError, match="horizon"):
        negated_interventions(sem, 500, 10)
    with pytest.raises(ValueError, match="C must be"):
        LinearSEMBandit(sem, 100, deviation_budget=-2)
    with pytest.raises(ValueError, match="horizon T must be a positive integer"):
        make_environment(horizon=0)
    with pytest.raises(ValueError, match="horizon T must be a positive integer"):
        LinearSEMBandit(sem, -5)


def test_deviated_rounds_use_the_deviated_model(sem):
    horizon, replicates = 40, 4000
    env = LinearSEMBandit(
        sem, horizon, deviations=negated_interventions(sem, 4, horizon), deviation_budget=4
    )
    env.reset(0, replicates)
    best = np.full(replicates, env.actions.index_of([9, 10, 11, 12]))
    deviated = env.step(best)[:, -1]  # round 0 is deviated: columns are -B*
    nominal_mean = env.expected_rewards[best[0]]
    for _ in range(2):
        env.step(best)
    clean = env.step(best)[:, -1]  # round 3 is nominal
    se = clean.std() / np.sqrt(replicates)
    assert abs(clean.mean() - nominal_mean) < 4 * se
    expected = sem.mean_values(
        env.actions.masks[best[0]], intervention_weights=-sem.intervention_weights
    )[-1]
    assert abs(deviated.mean() - expected) < 4 * deviated.std() / np.sqrt(replicates)
