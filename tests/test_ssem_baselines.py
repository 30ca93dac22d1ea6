"""The SSEM-UCB paper's baselines (spec 004 §4.2-4.4): SGB, METS and IGP-UCB."""

from __future__ import annotations

from math import ceil, log, sqrt
from types import SimpleNamespace

import numpy as np
import pytest

from causalbandits.envs.semibandit import SemiBanditEnv, SemiBanditProblem, Uniform
from causalbandits.envs.super_arms import all_super_arms
from causalbandits.experiments.simulate import compare
from causalbandits.policies import IGPUCB, METS, POLICIES, SGB, RandomSuperArm
from causalbandits.policies.igp_ucb import se_kernel
from causalbandits.random import replicate_seeds

#: A linear instance with well-separated total scores c_i beta_i: the optimum is {1, 3}.
ADJACENCY = np.zeros((6, 6))
ADJACENCY[0, 3], ADJACENCY[1, 4], ADJACENCY[2, 5], ADJACENCY[0, 1] = 0.5, 0.6, 0.4, 0.3
MEANS = np.array([[0.2, 0.8, 0.3, 0.7, 0.25, 0.35]])


def linear_env(horizon: int, n_arms: int = 6, super_arm_size: int = 2) -> SemiBanditEnv:
    if n_arms == 6:
        return SemiBanditEnv(ADJACENCY, MEANS, super_arm_size, horizon, distribution=Uniform(0.1))
    rng = np.random.default_rng(3)
    adjacency = np.triu(
        rng.uniform(0.2, 0.5, (n_arms, n_arms)) * (rng.random((n_arms,) * 2) < 0.3), 1
    )
    means = rng.uniform(0.3, 0.7, (1, n_arms))
    return SemiBanditEnv(adjacency, means, super_arm_size, horizon, distribution=Uniform(0.1))


def play(env: SemiBanditEnv, policy, rounds: int, noise_seeds, policy_seeds) -> dict:
    """Run ``rounds`` rounds; return the actions (t, R, N) and the feedback y (t, R, N)."""
    env.reset(noise_seeds)
    policy.reset(policy_seeds)
    actions, ys, zs = [], [], []
    for _ in range(rounds):
        x = policy.select()
        feedback = env.step(x)
        policy.update(x, feedback)
        actions.append(x)
        ys.append(feedback.y)
        zs.append(feedback.z)
    return {"actions": np.array(actions), "y": np.array(ys), "z": np.array(zs)}


MAKERS = {
    "sgb": lambda problem: SGB(problem),
    "mets": lambda problem: METS(problem, mean_range=(0.1, 0.9)),
    "igp-ucb": lambda problem: IGPUCB(problem, lam=0.1),
}


@pytest.mark.parametrize("name", sorted(MAKERS))
@pytest.mark.parametrize("sizes", [(6, 2), (10, 6)])
def test_masks_are_valid_super_arms(name: str, sizes: tuple[int, int]) -> None:
    env = linear_env(300, *sizes)
    run = play(
        env,
        MAKERS[name](env.problem),
        300,
        replicate_seeds(0, 0, range(2), 0),
        replicate_seeds(0, 0, range(2), 1),
    )
    actions = run["actions"]
    assert actions.dtype == bool and actions.shape == (300, 2, sizes[0])
    assert actions.sum(axis=2).max() <= sizes[1]


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_replicates_together_equal_replicates_alone(name: str) -> None:
    env = linear_env(150)
    noise = replicate_seeds(1, 0, range(3), 0)
    seeds = replicate_seeds(1, 0, range(3), 7)
    together = play(env, MAKERS[name](env.problem), 150, noise, seeds)["actions"]
    for r in range(3):
        alone = play(env, MAKERS[name](env.problem), 150, [noise[r]], [seeds[r]])["actions"]
        np.testing.assert_array_equal(alone[:, 0], together[:, r])
    assert not all(np.array_equal(together[:, 0], together[:, r]) for r in (1, 2))


# ---------------------------------------------------------------------------- SGB


