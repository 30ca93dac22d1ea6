"""NDC-SEM, SEM-UCB and the semi-bandit baselines: design, plumbing and learning."""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits.envs import FeedbackDelay, SemiBanditEnv, SyntheticDesign, ndc_synthetic_env
from causalbandits.experiments.simulate import simulate
from causalbandits.policies import CTS, CUCB, NDCSEM, SEMUCB, FTRLHybrid, RandomSuperArm
from causalbandits.policies.ndc_sem import (
    SEM_UCB_INDEX,
    DiscountedIndex,
    LassoGraph,
    SEMSemiBandit,
    initialisation_matrix,
)
from causalbandits.policies.semibandit import collect_arrivals
from causalbandits.random import replicate_seeds


def _run(env, policy_class, replicates=4, **params):
    env.reset(replicate_seeds(0, 0, range(replicates), 0))
    policy = policy_class(env.problem, **params)
    policy.reset(replicate_seeds(0, 0, range(replicates), 1))
    return policy, simulate(env, policy, 5)


@pytest.mark.parametrize("n, s", [(10, 4), (6, 6), (5, 1)])
def test_initialisation_matrix_is_unit_triangular_with_feasible_columns(n: int, s: int) -> None:
    h = initialisation_matrix(n, s, np.random.default_rng(1))
    assert np.array_equal(np.triu(h), h) and h.diagonal().all()
    assert np.linalg.det(h.astype(float)) == pytest.approx(1.0)
    assert (h.sum(axis=0) <= s).all() and (h[:, s:].sum(axis=0) == s).all()


def test_delayed_arrivals_are_padded_per_replicate() -> None:
    env = FeedbackDelay(
        ndc_synthetic_env(
            np.random.default_rng(0), SyntheticDesign(horizon=20, change_points=(5,))
        ),
        2,
        4,
    )
    env.reset(replicate_seeds(0, 0, range(3), 0))
    seen = 0
    for t in range(1, 21):
        x = np.zeros((3, 10), dtype=bool)
        x[:, t % 10] = True
        arrived = collect_arrivals(x, env.step(x), t, 3)
        assert arrived.rounds.shape[0] == 3
        assert (arrived.rounds[arrived.received] <= t - 2).all()
        for r, k in zip(*np.nonzero(arrived.received), strict=True):
            assert arrived.actions[r, k, arrived.rounds[r, k] % 10]
        seen += int(arrived.received.sum())
    assert seen == 3 * 20 - env.pending


def test_ndc_sem_learns_the_graph_and_beats_random_play() -> None:
    env = ndc_synthetic_env(
        np.random.default_rng(0), SyntheticDesign(horizon=1500, change_points=(800,))
    )
    policy, result = _run(env, NDCSEM)
    assert ((policy.adjacency - env.adjacency) ** 2).mean() < 1e-3
    _, random_result = _run(env, RandomSuperArm)
    assert result["cum_regret"][-1].mean() < 0.3 * random_result["cum_regret"][-1].mean()


@pytest.mark.parametrize("policy_class", [NDCSEM, SEMUCB, CUCB, CTS, FTRLHybrid, RandomSuperArm])
def test_every_policy_plays_feasible_super_arms_under_delay(policy_class) -> None:
    env = FeedbackDelay(
        ndc_synthetic_env(
            np.random.default_rng(3), SyntheticDesign(horizon=300, change_points=(5,))
        ),
        20,
    )
    env.reset(replicate_seeds(0, 0, range(2), 0))
    policy = policy_class(env.problem)
    policy.reset(replicate_seeds(0, 0, range(2), 1))
    for _ in range(300):
        x = policy.select()
        assert x.shape == (2, 10) and (x.sum(axis=1) <= 4).all() and x.any(axis=1).all()
        policy.update(x, env.step(x))


def _first_rounds(policy, env, rounds: int) -> np.ndarray:
    """The super arms ``(rounds, R, N)`` of ``policy`` on ``env`` (both reset with fixed seeds)."""
    env.reset(replicate_seeds(0, 0, range(2), 0))
    policy.reset(replicate_seeds(0, 0, range(2), 1))
    plays = []
    for _ in range(rounds):
        x = policy.select()
        plays.append(x)
        policy.update(x, env.step(x))
    return np.stack(plays)


