from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import lsq_linear

from causalbandits.data.train_delays import TrainDelayData, load_train_delays
from causalbandits.envs.separable_semibandit import SeparableSemiBandit
from causalbandits.envs.train_delay_fit import (
    TrainDelayFitOptions,
    fit_train_delay_sem,
    fixed_point_rate,
    held_out_errors,
    replay_inputs,
)
from causalbandits.envs.train_delay_replay import (
    ReplayConfig,
    TrainDelayReplay,
    descendants,
    train_delay_replay,
)
from causalbandits.envs.train_delays import SimulatorConfig, train_delay_simulator
from causalbandits.estimators.box_least_squares import box_least_squares
from causalbandits.random import SubStream, derive
from causalbandits.scm.basis import Dictionary, ScaledTanh
from causalbandits.scm.separable import ChordSEM, SeparableSEM

FOLDER = Path(__file__).resolve().parents[2] / "shared" / "data" / "train_delays"
needs_data = pytest.mark.skipif(
    not FOLDER.is_dir(), reason=f"the train-delay data are not available at {FOLDER}"
)


@pytest.fixture(scope="module")
def data() -> TrainDelayData:
    if not FOLDER.is_dir():
        pytest.skip(f"the train-delay data are not available at {FOLDER}")
    return load_train_delays(FOLDER)


@pytest.fixture(scope="module")
def fit(data):
    return fit_train_delay_sem(data)


@pytest.fixture(scope="module")
def simulator(data, fit):
    config = SimulatorConfig(super_arm_size=2, mc_samples=300)
    return train_delay_simulator(data, fit=fit, config=config, seed=3)


# --- building blocks (no data) ---------------------------------------------------------------


def test_scaled_tanh_is_zero_true_with_exact_derivatives():
    f = ScaledTanh(rate=8.2, shift=0.12)
    v = np.linspace(-0.3, 1.2, 41)
    np.testing.assert_allclose(f(v), np.tanh(8.2 * (v - 0.12)) - np.tanh(-8.2 * 0.12))
    assert f.zero_true and Dictionary((f,)).size == 1
    h = 1e-5
    d = f.derivatives(v, 3)
    for n in (1, 2, 3):
        below, above = f.derivatives(v - h, n - 1)[n - 1], f.derivatives(v + h, n - 1)[n - 1]
        np.testing.assert_allclose(d[n], (above - below) / (2 * h), rtol=1e-5, atol=1e-4)
    with pytest.raises(ValueError):
        ScaledTanh(rate=0.0, shift=0.1)


def test_box_least_squares_matches_scipy():
    rng = np.random.default_rng(0)
    for _ in range(5):
        n, p = 40, 4
        x = rng.normal(size=(n, p))
        r = x @ rng.uniform(-1, 2, size=p) + 0.5 + 0.1 * rng.normal(size=n)
        upper = rng.uniform(0.2, 1.5, size=p)
        rows = rng.random(n) < 0.8
        a, c = box_least_squares(x[None], r, rows[None], upper[None])
        design = np.hstack([x[rows], np.ones((rows.sum(), 1))])
        ref = lsq_linear(
            design, r[rows], bounds=(np.r_[np.zeros(p), -np.inf], np.r_[upper, np.inf])
        ).x
        np.testing.assert_allclose(a[0], ref[:p], atol=1e-7)
        np.testing.assert_allclose(c[0], ref[p], atol=1e-7)


def test_descendants_of_a_cycle_and_a_tail():
    edges = np.zeros((4, 4), dtype=bool)
    edges[0, 1] = edges[1, 0] = edges[1, 2] = True  # 0 <-> 1 -> 2, 3 alone
    reach = descendants(edges)
    assert reach[0].tolist() == [True, True, True, False]
    assert reach[2].tolist() == [False, False, True, False]
    assert reach[3].tolist() == [False, False, False, True]


# --- the fit ---------------------------------------------------------------------------------


@needs_data
def test_normalisation_and_exogenous_laws(data, fit):
    assert fit.scale == pytest.approx(82.0)  # -11 min (Halberstadt) .. 71 min (Kassel Hbf)
    low = min(v.min() for v in fit.exogenous_values)
    high = max(v.max() for v in fit.exogenous_values)
    assert low < 0 < high and high - low == pytest.approx(1.0)  # width 1, 0 = no own delay
    counts = [v.size for v in fit.exogenous_values]
    np.testing.assert_array_equal(counts, data.exogenous_observed.sum(axis=0))
    assert min(counts) == 14 and counts[fit.names.index("Kassel Hbf")] == 59
    for i, values in enumerate(fit.exogenous_values):
        observed = data.exogenous[:, i][data.exogenous_observed[:, i]]
        np.testing.assert_array_equal(np.sort(values), np.sort(observed / 82.0))
    arms = fit.arms()
    assert arms.support == pytest.approx((low, high))


