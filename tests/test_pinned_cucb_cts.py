"""CUCB and CTS plumbing on hand-built inputs: the arrivals of undelayed and delayed feedback
(padding, dtypes, the exogenous ``b`` passed through), the per-replicate running scale, the
super-arm size bounds, CUCB's first rounds (log 1 = 0 bonus, ties broken with the round's
second uniforms) and CTS's use of its two uniforms."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from scipy import stats

from causalbandits.envs.delay import DelayedFeedback
from causalbandits.envs.semibandit import SemiBanditProblem
from causalbandits.policies import CTS, CUCB
from causalbandits.policies.semibandit import RunningScale, collect_arrivals


@dataclass(frozen=True)
class Feedback:
    z: np.ndarray
    y: np.ndarray
    b: np.ndarray | None = None


def test_undelayed_arrivals_are_one_slot_per_replicate_with_b_passed_through():
    actions = np.array([[1, 0, 1], [0, 1, 1]])  # 0/1 integers: stored as booleans
    z, y, b = np.arange(6).reshape(2, 3), np.arange(6).reshape(2, 3) + 10, np.ones((2, 3))
    arrived = collect_arrivals(actions, Feedback(z, y, b * [[1, 2, 3]]), 7, 2)
    np.testing.assert_array_equal(arrived.rounds, [[7], [7]])
    assert arrived.actions.dtype == bool and arrived.actions.shape == (2, 1, 3)
    np.testing.assert_array_equal(arrived.actions[:, 0], actions.astype(bool))
    assert arrived.z.dtype == np.float64 and arrived.y.dtype == np.float64
    np.testing.assert_array_equal(arrived.z[:, 0], z)
    np.testing.assert_array_equal(arrived.y[:, 0], y)
    assert arrived.b.shape == (2, 1, 3)
    np.testing.assert_array_equal(arrived.b[:, 0], [[1, 2, 3], [1, 2, 3]])
    assert collect_arrivals(actions, Feedback(z, y), 7, 2).b is None


def test_delayed_arrivals_are_padded_per_replicate():
    """Items (round, replicate): (2, 0), (3, 0), (3, 2); replicate 1 receives nothing."""
    actions = np.array([[1, 0], [0, 1], [1, 1]], dtype=bool)
    inner = Feedback(
        z=np.array([[1.0, 0.0], [0.0, 2.0], [3.0, 4.0]]),
        y=np.array([[5.0, 0.0], [0.0, 6.0], [7.0, 8.0]]),
        b=np.array([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]]),
    )
    delayed = DelayedFeedback(np.array([2, 3, 3]), np.array([0, 0, 2]), actions, inner)
    arrived = collect_arrivals(None, delayed, 5, 3)
    np.testing.assert_array_equal(arrived.rounds, [[2, 3], [0, 0], [3, 0]])
    np.testing.assert_array_equal(arrived.received, [[True, True], [False, False], [True, False]])
    np.testing.assert_array_equal(arrived.actions[0], actions[:2])
    np.testing.assert_array_equal(arrived.actions[2, 0], actions[2])
    np.testing.assert_array_equal(arrived.y[0], inner.y[:2])
    np.testing.assert_array_equal(arrived.z[2], [[3.0, 4.0], [0.0, 0.0]])
    np.testing.assert_array_equal(arrived.b[2], [[0.5, 0.6], [0.0, 0.0]])
    np.testing.assert_array_equal(arrived.b[1], 0.0)
    first_two = Feedback(inner.z[:2], inner.y[:2], inner.b[:2])
    one_each = DelayedFeedback(np.array([1, 1]), np.array([0, 1]), actions[:2], first_two)
    assert collect_arrivals(None, one_each, 5, 2).rounds.shape == (2, 1)
    assert collect_arrivals(None, one_each, 5, 2).b.shape == (2, 1, 2)
    no_items = Feedback(np.zeros((0, 2)), np.zeros((0, 2)))
    nothing = DelayedFeedback(np.zeros(0, int), np.zeros(0, int), actions[:0], no_items)
    empty = collect_arrivals(None, nothing, 5, 2)
    assert empty.rounds.shape == (2, 1) and not empty.received.any() and empty.b is None


def test_running_scale_is_per_replicate_and_maps_into_0_1():
    """Replicate 0 sees played values up to 0.5, replicate 1 up to 8, replicate 2 only <= 0
    (its scale stays 0: values are divided by 1, then clipped)."""
    scale = RunningScale(3)
    values = np.array(
        [[[0.5, 0.25, 3.0]], [[8.0, 2.0, 100.0]], [[-1.0, 0.0, 50.0]]]
    )  # (R, K = 1, N)
    played = np.array([[[True, True, False]], [[True, True, False]], [[True, True, False]]])
    out = scale.normalise(values, played)
    np.testing.assert_array_equal(scale.scale, [0.5, 8.0, 0.0])
    np.testing.assert_allclose(out[0, 0], [1.0, 0.5, 1.0])  # unplayed 3.0 clipped to 1
    np.testing.assert_allclose(out[1, 0], [1.0, 0.25, 1.0])
    np.testing.assert_allclose(out[2, 0], [0.0, 0.0, 1.0])  # -1 clipped to 0, no NaN
    assert np.all(np.isfinite(out))


@pytest.mark.parametrize("policy_class", [CUCB, CTS])
def test_super_arm_size_bounds(policy_class):
    for size in (1, 4):
        assert policy_class(SemiBanditProblem(4, size, 10)).super_arm_size == size
    with pytest.raises(ValueError, match=r"^super-arm size s must lie in 1..4, got 0$"):
        policy_class(SimpleProblem(4, 0))
    with pytest.raises(ValueError, match=r"^super-arm size s must lie in 1..4, got 5$"):
        policy_class(SimpleProblem(4, 5))


@dataclass(frozen=True)
class SimpleProblem:
    n_arms: int
    super_arm_size: int


def round_uniforms(seed: np.random.SeedSequence, n: int) -> np.ndarray:
    """The policy's uniforms of rounds 1, 2, ...: two rows of ``n`` per round (the score row,
    then the tie-breaking row), drawn in blocks of 256 rounds."""
    return np.random.default_rng(seed).random((256, 2, n))


def test_cucb_first_rounds_break_ties_with_the_rounds_second_uniforms():
    """Unobserved arms have index +inf: round 1 takes the top 2 of the round's tie-breaking
    uniforms, round 2 the top 2 of them among the 4 arms still unobserved."""
    seeds = np.random.SeedSequence(11).spawn(3)
    policy = CUCB(SemiBanditProblem(6, 2, 10))
    policy.reset(seeds)
    first = policy.select()
    policy.update(first, Feedback(z=first * 1.0, y=first * 1.0))
    second = policy.select()
    for r, seed in enumerate(seeds):
        u = round_uniforms(seed, 6)
        np.testing.assert_array_equal(np.flatnonzero(first[r]), np.sort(np.argsort(u[0, 1])[-2:]))
        unseen = np.flatnonzero(~first[r])
        expected = np.sort(unseen[np.argsort(u[1, 1, unseen])[-2:]])
        np.testing.assert_array_equal(np.flatnonzero(second[r]), expected)


def test_cucb_bonus_is_zero_in_round_1():
    """``sqrt(3 ln t / (2 T_i))`` with ``t = 1``: the index of an observed arm is its mean."""
    policy = CUCB(SemiBanditProblem(3, 1, 10))
    policy.reset(np.random.SeedSequence(0).spawn(1))
    policy.t = 1
    policy.counts[:] = [[2.0, 1.0, 0.0]]
    policy.sums[:] = [[1.0, 0.25, 0.0]]
    np.testing.assert_allclose(policy.scores(np.zeros((1, 3))), [[0.5, 0.25, np.inf]])


class Scripted:
    """A stand-in for the policy's uniform stream."""

    def __init__(self, draws: np.ndarray) -> None:
        self.draws = draws

    def next(self) -> np.ndarray:
        return self.draws