def test_start_rule_plays_h_once_then_random_ties_or_cycles_h_until_n_plus_d() -> None:
    """Algorithm 1 plays H for t <= N; at N < t <= N + D (no feedback yet, decisions: ndc-sem 7)
    the default breaks the ties of the +inf indices at random like SEM-UCB, while
    ``start_rule="cycle"`` plays H's columns again."""
    n, delay = 10, 25
    env = FeedbackDelay(
        ndc_synthetic_env(
            np.random.default_rng(3), SyntheticDesign(horizon=100, change_points=(5,))
        ),
        delay,
    )
    default, cycle = NDCSEM(env.problem), NDCSEM(env.problem, start_rule="cycle")
    assert (default.start_rule, default.initial_rounds) == ("random", n)
    assert cycle.initial_rounds == n + delay and SEMUCB(env.problem).initial_rounds == n
    random_plays = _first_rounds(default, env, n + delay)
    cycled = _first_rounds(cycle, env, n + delay)
    sem_ucb = _first_rounds(SEMUCB(env.problem), env, n + delay)
    h = default.h  # the same policy seeds give the same H
    np.testing.assert_array_equal(cycle.h, h)
    columns = np.stack([h[:, :, (t - 1) % n] for t in range(1, n + delay + 1)])
    np.testing.assert_array_equal(cycled, columns)  # H's columns until N + D
    np.testing.assert_array_equal(random_plays[:n], columns[:n])  # H once
    late = slice(n, n + delay)
    matches = (random_plays[late] == columns[late]).all(axis=2)
    assert matches.mean() < 0.2  # after N, not H's columns
    # until the first feedback arrives (t <= D + 1) every index is +inf: SEM-UCB's random ties
    np.testing.assert_array_equal(random_plays[: delay + 1], sem_ucb[: delay + 1])
    assert NDCSEM(FeedbackDelay(env.env, 200).problem).xi == 0.1  # xi is explicit, not by D


def test_bad_settings_are_rejected() -> None:
    problem = ndc_synthetic_env(
        np.random.default_rng(0), SyntheticDesign(horizon=10, change_points=(5,))
    ).problem
    with pytest.raises(ValueError, match="graph_input"):
        NDCSEM(problem, graph_input="x")
    with pytest.raises(ValueError, match="start_rule"):
        NDCSEM(problem, start_rule="wait")
    with pytest.raises(ValueError, match="lam"):
        NDCSEM(problem, lam=-1)
    with pytest.raises(ValueError, match="lasso_sweeps"):
        NDCSEM(problem, lasso_sweeps=0)
    with pytest.raises(ValueError, match="super-arm size"):
        CUCB(SemiBanditEnv(np.zeros((3, 3)), np.full((1, 3), 0.5), 2, 5).problem.__class__(3, 4, 5))


@pytest.mark.parametrize("delay", [0, 30])
def test_counting_plays_in_flight_changes_nothing_without_delay(delay: int) -> None:
    """count_pending (not in the paper) only differs while feedback is in flight: with D = 0
    every play has arrived by the next decision, so the regret path is NDC-SEM's."""
    env = FeedbackDelay(
        ndc_synthetic_env(
            np.random.default_rng(3), SyntheticDesign(horizon=600, change_points=(300,))
        ),
        delay,
    )
    _, plain = _run(env, NDCSEM, xi=1e-3)
    policy, pending = _run(env, NDCSEM, xi=1e-3, count_pending=True)
    assert policy.arms.count_pending
    same = np.array_equal(plain["cum_regret"], pending["cum_regret"])
    assert same == (delay == 0)


def test_the_presets_are_compositions_of_one_policy() -> None:
    """NDCSEM and SEMUCB are SEMSemiBandit with their index and graph learner."""
    env = FeedbackDelay(
        ndc_synthetic_env(
            np.random.default_rng(3), SyntheticDesign(horizon=200, change_points=(100,))
        ),
        15,
    )
    graph = LassoGraph(lam=1e-2, sweeps=5)
    pairs = [
        (
            NDCSEM(env.problem, xi=1e-3),
            SEMSemiBandit(env.problem, DiscountedIndex(0.985, 1e-3), graph),
        ),
        (SEMUCB(env.problem), SEMSemiBandit(env.problem, SEM_UCB_INDEX, graph, "z", "random")),
    ]
    for preset, composed in pairs:
        runs = []
        for policy in (preset, composed):
            env.reset(replicate_seeds(0, 0, range(2), 0))
            policy.reset(replicate_seeds(0, 0, range(2), 1))
            runs.append(simulate(env, policy, 10)["cum_regret"])
        np.testing.assert_array_equal(*runs)
    with pytest.raises(ValueError, match="gamma"):
        DiscountedIndex(1.5, 0.1)