@needs_data
def test_fitted_graph_respects_the_track_records_and_contracts(data, fit):
    kept = np.abs(fit.weights).max(axis=-1) > 0  # [i, j]: edge j -> i
    assert np.all(data.adjacency.T[kept])  # only track-record edges
    assert np.all(fit.weights >= 0) and kept.sum() >= 20
    assert all(f.zero_true for f in fit.dictionary.functions)
    assert fit.dictionary.size <= 3  # linear, cubic, one shared tanh shape
    counts = fit.family_counts()
    assert sum(counts.values()) == kept.sum() and min(counts.values()) > 0
    np.testing.assert_array_equal(fit.edges, kept.T)
    # least squares alone is not a contraction; the shrink makes rho exactly 0.8
    assert fit.raw_contraction > 1 and fit.shrink < 1
    assert fit.contraction == pytest.approx(0.8)
    # the bound holds pointwise: |J(y)| <= M entrywise at every data hour
    _, endo = replay_inputs(fit, data)
    jac = np.abs(fit.sem().jacobian(endo[None])[0])
    assert np.all(jac <= fit.slopes + 1e-12)
    assert np.abs(np.linalg.eigvals(jac)).max() <= fit.contraction + 1e-9


@needs_data
def test_fitted_sem_beats_the_empty_graph_on_held_out_hours(data):
    errors = held_out_errors(data, train=48)  # fit on the first 48 hours, test on 31 + 1 empty
    assert errors["train_hours"] == 48 and errors["test_station_hours"] > 300
    # the structural equations of held-out hours: the SEM vs the intercepts alone (F = 0)
    assert errors["structural"] < 0.85 * errors["structural_empty"]
    assert errors["contraction"] <= 0.8 + 1e-9


@needs_data
def test_fixed_point_converges_from_the_data_range(data, fit):
    exo, endo = replay_inputs(fit, data)
    base = SeparableSEM(fit.weights, fit.dictionary, method="fixed-point", max_iter=500)
    for inputs in (exo, exo + fit.intercepts, endo - base.mechanisms(endo[None])[0]):
        solved = base.solve(inputs[None])[0]
        np.testing.assert_allclose(solved - base.mechanisms(solved[None])[0], inputs, atol=1e-10)
        np.testing.assert_allclose(
            ChordSEM(fit.weights, fit.dictionary).solve(inputs[None])[0], solved, atol=1e-9
        )
        assert 0 < fixed_point_rate(base, inputs) < fit.contraction
    # abduction: the real hours are the fixed points of their own residual inputs
    residual = endo - base.mechanisms(endo[None])[0]
    np.testing.assert_allclose(base.solve(residual[None])[0], endo, atol=1e-9)


# --- the simulator ---------------------------------------------------------------------------


@needs_data
def test_simulator_mu_matches_a_direct_monte_carlo(data, fit, simulator):
    assert isinstance(simulator, SeparableSemiBandit) and simulator.fit is fit
    assert len(simulator.super_arms) == 1 + 20 + 190 and not simulator.problem.upper_triangular
    assert (simulator.problem.n_arms, simulator.horizon) == (20, 342)
    picks = [0, 13, 60, 150, int(np.argmax(simulator.expected_payoffs[0]))]
    arms = simulator.super_arms[picks].astype(float)
    base = SeparableSEM(fit.weights, fit.dictionary)
    # the same common samples through the plain SeparableSEM: the same numbers
    seed = derive([np.random.SeedSequence(3)], SubStream.MONTE_CARLO)[0]
    signals = fit.arms().quantile(np.random.default_rng(seed).random((2, 300, 20))[0])
    payoff = base.solve((arms[:, None] * signals[None])[None])[0].sum(axis=-1)
    np.testing.assert_allclose(simulator.expected_payoffs[0, picks], payoff.mean(axis=1), atol=1e-8)
    # fresh samples: agreement within Monte Carlo error
    fresh = fit.arms().quantile(np.random.default_rng(99).random((2000, 20)))
    payoff = base.solve((arms[:, None] * fresh[None])[None])[0].sum(axis=-1)
    se = np.hypot(payoff.std(axis=1) / np.sqrt(2000), payoff.std(axis=1) / np.sqrt(300))
    assert np.all(
        np.abs(simulator.expected_payoffs[0, picks] - payoff.mean(axis=1)) <= 4 * se + 1e-12
    )
    assert simulator.expected_payoffs[0, 0] == 0.0  # the empty super arm: y = 0 (zero-true)


