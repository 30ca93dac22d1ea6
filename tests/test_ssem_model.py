"""The nonlinear separable SEM, its jets and its environment (SSEM-UCB spec Sec. 6)."""

from __future__ import annotations

from math import comb, factorial, pi

import numpy as np
import pytest
from scipy.optimize import root

from causalbandits.envs.base_arms import ArcsineArms, EmpiricalArms, NormalArms
from causalbandits.envs.separable_instances import (
    LINEAR_SANITY,
    TRIAL_1,
    TrialDesign,
    draw_instance,
    linearisation_error,
    trial_environment,
)
from causalbandits.envs.separable_semibandit import SeparableBanditConfig, SeparableSemiBandit
from causalbandits.envs.super_arms import all_super_arms, count_super_arms, members
from causalbandits.estimators.dictionary_lasso import DictionaryLasso
from causalbandits.estimators.expansion import Expansion
from causalbandits.estimators.jets import monomials, reward_jets
from causalbandits.random import Stream, replicate_seeds
from causalbandits.scm.basis import (
    CUBIC,
    SINE,
    TANH,
    BasisFunction,
    Dictionary,
    Power,
    ShiftedTanh,
)
from causalbandits.scm.separable import ConvergenceError, SeparableSEM

MIXED = Dictionary.from_names(["linear", "sin", "quadratic", "tanh"])


def random_dag(rng: np.random.Generator, n: int, dictionary: Dictionary, scale: float = 0.5):
    """Strictly upper-triangular ``W`` with about half the pairs connected."""
    edges = np.triu(rng.random((n, n)) < 0.5, k=1)
    return edges[..., None] * rng.uniform(0, scale, (n, n, dictionary.size))


@pytest.mark.parametrize("basis", [Power(1), Power(2), CUBIC, SINE, TANH, ShiftedTanh(0.7)])
def test_basis_derivatives_match_finite_differences(basis: BasisFunction) -> None:
    v, h = np.array([-0.3, 0.2, 0.9]), 1e-5
    exact = basis.derivatives(v, 5)
    for n in range(1, 6):
        lower = basis.derivatives(v - h, n - 1)[n - 1]
        upper = basis.derivatives(v + h, n - 1)[n - 1]
        np.testing.assert_allclose(exact[n], (upper - lower) / (2 * h), rtol=1e-5, atol=1e-4)


def test_sine_derivatives_are_the_closed_form_cycle() -> None:
    v = np.array([0.1, 0.37])
    got = SINE.derivatives(v, 4)
    phase = 2 * pi * v
    np.testing.assert_allclose(got[3], -((2 * pi) ** 3) * np.cos(phase))
    np.testing.assert_allclose(got[4], (2 * pi) ** 4 * np.sin(phase))


def test_dictionary_refuses_a_basis_that_is_not_zero_true() -> None:
    class Cosine(BasisFunction):
        name = "cos"

        def derivatives(self, values: np.ndarray, order: int) -> np.ndarray:
            cycle = (np.cos(values), -np.sin(values), -np.cos(values), np.sin(values))
            return np.stack([cycle[n % 4] for n in range(order + 1)])

    with pytest.raises(ValueError, match="not zero-true"):
        Dictionary((Cosine(),))
    assert Dictionary((Cosine(),), zero_true=False).size == 1
    with pytest.raises(ValueError, match="unknown basis"):
        Dictionary.from_names(["linear", "exp"])


def test_dag_solve_agrees_with_a_root_finder_and_the_iterations() -> None:
    rng = np.random.default_rng(1)
    weights = random_dag(rng, 6, MIXED)
    u = rng.uniform(0, 1, (1, 4, 6))
    y = SeparableSEM(weights, MIXED).solve(u)
    for method in ("fixed-point", "newton"):
        np.testing.assert_allclose(SeparableSEM(weights, MIXED, method=method).solve(u), y)
    sem = SeparableSEM(weights, MIXED)
    for s in range(4):
        found = root(lambda v, s=s: v - sem.mechanisms(v[None, None])[0, 0] - u[0, s], u[0, s])
        np.testing.assert_allclose(y[0, s], found.x, atol=1e-10)


def test_linear_solve_is_the_transfer_matrix() -> None:
    rng = np.random.default_rng(2)
    adjacency = np.triu(rng.uniform(0.2, 0.7, (5, 5)), k=1)
    z = rng.uniform(0, 1, (1, 3, 5))
    y = SeparableSEM(adjacency[..., None], Dictionary.from_names("linear")).solve(z)
    expected = np.linalg.solve(np.eye(5) - adjacency, z[0].T).T
    np.testing.assert_allclose(y[0], expected)


