"""The EXCBO paper's synthetic problems (Sec. 7.2, App. C.1-C.3) and the causal-BO environment:
exact expected rewards against hand-written functions, quadrature and Monte Carlo, optima
against brute force, seeding and validation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import quad

from causalbandits.envs import (
    CausalBOProblem,
    FunctionNetworkBandit,
    MonteCarloReward,
    TargetNode,
    alpine2,
    dropwave,
    rosenbrock,
)
from causalbandits.envs.bo_problems import default_horizon, make_noise
from causalbandits.experiments.simulate import simulate
from causalbandits.scm import GaussianNoise, MixtureNoise


def alpine2_by_hand(a: np.ndarray) -> np.ndarray:
    """MCBO's Alpine2 without noise (decisions: excbo 3)."""
    x = 10 * a
    h = np.sqrt(x) * np.sin(x)
    return -h[..., 0] * h[..., 1:].prod(axis=-1)


def rosenbrock_by_hand(a: np.ndarray) -> np.ndarray:
    """MCBO's Rosenbrock without noise (decisions: excbo 3)."""
    x = 4 * (a - 0.5)
    return -(100 * (x[..., 1:] - x[..., :-1] ** 2) ** 2 + (1 - x[..., :-1]) ** 2).sum(axis=-1)


def dropwave_by_hand(a: np.ndarray) -> np.ndarray:
    """``phi(r(a))``: Dropwave's ``Y`` at the noiseless ``X`` (App. C.3)."""
    r = np.sqrt(((10.24 * a - 5.12) ** 2).sum(axis=-1))
    return (1 + np.cos(12 * r)) / (2 + 0.5 * r**2)


def step_draws(env: FunctionNetworkBandit, action: np.ndarray, replicates: int, rounds: int):
    """``rounds x replicates`` independent draws of ``y`` at one action through ``step``."""
    env.reset(123, replicates)
    actions = np.broadcast_to(action, (replicates, action.size))
    return np.concatenate([env.objective(env.step(actions)) for _ in range(rounds)])


# ------------------------------------------------------------------- exact expected rewards


@pytest.mark.parametrize(
    ("make", "by_hand"), [(alpine2, alpine2_by_hand), (rosenbrock, rosenbrock_by_hand)]
)
def test_expected_reward_is_the_noiseless_function(rng, make, by_hand) -> None:
    env = make(0.2)
    actions = rng.random((50, env.network.n_actions))
    np.testing.assert_allclose(env.expected_reward(actions), by_hand(actions), rtol=1e-12)
    assert env.expected_reward(actions.reshape(5, 10, -1)).shape == (5, 10)


@pytest.mark.parametrize("make", [alpine2, rosenbrock])
@pytest.mark.parametrize("noise", ["mixture", "gaussian"])
def test_steps_average_to_the_expected_reward(rng, make, noise: str) -> None:
    env = make(0.2, noise, horizon=50)
    for action in rng.random((3, env.network.n_actions)):
        y = step_draws(env, action, 100, 50)
        se = y.std(ddof=1) / math.sqrt(y.size)
        assert abs(y.mean() - env.expected_reward(action)) <= 4 * se


@pytest.mark.parametrize(
    ("make", "by_hand"), [(alpine2, alpine2_by_hand), (rosenbrock, rosenbrock_by_hand)]
)
def test_monte_carlo_reward_agrees_with_the_exact_one(rng, make, by_hand) -> None:
    env = make(0.2)
    mc = MonteCarloReward(env.network, env.noise, env.objective, n_samples=4000, rng=5)
    actions = rng.random((4, env.network.n_actions))
    mean, se = mc.estimate(actions)
    assert mean.shape == se.shape == (4,)
    assert np.all(np.abs(mean - by_hand(actions)) <= 4 * se)
    np.testing.assert_array_equal(mc(actions), mean)


