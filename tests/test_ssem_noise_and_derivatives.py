"""SSEM-UCB: the placement of the endogenous noise (Sec. V-A against Thm IV.6) and the
finite-difference Taylor coefficients (App. -G1's numerical derivatives)."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest

from causalbandits.envs.base_arms import EmpiricalArms, NormalArms
from causalbandits.envs.separable_instances import TRIAL_1, TrialDesign, trial_environment
from causalbandits.envs.separable_semibandit import SeparableBanditConfig, SeparableSemiBandit
from causalbandits.envs.super_arms import all_super_arms, members
from causalbandits.estimators.expansion import Expansion
from causalbandits.estimators.finite_differences import (
    central_stencil,
    finite_difference_jets,
    stencil_table,
    taylor_coefficients,
)
from causalbandits.estimators.jets import monomials, reward_jets
from causalbandits.experiments.runner import config_fingerprint
from causalbandits.papers.catalogue import load_experiment
from causalbandits.papers.ssem_ucb.trials import (
    SyntheticTrial,
    algorithm_family,
    finite_difference_step,
    preset,
)
from causalbandits.policies.q_search import QSearchOptions, SSEMUCBQSearch, remainder_bounds
from causalbandits.policies.ssem_ucb import SSEMUCBJO
from causalbandits.random import replicate_seeds
from causalbandits.scm.basis import Dictionary
from causalbandits.scm.separable import SeparableSEM

SMOOTH = Dictionary.from_names(["linear", "quadratic", "tanh"])

# ------------------------------------------------------------------ noise placement


def quadratic_chain(replicates: int = 1) -> tuple[SeparableSEM, NormalArms]:
    """A 4-node DAG with quadratic edges: model noise shifts its expected payoffs."""
    weights = np.zeros((4, 4, 3))
    weights[0, 1, 1], weights[1, 2, 1], weights[0, 3, 0], weights[2, 3, 2] = 0.9, 0.8, 0.5, 0.7
    sem = SeparableSEM(np.repeat(weights[None], replicates, axis=0), SMOOTH)
    law = NormalArms(np.full((replicates, 4), 0.5), np.full((replicates, 4), 0.15))
    return sem, law


def chain_environment(placement: str, noise: float, replicates: int = 1, **options):
    sem, law = quadratic_chain(replicates)
    config = SeparableBanditConfig(
        super_arm_size=2, horizon=100, model_noise=noise, noise_placement=placement, **options
    )
    return SeparableSemiBandit(sem, law, config, mc_seeds=[0] * replicates)


def test_observation_noise_leaves_the_expected_payoffs_noise_free() -> None:
    quiet = chain_environment("model", 0.0, mc_samples=4000)
    observed = chain_environment("observation", 0.3, mc_samples=4000)
    np.testing.assert_array_equal(observed.expected_payoffs, quiet.expected_payoffs)
    np.testing.assert_array_equal(observed.optimal_action, quiet.optimal_action)
    np.testing.assert_array_equal(observed.payoff_spread, quiet.payoff_spread)
    # model noise inside a quadratic SEM raises E[f(y + e)] by about w sigma^2
    modelled = chain_environment("model", 0.3, mc_samples=4000)
    assert (modelled.expected_payoffs - quiet.expected_payoffs).max() > 0.05


def test_observation_noise_payoffs_are_the_noise_free_solution_exactly() -> None:
    """With constant signals ``b``, ``mu(x)`` is ``1^T (I - F)^{-1}(x * b)`` itself (up to
    the rounding of the mean of identical samples)."""
    sem, _ = quadratic_chain()
    signals = np.array([0.3, 0.6, 0.45, 0.8])
    law = EmpiricalArms([np.array([v]) for v in signals])
    config = SeparableBanditConfig(
        super_arm_size=2, horizon=10, model_noise=0.3, noise_placement="observation", mc_samples=50
    )
    env = SeparableSemiBandit(sem, law, config)
    solved = sem.solve((env.super_arms * signals)[None])[0].sum(axis=-1)
    np.testing.assert_allclose(env.expected_payoffs[0], solved, rtol=1e-14, atol=1e-15)
    model = SeparableSemiBandit(sem, law, replace(config, noise_placement="model"))
    assert np.abs(model.expected_payoffs[0] - solved).max() > 0.01


@pytest.mark.parametrize("placement", ["observation", "model"])
def test_observed_rewards_average_to_the_oracle(placement: str) -> None:
    """The mean of ``1^T y`` over many rounds of one super arm is its ``mu`` within standard
    errors (of the rounds and of the oracle's Monte Carlo)."""
    replicates, rounds = 100, 40
    env = chain_environment(placement, 0.3, replicates=replicates, mc_samples=20000)
    env.reset(5)
    action = np.zeros((replicates, 4), dtype=bool)
    action[:, [2, 3]] = True
    rewards = np.concatenate([env.step(action).y.sum(axis=1) for _ in range(rounds)])
    expected = env.expected_payoff(action)[0]
    error = rewards.std(ddof=1) * np.sqrt(1 / rewards.size + 1 / 20000)
    assert abs(rewards.mean() - expected) < 4 * error
    assert rewards.std() > 0.3  # the endogenous noise reaches the reward


def test_placements_share_their_draws_and_bad_placements_are_refused() -> None:
    """The same draws: ``y = (I - F)^{-1}(z) + e`` on the observations, ``y = (I - F)^{-1}(z +
    e)`` in the model (observation noise on ``z`` is 0 here, so ``z`` is the true input)."""
    model, observation = chain_environment("model", 0.2), chain_environment("observation", 0.2)
    model.reset(1)
    observation.reset(1)
    action = np.array([[True, False, True, False]])
    inside, outside = model.step(action), observation.step(action)
    np.testing.assert_array_equal(inside.z, outside.z)
    noise = outside.y - observation.sem.solve(outside.z[:, None])[:, 0]
    assert np.abs(noise).max() > 0
    np.testing.assert_allclose(inside.y, model.sem.solve((inside.z + noise)[:, None])[:, 0])
    with pytest.raises(ValueError, match="noise_placement"):
        chain_environment("inside", 0.2)
    with pytest.raises(ValueError, match="noise_placement"):
        TrialDesign(noise_placement="inside")


def test_trials_default_to_observation_noise_and_record_it() -> None:
    assert TRIAL_1.noise_placement == "observation"
    seeds = replicate_seeds(5, 0, range(2), 0)
    design = TrialDesign(n_arms=5, min_nonlinearity=None, model_noise_share=0.2)
    observed = trial_environment(design, seeds, super_arm_size=2, horizon=5, mc_samples=300)
    modelled = trial_environment(
        replace(design, noise_placement="model"), seeds, super_arm_size=2, horizon=5, mc_samples=300
    )
    quiet = trial_environment(
        replace(design, model_noise_share=0.0), seeds, super_arm_size=2, horizon=5, mc_samples=300
    )
    assert observed.noise_placement == "observation" and modelled.noise_placement == "model"
    np.testing.assert_array_equal(observed.model_noise, modelled.model_noise)
    np.testing.assert_array_equal(observed.expected_payoffs, quiet.expected_payoffs)
    assert not np.array_equal(modelled.expected_payoffs, quiet.expected_payoffs)

    default = load_experiment("ssem-ucb-trial-1")
    config = default.config()
    assert config["instance_design"]["noise_placement"] == "observation"
    model = replace(default, design={"noise_placement": "model"})
    assert model.instance_design().noise_placement == "model"
    assert model.config()["instance_design"]["noise_placement"] == "model"
    assert config_fingerprint(model.config()) != config_fingerprint(config)
    variant = preset("trial-1", quick=True, noise_placement="model")
    assert variant.name == "ssem-ucb-trial-1-model-noise-quick"
    assert variant.config()["instance_design"]["noise_placement"] == "model"
    for trial in ("trial-2", "trial-3"):
        assert load_experiment(f"ssem-ucb-{trial}").instance_design().noise_placement == (
            "observation"
        )


# ------------------------------------------------------------------ finite differences


def test_central_stencils_are_the_textbook_ones() -> None:
    half = Fraction(1, 2)
    assert central_stencil(1) == ((-1, 1), (-half, half))
    assert central_stencil(2) == ((-1, 0, 1), (1, -2, 1))
    assert central_stencil(3) == ((-2, -1, 1, 2), (-half, 1, -1, half))
    assert central_stencil(4) == ((-2, -1, 0, 1, 2), (1, -4, 6, -4, 1))
    offsets, table = stencil_table(2, 2)
    assert table.shape == (6, len(offsets)) and len(offsets) == 9
    # the mixed coefficient c_(1,1) is the four-point cross difference / 4
    mixed = monomials(2, 2).index[(1, 1)]
    corners = {tuple(o): w for o, w in zip(offsets.astype(int), table[mixed], strict=True) if w}
    assert corners == {(-1, -1): 0.25, (-1, 1): -0.25, (1, -1): -0.25, (1, 1): 0.25}


def smooth_sem(replicates: int = 2, n: int = 6, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Random DAGs of linear, quadratic and tanh edges with small coefficients, and centres."""
    rng = np.random.default_rng(seed)
    weights = np.zeros((replicates, n, n, 3))
    for r in range(replicates):
        edges = np.triu(rng.random((n, n)) < 0.5, 1)
        rows, cols = np.nonzero(edges)
        family = rng.integers(0, 3, rows.size)
        weights[r, rows, cols, family] = rng.uniform(0.3, 0.7, rows.size)
    return weights, rng.uniform(0.3, 0.7, (replicates, n))


def degree_errors(step: float, degree: int) -> np.ndarray:
    """The largest error of the finite-difference coefficients of each total degree against
    the exact jets, on every super arm of size 4 of :func:`smooth_sem`: ``(degree + 1,)``."""
    weights, centres = smooth_sem()
    arms = members(all_super_arms(6, 4, exact=True))
    exact = reward_jets(weights, Expansion(dictionary=SMOOTH), centres, arms, degree)
    numeric = Expansion(dictionary=SMOOTH, derivatives="finite-difference", fd_step=step)
    approx = finite_difference_jets(weights, numeric, centres, arms, degree)
    total = monomials(4, degree).total_degree
    error = np.abs(approx - exact)
    return np.array([error[..., total == d].max() for d in range(degree + 1)])


@pytest.mark.parametrize("degree", [1, 2, 3, 4])
def test_finite_differences_converge_at_second_order(degree: int) -> None:
    coarse, fine = degree_errors(0.02, degree), degree_errors(0.01, degree)
    assert coarse[0] == fine[0] == 0.0  # the constant term is r(a) itself
    ratios = coarse[1:] / fine[1:]
    assert np.all((ratios > 3.6) & (ratios < 4.4)), ratios
    assert fine.max() < 5e-4
    # at the default step 1e-3 the coefficients up to degree 3 are within 1e-5
    assert degree_errors(1e-3, min(degree, 3)).max() < 1e-5


def test_finite_differences_of_a_cyclic_sem_match_the_jets() -> None:
    weights = np.zeros((1, 3, 3, 3))
    weights[0, 0, 1, 2], weights[0, 1, 2, 1], weights[0, 2, 0, 0] = 0.5, 0.4, 0.3  # a cycle
    centres = np.array([[0.4, 0.5, 0.6]])
    arms = np.array([[0, 2], [1, 2]])
    cyclic = Expansion(dictionary=SMOOTH, upper_triangular=False)
    exact = reward_jets(weights, cyclic, centres, arms, 3)
    numeric = replace(cyclic, derivatives="finite-difference", fd_step=1e-2)
    approx = taylor_coefficients(weights, numeric, centres, arms, 3)
    np.testing.assert_allclose(approx, exact, atol=2e-4)


def test_derivative_options_are_checked() -> None:
    with pytest.raises(ValueError, match="derivatives must be"):
        Expansion(dictionary=SMOOTH, derivatives="numeric")
    with pytest.raises(ValueError, match="step must be > 0"):
        Expansion(dictionary=SMOOTH, derivatives="finite-difference", fd_step=0)
    problem = SimpleProblem()
    with pytest.raises(ValueError, match="derivatives must be"):
        SSEMUCBJO(problem, derivatives="symbolic")


class SimpleProblem:
    n_arms, super_arm_size, upper_triangular = 5, 2, True


def smooth_environment(horizon: int = 60) -> SeparableSemiBandit:
    weights = np.zeros((5, 5, 3))
    weights[0, 3, 1], weights[1, 4, 2], weights[2, 4, 1], weights[0, 2, 0] = 0.8, 0.6, 0.5, 0.4
    sem = SeparableSEM(weights[None], SMOOTH)
    law = NormalArms(np.array([[0.3, 0.6, 0.4, 0.5, 0.55]]), np.full((1, 5), 0.1))
    config = SeparableBanditConfig(super_arm_size=2, horizon=horizon, mc_samples=2000)
    return SeparableSemiBandit(sem, law, config)


def run_policy(policy: SSEMUCBJO, rounds: int = 60) -> tuple[np.ndarray, np.ndarray]:
    env = smooth_environment(rounds)
    env.reset(2)
    policy.reset(replicate_seeds(2, 0, [0], 1))
    regret, played = [], []
    for _ in range(rounds):
        actions = policy.select()
        regret.append(env.pseudo_regret(actions)[0])
        played.append(actions[0])
        policy.update(actions, env.step(actions))
    return np.array(regret), np.array(played)


def test_the_policy_runs_with_finite_differences_close_to_exact() -> None:
    problem = smooth_environment().problem
    options = dict(degree=3, dictionary=SMOOTH.names)
    exact = SSEMUCBJO(problem, **options)
    numeric = SSEMUCBJO(problem, derivatives="finite-difference", fd_step=1e-3, **options)
    regret, played = run_policy(exact)
    fd_regret, fd_played = run_policy(numeric)
    assert np.all(np.isfinite(fd_regret)) and fd_regret.min() >= 0
    assert (played == fd_played).all(axis=1).mean() > 0.9
    assert abs(fd_regret.sum() - regret.sum()) <= 0.1 * max(regret.sum(), 1.0)
    for mine, theirs in zip(numeric.groups, exact.groups, strict=True):
        np.testing.assert_allclose(mine.coefficients, theirs.coefficients, atol=1e-4)


def test_q_search_uses_the_finite_differences_too() -> None:
    weights, centres = smooth_sem(1, n=5)
    low, high = np.full((1, 5), 0.2), np.full((1, 5), 0.8)
    options = QSearchOptions(dictionary=SMOOTH, upper_triangular=True, max_degree=3)
    exact = remainder_bounds(weights, low, high, 2, options)
    numeric = remainder_bounds(
        weights, low, high, 2, replace(options, derivatives="finite-difference", fd_step=1e-2)
    )
    np.testing.assert_allclose(numeric, exact, rtol=1e-2, atol=1e-6)
    policy = SSEMUCBQSearch(
        smooth_environment().problem,
        max_degree=3,
        dictionary=SMOOTH.names,
        derivatives="finite-difference",
    )
    regret, _ = run_policy(policy, 30)
    assert np.all(np.isfinite(regret)) and policy.degrees.min() >= 0


def test_trial_labels_carry_the_finite_difference_step() -> None:
    assert algorithm_family("SSEM-UCB-JO q=4 fd=0.001") == ("SSEM-UCB-JO", 4)
    assert finite_difference_step("SSEM-UCB-JO q=4 fd=0.001") == 1e-3
    assert finite_difference_step("SSEM-UCB-JO q=4") is None
    with pytest.raises(ValueError, match="only"):
        SyntheticTrial(algorithms=("Taylor oracle q=2 fd=0.01",))
    with pytest.raises(ValueError, match="step"):
        SyntheticTrial(algorithms=("SSEM-UCB-JO q=2 fd=-1",))
    grid = load_experiment("ssem-ucb-trial-1-fd", quick=True)
    assert grid.trial == "trial-1" and grid.seed == load_experiment("ssem-ucb-trial-1").seed
    assert grid.algorithms == (
        "SSEM-UCB-JO q=1",
        "SSEM-UCB-JO q=4",
        "SSEM-UCB-JO q=4 fd=0.01",
        "SSEM-UCB-JO q=4 fd=0.001",
        "SSEM-UCB-JO q=4 fd=0.0001",
    )
    small = SyntheticTrial(design={"n_arms": 4}, super_arm_size=2, mc_samples=50)
    env = small.environment(range(1), 0)
    scales = {"radius_scale": 0.5, "bonus_scale": 0.5}
    policy = small.policy("SSEM-UCB-JO q=2 fd=0.01", env, scales)
    options = policy.options
    assert (options.derivatives, options.fd_step, options.degree) == ("finite-difference", 0.01, 2)
    norm = small.policy("SSEM-UCB-Norm q=2 fd=0.001", env, scales).options
    assert (norm.derivatives, norm.fd_step) == ("finite-difference", 0.001)
    assert small.policy("SSEM-UCB-JO q=2", env, scales).options.derivatives == "exact"
