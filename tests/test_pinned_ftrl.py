"""FTRL-HYBRID's helpers and policy at their edges: gamma_h at m = N, the brackets of both
Newton solves against the envelopes they are built from, the warm start's units, Madow's
half-open intervals, the reward normalisation (fixed scale, running per-replicate scale,
clipping) on scripted rounds, and the values the options may take."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from scipy.optimize import brentq

from causalbandits.envs.delay import DelayedFeedback
from causalbandits.policies.ftrl import (
    FTRLHybrid,
    _solve_theta,
    hybrid_marginals,
    hybrid_weight,
    madow_sample,
)


def test_hybrid_weight_cases():
    assert hybrid_weight(4, 2) == 1.0  # m <= N / 2
    assert hybrid_weight(4, 3) == pytest.approx(np.sqrt(1 / np.log(4)), rel=1e-14)
    assert hybrid_weight(4, 4) == 0.0  # m = N: the only set, no regulariser needed


def g(theta: float, hybrid: float) -> float:
    """``g(x) = -1/(2 sqrt x) - gamma_h (1 + log(1 - x))`` at ``x = sigmoid(theta)``, with
    ``log x = -log(1 + e^-theta)`` and ``log(1 - x) = -log(1 + e^theta)``."""
    log_x, log_1mx = -np.logaddexp(0, -theta), -np.logaddexp(0, theta)
    return -0.5 * np.exp(-0.5 * log_x) - hybrid * (1 + log_1mx)


def upper_envelope(theta: float, hybrid: float) -> float:
    return -np.exp(max(-theta, 0) / 2) / 2 - hybrid * (1 - np.log(2)) + hybrid * max(theta, 0)


def lower_envelope(theta: float, hybrid: float) -> float:
    return -np.exp(max(-theta, 0) / 2) / np.sqrt(2) - hybrid + hybrid * max(theta, 0)


@pytest.mark.parametrize("hybrid", [1.0, 0.4, 2.5])
def test_theta_bracket_is_the_inverse_of_the_envelopes(hybrid):
    """``_solve_theta`` brackets the root of ``g = target`` by the inverses of the two
    envelopes of ``g`` (its docstring); with ``max_iter = 0`` a start at -inf / +inf returns
    the bracket's ends. The bracket must hold the root and equal those inverses."""
    targets = np.array([-40.0, -5.0, -1.9, -1.2, -0.9, -0.7, -0.3, 0.0, 0.5, 3.0, 30.0])
    lo = _solve_theta(targets, hybrid, np.full(targets.shape, -np.inf), 1e-13, 0)
    hi = _solve_theta(targets, hybrid, np.full(targets.shape, np.inf), 1e-13, 0)
    for k, target in enumerate(targets):
        root = brentq(lambda t, c=target: g(t, hybrid) - c, -200, 200, xtol=1e-14)
        inverse_upper = brentq(lambda t, c=target: upper_envelope(t, hybrid) - c, -200, 200)
        inverse_lower = brentq(lambda t, c=target: lower_envelope(t, hybrid) - c, -200, 200)
        assert lo[k] <= root + 1e-9 and root <= hi[k] + 1e-9
        assert lo[k] == pytest.approx(inverse_upper, rel=1e-9, abs=1e-9)
        assert hi[k] == pytest.approx(inverse_lower, rel=1e-9, abs=1e-9)
    solved = _solve_theta(targets, hybrid, np.zeros(targets.shape), 1e-13, 100)
    values = np.array([g(t, hybrid) for t in solved])
    np.testing.assert_allclose(values, targets, rtol=1e-9, atol=1e-9)


