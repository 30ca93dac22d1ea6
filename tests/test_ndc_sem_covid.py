import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from causalbandits.envs.delay import FeedbackDelay
from causalbandits.envs.italy_covid import CovidInstance, ItalyCovidBandit
from causalbandits.estimators.lasso import lasso_support, nonnegative_lasso
from causalbandits.estimators.validated_lasso import (
    DECADE_GRID,
    ValidatedSEMLasso,
    check_lambda_grid,
    predict_overall,
    validation_error,
)
from causalbandits.experiments.recorders import ActionLog, Trace
from causalbandits.experiments.simulate import simulate
from causalbandits.papers.ndc_sem.covid import (
    COLUMNS,
    CovidExperiment,
    covid,
)
from causalbandits.papers.ndc_sem.covid_report import (
    reward_summary,
    selection_dynamics,
    selection_matrix,
)
from causalbandits.policies.ndc_sem import NDCSEM, SEMUCB
from causalbandits.policies.ndc_sem_validated import LambdaValidation

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
BULLETINS = DATA / "italy_covid" / "dpc-covid19-ita-regioni.csv.gz"


def _cyclic_sem_data(n: int, rounds: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A cyclic non-negative A (spectral radius < 1), b >= 0 and noisy y = (I - A)^-1 b."""
    rng = np.random.default_rng(seed)
    a = np.where(rng.random((n, n)) < 0.4, rng.uniform(0.1, 0.4, (n, n)), 0.0)
    np.fill_diagonal(a, 0.0)
    a /= max(1.0, 1.25 * np.abs(np.linalg.eigvals(a)).max())
    b = rng.uniform(0.2, 1.0, (rounds, n))
    y = np.linalg.solve(np.eye(n) - a, b.T).T + 0.05 * rng.standard_normal((rounds, n))
    return a, b, y


def _direct_error(adjacency: np.ndarray, y: np.ndarray, b: np.ndarray) -> float:
    n = adjacency.shape[0]
    inverse = np.linalg.inv(np.eye(n) - adjacency)
    return sum(np.abs(yt - inverse @ bt).sum() for yt, bt in zip(y, b, strict=True)) / (n * len(y))


def test_validation_error_matches_a_direct_computation():
    rng = np.random.default_rng(1)
    a = np.abs(rng.normal(0, 0.1, (3, 5, 5)))
    for m in a:
        np.fill_diagonal(m, 0)
    y, b = rng.random((3, 4, 5)), rng.random((3, 4, 5))
    received = np.array([[True, True, False, True], [False] * 4, [True, False, False, False]])
    eps, unstable = validation_error(a, y, b, received)
    assert not unstable.any()
    assert eps[0] == pytest.approx(_direct_error(a[0], y[0, [0, 1, 3]], b[0, [0, 1, 3]]))
    assert np.isnan(eps[1])
    assert eps[2] == pytest.approx(_direct_error(a[2], y[2, :1], b[2, :1]))


def test_prediction_falls_back_to_the_pseudo_inverse_with_a_warning():
    a = np.array([[0.0, 1.0], [1.0, 0.0]])  # spectral radius 1: I - A is singular
    b = np.array([[1.0, 2.0]])
    with pytest.warns(RuntimeWarning, match="spectral radius >= 1"):
        predicted, unstable = predict_overall(a, b)
    assert unstable
    np.testing.assert_allclose(predicted[0], np.linalg.pinv(np.eye(2) - a) @ b[0])
    stable = np.array([[0.0, 0.5], [0.0, 0.0]])
    predicted, unstable = predict_overall(stable, b)
    assert not unstable
    np.testing.assert_allclose(predicted[0], np.linalg.solve(np.eye(2) - stable, b[0]))


def test_online_lambda_choice_matches_brute_force():
    n, rounds, delay = 4, 20, 2
    _, b, y = _cyclic_sem_data(n, rounds, seed=3)
    validation = np.zeros(rounds, dtype=bool)
    validation[[2, 7, 11, 14, 18]] = True  # rounds 3, 8, 12, 15, 19
    grid = (1e-3, 1e-1, 1.0, 10.0, 1e3)
    learner = ValidatedSEMLasso(1, n, grid, validation, tol=1e-12, max_sweeps=20_000)
    support = lasso_support(n, "cyclic")
    chosen_lams = []
    for t in range(1, rounds + 1):
        tau = t - delay
        if tau >= 1:
            learner.add(np.array([[tau]]), y[None, None, tau - 1], b[None, None, tau - 1])
        learner.fit()
        seen = np.arange(1, max(tau, 0) + 1)
        train = seen[~validation[seen - 1]] - 1
        held = seen[validation[seen - 1]] - 1
        if not held.size:  # before the first validation round: the initial (largest) lambda
            assert learner.choice[0] == -1 and learner.lam[0] == max(grid)
            assert np.isnan(learner.epsilon[0])
            continue
        if train.size < n:  # too few rounds: the lasso solution need not be unique
            continue
        gram = y[train].T @ y[train]
        cross = y[train].T @ (y[train] - b[train])
        errors = []
        for k, lam in enumerate(grid):
            fit, _ = nonnegative_lasso(gram, cross, lam, support, tol=1e-13, max_sweeps=20_000)
            np.testing.assert_allclose(learner.fits[0, k], fit[0], atol=1e-7)
            errors.append(_direct_error(fit[0], y[held], b[held]))
        np.testing.assert_allclose(learner.errors[0], errors, rtol=1e-6)
        best = int(np.argmin(errors))
        assert learner.choice[0] == best and learner.lam[0] == grid[best]
        assert learner.epsilon[0] == pytest.approx(min(errors), rel=1e-6)
        assert learner.n_validation[0] == held.size
        np.testing.assert_allclose(learner.adjacency[0], learner.fits[0, best])
        chosen_lams.append(grid[best])
    assert len(set(chosen_lams)) >= 2  # the small case really exercises the choice


def test_ties_go_to_the_smallest_lambda():
    n = 3
    _, b, y = _cyclic_sem_data(n, 6, seed=0)
    validation = np.array([False, False, True, False, False, True])
    learner = ValidatedSEMLasso(1, n, (1e4, 1e5, 1e6), validation)  # all give A_hat = 0
    learner.add(np.arange(1, 7)[None], y[None], b[None])
    np.testing.assert_array_equal(learner.fit(), 0.0)
    assert learner.errors[0, 0] == learner.errors[0, 2] and learner.lam[0] == 1e4


@pytest.mark.parametrize(
    ("grid", "message"),
    [
        ((), "empty"),
        ((0.0, 1.0), "> 0"),
        ((-1.0,), "> 0"),
        ((1.0, np.inf), "finite"),
        ((np.nan,), "finite"),
        ((1.0, 1.0), "duplicated"),
    ],
)
def test_bad_lambda_grids_are_rejected(grid, message):
    with pytest.raises(ValueError, match=message):
        check_lambda_grid(grid)
    with pytest.raises(ValueError, match=message):
        ValidatedSEMLasso(1, 3, grid, [True, False])
    with pytest.raises(ValueError, match=message):
        CovidExperiment(lambda_grid=grid)


def test_bad_learner_inputs_are_rejected():
    with pytest.raises(ValueError, match="validation mask"):
        ValidatedSEMLasso(1, 3, DECADE_GRID, [])
    with pytest.raises(ValueError, match="initial"):
        ValidatedSEMLasso(1, 3, DECADE_GRID, [True], initial=-1.0)
    learner = ValidatedSEMLasso(1, 3, DECADE_GRID, [True, False])
    with pytest.raises(ValueError, match="beyond the validation mask"):
        learner.add(np.array([[3]]), np.ones((1, 1, 3)), np.ones((1, 1, 3)))
    with pytest.raises(ValueError, match=r"\(R, K\)"):
        learner.add(np.array([[1]]), np.ones((1, 1, 2)), np.ones((1, 1, 2)))
    with pytest.raises(ValueError, match="featured_replicate"):
        CovidExperiment(replicates=2, featured_replicate=2)
    with pytest.raises(ValueError, match="units"):
        CovidExperiment(units=("per-capita",))


def _synthetic_instance(n: int = 6, horizon: int = 30) -> CovidInstance:
    a, _, _ = _cyclic_sem_data(n, 1, seed=5)
    rng = np.random.default_rng(7)
    kde = rng.uniform(0.05, 0.4, (20, n))
    b_mean = kde.mean(axis=0)
    overall = np.linalg.solve(np.eye(n) - a, np.tile(b_mean, (horizon, 1)).T).T
    overall *= 1 + 0.3 * rng.random((horizon, n))
    validation = np.zeros(horizon, dtype=bool)
    validation[[4, 13, 22]] = True
    return CovidInstance(
        dates=np.arange(horizon).astype("datetime64[D]"),
        overall=overall,
        kde_data=kde,
        bandwidths=np.full(n, 0.02),
        means=np.stack([b_mean, np.roll(b_mean, -2)]),
        change_point=15,
        shift=2,
        validation=validation,
        scale=1.0,
        window=1,
    )


def covid_policy(
    policy_class,
    problem,
    shared_graph=False,
    lam_grid=DECADE_GRID,
    lasso_max_sweeps=1000,
    **options,
):
    """NDC-SEM or SEM-UCB as the Covid experiment builds them: ``lam`` tuned online on the full
    reward vectors (``graph_input="b"``), NDC-SEM with Table I's Covid ``(gamma, xi)``."""
    if policy_class is NDCSEM:
        options = {"gamma": 0.85, "xi": 0.1, **options}
    validation = LambdaValidation(
        lam_grid=lam_grid, lasso_max_sweeps=lasso_max_sweeps, shared_graph=shared_graph
    )
    return policy_class(problem, validation=validation, **{"graph_input": "b", **options})


def _run(policy_class, instance, policy_seed: int = 11, **options):
    env = FeedbackDelay(ItalyCovidBandit(instance, super_arm_size=2), delay=3)
    env.reset([np.random.SeedSequence(4)])
    policy = covid_policy(
        policy_class, env.problem, lam_grid=(1e-2, 1e-1, 1.0, 10.0), lasso_max_sweeps=50, **options
    )
    policy.reset([np.random.SeedSequence(policy_seed)])

    def graph(t, env, policy, actions):
        learner = policy.lasso
        # graph learning uses exactly the rounds tau <= t - 3 (training + validation)
        assert learner.statistics.counts[0] + learner.n_validation[0] == max(t - 3, 0)
        return learner.lam[0], learner.fit()[0].copy()

    log, trace = ActionLog(), Trace(graph, when="update")
    simulate(env, policy, [instance.horizon], [log, trace])
    lams, fits = zip(*trace.rows, strict=True)
    return log.stacked()[:, 0], np.array(lams), np.array(fits)


def test_both_policies_learn_the_same_graphs_and_are_deterministic():
    instance = _synthetic_instance()
    ndc = _run(NDCSEM, instance)
    sem = _run(SEMUCB, instance)
    np.testing.assert_array_equal(ndc[1], sem[1])  # lambda(t): decisions do not matter
    np.testing.assert_allclose(ndc[2], sem[2])
    again = _run(NDCSEM, instance)
    for first, second in zip(ndc, again, strict=True):
        np.testing.assert_array_equal(first, second)
    assert np.all(ndc[0].sum(axis=1) <= 2)
    assert not np.array_equal(ndc[0], sem[0])
    with pytest.raises(ValueError, match="validation days"):
        covid_policy(
            NDCSEM, dataclasses.replace(ItalyCovidBandit(instance).problem, validation=None)
        )


def test_selection_matrix_reads_the_selected_column():
    chosen = selection_matrix(["ABR;VEN", "", "LOM"])
    assert chosen.shape == (3, 21)
    assert chosen[0, [0, 20]].all() and chosen[0].sum() == 2
    assert not chosen[1].any() and chosen[2, 8]


@pytest.mark.skipif(
    not BULLETINS.exists(), reason=f"the Italian bulletins are not available at {BULLETINS}"
)
def test_quick_experiment_end_to_end(tmp_path):
    experiment = dataclasses.replace(covid(quick=True), data_path=str(BULLETINS))
    out = tmp_path / "covid"
    df = experiment.run(out, jobs=1, progress=False)
    assert list(df.columns) == list(COLUMNS)
    days = df[df["record"] == "day"]
    # replicates x policies (NDC-SEM with Table I's and the tuned pair, SEM-UCB) x days
    assert len(days) == 2 * 3 * 80
    assert set(days["n_selected"]) <= set(range(6))
    # all policies see the same lambda path and eps(t)
    pivot = days.pivot_table(index=["replicate", "day"], columns="policy", values="lam")
    np.testing.assert_array_equal(pivot["NDC-SEM"], pivot["SEM-UCB"])
    np.testing.assert_array_equal(pivot["NDC-SEM"], pivot["NDC-SEM (tuned)"])
    assert len(df[df["record"] == "tuning"]) == 2 * 220  # tuning replicates x the paper's pairs
    predictions = df[df["record"] == "prediction"]
    assert len(predictions) == 2 * 8 * 21 and predictions["validation"].all()
    summary = reward_summary(df, "max", 40)
    assert list(summary["window"]) == ["before", "after", "total"]
    total = days.groupby("policy")["reward"].sum() / 2
    assert summary.set_index("window").loc["total", "NDC-SEM_mean"] == pytest.approx(
        total["NDC-SEM"]
    )
    regions = selection_dynamics(df, "max", "NDC-SEM", 25, 40).loc[0]
    assert regions["before_set"].any() and regions["after_set"].any()
    assert regions["before"] == regions["before_set"].sum()
    paths = experiment.plot(df, out)
    assert all(p.exists() and p.stat().st_size > 0 for p in paths)
    report = experiment.report(df)
    assert "| verdict |" in report and "days 40-80" in report
    verdicts = ("| holds |", "| not reproduced |", "| contradicted |", "not significant |")
    assert sum(report.count(v) for v in verdicts) >= 5
    again = experiment.run(out, jobs=1, progress=False)  # resumes: nothing left to run
    pd.testing.assert_frame_equal(again, df)
    with pytest.raises(FileNotFoundError, match="bulletins"):
        dataclasses.replace(experiment, data_path=str(tmp_path / "absent.csv")).run(
            tmp_path / "other", progress=False
        )