def test_monte_carlo_reward_uses_common_random_numbers(rng) -> None:
    env = rosenbrock(0.2)
    small = MonteCarloReward(env.network, env.noise, env.objective, 500, rng=1, max_elements=50)
    large = MonteCarloReward(env.network, env.noise, env.objective, 500, rng=1)
    actions = rng.random((7, 5))
    # The same draws whatever the chunking, and the same noise for every action: the
    # differences between actions are exact (Rosenbrock is additive in its noise).
    np.testing.assert_allclose(small(actions), large(actions), rtol=1e-12)
    exact = env.expected_reward(actions)
    np.testing.assert_allclose(large(actions) - large(actions[:1]), exact - exact[0])


# ------------------------------------------------------------------------------- Dropwave


@pytest.mark.parametrize("noise", ["mixture", "gaussian"])
@pytest.mark.parametrize("propagate", [True, False])
def test_dropwave_quadrature_agrees_with_monte_carlo(noise: str, propagate: bool) -> None:
    env = dropwave(0.2, noise, propagate)
    mc = MonteCarloReward(env.network, env.noise, env.objective, 20_000, 3, propagate)
    actions = np.array([[0.5, 0.5], [0.52, 0.49], [0.55, 0.6], [0.1, 0.9]])
    mean, se = mc.estimate(actions)
    assert np.all(np.abs(env.expected_reward(actions) - mean) <= 4 * se)


def test_dropwave_without_propagation_is_the_noiseless_response(rng) -> None:
    actions = rng.random((20, 2))
    exact = dropwave(0.3, "mixture", propagate_noise=False).expected_reward(actions)
    np.testing.assert_allclose(exact, dropwave_by_hand(actions), rtol=1e-12)


def test_dropwave_quadrature_matches_adaptive_integration() -> None:
    env = dropwave(0.2, "mixture")
    action = np.array([0.53, 0.47])
    r = float(np.sqrt(((10.24 * action - 5.12) ** 2).sum()))

    def integrand(e: float) -> float:
        phi = (1 + math.cos(12 * (r + e))) / (2 + 0.5 * (r + e) ** 2)
        return phi * float(env.noise.pdf(np.array([e, 0.0]))[0])

    value, _ = quad(integrand, -3, 3, points=[-0.4, 0.4], limit=200, epsabs=1e-13)
    assert float(env.expected_reward(action)) == pytest.approx(value, abs=1e-10)


def test_dropwave_steps_average_to_the_expected_reward() -> None:
    env = dropwave(0.2, "mixture", horizon=50)
    action = np.array([0.52, 0.51])
    y = step_draws(env, action, 100, 50)
    assert abs(y.mean() - env.expected_reward(action)) <= 4 * y.std(ddof=1) / math.sqrt(y.size)


def test_propagation_matters_for_dropwave_only_through_x() -> None:
    on, off = dropwave(0.2, propagate_noise=True), dropwave(0.2, propagate_noise=False)
    assert off.optimum == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(off.optimal_action, [0.5, 0.5], atol=1e-9)
    assert on.optimum < 0.9
    on.reset(9, 3)
    off.reset(9, 3)
    x_on, x_off = on.step(np.full((3, 2), 0.6)), off.step(np.full((3, 2), 0.6))
    np.testing.assert_array_equal(x_on[:, 0], x_off[:, 0])
    assert np.all(x_on[:, 1] != x_off[:, 1])


@pytest.mark.parametrize("sigma", [0.05, 0.1, 0.2])
@pytest.mark.parametrize("noise", ["mixture", "gaussian"])
def test_dropwave_optimum_beats_a_dense_grid(sigma: float, noise: str) -> None:
    env = dropwave(sigma, noise)
    side = np.linspace(0, 1, 121)
    grid = np.stack(np.meshgrid(side, side), axis=-1)
    values = env.expected_reward(grid)
    assert values.max() <= env.optimum + 1e-12
    assert env.optimum - values.max() < 5e-3
    assert env.optimum < 1.0
    assert float(env.expected_reward(env.optimal_action)) == env.optimum


# ------------------------------------------------------------------------------- optima