def test_nu_bracket_puts_the_extreme_arm_at_m_over_n():
    """The bracket of ``nu``: at its lower end the arm with the largest loss has
    ``x_i = m / N`` (so every ``x_i >= m / N``), at its upper end the arm with the smallest
    loss; with ``max_iter = 0`` a start at -inf / +inf returns them (in the caller's units)."""
    losses = np.array([[5.0, 7.0, 6.0, 9.0, 5.5], [0.0, 40.0, 1.0, 2.0, 3.0]])
    eta, m, n = np.array([0.05, 2.0]), 2, 5
    g_uniform = g(np.log(m / (n - m)), 1.0)
    expected_lo = -g_uniform / eta - losses.max(axis=1)
    expected_hi = -g_uniform / eta - losses.min(axis=1)
    _, lo = hybrid_marginals(losses, eta, m, start=np.full(2, -np.inf), max_iter=0)
    _, hi = hybrid_marginals(losses, eta, m, start=np.full(2, np.inf), max_iter=0)
    np.testing.assert_allclose(lo, expected_lo, rtol=1e-12)
    np.testing.assert_allclose(hi, expected_hi, rtol=1e-12)


def test_warm_start_is_in_the_units_of_the_returned_multiplier():
    """``start`` is e.g. the previous round's ``nu``: with no iteration allowed it comes
    back unchanged (losses far from 0, so a shift by their minimum would show)."""
    losses = np.array([[15.0, 17.0, 16.0, 19.0], [30.0, 31.0, 33.0, 32.5]])
    _, nu = hybrid_marginals(losses, 0.5, 2)
    _, again = hybrid_marginals(losses, 0.5, 2, start=nu, max_iter=0)
    np.testing.assert_array_equal(again, nu)


def test_marginals_messages_and_the_full_set():
    losses = np.zeros((1, 4))
    with pytest.raises(ValueError, match=r"^super-arm size s must lie in 1..4, got 0$"):
        hybrid_marginals(losses, 1.0, 0)
    with pytest.raises(ValueError, match=r"^the hybrid weight must be positive for s < N, got 0"):
        hybrid_marginals(losses, 1.0, 2, hybrid=0.0)
    x, nu = hybrid_marginals(losses, 1.0, 4, hybrid=0.0)  # m = N: no regulariser needed
    np.testing.assert_array_equal(x, 1.0)
    np.testing.assert_array_equal(nu, 0.0)


def test_madow_intervals_are_half_open():
    """Arm ``i`` owns ``[sum_{j<i} x_j, sum_{j<=i} x_j)``: with ``x = 1/2`` everywhere the
    points ``u + k`` at ``u = 0`` fall on the left ends of arms 0 and 2, at ``u = 1/2`` on
    those of arms 1 and 3."""
    x = np.full((2, 4), 0.5)
    masks = madow_sample(x, np.array([0.0, 0.5]), 2)
    np.testing.assert_array_equal(masks, [[True, False, True, False], [False, True, False, True]])


def problem(n: int, s: int) -> SimpleNamespace:
    return SimpleNamespace(n_arms=n, super_arm_size=s)


def test_policy_options_and_messages():
    assert FTRLHybrid(problem(4, 1)).super_arm_size == 1
    assert FTRLHybrid(problem(4, 4)).super_arm_size == 4
    with pytest.raises(ValueError, match=r"^super-arm size s must lie in 1..4, got 0$"):
        FTRLHybrid(problem(4, 0))
    with pytest.raises(ValueError, match=r"^observe must be 'y' or 'z', got 'b'$"):
        FTRLHybrid(problem(4, 2), observe="b")
    with pytest.raises(ValueError, match=r"^reward_scale must be positive, got 0"):
        FTRLHybrid(problem(4, 2), reward_scale=0.0)
    assert FTRLHybrid(problem(4, 2), hybrid=0.3).hybrid == 0.3
    assert FTRLHybrid(problem(4, 3)).hybrid == pytest.approx(hybrid_weight(4, 3))


