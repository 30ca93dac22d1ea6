"""DiscountedArmStatistics at its boundaries: per-replicate constants (each replicate computes
what a scalar instance computes), the values gamma, xi and the bound may take, empty arrival
slots, the D-UCB padding with ``B != 1``, and the messages a user sees."""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits.estimators.discounted import DiscountedArmStatistics, per_replicate


def test_per_replicate_values_are_float_scalars_or_one_per_replicate():
    scalar = per_replicate(1, 3, "gamma")
    assert scalar.shape == () and scalar.dtype == np.float64
    vector = per_replicate([1, 2, 3], 3, "xi")
    assert vector.shape == (3,) and vector.dtype == np.float64
    for bad in ([1.0, 2.0], [[1.0], [2.0], [3.0]], np.ones((3, 3))):
        with pytest.raises(ValueError, match=r"^xi must be a scalar or one value per replicate"):
            per_replicate(bad, 3, "xi")


@pytest.mark.parametrize("name", ["gamma", "xi"])
def test_a_wrongly_shaped_constant_is_named_in_the_message(name):
    options = {"gamma": 0.9, "xi": 0.5} | {name: [0.5, 0.5, 0.5]}
    message = rf"^{name} must be a scalar or one value per replicate \(2,\), got shape \(3,\)$"
    with pytest.raises(ValueError, match=message):
        DiscountedArmStatistics(2, 4, super_arm_size=1, **options)


def play(stats: DiscountedArmStatistics, rounds: int = 6) -> None:
    """Every replicate plays arms 0 and 2 every round; feedback of round t arrives at t."""
    played = np.zeros((stats.counts.shape[0], 4), dtype=bool)
    played[:, [0, 2]] = True
    rewards = np.tile([0.2, 9.0, 0.8, 9.0], (stats.counts.shape[0], 1))
    for t in range(1, rounds + 1):
        stats.advance()
        stats.receive(t, played, rewards * t)


def test_per_replicate_gamma_and_xi_compute_what_scalar_instances_compute():
    gammas, xis = np.array([0.5, 0.9, 1.0]), np.array([0.1, 1.0, 0.25])
    together = DiscountedArmStatistics(3, 4, gammas, xis, 2)
    play(together)
    for r in range(3):
        alone = DiscountedArmStatistics(1, 4, gammas[r], xis[r], 2)
        play(alone)
        np.testing.assert_allclose(together.counts[r], alone.counts[0], rtol=1e-14)
        np.testing.assert_allclose(together.means()[r], alone.means()[0], rtol=1e-14)
        np.testing.assert_allclose(together.bonus()[r], alone.bonus()[0], rtol=1e-14)
        assert together.horizon_weight[r] == pytest.approx(alone.horizon_weight, rel=1e-14)


@pytest.mark.parametrize("gamma", [0.0, -0.5, 1.0 + 1e-12, np.nan])
def test_gamma_must_lie_in_0_1(gamma):
    with pytest.raises(ValueError, match=r"^gamma must lie in \(0, 1\], got"):
        DiscountedArmStatistics(1, 2, gamma, 0.1, 1)


def test_gamma_one_and_zero_xi_and_bound_are_accepted():
    stats = DiscountedArmStatistics(1, 2, 1.0, 0.0, 1, bound=0.0)
    stats.advance()
    stats.receive(1, np.array([[True, False]]), np.array([[0.5, 0.0]]))
    np.testing.assert_array_equal(stats.bonus(), [[0.0, np.inf]])
    assert DiscountedArmStatistics(1, 2, 0.5, 0.1, 1, bound=0.5).bound == 0.5


@pytest.mark.parametrize(("xi", "bound"), [(-0.1, 1.0), (0.1, -1.0), ([0.1, -0.1], 1.0)])
def test_xi_and_bound_must_be_non_negative(xi, bound):
    with pytest.raises(ValueError, match=r"^xi and bound must be >= 0, got"):
        DiscountedArmStatistics(2, 2, 0.9, xi, 1, bound=bound)


def test_count_pending_message():
    stats = DiscountedArmStatistics(1, 3, 0.9, 0.1, 1, count_pending=True)
    with pytest.raises(
        ValueError, match="^count_pending needs the super arms played in the round$"
    ):
        stats.advance()


def test_feedback_from_the_future_is_refused_with_both_rounds_named():
    stats = DiscountedArmStatistics(1, 2, 0.9, 0.1, 1)
    stats.advance()
    stats.advance()
    with pytest.raises(ValueError, match="^feedback from round 3 cannot arrive at round 2$"):
        stats.receive(3, np.ones((1, 2), dtype=bool), np.ones((1, 2)))


def test_empty_slots_add_nothing_even_when_their_arms_are_marked():
    """``tau <= 0`` marks an empty slot: its ``played`` and ``rewards`` are ignored."""
    stats = DiscountedArmStatistics(1, 2, 0.5, 0.1, 1)
    stats.advance()
    stats.advance()
    tau = np.array([[2, 0, -1]])
    played = np.array([[[True, False], [True, True], [False, True]]])
    rewards = np.array([[[0.4, 0.0], [5.0, 5.0], [7.0, 7.0]]])
    stats.receive(tau, played, rewards)
    np.testing.assert_array_equal(stats.counts, [[1.0, 0.0]])
    np.testing.assert_array_equal(stats.sums, [[0.4, 0.0]])


def test_padding_scales_with_the_reward_bound():
    """``C = 2 B sqrt(xi (s + 1) log m / M)`` with ``B = 3``, ``gamma = 1``: after 4 rounds of
    arm 0, ``m = 4``, ``M = 4``."""
    stats = DiscountedArmStatistics(1, 2, 1.0, 0.5, 2, bound=3.0)
    for t in range(1, 5):
        stats.advance()
        stats.receive(t, np.array([[True, False]]), np.array([[1.0, 0.0]]))
    expected = 2 * 3.0 * np.sqrt(0.5 * 3 * np.log(4.0) / 4.0)
    np.testing.assert_allclose(stats.bonus(), [[expected, np.inf]], rtol=1e-14)
