"""(gamma, xi) tuning of NDC-SEM in the Covid experiment (App. VII-D5)."""

import dataclasses

import numpy as np
import pandas as pd
import pytest

from causalbandits.envs.delay import FeedbackDelay
from causalbandits.envs.italy_covid import ItalyCovidBandit
from causalbandits.estimators.discounted import DiscountedArmStatistics
from causalbandits.estimators.validated_lasso import (
    SharedValidatedSEMLasso,
    ValidatedSEMLasso,
    check_positive_grid,
)
from causalbandits.experiments.recorders import ActionLog
from causalbandits.experiments.simulate import simulate
from causalbandits.papers.ndc_sem.covid import (
    PAPER_GAMMA_GRID,
    PAPER_XI_GRID,
    CovidExperiment,
    covid,
    exploration_pairs,
)
from causalbandits.papers.ndc_sem.covid_report import choose_exploration, tuning_summary
from causalbandits.policies.ndc_sem import NDCSEM
from causalbandits.random import Stream, policy_stream

from .test_ndc_sem_covid import BULLETINS, _synthetic_instance, covid_policy

LAM_GRID = (1e-2, 1e-1, 1.0, 10.0)
# Table I's pair, two near-greedy pairs and a heavy explorer: different decisions
PAIRS = ((0.85, 0.1), (0.6, 1e-6), (0.95, 1e-4), (0.7, 0.7))


def _env(instance) -> FeedbackDelay:
    return FeedbackDelay(ItalyCovidBandit(instance, super_arm_size=2), delay=3)


def copies(entropy: int, count: int) -> list[np.random.SeedSequence]:
    """``count`` equal but separate seed sequences (as ``CovidExperiment.seeds`` gives for a
    replicate repeated ``count`` times)."""
    return [np.random.SeedSequence(entropy) for _ in range(count)]


def _days(env, policy, replicates: int = 1, entropy: tuple[int, int] = (4, 11)):
    """Reset ``env`` and ``policy`` with equal seeds per replicate, run every day; the super
    arms ``(T, R, N)`` and the final graph."""
    env.reset(copies(entropy[0], replicates))
    policy.reset(copies(entropy[1], replicates))
    log = ActionLog()
    simulate(env, policy, [env.horizon], [log])
    return log.stacked(), policy.lasso.fit()[0]


def _single_run(instance, gamma, xi):
    """One ordinary NDC-SEM run (its own graph learner) with one pair, fresh seeds."""
    env = _env(instance)
    policy = covid_policy(
        NDCSEM, env.problem, gamma=gamma, xi=xi, lam_grid=LAM_GRID, lasso_max_sweeps=30
    )
    actions, final = _days(env, policy)
    return actions[:, 0], final, env.estimated_overall_rewards(actions, final)[:, 0]


def _batched_run(instance, gammas, xis):
    """All pairs as replicates of one policy with one shared graph learner (the tuning run)."""
    env = _env(instance)
    policy = covid_policy(
        NDCSEM,
        env.problem,
        gamma=gammas,
        xi=xis,
        shared_graph=True,
        graph_input="b",
        lam_grid=LAM_GRID,
        lasso_max_sweeps=30,
    )
    actions, final = _days(env, policy, len(gammas))
    return actions, final, env.estimated_overall_rewards(actions, final)


def test_the_paper_grid_is_verbatim():
    assert len(PAPER_GAMMA_GRID) == 10 and len(PAPER_XI_GRID) == 22
    assert 3e-2 not in PAPER_XI_GRID and 3e-1 not in PAPER_XI_GRID
    gammas, xis = exploration_pairs(PAPER_GAMMA_GRID, PAPER_XI_GRID)
    assert gammas.shape == xis.shape == (220,)
    assert len(set(zip(gammas, xis, strict=True))) == 220
    # gamma-major grid order: the tie-break order of the tuner
    assert gammas[0] == gammas[21] == 0.5 and gammas[22] == 0.6
    assert list(xis[:22]) == sorted(PAPER_XI_GRID)


