"""The round loop: cumulative regret and optimal share against direct recomputation."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from causalbandits.envs.robust_lcb import make_environment
from causalbandits.experiments import checkpoint_rounds, compare, simulate
from causalbandits.experiments.recorders import (
    ActionLog,
    CurrentAction,
    Elapsed,
    LockIns,
    SuperArmOverlap,
    Trace,
)
from causalbandits.policies import UCB1, RandomPolicy
from causalbandits.random import replicate_seeds


class ScriptedPolicy:
    """Plays ``actions[t]`` (one action per replicate) in round ``t``; records the feedback."""

    def __init__(self, actions: np.ndarray) -> None:
        self.actions = actions
        self.feedback: list[np.ndarray] = []
        self.t = 0

    def reset(self, seeds: Sequence[np.random.SeedSequence]) -> None:
        self.t = 0

    def select(self) -> np.ndarray:
        return self.actions[self.t]

    def update(self, actions: np.ndarray, feedback: np.ndarray) -> None:
        np.testing.assert_array_equal(actions, self.actions[self.t])
        self.feedback.append(feedback)
        self.t += 1


class ClockEnv:
    """Regret ``(t + 1) * action`` in round ``t`` (0-based); action 0 is optimal."""

    horizon = 7

    def reset(self) -> None:
        self.t = 0

    def pseudo_regret(self, actions: np.ndarray) -> np.ndarray:
        return (self.t + 1.0) * actions

    def is_optimal(self, actions: np.ndarray) -> np.ndarray:
        return actions == 0

    def step(self, actions: np.ndarray) -> np.ndarray:
        self.t += 1
        return np.full(len(actions), self.t)


@given(st.integers(1, 5000), st.integers(1, 400))
def test_checkpoint_rounds_are_even_and_end_at_the_horizon(horizon: int, count: int) -> None:
    rounds = checkpoint_rounds(horizon, count)
    assert rounds[-1] == horizon
    assert rounds[0] >= 1
    assert len(rounds) == min(count, horizon)
    gaps = np.diff(rounds)
    assert (gaps > 0).all()
    if len(gaps):
        assert gaps.max() - gaps.min() <= 1


def test_regret_is_read_before_the_step() -> None:
    env = ClockEnv()
    env.reset()
    actions = np.array([[1, 0], [0, 2], [1, 1], [0, 0], [3, 0], [1, 0], [0, 1]])
    policy = ScriptedPolicy(actions)
    result = simulate(env, policy, np.arange(1, 8))
    rounds = np.arange(1, 8)[:, None]
    np.testing.assert_array_equal(result["t"], rounds.ravel())
    np.testing.assert_allclose(result["cum_regret"], np.cumsum(rounds * actions, axis=0))
    np.testing.assert_allclose(result["optimal_share"], np.cumsum(actions == 0, axis=0) / rounds)
    assert [int(f[0]) for f in policy.feedback] == list(range(1, 8))


def test_cumulative_regret_matches_direct_recomputation() -> None:
    env = make_environment(horizon=300, deviation_budget=5)
    env.reset(replicate_seeds(1, 0, range(3), 0))
    actions = np.random.default_rng(5).integers(0, env.n_actions, size=(300, 3))
    result = simulate(env, ScriptedPolicy(actions), 7)
    regret = env.optimal_value - env.expected_rewards[actions]
    optimal = np.isclose(env.expected_rewards[actions], env.optimal_value)
    rows = result["t"] - 1
    np.testing.assert_array_equal(result["t"], checkpoint_rounds(300, 7))
    np.testing.assert_allclose(result["cum_regret"], np.cumsum(regret, axis=0)[rows])
    np.testing.assert_allclose(
        result["optimal_share"], (np.cumsum(optimal, axis=0) / np.arange(1, 301)[:, None])[rows]
    )


def test_simulation_stops_after_the_last_checkpoint() -> None:
    env = ClockEnv()
    env.reset()
    result = simulate(env, ScriptedPolicy(np.ones((7, 1), dtype=int)), np.array([2, 4]))
    assert env.t == 4
    np.testing.assert_allclose(result["cum_regret"].ravel(), [3.0, 10.0])


@pytest.mark.parametrize("rounds", [[0, 3], [3, 8], [4, 4], []])
def test_bad_checkpoint_rounds_raise(rounds: list[int]) -> None:
    with pytest.raises(ValueError, match="checkpoint rounds"):
        simulate(
            ClockEnv(), ScriptedPolicy(np.zeros((7, 1), dtype=int)), np.array(rounds, dtype=int)
        )


class ArmEnv:
    """Three base arms, super arms of one or more; the optimal super arm is ``{0}`` until
    round 4 and ``{2}`` after; regret is the number of wrong arms played."""

    horizon = 8
    adjacency = np.zeros((2, 3, 3))

    def reset(self) -> None:
        self.t = 0

    @property
    def optimal_action(self) -> np.ndarray:
        best = np.zeros((2, 3), dtype=bool)
        best[:, 0 if self.t < 4 else 2] = True
        return best

    def pseudo_regret(self, actions: np.ndarray) -> np.ndarray:
        return (actions & ~self.optimal_action).sum(axis=1).astype(float)

    def is_optimal(self, actions: np.ndarray) -> np.ndarray:
        return (actions == self.optimal_action).all(axis=1)

    def step(self, actions: np.ndarray) -> np.ndarray:
        self.t += 1
        return actions.astype(float)


def brute_force_lock_ins(plays: np.ndarray, best: np.ndarray, min_length: int) -> tuple:
    """Lock-ins of one replicate by scanning each arm's runs of wrong plays."""
    count = rounds = 0
    locked = np.zeros(len(plays), dtype=bool)
    for arm in range(plays.shape[1]):
        wrong = plays[:, arm] & ~best[:, arm]
        t = 0
        while t < len(wrong):
            if wrong[t]:
                end = t
                while end < len(wrong) and wrong[end]:
                    end += 1
                if end - t >= min_length:
                    count, rounds = count + 1, rounds + end - t
                    locked[t:end] = True
                t = end
            else:
                t += 1
    return count, rounds, locked