def test_alpine2_optimum_is_the_derived_value(rng) -> None:
    env = alpine2(0.1)
    assert env.optimum == pytest.approx(381.15, abs=0.01)
    np.testing.assert_allclose(env.optimal_action, [0.4816] + [0.7917] * 5, atol=1e-4)
    # Coordinate-wise brute force from the optimum finds nothing better.
    side = np.linspace(0, 1, 2001)
    for j in range(6):
        trial = np.tile(env.optimal_action, (side.size, 1))
        trial[:, j] = side
        assert env.expected_reward(trial).max() <= env.optimum + 1e-9


def test_rosenbrock_optimum_is_zero_at_three_quarters() -> None:
    env = rosenbrock(0.1)
    assert env.optimum == 0.0
    np.testing.assert_array_equal(env.optimal_action, np.full(5, 0.75))


@pytest.mark.parametrize("make", [dropwave, alpine2, rosenbrock])
def test_optimum_dominates_random_actions(rng, make) -> None:
    env = make()
    actions = rng.random((2000, env.network.n_actions))
    regret = env.pseudo_regret(actions)
    assert np.all(regret >= -1e-12)
    assert env.pseudo_regret(env.optimal_action) == 0.0
    assert env.is_optimal(env.optimal_action)
    assert not np.any(env.is_optimal(actions[regret > 0.011 * max(1, abs(env.optimum))]))


# ----------------------------------------------------------------- environment contract


def test_problem_tells_the_graph_actions_and_sigma() -> None:
    problem = rosenbrock(0.2).problem
    assert problem == CausalBOProblem(
        parents=((), (0,), (1,), (2,)),
        active_inputs=((0, 1), (1, 2), (2, 3), (3, 4)),
        n_actions=5,
        objective=TargetNode(),
        noise_std=0.2,
        names=("X0", "X1", "X2", "Y"),
        noise_variance=problem.noise_variance,
    )
    # eq. 11's mixture: variance 5 sigma^2 at every node (decisions: excbo 1)
    assert problem.noise_variance == pytest.approx((5 * 0.2**2,) * 4)
    assert list(problem.dag.topological_order) == [0, 1, 2, 3]
    assert dropwave().problem.active_inputs == ((0, 1), ())
    assert alpine2().problem.n_nodes == 6


def test_horizons_default_to_fifty_rounds_after_the_design() -> None:
    assert default_horizon(2) == 56
    assert dropwave().horizon == 56 and alpine2().horizon == 64 and rosenbrock().horizon == 62
    assert dropwave(horizon=10).horizon == 10


def test_same_seeds_give_the_same_draws_and_replicates_are_their_own_streams(rng) -> None:
    env = alpine2(0.2)
    actions = rng.random((3, 6))
    seeds = np.random.SeedSequence(4).spawn(3)
    env.reset(seeds)
    first = [env.step(actions) for _ in range(4)]
    env.reset(seeds)
    again = [env.step(actions) for _ in range(4)]
    np.testing.assert_array_equal(first, again)
    env.reset(seeds[2:])
    alone = [env.step(actions[2:]) for _ in range(4)]
    np.testing.assert_array_equal(np.array(first)[:, 2:], alone)
    assert not np.array_equal(first[0][0], first[0][1])


def test_noise_does_not_depend_on_the_actions(rng) -> None:
    env = rosenbrock(0.2)

    def recovered_noise(actions: np.ndarray) -> np.ndarray:
        env.reset(11, 2)
        x = env.step(actions)
        x_clean = env.network.evaluate(actions, np.zeros(4))
        return np.diff(np.concatenate([np.zeros((2, 1)), x - x_clean], axis=1), axis=1)

    first, second = rng.random((2, 2, 5))
    np.testing.assert_allclose(recovered_noise(first), recovered_noise(second))


def test_replicate_draws_are_independent() -> None:
    env = rosenbrock(0.2, "gaussian", horizon=400)
    env.reset(2, 2)
    action = np.full((2, 5), 0.75)
    y = np.array([env.step(action)[:, 0] for _ in range(400)])
    assert abs(np.corrcoef(y.T)[0, 1]) < 4 / math.sqrt(400)


