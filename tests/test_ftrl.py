from types import SimpleNamespace

import numpy as np
import pytest

from causalbandits.policies.ftrl import (
    FTRLHybrid,
    hybrid_marginals,
    hybrid_weight,
    importance_weighted_losses,
    madow_sample,
)


def kkt_residual(x, losses, eta, hybrid):
    """``eta L_i - 1/(2 sqrt x_i) - gamma_h (1 + log(1 - x_i))``: equal to ``-eta nu`` for all i."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return eta * losses - 0.5 / np.sqrt(x) - hybrid * (1 + np.log1p(-x))


@pytest.mark.parametrize("n, super_arm_size", [(10, 4), (21, 5), (6, 1), (7, 5), (5, 5)])
@pytest.mark.parametrize("scale", [0.1, 10.0, 1e3])
def test_marginals_lie_in_the_capped_simplex_and_satisfy_kkt(n, super_arm_size, scale, rng):
    losses = rng.uniform(0, scale, (50, n))
    eta = rng.uniform(0.05, 1.0, 50)
    hybrid = hybrid_weight(n, super_arm_size)
    x, nu = hybrid_marginals(losses, eta, super_arm_size, hybrid)
    assert np.all((x >= 0) & (x <= 1))
    np.testing.assert_allclose(x.sum(axis=1), super_arm_size, atol=1e-10)
    interior = (x > 1e-8) & (x < 1 - 1e-8)
    residual = kkt_residual(x, losses, eta[:, None], hybrid) + eta[:, None] * nu[:, None]
    assert np.abs(residual[interior]).max(initial=0.0) < 1e-7
    # lower cumulative loss, higher marginal
    order = np.argsort(losses, axis=1)
    assert np.all(np.diff(np.take_along_axis(x, order, axis=1), axis=1) <= 1e-12)


def test_marginals_minimise_the_ftrl_objective(rng):
    """Any feasible perturbation along the simplex raises <x, L> + Psi(x) / eta."""
    n, super_arm_size, eta = 8, 3, 0.3
    losses = rng.uniform(0, 5, (1, n))
    x = hybrid_marginals(losses, eta, super_arm_size)[0][0]

    def value(v):
        psi = (-np.sqrt(v) + (1 - v) * np.log1p(-v)).sum()
        return v @ losses[0] + psi / eta

    for _ in range(200):
        direction = rng.normal(size=n)
        direction -= direction.mean()
        step = 1e-3 * direction
        if np.all((x + step > 0) & (x + step < 1)):
            assert value(x + step) >= value(x) - 1e-12


def test_equal_losses_give_uniform_marginals_and_warm_start_agrees(rng):
    x, nu = hybrid_marginals(np.full((3, 10), 7.0), 0.5, 4)
    np.testing.assert_allclose(x, 0.4, atol=1e-12)
    losses = rng.uniform(0, 20, (4, 10))
    cold, nu = hybrid_marginals(losses, 0.2, 4)
    warm, _ = hybrid_marginals(losses + 0.1, 0.2, 4, start=nu)
    np.testing.assert_allclose(warm, hybrid_marginals(losses + 0.1, 0.2, 4)[0], atol=1e-10)


def test_hybrid_weight():
    assert hybrid_weight(10, 4) == 1.0 and hybrid_weight(10, 5) == 1.0
    assert hybrid_weight(10, 8) == pytest.approx(np.sqrt(1 / np.log(10 / 2)))


def test_madow_sampling_reproduces_the_marginals(rng):
    n, super_arm_size, draws = 10, 4, 40_000
    x = hybrid_marginals(rng.uniform(0, 30, (1, n)), 0.4, super_arm_size)[0]
    x = np.repeat(x, draws, axis=0)
    masks = madow_sample(x, rng.random(draws), super_arm_size)
    assert np.all(masks.sum(axis=1) == super_arm_size)
    share = masks.mean(axis=0)
    standard_error = np.sqrt(x[0] * (1 - x[0]) / draws)
    assert np.all(np.abs(share - x[0]) <= 4 * standard_error + 1e-12)


def test_madow_sampling_with_degenerate_marginals(rng):
    x = np.array([[1.0, 0.0, 0.5, 0.5, 1.0, 0.0]])
    masks = madow_sample(np.repeat(x, 1000, axis=0), rng.random(1000), 3)
    assert np.all(masks[:, [0, 4]]) and not np.any(masks[:, [1, 5]])
    assert np.all(masks[:, 2] ^ masks[:, 3])
    # uniforms at the edges and sums off by rounding still give exactly m distinct arms
    x = np.array([[0.3, 0.7, 0.4, 0.6 - 1e-12], [1.0, 1.0, 1e-300, 1e-15]])
    for u in (0.0, 1.0 - 1e-16, 0.5):
        masks = madow_sample(x, np.full(2, u), 2)
        assert np.all(masks.sum(axis=1) == 2)


def test_importance_weighted_losses_are_unbiased(rng):
    n, super_arm_size, draws = 6, 2, 100_000
    x = hybrid_marginals(rng.uniform(0, 3, (1, n)), 1.0, super_arm_size)[0]
    losses = rng.random(n)
    masks = madow_sample(np.repeat(x, draws, axis=0), rng.random(draws), super_arm_size)
    estimates = importance_weighted_losses(np.broadcast_to(losses, masks.shape), masks, x)
    spread = estimates.std(axis=0) / np.sqrt(draws)
    assert np.all(np.abs(estimates.mean(axis=0) - losses) <= 4 * spread)


def problem(n_arms, super_arm_size):
    return SimpleNamespace(n_arms=n_arms, super_arm_size=super_arm_size)


def delayed(rounds, replicates, z, y):
    """What a delay wrapper delivers: one item per (round, replicate)."""
    return SimpleNamespace(
        rounds=np.asarray(rounds),
        replicates=np.asarray(replicates),
        actions=None,
        feedback=SimpleNamespace(z=z, y=y),
    )


def run_bandit(policy, means, rounds, delay, replicates=8, seed=0):
    """Bernoulli semi-bandit on z (no graph) with a constant delay; returns pulls per arm."""
    rng = np.random.default_rng(seed)
    policy.reset(np.random.SeedSequence(seed).spawn(replicates))
    queue, pulls = [], np.zeros((replicates, means.size))
    every = np.arange(replicates)
    for t in range(1, rounds + 1):
        played = policy.select()
        assert played.shape == (replicates, means.size)
        assert np.all(played.sum(axis=1) == policy.super_arm_size)
        pulls += played
        queue.append((t, (rng.random(played.shape) < means) * played))
        if t > delay:
            tau, z = queue.pop(0)
            policy.update(played, delayed(np.full(replicates, tau), every, z, z))
        else:
            none = np.zeros((0, means.size))
            policy.update(played, delayed(np.zeros(0, int), np.zeros(0, int), none, none))
    return pulls


@pytest.mark.parametrize("delay", [0, 20])
def test_policy_learns_the_best_arms_under_delay(delay):
    means = np.array([0.9, 0.85, 0.2, 0.15, 0.1, 0.1])
    policy = FTRLHybrid(problem(6, 2), reward_scale=1.0, observe="z")
    pulls = run_bandit(policy, means, 1000, delay)
    assert np.all(pulls[:, :2].sum(axis=1) > 0.75 * 2 * 1000)
    assert len(policy._pending) == delay


def test_plain_feedback_and_running_max_scale():
    policy = FTRLHybrid(problem(5, 2))
    policy.reset(np.random.SeedSequence(3).spawn(4))
    for _ in range(200):
        played = policy.select()
        y = 5.0 * played * np.array([3.0, 1.0, 1.0, 1.0, 1.0])
        policy.update(played, SimpleNamespace(y=y, z=played * 1.0))
    np.testing.assert_allclose(policy._scale, 15.0)
    assert not policy._pending
    assert np.all(policy.cum_losses[:, 0] < policy.cum_losses[:, 1:].min(axis=1))


def test_delayed_running_scale_takes_the_played_arms_of_the_arriving_round():
    """Under delay the running max uses y[i] of the arms played in the round the feedback
    belongs to (decisions: ndc-sem 10), not the arms played now nor the unplayed ones."""
    policy = FTRLHybrid(problem(6, 2))
    policy.reset(np.random.SeedSequence(4).spawn(2))
    first = policy.select()
    second = policy.select()
    y = np.where(first, np.array([[1.0], [2.0]]), 100.0)  # unplayed arms of round 1 carry 100
    policy.update(second, delayed([1, 1], [0, 1], y * first, y))
    np.testing.assert_allclose(policy._scale, [1.0, 2.0])


def test_out_of_order_and_per_replicate_arrivals_equal_sequential_ones():
    """Items of several rounds and replicates arriving together update like one by one."""
    a, b = FTRLHybrid(problem(4, 2), 1.0), FTRLHybrid(problem(4, 2), 1.0)
    seeds = np.random.SeedSequence(9).spawn(3)
    a.reset(seeds)
    b.reset(seeds)
    for _ in range(3):
        np.testing.assert_array_equal(a.select(), b.select())
    y = np.random.default_rng(1).random((3, 3, 4))  # (round, replicate, arm)
    for t in (2, 1, 3):
        a.update(None, delayed(np.full(3, t), np.arange(3), y[t - 1], y[t - 1]))
    rounds, replicates = (
        np.array([3, 1, 2, 1, 3, 2, 1, 3, 2]),
        np.array([0, 1, 2, 0, 1, 0, 2, 2, 1]),
    )
    items = y[rounds - 1, replicates]
    b.update(None, delayed(rounds[:4], replicates[:4], items[:4], items[:4]))
    assert len(b._pending) == 3
    b.update(None, delayed(rounds[4:], replicates[4:], items[4:], items[4:]))
    np.testing.assert_allclose(a.cum_losses, b.cum_losses)
    assert not a._pending and not b._pending


def test_invalid_arguments():
    with pytest.raises(ValueError):
        FTRLHybrid(problem(4, 5))
    with pytest.raises(ValueError):
        FTRLHybrid(problem(4, 2), observe="b")
    with pytest.raises(ValueError):
        hybrid_marginals(np.zeros((1, 3)), 1.0, 0)