def test_cyclic_solves_converge_or_raise() -> None:
    linear = Dictionary.from_names("linear")
    cycle = np.zeros((3, 3, 1))
    cycle[0, 1], cycle[1, 2], cycle[2, 0] = 0.5, 0.5, 0.5
    u = np.ones((1, 1, 3))
    y = SeparableSEM(cycle, linear).solve(u)
    np.testing.assert_allclose(y[0, 0], np.linalg.solve(np.eye(3) - cycle[..., 0], np.ones(3)))
    with pytest.raises(ConvergenceError, match="did not converge"):
        SeparableSEM(2.5 * cycle, linear).solve(u)
    with pytest.raises(ValueError, match="upper-triangular"):
        SeparableSEM(cycle, linear, method="backward")
    with pytest.raises(ValueError, match="self-loops"):
        SeparableSEM(np.ones((2, 2, 1)), linear)


def test_jets_are_the_closed_form_taylor_coefficients() -> None:
    """``r(u) = u0 + u1 + c sin(2 pi u1)``: the jet in ``delta_1`` is its Taylor series."""
    dictionary = Dictionary.from_names("sin")
    c, a = 0.6, np.array([[0.3, 0.45]])
    weights = np.zeros((1, 2, 2, 1))
    weights[0, 0, 1, 0] = c
    expansion = Expansion(dictionary=dictionary)
    coefficients = reward_jets(weights, expansion, a, np.array([[1]]), degree=4)[0, 0]
    derivatives = SINE.derivatives(np.array([a[0, 1]]), 4)[:, 0]
    expected = [c * derivatives[n] / factorial(n) for n in range(5)]
    expected[0] += a[0, 1]  # r = y0 + y1 with y1 = a1 + delta and y0 = c sin(2 pi y1)
    expected[1] += 1.0
    np.testing.assert_allclose(coefficients, expected, rtol=1e-12)


def test_jets_match_finite_differences_of_the_reward_map() -> None:
    rng = np.random.default_rng(3)
    weights = random_dag(rng, 5, MIXED)[None]
    sem = SeparableSEM(weights, MIXED)
    centre = rng.uniform(0.2, 0.8, (1, 5))
    arms = np.array([[0, 2, 4]])
    coefficients = reward_jets(weights, Expansion(dictionary=MIXED), centre, arms, degree=2)[0, 0]
    basis = monomials(3, 2)

    def reward(delta: np.ndarray) -> float:
        u = np.zeros(5)
        u[arms[0]] = centre[0, arms[0]] + delta
        return float(sem.solve(u[None, None])[0, 0].sum())

    h = 1e-4
    for m, alpha in enumerate(basis.exponents):
        if alpha.sum() == 1:
            e = alpha.astype(float)
            fd = (reward(h * e) - reward(-h * e)) / (2 * h)
        elif alpha.max() == 2:
            e = alpha.astype(float) / 2
            fd = (reward(h * e) - 2 * reward(0 * e) + reward(-h * e)) / h**2 / 2
        elif alpha.sum() == 2:
            i, j = np.flatnonzero(alpha)
            ei, ej = np.eye(3)[i], np.eye(3)[j]
            fd = (
                reward(h * (ei + ej))
                - reward(h * (ei - ej))
                - reward(h * (ej - ei))
                + reward(-h * (ei + ej))
            ) / (4 * h * h)
        else:
            fd = reward(np.zeros(3))
        np.testing.assert_allclose(coefficients[m], fd, rtol=1e-4, atol=1e-5)


