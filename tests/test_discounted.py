import numpy as np
import pytest

from causalbandits.estimators.discounted import DiscountedArmStatistics


def simulate(rng, delays, gamma=0.9, replicates=3, n=5, horizon=120, xi=0.3, super_arm_size=2):
    """Run the incremental statistics with per-(replicate, round) delays ``delays(R, T)``.

    Returns the statistics after every round and the direct sums of eq. 10 over the
    rounds that have arrived (``tau + delay_tau <= t``).
    """
    played = rng.random((replicates, horizon, n)) < 0.5
    rewards = rng.random((replicates, horizon, n))
    arrival = np.arange(1, horizon + 1) + delays  # (R, T), rounds numbered from 1
    stats = DiscountedArmStatistics(replicates, n, gamma, xi, super_arm_size)
    history = []
    for t in range(1, horizon + 1):
        stats.advance()
        rows, rounds = np.nonzero(arrival == t)
        slots = max(np.bincount(rows, minlength=replicates).max(), 1)
        tau = np.zeros((replicates, slots), dtype=np.int64)
        x = np.zeros((replicates, slots, n), dtype=bool)
        b = np.full((replicates, slots, n), np.nan)  # unplayed entries must be ignored
        for r in range(replicates):
            mine = rounds[rows == r]
            tau[r, : mine.size] = mine + 1
            x[r, : mine.size] = played[r, mine]
            b[r, : mine.size] = np.where(played[r, mine], rewards[r, mine], np.nan)
        stats.receive(tau, x, b)
        weight = np.where(arrival <= t, gamma ** (t - np.arange(1, horizon + 1)), 0.0)
        direct_m = np.einsum("rt,rti->ri", weight, played)
        direct_s = np.einsum("rt,rti->ri", weight, played * rewards)
        history.append(
            (
                stats.counts.copy(),
                stats.sums.copy(),
                stats.horizon_weight,
                stats.means(),
                stats.bonus(),
                direct_m,
                direct_s,
            )
        )
    return stats, history


@pytest.mark.parametrize("delay", [0, 1, 7])
def test_constant_delay_matches_eq_10(delay, rng):
    delays = np.full((3, 120), delay)
    _, history = simulate(rng, delays)
    for t, (m_inc, s_inc, m_t, means, bonus, m_dir, s_dir) in enumerate(history, start=1):
        np.testing.assert_allclose(m_inc, m_dir, rtol=0, atol=1e-10)
        np.testing.assert_allclose(s_inc, s_dir, rtol=0, atol=1e-10)
        assert m_t == pytest.approx((1 - 0.9**t) / (1 - 0.9), abs=1e-10)
        # M_t <= gamma^D m_{t-D} <= gamma^D / (1 - gamma) (NDC-SEM Lemma 1)
        m_lag = (1 - 0.9 ** max(t - delay, 0)) / (1 - 0.9)
        assert np.all(m_inc <= 0.9**delay * m_lag + 1e-10)
        positive = m_dir > 0
        np.testing.assert_allclose(
            means[positive], (s_dir / np.where(positive, m_dir, 1))[positive]
        )
        assert np.all(means[~positive] == 0) and np.all(np.isinf(bonus[~positive]))
        expected = 2 * np.sqrt(0.3 * 3 * np.log(m_t) / m_dir[positive])
        np.testing.assert_allclose(bonus[positive], expected, rtol=1e-12)


def test_random_out_of_order_delays_match_the_arrived_sums(rng):
    delays = rng.integers(0, 15, (3, 120))
    stats, history = simulate(rng, delays)
    for m_inc, s_inc, *_, m_dir, s_dir in history:
        np.testing.assert_allclose(m_inc, m_dir, rtol=0, atol=1e-10)
        np.testing.assert_allclose(s_inc, s_dir, rtol=0, atol=1e-10)