def scripted_round(policy: FTRLHybrid, observed: np.ndarray) -> np.ndarray:
    """Play one round with ``observed`` as ``y`` on every arm; return the expected loss
    increments ``l 1{i in A} / x_i`` for the normalised rewards the caller checks."""
    before = policy.cum_losses.copy()
    policy.select()
    x, played = policy._pending[policy.t][:2]
    policy.update(played, SimpleNamespace(y=observed, z=observed))
    return policy.cum_losses - before, x, played


def test_fixed_reward_scale_divides_and_clips_without_learning_a_maximum():
    policy = FTRLHybrid(problem(3, 1), reward_scale=2.0)
    policy.reset(np.random.SeedSequence(1).spawn(1))
    step, x, played = scripted_round(policy, np.array([[4.0, 4.0, 4.0]]))  # 2 -> clipped 1
    np.testing.assert_allclose(step, 0.0, atol=1e-15)
    step, x, played = scripted_round(policy, np.array([[1.0, 1.0, 1.0]]))  # 0.5, scale stays 2
    np.testing.assert_allclose(step, np.where(played, 0.5 / x, 0.0), rtol=1e-12)
    np.testing.assert_array_equal(policy._scale, 2.0)


def test_running_scale_starts_at_zero_is_per_replicate_and_clips_negatives():
    """Replicate 0 observes 0.5 everywhere (its own maximum: reward 1, loss 0); replicate 1
    observes 8 then 2 (reward 1/4); replicate 2 observes -1 (reward 0, loss 1)."""
    policy = FTRLHybrid(problem(3, 1))
    policy.reset(np.random.SeedSequence(2).spawn(3))
    first = np.array([[0.5] * 3, [8.0] * 3, [-1.0] * 3])
    step, x, played = scripted_round(policy, first)
    np.testing.assert_allclose(step[:2], 0.0, atol=1e-15)
    np.testing.assert_allclose(step[2], np.where(played[2], 1.0 / x[2], 0.0), rtol=1e-12)
    step, x, played = scripted_round(policy, np.array([[0.25] * 3, [2.0] * 3, [-1.0] * 3]))
    np.testing.assert_allclose(step[0], np.where(played[0], 0.5 / x[0], 0.0), rtol=1e-12)
    np.testing.assert_allclose(step[1], np.where(played[1], 0.75 / x[1], 0.0), rtol=1e-12)
    np.testing.assert_array_equal(policy._scale, [0.5, 8.0, 0.0])


def test_policy_solves_with_its_own_hybrid_weight():
    """s = 3 of N = 4: gamma_h = sqrt(1 / log 4), not the default 1 of hybrid_marginals."""
    policy = FTRLHybrid(problem(4, 3))
    policy.reset(np.random.SeedSequence(5).spawn(1))
    scripted_round(policy, np.array([[1.0, 0.2, 0.6, 0.9]]))
    policy.select()
    x = policy._pending[2][0]
    expected, _ = hybrid_marginals(policy.cum_losses, 1 / np.sqrt(2), 3, hybrid_weight(4, 3))
    np.testing.assert_allclose(x, expected, rtol=1e-10)
    assert not np.allclose(hybrid_marginals(policy.cum_losses, 1 / np.sqrt(2), 3)[0], expected)


def test_delayed_items_update_the_running_scale_of_their_replicate():
    """Two items of replicate 2 arrive (observations 5 and 7 on every arm, so on the played
    ones), none of replicates 0 and 1."""
    policy = FTRLHybrid(problem(3, 1))
    policy.reset(np.random.SeedSequence(6).spawn(3))
    first = policy.select()
    second = policy.select()
    observed = np.array([[5.0, 5.0, 5.0], [7.0, 7.0, 7.0]])
    items = DelayedFeedback(
        np.array([1, 2]),
        np.array([2, 2]),
        np.stack([first[2], second[2]]),
        SimpleNamespace(y=observed, z=observed),
    )
    policy.update(second, items)
    np.testing.assert_array_equal(policy._scale, [0.0, 0.0, 7.0])