def test_jet_fixed_point_matches_the_backward_sweep_and_a_linear_cycle() -> None:
    rng = np.random.default_rng(4)
    weights = random_dag(rng, 5, MIXED)[None]
    centre = rng.uniform(0, 1, (1, 5))
    arms = members(all_super_arms(5, 3, exact=True))
    sweep = reward_jets(weights, Expansion(dictionary=MIXED), centre, arms, 3)
    cyclic = Expansion(dictionary=MIXED, upper_triangular=False)
    fixed = reward_jets(weights, cyclic, centre, arms, 3)
    np.testing.assert_allclose(fixed, sweep, atol=1e-12)
    linear = Dictionary.from_names("linear")
    cycle = np.zeros((1, 3, 3, 1))
    cycle[0, 0, 1], cycle[0, 1, 2], cycle[0, 2, 0] = 0.5, 0.4, 0.3
    cyclic = Expansion(dictionary=linear, upper_triangular=False)
    jets = reward_jets(cycle, cyclic, np.ones((1, 3)), np.array([[0, 1, 2]]), 2)[0, 0]
    effects = np.linalg.solve((np.eye(3) - cycle[0, ..., 0]).T, np.ones(3))
    np.testing.assert_allclose(jets[1:4], effects)
    np.testing.assert_allclose(jets[4:], 0, atol=1e-12)
    with pytest.raises(ConvergenceError):
        reward_jets(4 * cycle, cyclic, np.ones((1, 3)), np.array([[0, 1, 2]]), 2)


def test_cyclic_jets_are_the_taylor_polynomial_of_the_cyclic_reward_map() -> None:
    """On a nonlinear cyclic contraction the degree-3 jets leave a remainder of order 4:
    halving the step divides the error by about 16 (a wrong coefficient of degree d <= 3
    would leave a ratio of at most 8)."""
    rng = np.random.default_rng(11)
    n = 5
    edges = (rng.random((n, n)) < 0.5) & ~np.eye(n, dtype=bool)
    weights = (edges[..., None] * rng.uniform(0, 0.08, (n, n, MIXED.size)))[None]
    sem = SeparableSEM(weights, MIXED)
    centre = rng.uniform(0.2, 0.8, (1, n))
    arms = np.array([[0, 2, 3]])
    cyclic = Expansion(dictionary=MIXED, upper_triangular=False)
    coefficients = reward_jets(weights, cyclic, centre, arms, 3)[0, 0]
    exponents = monomials(3, 3).exponents
    direction = np.array([0.7, -0.4, 0.5])

    def error(step: float) -> float:
        u = np.zeros(n)
        u[arms[0]] = centre[0, arms[0]] + step * direction
        exact = float(sem.solve(u[None, None])[0, 0].sum())
        taylor = coefficients @ np.prod((step * direction) ** exponents, axis=1)
        return abs(exact - taylor)

    ratios = [error(step) / error(step / 2) for step in (0.1, 0.05)]
    assert all(13 < ratio < 20 for ratio in ratios), ratios


def test_monomial_counts_and_super_arm_counts() -> None:
    assert monomials(6, 4).size == comb(10, 4) == 210
    assert monomials(6, 3).size == 84
    assert count_super_arms(10, 6) == 848 == len(all_super_arms(10, 6))
    assert count_super_arms(15, 6) == 9949
    with pytest.raises(ValueError, match="super-arm size"):
        all_super_arms(4, 5)
    with pytest.raises(ValueError, match="super-arm size"):
        all_super_arms(4, 0)


def test_normal_rescaling_and_the_other_laws() -> None:
    law = NormalArms.rescaled(np.array([[0.3, 0.7]]), np.array([[0.1, 0.4]]))
    # [min(mu - 3 sd), max(mu + 3 sd)] = [-0.5, 1.9] is sent to [0, 1]
    np.testing.assert_allclose(law.means, [[0.8 / 2.4, 1.2 / 2.4]])
    np.testing.assert_allclose(law.sds, [[0.1 / 2.4, 0.4 / 2.4]])
    samples = law.quantile(np.random.default_rng(0).random((1, 20000, 2)))
    assert samples.min() >= 0 and samples.max() <= 1
    arcsine = ArcsineArms(np.array([[1.2]]), np.array([[0.4]]))
    draws = arcsine.quantile(np.random.default_rng(1).random((1, 40000, 1)))
    assert abs(draws.mean() - 1.2) < 0.01 and abs(draws.std() - 0.4) < 0.01
    empirical = EmpiricalArms([np.array([3.0, 1.0]), np.array([2.0])])
    np.testing.assert_array_equal(
        empirical.quantile(np.array([[0.1, 0.9], [0.6, 0.2]])), [[1, 2], [3, 2]]
    )
    with pytest.raises(ValueError, match="> 0"):
        NormalArms(np.array([[0.5]]), np.array([[0.0]]))
    with pytest.raises(ValueError, match="at least one"):
        EmpiricalArms([np.array([])])
    with pytest.raises(ValueError, match="low <= high"):
        TrialDesign(mean_range=(0.7, 0.3))