@pytest.mark.parametrize(
    ("grid", "upper", "message"),
    [
        ((), 1.0, "empty"),
        ((0.5, 1.5), 1.0, r"in \(0, 1\]"),
        ((0.0, 0.5), 1.0, r"in \(0, 1\]"),
        ((np.nan,), 1.0, "finite"),
        ((1e-3, -1e-3), None, "> 0"),
        ((np.inf,), None, "finite"),
        ((0.1, 0.1), None, "duplicated"),
    ],
)
def test_bad_exploration_grids_are_rejected(grid, upper, message):
    with pytest.raises(ValueError, match=message):
        check_positive_grid(grid, "gamma" if upper else "xi", upper)
    field = "gamma_grid" if upper else "xi_grid"
    with pytest.raises(ValueError, match=message):
        CovidExperiment(**{field: grid})


def test_tuning_seeds_must_be_disjoint_from_the_evaluation_seeds():
    with pytest.raises(ValueError, match="disjoint"):
        CovidExperiment(seed=5, tuning_seed=5)
    with pytest.raises(ValueError, match="tuning_replicates"):
        CovidExperiment(tuning_replicates=0)
    experiment = CovidExperiment()
    tuning = dataclasses.replace(experiment, tuning=True, seed=experiment.tuning_seed)
    assert experiment.prerequisite() == tuning and tuning.given is not None
    assert tuning.replicate_count == experiment.tuning_replicates
    assert {t.id for t in tuning.tasks()}.isdisjoint(t.id for t in experiment.tasks())
    streams = (Stream.INSTANCE, Stream.SAMPLE, policy_stream("NDC-SEM"))
    for stream in streams:
        # the one layout (setting, replicate, stream), the same for both units (no seed axis)
        (key,) = experiment.seeds(len(experiment.units) - 1, [3], stream)
        assert (key.entropy, key.spawn_key) == (experiment.seed, (0, 3, int(stream)))
        state = tuning.seeds(0, [0], stream)[0].generate_state(4)
        assert not np.array_equal(state, experiment.seeds(0, [0], stream)[0].generate_state(4))


def test_per_replicate_constants_equal_separate_scalar_instances(rng):
    replicates, n, horizon, delay = 3, 5, 60, 4
    gammas, xis = np.array([0.5, 0.9, 1.0]), np.array([1e-3, 0.3, 0.25])
    played = rng.random((replicates, horizon, n)) < 0.5
    rewards = rng.random((replicates, horizon, n))
    batch = DiscountedArmStatistics(replicates, n, gammas, xis, super_arm_size=2)
    singles = [
        DiscountedArmStatistics(1, n, g, x, super_arm_size=2)
        for g, x in zip(gammas, xis, strict=True)
    ]
    mixed = DiscountedArmStatistics(replicates, n, gammas, 0.3, super_arm_size=2)  # xi shared
    for t in range(1, horizon + 1):
        tau = t - delay
        for stats in (batch, mixed, *singles):
            stats.advance()
        if tau >= 1:
            batch.receive(tau, played[:, tau - 1], rewards[:, tau - 1])
            mixed.receive(tau, played[:, tau - 1], rewards[:, tau - 1])
            for r, stats in enumerate(singles):
                stats.receive(tau, played[r : r + 1, tau - 1], rewards[r : r + 1, tau - 1])
        for r, stats in enumerate(singles):
            for name in ("counts", "sums"):
                np.testing.assert_array_equal(getattr(batch, name)[r], getattr(stats, name)[0])
            assert batch.horizon_weight[r] == stats.horizon_weight
            np.testing.assert_array_equal(batch.indices()[r], stats.indices()[0])
        np.testing.assert_array_equal(mixed.counts, batch.counts)
        np.testing.assert_array_equal(mixed.bonus()[1], batch.bonus()[1])  # both xi = 0.3
    assert batch.horizon_weight.shape == (replicates,)
    assert np.ndim(singles[0].horizon_weight) == 0  # scalars keep a scalar m