def test_sgb_schedule_follows_the_phase_structure_and_commits() -> None:
    n, s, horizon = 6, 2, 2000
    env = linear_env(horizon)
    policy = SGB(env.problem)
    m = ceil((s * horizon * sqrt(log(horizon)) / (n * log(10.0))) ** (2 / 3))
    sizes = [min(ceil(n / s * log(10.0)), n - i + 1) for i in (1, 2)]
    assert policy.repetitions == m == 87 and policy.sizes == sizes == [6, 5]
    assert policy.exploration_rounds == m * sum(sizes)
    run = play(
        env, policy, horizon, replicate_seeds(2, 0, range(3), 0), replicate_seeds(2, 0, range(3), 1)
    )
    actions, payoffs = run["actions"], run["y"].sum(axis=2)
    chosen = np.zeros((3, n), dtype=bool)
    start = 0
    for phase, size in enumerate(sizes):
        block = actions[start : start + m * size].reshape(size, m, 3, n)
        # every candidate is played m times in a row; candidates differ; S is contained
        assert (block == block[:, :1]).all()
        assert (block.sum(axis=3) == phase + 1).all()
        assert (block & ~chosen).sum(axis=3).max() == 1 and (block | ~chosen).all()
        new = (block[:, 0] & ~chosen).argmax(axis=2)  # (size, R) candidate arms
        assert all(len(set(new[:, r])) == size for r in range(3))
        means = payoffs[start : start + m * size].reshape(size, m, 3).mean(axis=1)
        chosen[np.arange(3), new[means.argmax(axis=0), np.arange(3)]] = True
        start += m * size
    committed = actions[start:]
    assert (committed == chosen).all() and (committed.sum(axis=2) == s).all()
    assert chosen.sum(axis=1).tolist() == [s] * 3


def test_sgb_caps_the_exploration_to_the_horizon() -> None:
    problem = SemiBanditProblem(n_arms=10, super_arm_size=6, horizon=2000)
    policy = SGB(problem)  # the formula asks for m = 128, i.e. 3072 > T exploration rounds
    assert policy.sizes == [4] * 6 and policy.repetitions == 2000 // 24
    assert policy.exploration_rounds <= 2000
    tiny = SGB(SemiBanditProblem(n_arms=10, super_arm_size=6, horizon=10), m=5)
    assert tiny.repetitions == 1 and tiny.exploration_rounds == 24
    env = linear_env(10, 10, 6)
    run = play(env, tiny, 10, replicate_seeds(0, 0, [0], 0), replicate_seeds(0, 0, [0], 1))
    # m = 1: four candidates per phase, so the horizon ends in phase 3, before any commitment
    assert run["actions"].sum(axis=2)[:, 0].tolist() == [1] * 4 + [2] * 4 + [3] * 2


# ---------------------------------------------------------------------------- METS


@pytest.mark.parametrize("upper", [True, False])
def test_mets_posteriors_equal_the_closed_forms(upper: bool) -> None:
    env = linear_env(60)
    policy = METS(env.problem, weight_sd=0.7, noise_sd=0.2, upper_triangular=upper)
    assert policy.upper_triangular is upper
    run = play(
        env, policy, 60, replicate_seeds(4, 0, range(2), 0), replicate_seeds(4, 0, range(2), 1)
    )
    x, y, z = run["actions"], run["y"], run["z"]
    mean, cholesky = policy.weight_posterior()
    n = 6
    for r in range(2):
        for i in range(n):
            allowed = [j for j in range(n) if (j > i if upper else j != i)]
            if not allowed:
                assert np.allclose(mean[r, i], 0.0)
                continue
            features = y[:, r][:, allowed]
            target = y[:, r, i] - z[:, r, i]
            precision = np.eye(len(allowed)) / 0.49 + features.T @ features / 0.04
            expected = np.linalg.solve(precision, features.T @ target / 0.04)
            np.testing.assert_allclose(mean[r, i, allowed], expected, rtol=1e-9, atol=1e-12)
            outside = np.setdiff1d(np.arange(n), allowed)
            assert np.all(mean[r, i, outside] == 0)
            full = cholesky[r, i] @ cholesky[r, i].T
            np.testing.assert_allclose(full[np.ix_(allowed, allowed)], precision, rtol=1e-9)
    # base-arm means: N(0.5, 0.4^2 / 3) prior (range (0.3, 0.7) -> sd 0.4 / sqrt(12)),
    # z noise 0.4^2 (the upper end of sd_range)
    beta, variance = policy.mean_posterior()
    counts, sums = x.sum(axis=0), np.where(x, z, 0).sum(axis=0)
    precision = 1 / (0.4**2 / 12) + counts / 0.16
    np.testing.assert_allclose(variance, 1 / precision)
    np.testing.assert_allclose(beta, (0.5 / (0.4**2 / 12) + sums / 0.16) / precision)