def linear_environment(**options) -> SeparableSemiBandit:
    adjacency = np.zeros((4, 4))
    adjacency[0, 2], adjacency[1, 3], adjacency[0, 3] = 0.5, 0.6, 0.4
    sem = SeparableSEM(adjacency[None, ..., None], Dictionary.from_names("linear"))
    law = NormalArms(np.array([[0.5, 0.3, 0.6, 0.4]]), np.full((1, 4), 0.1))
    config = SeparableBanditConfig(super_arm_size=2, horizon=50, mc_samples=20000, **options)
    return SeparableSemiBandit(sem, law, config)


def test_environment_payoffs_match_the_linear_closed_form() -> None:
    env = linear_environment()
    effects = np.linalg.solve((np.eye(4) - env.sem.weights[0, ..., 0]).T, np.ones(4))
    means = env.arms.means[0]  # clipping at 0 and 1 is negligible 3 sd away
    exact = env.super_arms @ (effects * means)
    np.testing.assert_allclose(env.expected_payoffs[0], exact, atol=4e-3)
    best = max(range(len(exact)), key=lambda a: exact[a])
    np.testing.assert_array_equal(env.optimal_action[0], env.super_arms[best])


def test_environment_feedback_and_regret() -> None:
    env = linear_environment(observation_noise=0.0)
    env.reset(0)
    action = np.array([[True, False, True, False]])
    regret = env.pseudo_regret(action)
    feedback = env.step(action)
    assert np.all(feedback.z[0, [1, 3]] == 0)
    np.testing.assert_allclose(feedback.y, env.sem.solve(feedback.z[:, None])[:, 0])
    assert regret[0] >= 0 and env.pseudo_regret(env.optimal_action)[0] == 0
    with pytest.raises(ValueError, match="at most s"):
        env.step(np.ones((1, 4), dtype=bool))


def test_environment_replicates_do_not_depend_on_each_other() -> None:
    seeds = replicate_seeds(5, 0, range(3), Stream.INSTANCE)
    design = TrialDesign(n_arms=5, min_nonlinearity=None)
    together = trial_environment(design, seeds, super_arm_size=2, horizon=5, mc_samples=200)
    alone = trial_environment(design, seeds[2:], super_arm_size=2, horizon=5, mc_samples=200)
    np.testing.assert_array_equal(together.expected_payoffs[2], alone.expected_payoffs[0])
    np.testing.assert_array_equal(together.model_noise[2], alone.model_noise[0])


def test_trial_one_instances_pass_the_nonlinearity_test() -> None:
    weights, means, sds = draw_instance(TRIAL_1, np.random.default_rng(0), check_samples=1000)
    sem = SeparableSEM(weights, TRIAL_1.dictionary)
    law = NormalArms.rescaled(means[None], sds[None])
    signals = law.quantile(np.random.default_rng(1).random((1, 1000, 10)))
    arms = all_super_arms(10, 6)
    error = linearisation_error(sem, signals, arms)[0]
    config = SeparableBanditConfig(super_arm_size=6, horizon=1, mc_samples=1000)
    best = SeparableSemiBandit(sem, law, config).optimal_value[0]
    assert error > 0.09 * best  # the test's 0.1 up to the Monte Carlo error of 1000 samples
    # a linear SEM has no linearisation error, so no linear instance is ever accepted
    linear = SeparableSEM(weights[..., :1], LINEAR_SANITY.dictionary)
    assert linearisation_error(linear, signals, arms)[0] < 1e-9
    impossible = TrialDesign(families=("linear",), min_nonlinearity=0.1)
    with pytest.raises(RuntimeError, match="nonlinearity test"):
        draw_instance(impossible, 0, check_samples=20, max_attempts=3)


def test_dictionary_lasso_recovers_a_noiseless_graph() -> None:
    rng = np.random.default_rng(6)
    dictionary = Dictionary.from_names(["linear", "sin"])
    weights = np.zeros((6, 6, 2))
    weights[0, 2, 0], weights[1, 4, 1], weights[3, 5, 1], weights[2, 5, 0] = 0.5, 0.6, 0.4, 0.7
    sem = SeparableSEM(weights, dictionary)
    fit = DictionaryLasso(1, 6, dictionary)
    for _ in range(200):
        z = (rng.random(6) < 0.5) * rng.uniform(0, 1, 6)
        fit.add(z[None], sem.solve(z[None, None])[:, 0])
    np.testing.assert_allclose(fit.fit()[0], weights, atol=1e-6)