def test_bad_per_replicate_constants_are_rejected():
    with pytest.raises(ValueError, match="one value per replicate"):
        DiscountedArmStatistics(3, 4, np.array([0.5, 0.9]), 0.1, super_arm_size=2)
    with pytest.raises(ValueError, match="one value per replicate"):
        DiscountedArmStatistics(2, 4, 0.9, np.ones((2, 1)), super_arm_size=2)
    with pytest.raises(ValueError, match="gamma"):
        DiscountedArmStatistics(2, 4, np.array([0.5, 1.5]), 0.1, super_arm_size=2)
    with pytest.raises(ValueError, match="xi"):
        DiscountedArmStatistics(2, 4, 0.5, np.array([0.1, np.nan]), super_arm_size=2)
    problem = ItalyCovidBandit(_synthetic_instance(), super_arm_size=2).problem
    with pytest.raises(ValueError, match="one value per replicate"):
        covid_policy(NDCSEM, problem, gamma=[0.5, 0.9], xi=[0.1, 0.2, 0.3])
    policy = covid_policy(NDCSEM, problem, gamma=[0.5, 0.9], xi=0.1)
    with pytest.raises(ValueError, match="one value per replicate"):
        policy.reset(copies(0, 3))
    with pytest.raises(ValueError, match="graph_input='b'"):
        covid_policy(NDCSEM, problem, graph_input="z", shared_graph=True)


def test_equal_seeds_give_equal_reward_samples_and_policy_draws():
    instance = _synthetic_instance()
    env = _env(instance)
    env.reset(CovidExperiment(seed=4).seeds(0, [2] * 5, Stream.SAMPLE))
    draws = env.instantaneous  # (T, R, N)
    assert np.all(draws == draws[:, :1])
    single = _env(instance)
    single.reset([np.random.SeedSequence(4, spawn_key=(0, 2, int(Stream.SAMPLE)))])
    np.testing.assert_array_equal(draws[:, 0], single.instantaneous[:, 0])
    policy = covid_policy(NDCSEM, env.problem, gamma=[0.5] * 5, xi=[0.1] * 5, shared_graph=True)
    policy.reset(copies(11, 5))
    assert np.all(policy.h == policy.h[:1])  # the same H for every replicate
    # one shared SeedSequence object would not do: reset spawns from it
    shared = np.random.SeedSequence(11)
    policy.reset([shared] * 5)
    assert not np.all(policy.h == policy.h[:1])


def test_grid_replicates_equal_separate_runs():
    """The batched tuning run (one graph path, one reward sample) makes exactly the decisions
    and earns exactly the rewards of separate ordinary runs with each pair."""
    instance = _synthetic_instance()
    gammas, xis = (np.array(v) for v in zip(*PAIRS, strict=True))
    actions, final, rewards = _batched_run(instance, gammas, xis)
    assert actions.shape == (instance.horizon, len(PAIRS), instance.n_arms)
    for p, (gamma, xi) in enumerate(PAIRS):
        single_actions, single_final, single_rewards = _single_run(instance, gamma, xi)
        np.testing.assert_array_equal(actions[:, p], single_actions)
        np.testing.assert_array_equal(final, single_final)
        np.testing.assert_array_equal(rewards[:, p], single_rewards)
    # the pairs really differ, so the equality is not vacuous
    assert len({actions[:, p].tobytes() for p in range(len(PAIRS))}) == len(PAIRS)
    np.testing.assert_array_equal(_batched_run(instance, gammas, xis)[0], actions)


def test_shared_learner_rejects_replicates_with_different_data():
    learner = SharedValidatedSEMLasso(2, ValidatedSEMLasso(1, 3, LAM_GRID, [False, True, False]))
    y = np.ones((2, 1, 3))
    learner.add(np.array([[1], [1]]), y, y)
    assert learner.fit().shape == (2, 3, 3) and learner.lam.shape == (2,)
    with pytest.raises(ValueError, match="same arrivals"):
        learner.add(np.array([[2], [2]]), y * np.array([1.0, 2.0])[:, None, None], y)
    with pytest.raises(ValueError, match="same arrivals"):
        learner.add(np.array([[2], [0]]), y, y)
    with pytest.raises(ValueError, match="1 replicate"):
        SharedValidatedSEMLasso(2, ValidatedSEMLasso(2, 3, LAM_GRID, [True]))