def test_mets_defaults_to_the_problems_order() -> None:
    assert METS(SemiBanditProblem(6, 2, 10, upper_triangular=True)).upper_triangular
    assert not METS(SemiBanditProblem(6, 2, 10, upper_triangular=False)).upper_triangular
    assert not METS(SimpleNamespace(n_arms=6, super_arm_size=2)).upper_triangular


def test_mets_concentrates_on_the_optimal_super_arm() -> None:
    env = linear_env(400)
    policy = METS(env.problem, mean_range=(0.1, 0.9))
    run = play(
        env, policy, 400, replicate_seeds(5, 0, range(4), 0), replicate_seeds(5, 0, range(4), 1)
    )
    late = run["actions"][-100:]
    assert (late == env.optimal_action).all(axis=2).mean() > 0.95
    mean, _ = policy.weight_posterior()
    assert np.abs(mean - ADJACENCY).max() < 0.05


def test_mets_and_sgb_beat_random_play() -> None:
    env = linear_env(2000)
    df = compare(
        env,
        {
            "random": RandomSuperArm,
            "sgb": SGB,
            "mets": lambda problem: METS(problem, mean_range=(0.1, 0.9)),
        },
        replicates=3,
        seed=0,
        checkpoints=4,
    )
    final = df[df.t == 2000].groupby("algorithm").cum_regret.mean()
    assert final["mets"] < 0.05 * final["random"]
    assert final["sgb"] < 0.7 * final["random"]


# ---------------------------------------------------------------------------- IGP-UCB


def direct_posterior(points, payoffs, super_arms, lam, length_scale):
    """``mu``, ``sigma^2`` of every super arm and ``gamma`` by direct solves."""
    kernel = se_kernel(points, points, length_scale)
    cross = se_kernel(super_arms, points, length_scale)
    system = kernel + lam * np.eye(len(points))
    mean = cross @ np.linalg.solve(system, payoffs)
    variance = 1.0 - np.einsum("mt,tm->m", cross, np.linalg.solve(system, cross.T))
    gamma = 0.5 * np.linalg.slogdet(np.eye(len(points)) + kernel / lam)[1]
    return mean, variance, gamma


def test_igp_ucb_incremental_cholesky_equals_direct_solves() -> None:
    problem = SemiBanditProblem(n_arms=6, super_arm_size=3, horizon=30)
    lam = np.array([0.3, 1.5])
    policy = IGPUCB(problem, B=np.array([2.0, 0.5]), lam=lam, length_scale=0.8)
    policy.reset(replicate_seeds(0, 0, range(2), 1))
    rng = np.random.default_rng(0)
    played, payoffs = [], []
    for _ in range(30):
        x = policy.select()
        y = rng.normal(size=(2, 6))
        policy.update(x, SimpleNamespace(z=y, y=y))
        played.append(x)
        payoffs.append(y.sum(axis=1))
    played, payoffs = np.array(played), np.array(payoffs)
    assert len({tuple(row) for row in played[:, 0]}) > 5  # the rounds explore
    for r in range(2):
        mean, variance, gamma = direct_posterior(
            played[:, r], payoffs[:, r], policy.super_arms, lam[r], 0.8
        )
        np.testing.assert_allclose(policy.mean[r], mean, atol=1e-9)
        np.testing.assert_allclose(policy.variance[r], variance, atol=1e-9)
        assert policy.gamma[r] == pytest.approx(gamma, rel=1e-10)
        beta = [2.0, 0.5][r] + sqrt(lam[r]) * sqrt(2 * (gamma + 1 + log(10)))
        assert policy.beta[r] == pytest.approx(beta, rel=1e-10)