def test_super_arm_recorders_against_brute_force() -> None:
    rng = np.random.default_rng(4)
    plays = rng.random((8, 2, 3)) < 0.6
    env = ArmEnv()
    env.reset()
    recorders = [SuperArmOverlap(), LockIns(2), ActionLog()]
    result = simulate(env, ScriptedPolicy(plays), np.array([8]), recorders)
    best = np.zeros((8, 3), dtype=bool)
    best[:4, 0] = best[4:, 2] = True
    regret = (plays & ~best[:, None, :]).sum(axis=2)
    for r in range(2):
        count, rounds, locked = brute_force_lock_ins(plays[:, r], best, 2)
        assert result["lock_ins"][0, r] == count and result["lock_in_rounds"][0, r] == rounds
        assert result["lock_in_regret"][0, r] == regret[locked, r].sum()
        assert result["matched"][0, r] == (plays[:, r] & best).sum()
    np.testing.assert_array_equal(result["optimal_arms"], [[8, 8]])
    np.testing.assert_array_equal(recorders[2].stacked(), plays)


def test_trace_calls_its_hook_on_schedule() -> None:
    env = ClockEnv()
    env.reset()
    before = Trace(lambda t, e, p, a: (t, e.t), every=3)
    after = Trace(lambda t, e, p, a: (t, e.t) if t > 3 else None, every=2, when="update")
    simulate(env, ScriptedPolicy(np.zeros((7, 1), dtype=int)), 7, [before, after])
    assert before.rows == [(1, 0), (4, 3), (7, 6)]  # before the step: env still at t - 1
    assert after.rows == [(4, 4), (6, 6)]
    with pytest.raises(ValueError, match="when"):
        Trace(lambda *a: None, when="later")


def test_current_action_and_elapsed_recorders() -> None:
    env = ClockEnv()
    env.reset()
    actions = np.array([[1, 0], [0, 2], [1, 1], [0, 0], [3, 0], [1, 0], [0, 1]])
    recorders = [CurrentAction(), Elapsed()]
    result = simulate(env, ScriptedPolicy(actions), np.array([2, 5, 7]), recorders)
    rounds = np.array([2, 5, 7])
    np.testing.assert_allclose(result["regret_now"], rounds[:, None] * actions[rounds - 1])
    np.testing.assert_array_equal(result["optimal_now"], actions[rounds - 1] == 0)
    elapsed = result["elapsed"]
    assert np.all(elapsed >= 0) and np.all(np.diff(elapsed, axis=0) >= 0)


def test_compare_records_wall_time_and_every_action() -> None:
    env = make_environment(horizon=300, deviation_budget=0)
    table = compare(env, {"UCB": UCB1, "random": RandomPolicy}, replicates=3, checkpoints=5)
    for label, group in table.groupby("algorithm"):
        elapsed = group.pivot(index="t", columns="replicate", values="elapsed")
        assert np.all(elapsed.to_numpy() > 0) and np.all(np.diff(elapsed.to_numpy(), axis=0) >= 0)
        actions = table.attrs["actions"][label]
        assert actions.shape == (300, 3)
        regret = (env.optimal_value - env.expected_rewards[actions]).sum(axis=0)
        final = group[group["t"] == 300].sort_values("replicate")["cum_regret"]
        np.testing.assert_allclose(final.to_numpy(), regret, rtol=1e-9)


def test_compare_shows_progress_on_request_and_not_off_a_terminal(capsys) -> None:
    env = make_environment(horizon=50, deviation_budget=0)
    quiet = compare(env, {"UCB": UCB1}, replicates=2, checkpoints=5)
    assert capsys.readouterr().err == ""  # pytest's stderr is no terminal
    shown = compare(env, {"UCB": UCB1}, replicates=2, checkpoints=5, progress=True)
    err = capsys.readouterr().err
    assert "UCB" in err and "0/50" in err  # the bar over the 50 rounds
    pd.testing.assert_frame_equal(quiet.drop(columns="elapsed"), shown.drop(columns="elapsed"))
