from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from causalbandits.envs.delay import DelayedFeedback, FeedbackDelay
from causalbandits.envs.random_systems import random_csl_bandit
from causalbandits.envs.semibandit import SemiBanditFeedback, SyntheticDesign, ndc_synthetic_env
from causalbandits.random import SubStream, as_seed_sequences, derive


@dataclass(frozen=True)
class Stamp:
    """Feedback naming its own round and replicate."""

    round: np.ndarray
    replicate: np.ndarray


class StampEnv:
    """A minimal environment whose feedback identifies each (round, replicate) item."""

    def __init__(self, horizon: int, as_array: bool) -> None:
        self.horizon = horizon
        self.problem = "stamp"
        self.as_array = as_array
        self.label = "passed through"

    def reset(self, seed=None, replicates=None):
        self.replicates = len(as_seed_sequences(seed, replicates))
        self.t = 0

    def step(self, actions):
        self.t += 1
        rounds = np.full(self.replicates, self.t)
        reps = np.arange(self.replicates)
        if self.as_array:
            return np.stack([rounds, reps], axis=1)
        return Stamp(rounds, reps)

    def pseudo_regret(self, actions):
        return np.zeros(len(actions))

    def is_optimal(self, actions):
        return np.ones(len(actions), dtype=bool)


def _semi(seed: int, horizon: int):
    """The synthetic NDC environment shortened to ``horizon`` rounds (changes at T/3, 2T/3)."""
    return ndc_synthetic_env(
        seed, SyntheticDesign(horizon=horizon, change_points=(horizon // 3, 2 * horizon // 3))
    )


def _expected_delays(seed: int, replicates: int, horizon: int, low: int, high: int) -> np.ndarray:
    """The delays (R, T) regenerated from the documented stream, independently of the wrapper."""
    seeds = derive(as_seed_sequences(seed, replicates), SubStream.DELAY)
    return np.array(
        [np.random.default_rng(s).integers(low, high + 1, size=256)[:horizon] for s in seeds]
    )


@settings(max_examples=60, deadline=None)
@given(
    horizon=st.integers(1, 40),
    replicates=st.integers(1, 4),
    low=st.integers(0, 6),
    spread=st.one_of(st.none(), st.integers(0, 8)),
    seed=st.integers(0, 2**32 - 1),
    as_array=st.booleans(),
)
def test_every_feedback_arrives_exactly_once_exactly_when_due(
    horizon, replicates, low, spread, seed, as_array
):
    high = low if spread is None else low + spread
    env = FeedbackDelay(
        StampEnv(horizon, as_array), delay=low, max_delay=None if spread is None else high
    )
    env.reset(seed, replicates)
    delays = _expected_delays(seed, replicates, horizon, low, high)
    delivered = np.zeros((replicates, horizon), dtype=int)
    for t in range(1, horizon + 1):
        actions = np.arange(replicates) + 100 * t
        out = env.step(actions)
        assert isinstance(out, DelayedFeedback)
        stamps = (
            out.feedback if as_array else np.stack([out.feedback.round, out.feedback.replicate], 1)
        )
        np.testing.assert_array_equal(stamps, np.stack([out.rounds, out.replicates], axis=1))
        np.testing.assert_array_equal(out.actions, out.replicates + 100 * out.rounds)
        keys = list(zip(out.rounds.tolist(), out.replicates.tolist(), strict=True))
        assert keys == sorted(keys)
        # due now: round tau with delay d arrives at the end of round tau + d
        np.testing.assert_array_equal(out.rounds + delays[out.replicates, out.rounds - 1], t)
        np.add.at(delivered, (out.replicates, out.rounds - 1), 1)
    due = np.arange(1, horizon + 1) + delays <= horizon
    np.testing.assert_array_equal(delivered, due.astype(int))
    assert env.pending == np.count_nonzero(~due)


def test_random_delays_are_common_random_numbers():
    def arrivals(actions_of):
        wrapped = FeedbackDelay(_semi(0, 30), delay=1, max_delay=5)
        wrapped.reset(9, replicates=3)
        seen = []
        for t in range(30):
            out = wrapped.step(actions_of(t))
            seen += list(zip(out.rounds, out.replicates, [t + 1] * len(out), strict=True))
        return sorted(seen)

    first = np.zeros((3, 10), dtype=bool)
    second = np.zeros((3, 10), dtype=bool)
    first[:, :4] = True
    second[:, 6:] = True
    assert arrivals(lambda t: first) == arrivals(lambda t: second if t % 2 else first)


def test_zero_delay_matches_the_unwrapped_semi_bandit():
    plain, wrapped = (
        _semi(1, 20),
        FeedbackDelay(_semi(1, 20)),
    )
    plain.reset(4, replicates=3)
    wrapped.reset(4, replicates=3)
    rng = np.random.default_rng(0)
    for t in range(1, 21):
        x = np.zeros((3, 10), dtype=bool)
        x[np.arange(3)[:, None], rng.permuted(np.tile(np.arange(10), (3, 1)), axis=1)[:, :4]] = 1
        np.testing.assert_array_equal(wrapped.pseudo_regret(x), plain.pseudo_regret(x))
        np.testing.assert_array_equal(wrapped.is_optimal(x), plain.is_optimal(x))
        expected, out = plain.step(x), wrapped.step(x)
        assert isinstance(out.feedback, SemiBanditFeedback)
        np.testing.assert_array_equal(out.rounds, [t] * 3)
        np.testing.assert_array_equal(out.replicates, [0, 1, 2])
        np.testing.assert_array_equal(out.actions, x)
        np.testing.assert_array_equal(out.feedback.z, expected.z)
        np.testing.assert_array_equal(out.feedback.y, expected.y)


def test_zero_delay_matches_the_unwrapped_linear_sem_bandit():
    plain, inner = random_csl_bandit(5, 15, 3), random_csl_bandit(5, 15, 3)
    wrapped = FeedbackDelay(inner)
    plain.reset(2, replicates=4)
    wrapped.reset(2, replicates=4)
    for t in range(1, 16):
        actions = np.arange(4) % plain.n_actions
        out = wrapped.step(actions)
        np.testing.assert_array_equal(out.feedback, plain.step(actions))
        np.testing.assert_array_equal(out.rounds, [t] * 4)
        np.testing.assert_array_equal(out.actions, actions)
    assert wrapped.n_actions == plain.n_actions  # passed through
    assert wrapped.problem is inner.problem and wrapped.horizon == 15


def test_constant_delay_delivers_the_feedback_of_round_t_minus_d():
    plain, wrapped = (
        _semi(2, 12),
        FeedbackDelay(_semi(2, 12), 3),
    )
    plain.reset(8, replicates=2)
    wrapped.reset(8, replicates=2)
    x = np.zeros((2, 10), dtype=bool)
    x[:, [1, 3, 5, 7]] = True
    history = []
    for t in range(1, 13):
        history.append(plain.step(x))
        out = wrapped.step(x)
        if t <= 3:
            assert (
                len(out) == 0 and out.feedback.z.shape == (0, 10) and out.actions.shape == (0, 10)
            )
            continue
        np.testing.assert_array_equal(out.rounds, [t - 3] * 2)
        np.testing.assert_array_equal(out.feedback.y, history[t - 4].y)
    assert wrapped.pending == 6  # rounds 10..12 of both replicates are never delivered
    assert wrapped.t == 12 and wrapped.optimal_value == plain.optimal_value


def test_invalid_delays_and_feedback_are_rejected():
    env = StampEnv(5, as_array=True)
    for kwargs in ({"delay": -1}, {"delay": 1.5}, {"delay": 3, "max_delay": 2}):
        with pytest.raises(ValueError, match="delay"):
            FeedbackDelay(env, **kwargs)
    wrapped = FeedbackDelay(env, 1)
    with pytest.raises(RuntimeError, match="reset"):
        wrapped.step(np.zeros(1))
    assert wrapped.label == "passed through"

    class Odd(StampEnv):
        def step(self, actions):
            return [1, 2]

    wrapped = FeedbackDelay(Odd(5, as_array=True), 1)
    wrapped.reset(0, 2)
    with pytest.raises(TypeError, match="list"):
        wrapped.step(np.zeros(2))

    class Scalar(StampEnv):
        def step(self, actions):
            return Stamp(np.zeros(2), 3)

    wrapped = FeedbackDelay(Scalar(5, as_array=True), 1)
    wrapped.reset(0, 2)
    with pytest.raises(TypeError, match="replicate"):
        wrapped.step(np.zeros(2))