def test_igp_ucb_beats_random_play() -> None:
    env = linear_env(600)
    df = compare(
        env,
        {"random": RandomSuperArm, "igp": lambda problem: IGPUCB(problem, lam=0.1)},
        replicates=3,
        seed=0,
        checkpoints=3,
    )
    final = df[df.t == 600].groupby("algorithm").cum_regret.mean()
    assert final["igp"] < 0.3 * final["random"]


class Truth:
    """A SemiBanditEnv that exposes what IGPUCB.from_environment reads, for R replicates."""

    def __init__(self, env: SemiBanditEnv, replicates: int) -> None:
        self.problem = env.problem
        self.super_arms = all_super_arms(env.n_arms, env.super_arm_size)
        mu = env.expected_payoff(self.super_arms)
        self.expected_payoffs = np.stack([mu * (1 + r) for r in range(replicates)])
        # max_b over [0, 1]^N of the linear payoff is at b = 1 (non-negative total effects)
        spread = self.super_arms @ (env.total_effects * (1 - env.means[0]))
        self.payoff_spread = np.array([spread.max() * (1 + r) for r in range(replicates)])


def test_igp_ucb_paper_settings_from_the_environment() -> None:
    truth = Truth(linear_env(50), 2)
    kernel = se_kernel(truth.super_arms, truth.super_arms, 1.0)
    mu = truth.expected_payoffs
    printed = IGPUCB.from_environment(truth)
    np.testing.assert_allclose(printed.B, [m @ kernel @ m for m in mu])
    np.testing.assert_allclose(printed.lam, truth.payoff_spread)
    np.testing.assert_allclose(printed.R, np.sqrt(truth.payoff_spread))
    textbook = IGPUCB.from_environment(truth, b_form="textbook", delta=0.2)
    np.testing.assert_allclose(textbook.B, [sqrt(m @ np.linalg.solve(kernel, m)) for m in mu])
    assert textbook.delta == 0.2
    assert np.isclose(IGPUCB.from_environment(truth, lam=0.5).R, sqrt(0.5))
    assert POLICIES["igp-ucb"] is IGPUCB and POLICIES["sgb"] is SGB and POLICIES["mets"] is METS
    policy = IGPUCB.from_environment(truth)
    with pytest.raises(ValueError, match="replicates"):
        policy.reset(replicate_seeds(0, 0, range(3), 1))
    policy.reset(replicate_seeds(0, 0, range(2), 1))
    assert policy.select().shape == (2, 6)


# ---------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "make",
    [
        lambda p: SGB(p, eps=0.0),
        lambda p: SGB(p, eps=1.0),
        lambda p: SGB(p, m=0),
        lambda p: METS(p, mean_range=(0.7, 0.3)),
        lambda p: METS(p, sd_range=(0.4, 0.1)),
        lambda p: METS(p, weight_sd=0.0),
        lambda p: METS(p, noise_sd=-1.0),
        lambda p: IGPUCB(p, length_scale=0.0),
        lambda p: IGPUCB(p, lam=0.0),
        lambda p: IGPUCB(p, lam=np.array([1.0, -1.0])),
        lambda p: IGPUCB(p, delta=1.0),
        lambda p: IGPUCB(p, delta=0.0),
        lambda p: IGPUCB(p, B=-1.0),
        lambda p: IGPUCB(p, R=np.nan),
        lambda p: IGPUCB.from_environment(Truth(linear_env(50), 1), b_form="other"),
    ],
)
def test_bad_input_raises(make) -> None:
    with pytest.raises(ValueError):
        make(SemiBanditProblem(n_arms=6, super_arm_size=2, horizon=50))


def test_from_environment_rejects_a_different_super_arm_order() -> None:
    truth = Truth(linear_env(50), 1)
    truth.super_arms = truth.super_arms[::-1]
    with pytest.raises(ValueError, match="order"):
        IGPUCB.from_environment(truth)