def test_cts_scores_with_the_first_uniforms_and_breaks_ties_with_the_second():
    """Fresh Beta(1, 1) posteriors: theta_i = u_i. Round 1: scores [0.5, 0.5, 0.2, 0.2] give
    arms 0 and 1 whatever the second row; round 2: scores [0.5, 0.5, 0.5, 0.2] tie three
    arms, and the second row [0.1, 0.9, 0.95, 0.99] picks 1 and 2."""
    policy = CTS(SemiBanditProblem(4, 2, 10))
    policy.reset(np.random.SeedSequence(0).spawn(1))
    tie_break = [0.1, 0.9, 0.95, 0.99]
    policy.uniforms = Scripted(np.array([[[0.5, 0.5, 0.2, 0.2], tie_break]]))
    np.testing.assert_array_equal(policy.select(), [[True, True, False, False]])
    policy.uniforms = Scripted(np.array([[[0.5, 0.5, 0.5, 0.2], tie_break]]))
    np.testing.assert_array_equal(policy.select(), [[False, True, True, False]])
    # Beta(1 + 2, 1 + 0) after two successes of arm 0: its score is the Beta quantile of u_0
    policy.counts[:] = [[2.0, 0.0, 0.0, 0.0]]
    policy.sums[:] = [[2.0, 0.0, 0.0, 0.0]]
    expected = stats.beta.ppf([0.3, 0.3, 0.3, 0.3], [3, 1, 1, 1], [1, 1, 1, 1])
    np.testing.assert_allclose(policy.scores(np.full((1, 4), 0.3))[0], expected, rtol=1e-12)
