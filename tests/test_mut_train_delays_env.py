"""The train-delay simulator's assembly on a small hand-made fit (issue 32, mutation testing):
``mu(x)`` against the closed form of a linear SEM with point-mass laws, the Monte Carlo
samples' seed against an explicit derivation, and the configuration's defaults and checks.
No data needed: the fit is written out here."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from causalbandits.data.train_delays import load_train_delays
from causalbandits.envs.separable_semibandit import SeparableBanditConfig
from causalbandits.envs.train_delay_fit import (
    TrainDelayFit,
    TrainDelayFitOptions,
    fit_train_delay_sem,
)
from causalbandits.envs.train_delays import (
    SimulatorConfig,
    TrainDelaySimulator,
    train_delay_simulator,
)
from causalbandits.random import SubStream, derive
from causalbandits.scm.basis import Dictionary

from .test_mut_train_delay_fit import chain_data, write_folder

#: ``W[i, j]``: edge ``j -> i``; a 2-cycle between stations 0 and 1 and an edge 2 -> 0.
WEIGHTS = np.array([[[0.0], [0.3], [0.4]], [[0.5], [0.0], [0.0]], [[0.0], [0.0], [0.0]]])


def small_fit(values=((0.2,), (0.5,), (0.3,)), basis: str = "linear") -> TrainDelayFit:
    """Three stations, edges of one basis, the given exogenous values per station (the
    laws)."""
    return TrainDelayFit(
        names=("Aa", "Bb", "Cc"),
        short_names=("AA", "BB", "CC"),
        scale=10.0,
        weights=WEIGHTS.copy(),
        dictionary=Dictionary.from_names(basis),
        families=(("", "linear", "linear"), ("linear", "", ""), ("", "", "")),
        intercepts=np.zeros(3),
        residual_sd=np.full(3, 0.1),
        pooled_residual_sd=0.07,
        exogenous_values=tuple(np.array(v) for v in values),
        box=np.array([[0.0] * 3, [1.0] * 3]),
        slopes=np.zeros((3, 3)),
        contraction=0.5,
        raw_contraction=0.5,
        shrink=1.0,
        hours=np.arange(3),
        fit_seconds=0.0,
        options=TrainDelayFitOptions(),
        cv_sse=0.0,
    )


def closed_form(arms: np.ndarray, signals: np.ndarray) -> np.ndarray:
    """``1^T (I - W)^-1 (x * b)``: the linear SEM's total delay, per super arm and sample."""
    inverse = np.linalg.inv(np.eye(3) - WEIGHTS[..., 0])
    return np.einsum("ij,...j->...", inverse, arms * signals)


def test_mu_is_the_linear_sems_closed_form_for_point_mass_laws() -> None:
    """With one value per station ``mu(x) = 1^T (I - W)^-1 (x * b)`` exactly, for every super
    arm of at most ``s = 2`` stations and every replicate; the attributes come from the fit
    (``fitted_edges[i, j]``: the edge ``i -> j``)."""
    config = SimulatorConfig(super_arm_size=2, mc_samples=4, replicates=2, horizon=7.0)
    env = train_delay_simulator(fit=small_fit(), config=config, seed=1)
    assert len(env.super_arms) == 1 + 3 + 3 and env.super_arm_size == 2
    assert env.horizon == 7 and env.problem.horizon == 7 and env.expected_payoffs.shape == (2, 7)
    expected = closed_form(env.super_arms.astype(float), np.array([0.2, 0.5, 0.3]))
    np.testing.assert_allclose(env.expected_payoffs, np.tile(expected, (2, 1)), atol=1e-9)
    assert env.names == ("Aa", "Bb", "Cc") and env.short_names == ("AA", "BB", "CC")
    edges = np.zeros((3, 3), dtype=bool)
    edges[1, 0] = edges[0, 1] = edges[2, 0] = True
    np.testing.assert_array_equal(env.fitted_edges, edges)
    assert env.fit.scale == 10.0 and 0 < env.build_seconds < 60
    np.testing.assert_array_equal(env.model_noise, [0.0, 0.0])


def test_the_solve_tolerance_reaches_the_sem() -> None:
    """``tol`` is the fixed point's: with tanh edges a loose one moves ``mu`` visibly off the
    tight one's (a linear SEM is solved exactly either way)."""
    options = {"super_arm_size": 3, "mc_samples": 2, "replicates": 1}
    loose = train_delay_simulator(
        fit=small_fit(basis="tanh"), config=SimulatorConfig(tol=1e-1, **options)
    )
    tight = train_delay_simulator(
        fit=small_fit(basis="tanh"), config=SimulatorConfig(tol=1e-10, **options)
    )
    assert np.abs(loose.expected_payoffs - tight.expected_payoffs).max() > 1e-6


@pytest.mark.parametrize("kind", ["int", "sequence", "generator"])
def test_the_monte_carlo_samples_come_from_the_seeds_stream(kind: str) -> None:
    """Two-value laws: ``mu`` is the mean over ``mc_samples`` common samples drawn from the
    ``MONTE_CARLO`` stream of the seed (an int or a ``SeedSequence`` as it is, a ``Generator``
    through its first ``integers(2**63)``), the same for every replicate; here recomputed with
    the closed form."""
    seed = {
        "int": 5,
        "sequence": np.random.SeedSequence(5),
        "generator": np.random.default_rng(9),
    }[kind]
    root = np.random.SeedSequence(
        int(np.random.default_rng(9).integers(2**63)) if kind == "generator" else 5
    )
    fit = small_fit(values=((0.1, 0.6), (0.2, 0.9), (0.0, 0.4)))
    config = SimulatorConfig(super_arm_size=3, mc_samples=64, replicates=2)
    env = train_delay_simulator(fit=fit, config=config, seed=seed)
    stream = derive([root], SubStream.MONTE_CARLO)[0]
    uniforms = np.random.default_rng(stream).random((2, 64, 3))[0]
    signals = fit.arms().quantile(uniforms)  # (64, 3)
    payoffs = closed_form(env.super_arms[:, None].astype(float), signals[None])  # (|X|, 64)
    np.testing.assert_allclose(env.expected_payoffs[0], payoffs.mean(axis=1), atol=1e-9)
    np.testing.assert_array_equal(env.expected_payoffs[1], env.expected_payoffs[0])