@needs_data
def test_simulator_plays_the_sem(simulator, fit):
    simulator.reset(seed=7)
    x = np.zeros((1, 20), dtype=bool)
    x[0, [0, 12]] = True
    feedback = simulator.step(x)
    assert np.all(feedback.z[0, ~x[0]] == 0)
    y = SeparableSEM(fit.weights, fit.dictionary).solve(feedback.z[None])[0]
    np.testing.assert_allclose(feedback.y, y, atol=1e-9)
    with pytest.raises(ValueError, match="at most s = 2"):
        simulator.step(np.ones((1, 20), dtype=bool))


@needs_data
def test_simulator_is_deterministic_for_a_seed(data, fit):
    config = SimulatorConfig(super_arm_size=1, mc_samples=50)
    one = train_delay_simulator(data, fit=fit, config=config, seed=11)
    two = train_delay_simulator(data, fit=fit, config=config, seed=11)
    other = train_delay_simulator(data, fit=fit, config=config, seed=12)
    np.testing.assert_array_equal(one.expected_payoffs, two.expected_payoffs)
    assert not np.array_equal(one.expected_payoffs, other.expected_payoffs)
    refit = fit_train_delay_sem(data)  # the fit itself is deterministic
    np.testing.assert_array_equal(refit.weights, fit.weights)
    x = np.zeros((1, 20), dtype=bool)
    x[0, 5] = True
    runs = []
    for env in (one, two):
        env.reset(seed=4)
        runs.append(np.stack([env.step(x).y for _ in range(5)]))
    np.testing.assert_array_equal(*runs)


@needs_data
def test_paper_configuration_has_60460_super_arms(data, fit):
    config = SimulatorConfig(mc_samples=2, model_noise="residual")
    env = train_delay_simulator(data, fit=fit, config=config)
    assert len(env.super_arms) == 60_460 and env.super_arm_size == 6 and env.horizon == 342
    assert env.model_noise[0] == pytest.approx(fit.pooled_residual_sd)
    assert np.all(np.isfinite(env.expected_payoffs))


@needs_data
@pytest.mark.parametrize(
    "kwargs",
    [
        dict(super_arm_size=0),
        dict(super_arm_size=21),
        dict(horizon=0),
        dict(replicates=0),
        dict(model_noise="large"),
    ],
)
def test_simulator_rejects_bad_arguments(data, fit, kwargs):
    with pytest.raises(ValueError):
        train_delay_simulator(data, fit=fit, config=SimulatorConfig(mc_samples=2, **kwargs))


@needs_data
def test_bad_data_are_rejected(data, fit):
    bad = [
        replace(data, exogenous=data.exogenous[:, :5]),
        replace(data, endogenous=data.endogenous[:-1]),
        replace(data, adjacency=data.adjacency[:3]),
        replace(data, observed=data.observed[:, :19]),
        data.standardised(),
    ]
    for wrong in bad:
        with pytest.raises(ValueError):
            fit_train_delay_sem(wrong)
        with pytest.raises(ValueError):
            train_delay_replay(wrong, fit=fit)
    with pytest.raises(ValueError, match="max_contraction"):
        TrainDelayFitOptions(max_contraction=1.5)
    with pytest.raises(ValueError, match="tanh_shapes"):
        TrainDelayFitOptions(tanh_shapes="all")
    with pytest.raises(ValueError, match="scale"):
        TrainDelayFitOptions(scale=0.0)


# --- the replay ------------------------------------------------------------------------------


@needs_data
def test_replay_serves_the_real_values(data, fit):
    env = train_delay_replay(data, fit=fit, config=ReplayConfig(super_arm_size=20))
    assert env.horizon == 79 and "hourly2/240706_13.csv" not in env.hours  # the empty hour
    env.reset(seed=0)
    everything = np.ones((1, 20), dtype=bool)
    for t in range(env.horizon):
        feedback = env.step(everything)
        hour = data.hours.index(env.hours[t])
        b, y = data.exogenous[hour] / 82.0, data.endogenous[hour] / 82.0
        seen, trains = np.isfinite(b), np.isfinite(y)
        np.testing.assert_array_equal(feedback.z[0, seen], b[seen])  # exactly
        np.testing.assert_array_equal(feedback.z[0, ~seen], 0.0)  # no through train
        np.testing.assert_array_equal(feedback.y[0, trains], y[trains])  # exactly
        np.testing.assert_array_equal(feedback.y[0, ~trains], 0.0)  # no train
        np.testing.assert_array_equal(env.exogenous_imputed[t], ~seen)