def test_undiscounted_undelayed_means_are_sample_means(rng):
    replicates, n, horizon = 2, 4, 50
    played = rng.random((replicates, horizon, n)) < 0.5
    rewards = rng.random((replicates, horizon, n))
    stats = DiscountedArmStatistics(replicates, n, gamma=1.0, xi=0.25, super_arm_size=2)
    for t in range(horizon):
        stats.advance()
        stats.receive(t + 1, played[:, t], rewards[:, t])
    pulls = played.sum(axis=1)
    np.testing.assert_allclose(stats.counts, pulls)
    np.testing.assert_allclose(stats.means(), (played * rewards).sum(axis=1) / pulls)
    # gamma = 1, xi = 1/4: SEM-UCB's bonus sqrt((s + 1) ln t / m_i)
    np.testing.assert_allclose(stats.bonus(), np.sqrt(3 * np.log(horizon) / pulls))
    np.testing.assert_allclose(stats.indices(), stats.means() + stats.bonus())


def test_first_round_and_empty_statistics():
    stats = DiscountedArmStatistics(1, 3, gamma=0.5, xi=1.0, super_arm_size=1)
    assert np.all(np.isinf(stats.indices()))
    stats.advance()
    stats.receive(1, np.array([[True, False, True]]), np.array([[0.0, 0.7, 1.0]]))
    np.testing.assert_allclose(stats.bonus(), [[0.0, np.inf, 0.0]])  # log m_1 = 0
    np.testing.assert_allclose(stats.means(), [[0.0, 0.0, 1.0]])
    with pytest.raises(ValueError):
        stats.receive(2, np.ones((1, 3), dtype=bool), np.ones((1, 3)))
    with pytest.raises(ValueError):
        DiscountedArmStatistics(1, 3, gamma=1.5, xi=1.0, super_arm_size=1)


def test_pending_counts_equal_the_discounted_plays_in_flight(rng):
    """count_pending: P_t = sum over played rounds not arrived by t of gamma^(t - tau) x_tau,
    and the padding divides by M + P (unobserved arms stay at +inf)."""
    replicates, n, horizon, gamma = 3, 5, 120, 0.9
    played = rng.random((replicates, horizon, n)) < 0.5
    rewards = rng.random((replicates, horizon, n))
    arrival = np.arange(1, horizon + 1) + rng.integers(0, 15, (replicates, horizon))
    stats = DiscountedArmStatistics(replicates, n, gamma, 0.3, 2, count_pending=True)
    plain = DiscountedArmStatistics(replicates, n, gamma, 0.3, 2)
    for t in range(1, horizon + 1):
        stats.advance(played[:, t - 1])
        plain.advance()
        for r, tau in zip(*np.nonzero(arrival == t), strict=True):
            x = np.zeros((replicates, n), dtype=bool)
            x[r] = played[r, tau]
            rounds = np.where(np.arange(replicates) == r, tau + 1, 0)
            stats.receive(rounds, x, rewards[:, tau])
            plain.receive(rounds, x, rewards[:, tau])
        rounds = np.arange(1, t + 1)
        in_flight = arrival[:, :t] > t
        weight = np.where(in_flight, gamma ** (t - rounds), 0.0)
        direct = np.einsum("rt,rti->ri", weight, played[:, :t])
        np.testing.assert_allclose(stats.pending, direct, rtol=0, atol=1e-10)
        np.testing.assert_array_equal(stats.counts, plain.counts)
        positive = plain.counts > 0
        expected = plain.bonus()[positive] * np.sqrt(
            plain.counts[positive] / (plain.counts + direct)[positive]
        )
        np.testing.assert_allclose(stats.bonus()[positive], expected, rtol=1e-9)
        assert np.all(np.isinf(stats.bonus()[~positive]))


def test_pending_counts_need_the_played_super_arms():
    stats = DiscountedArmStatistics(1, 3, 0.9, 0.1, 1, count_pending=True)
    with pytest.raises(ValueError, match="super arms played"):
        stats.advance()