def test_model_noise_is_a_number_or_the_fits_pooled_residual_sd() -> None:
    fit = small_fit()
    residual = SimulatorConfig(super_arm_size=1, mc_samples=2, model_noise="residual")
    assert train_delay_simulator(fit=fit, config=residual).model_noise[0] == 0.07
    fixed = SimulatorConfig(super_arm_size=1, mc_samples=2, model_noise=0.25)
    assert train_delay_simulator(fit=fit, config=fixed).model_noise[0] == 0.25


def test_configuration_defaults_and_checks() -> None:
    """The paper's ``T = 342`` and ``s = 6``, 256 common samples, no model noise, one copy, a
    1e-10 fixed point by default; bad settings are refused naming them."""
    config = SimulatorConfig()
    assert (config.horizon, config.super_arm_size, config.mc_samples) == (342, 6, 256)
    assert (config.model_noise, config.replicates, config.tol) == (0.0, 1, 1e-10)
    assert (
        SimulatorConfig(horizon=5.0).horizon == 5
        and SimulatorConfig(replicates=2.0).replicates == 2
    )
    with pytest.raises(ValueError, match=r"^horizon T must be a positive integer, got 0$"):
        SimulatorConfig(horizon=0)
    with pytest.raises(ValueError, match=r"^replicates must be an integer >= 1, got 0$"):
        SimulatorConfig(replicates=0)
    with pytest.raises(
        ValueError, match=r"^model_noise must be a number or 'residual', got 'big'$"
    ):
        SimulatorConfig(model_noise="big")
    with pytest.raises(
        ValueError, match=r"super-arm size s must be an integer in 1\.\.N = 3, got 4"
    ):
        train_delay_simulator(fit=small_fit(), config=SimulatorConfig(super_arm_size=4))
    sizes = [sum(1 for _ in itertools.combinations(range(3), k)) for k in range(3)]
    env = train_delay_simulator(fit=small_fit(), config=SimulatorConfig(super_arm_size=2))
    assert len(env.super_arms) == sum(sizes) and env.horizon == 342


def test_the_configuration_stores_its_checked_integers() -> None:
    """Whole-number floats are stored as the ``int`` the checks return, not as given."""
    config = SimulatorConfig(horizon=5.0, replicates=2.0)
    assert type(config.horizon) is int and type(config.replicates) is int


def test_the_defaults_reach_the_simulator() -> None:
    """Without ``config`` the simulator takes :class:`SimulatorConfig`'s defaults (``s = 6``:
    refused on three stations), without ``seed`` the seed 0."""
    with pytest.raises(ValueError, match=r"super-arm size s must be an integer in 1\.\.N = 3"):
        train_delay_simulator(fit=small_fit())
    fit = small_fit(values=((0.1, 0.6), (0.2, 0.9), (0.0, 0.4)))
    config = SimulatorConfig(super_arm_size=2, mc_samples=16)
    default = train_delay_simulator(fit=fit, config=config)
    np.testing.assert_array_equal(
        default.expected_payoffs,
        train_delay_simulator(fit=fit, config=config, seed=0).expected_payoffs,
    )
    assert not np.array_equal(
        default.expected_payoffs,
        train_delay_simulator(fit=fit, config=config, seed=1).expected_payoffs,
    )


def test_the_simulator_passes_keyword_arguments_to_the_bandit() -> None:
    """``TrainDelaySimulator(fit, sem, arms, config=..., mc_seeds=...)`` builds the same
    bandit as the positional call of :func:`train_delay_simulator`."""
    fit = small_fit(values=((0.1, 0.6), (0.2, 0.9), (0.0, 0.4)))
    built = train_delay_simulator(fit=fit, config=SimulatorConfig(super_arm_size=2, mc_samples=8))
    bandit = SeparableBanditConfig(super_arm_size=2, horizon=342, mc_samples=8)
    again = TrainDelaySimulator(fit, built.sem, fit.arms(), config=bandit, mc_seeds=built._mc_seeds)
    np.testing.assert_array_equal(again.expected_payoffs, built.expected_payoffs)


def test_without_a_fit_the_simulator_fits_the_data_or_the_folder(tmp_path: Path) -> None:
    """``data`` (or ``path``) is fitted with the default options when no ``fit`` is given."""
    data, _ = chain_data()
    config = SimulatorConfig(super_arm_size=2, mc_samples=8)
    fitted = train_delay_simulator(fit=fit_train_delay_sem(data), config=config)
    np.testing.assert_array_equal(
        train_delay_simulator(data, config=config).expected_payoffs, fitted.expected_payoffs
    )
    folder = write_folder(tmp_path / "copy")
    single = SimulatorConfig(super_arm_size=1, mc_samples=4)
    direct = train_delay_simulator(load_train_delays(folder), config=single)
    from_path = train_delay_simulator(path=folder, config=single)
    np.testing.assert_array_equal(from_path.expected_payoffs, direct.expected_payoffs)
    assert from_path.names == ("Gotha", "Erfurt Hbf")