def _tuning_rows(rewards: dict[tuple[float, float], list[float]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "record": "tuning",
                "unit": "max",
                "replicate": replicate,
                "gamma": gamma,
                "xi": xi,
                "reward": value,
                "reward_from_change": value / 2,
            }
            for (gamma, xi), values in rewards.items()
            for replicate, value in enumerate(values)
        ]
    )


def test_the_tuner_picks_the_highest_mean_and_breaks_ties_in_grid_order():
    rows = _tuning_rows(
        {
            (0.5, 1e-8): [1.0, 5.0],  # mean 3
            (0.5, 1e-2): [4.0, 4.0],  # mean 4: best (one replicate lower than the first's max)
            (0.9, 1e-8): [3.9, 4.0],
            (0.9, 1e-2): [0.0, 0.0],
        }
    )
    assert choose_exploration(rows, "max") == (0.5, 1e-2)
    summary = tuning_summary(rows, "max")
    assert list(summary["rank"]) == [3, 1, 2, 4]
    assert summary.loc[summary["rank"] == 1, "reward_se"].item() == 0.0
    tied = _tuning_rows({(0.9, 1e-3): [2.0, 2.0], (0.6, 0.1): [2.0, 2.0], (0.6, 1e-4): [1.0, 1.0]})
    assert choose_exploration(tied, "max") == (0.6, 0.1)  # first in grid order
    with pytest.raises(ValueError, match="no tuning rows"):
        choose_exploration(rows, "cases")


@pytest.mark.skipif(
    not BULLETINS.exists(), reason=f"the Italian bulletins are not available at {BULLETINS}"
)
def test_quick_run_tunes_on_separate_replicates_and_reports_the_tuned_row(tmp_path):
    experiment = dataclasses.replace(
        covid(quick=True),
        data_path=str(BULLETINS),
        gamma_grid=(0.6, 0.85),
        xi_grid=(1e-6, 0.1),
        lasso_max_sweeps=5,
        units=("max", "cases"),
    )
    df = experiment.run(tmp_path / "covid", progress=False)
    days = df[df["record"] == "day"]
    report = experiment.report(df)
    for unit in experiment.units:
        tuning = df[(df["record"] == "tuning") & (df["unit"] == unit)]
        assert len(tuning) == experiment.tuning_replicates * 4
        chosen = choose_exploration(df, unit)
        means = tuning.groupby(["gamma", "xi"])["reward"].mean()
        assert means[chosen] == means.max()
        tuned = days[(days["policy"] == "NDC-SEM (tuned)") & (days["unit"] == unit)]
        assert len(tuned) == experiment.replicates * 80
        assert set(zip(tuned["gamma"], tuned["xi"], strict=True)) == {chosen}
        assert f"gamma = {chosen[0]:g}, xi = {chosen[1]:g}" in report
    assert report.count("## Added row: NDC-SEM (tuned)") == 2
    assert "## Why the reward unit matters" in report
    # Table I's rows are those of a run without the tuned row (same decisions and rewards)
    alone = dataclasses.replace(experiment, tuned_exploration=False)
    plain = alone.run(tmp_path / "table-i", progress=False)
    assert not (plain["record"] == "tuning").any()
    columns = ["unit", "replicate", "day", "selected", "reward", "lam", "eps"]
    ndc = days[days["policy"] == "NDC-SEM"][columns].reset_index(drop=True)
    plain_days = plain[(plain["record"] == "day") & (plain["policy"] == "NDC-SEM")]
    pd.testing.assert_frame_equal(
        ndc, plain_days[columns].reset_index(drop=True), check_dtype=False, check_exact=True
    )
    assert "Added row" not in alone.report(plain)
    assert "NDC-SEM (tuned)" not in alone.report(plain)