@needs_data
def test_replay_counterfactuals_solve_the_sem_with_the_hours_residuals(data, fit):
    env = train_delay_replay(data, fit=fit)
    env.reset(seed=0, replicates=3)
    rng = np.random.default_rng(5)
    base = SeparableSEM(fit.weights, fit.dictionary)
    exact_rounds = 0
    for t in range(env.horizon):
        x = np.zeros((3, 20), dtype=bool)
        for r in range(3):
            x[r, rng.choice(20, size=6, replace=False)] = True
        b = env.signals[t]
        # replicate 2 picks the stations with a non-zero own delay when they fit in s
        active = np.flatnonzero(b[2] != 0)
        if active.size <= 6:
            x[2] = False
            x[2, active] = True
        feedback = env.step(x)
        hour = data.hours.index(env.hours[t])
        real = np.where(data.observed[hour], data.endogenous[hour] / 82.0, 0.0)
        seen = np.isfinite(data.exogenous[hour])
        for r in range(3):
            chosen = x[r] & seen
            np.testing.assert_array_equal(
                feedback.z[r, chosen], data.exogenous[hour, chosen] / 82.0
            )
            assert np.all(feedback.z[r, ~x[r]] == 0)
            y = feedback.y[r]
            # the structural equations with the hour's residual hold
            u = env.residuals[t, r]
            np.testing.assert_allclose(
                y - base.mechanisms(y[None, None])[0, 0], x[r] * b[r] + u, atol=1e-9
            )
            # stations no dropped own delay reaches keep their real values exactly
            dropped = ~x[r] & (b[r] != 0)
            reached = descendants(fit.edges)[dropped].any(axis=0)
            np.testing.assert_array_equal(y[~reached], real[~reached])
        if active.size <= 6:
            exact_rounds += 1
            np.testing.assert_array_equal(feedback.y[2], real)
    assert exact_rounds >= 5


@needs_data
def test_replay_law_imputation_is_flagged_and_deterministic(data, fit):
    config = ReplayConfig(super_arm_size=3, missing_exogenous="law")
    env = train_delay_replay(data, fit=fit, config=config)
    env.reset(seed=8, replicates=2)
    signals = env.signals.copy()
    flagged = env.exogenous_imputed
    assert flagged.mean() > 0.3
    real = env.exogenous
    np.testing.assert_array_equal(signals[:, 0][~flagged], real[~flagged])
    for i, values in enumerate(fit.exogenous_values):
        assert np.all(np.isin(signals[:, :, i][flagged[:, i]], values))
    assert not np.array_equal(signals[:, 0], signals[:, 1])  # own streams per replicate
    env.reset(seed=8, replicates=2)
    np.testing.assert_array_equal(env.signals, signals)
    # the complete super arm still reproduces the real endogenous values
    config = ReplayConfig(super_arm_size=20, missing_exogenous="law")
    full = train_delay_replay(data, fit=fit, config=config)
    full.reset(seed=8)
    y = full.step(np.ones((1, 20), dtype=bool)).y
    np.testing.assert_array_equal(y[0], full.endogenous[0])


@needs_data
def test_replay_regret_is_only_a_diagnostic(data, fit, simulator):
    env = train_delay_replay(data, fit=fit, config=ReplayConfig(super_arm_size=2))
    env.reset(seed=0)
    x = np.zeros((1, 20), dtype=bool)
    x[0, [3, 4]] = True
    with pytest.raises(RuntimeError, match="unknown"):
        env.pseudo_regret(x)
    diagnosed = TrainDelayReplay(fit, data, ReplayConfig(super_arm_size=2), simulator)
    diagnosed.reset(seed=0)
    np.testing.assert_allclose(diagnosed.pseudo_regret(x), simulator.pseudo_regret(x))
    best = simulator.optimal_action
    assert diagnosed.is_optimal(best)[0] and not diagnosed.is_optimal(x)[0]
    with pytest.raises(ValueError, match="same fit"):
        TrainDelayReplay(fit, data, ReplayConfig(super_arm_size=3), simulator)


@needs_data
@pytest.mark.parametrize(
    "kwargs", [dict(super_arm_size=0), dict(super_arm_size=21), dict(missing_exogenous="mean")]
)
def test_replay_rejects_bad_arguments(data, fit, kwargs):
    with pytest.raises(ValueError):
        train_delay_replay(data, fit=fit, config=ReplayConfig(**kwargs))