def test_round_loop_runs_a_random_policy() -> None:
    class Uniform:
        def __init__(self, problem: CausalBOProblem) -> None:
            self.n_actions = problem.n_actions

        def reset(self, seeds) -> None:
            self._rng = np.random.default_rng(seeds[0])
            self._replicates = len(seeds)

        def select(self) -> np.ndarray:
            return self._rng.random((self._replicates, self.n_actions))

        def update(self, actions: np.ndarray, feedback: np.ndarray) -> None:
            assert feedback.shape == (len(actions), 2) and feedback.dtype == np.float64

    env = dropwave(0.1, horizon=20)
    env.reset(0, 3)
    policy = Uniform(env.problem)
    policy.reset(np.random.SeedSequence(1).spawn(3))
    out = simulate(env, policy, 4)
    assert out["cum_regret"].shape == (4, 3)
    assert np.all(np.diff(out["cum_regret"], axis=0) >= 0)


def test_target_node_works_on_torch_tensors() -> None:
    torch = pytest.importorskip("torch")
    x = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(TargetNode()(x), [3.0, 7.0, 11.0])
    assert torch.equal(TargetNode(1)(torch.tensor(x)), torch.tensor([1.0, 5.0, 9.0]).double())


# ---------------------------------------------------------------------------- validation


@pytest.mark.parametrize("make", [dropwave, alpine2, rosenbrock])
@pytest.mark.parametrize("sigma", [-0.1, 0.0, math.nan, math.inf])
def test_bad_noise_levels_are_rejected(make, sigma: float) -> None:
    with pytest.raises(ValueError, match="sigma"):
        make(sigma)


def test_noise_choices_are_checked() -> None:
    with pytest.raises(ValueError, match="'mixture', 'gaussian'"):
        make_noise("laplace", 2, 0.1)
    with pytest.raises(ValueError, match="2 nodes"):
        dropwave(0.1, GaussianNoise.iid(3, 0.0, 0.1))
    shifted = MixtureNoise.eq11(6, 0.1, means=(0.0, 0.4))
    with pytest.raises(ValueError, match="zero-mean"):
        alpine2(0.1, shifted)
    assert isinstance(make_noise("gaussian", 2, 0.1), GaussianNoise)


def test_bad_actions_are_rejected_by_the_environment() -> None:
    env = rosenbrock(0.1)
    env.reset(0, 2)
    with pytest.raises(ValueError, match="one action vector per replicate"):
        env.step(np.full((3, 5), 0.5))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        env.step(np.full((2, 5), 1.5))
    with pytest.raises(ValueError, match="shape"):
        env.pseudo_regret(np.full((2, 4), 0.5))
    with pytest.raises(ValueError, match="finite"):
        env.expected_reward(np.array([0.5, 0.5, math.nan, 0.5, 0.5]))


def test_problem_and_environment_arguments_are_validated() -> None:
    env = dropwave()
    with pytest.raises(ValueError, match="target node 2"):
        CausalBOProblem(((), (0,)), ((0,), ()), 1, TargetNode(2), 0.1)
    with pytest.raises(ValueError, match="noise_std"):
        CausalBOProblem(((), (0,)), ((0,), ()), 1, TargetNode(), -0.1)
    with pytest.raises(ValueError, match="active inputs"):
        CausalBOProblem(((), (0,)), ((1,), ()), 1, TargetNode(), 0.1)
    with pytest.raises(ValueError, match="cycle"):
        CausalBOProblem(((1,), (0,)), ((0,), ()), 1, TargetNode(), 0.1)
    kwargs = {"expected_reward": env.expected_reward, "noise_std": 0.1}
    with pytest.raises(ValueError, match="horizon"):
        FunctionNetworkBandit(env.network, env.noise, 0, optimal_action=np.zeros(2), **kwargs)
    with pytest.raises(ValueError, match="optimal_action"):
        FunctionNetworkBandit(env.network, env.noise, 5, optimal_action=np.zeros((2, 2)), **kwargs)
    with pytest.raises(ValueError, match="noise for 3 nodes"):
        FunctionNetworkBandit(
            env.network, GaussianNoise.iid(3), 5, optimal_action=np.zeros(2), **kwargs
        )
