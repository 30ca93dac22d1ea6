"""Semi-bandit baselines on scripted rounds: CUCB, CTS, SEM-UCB and FTRL-HYBRID must compute
the indices and choices of their defining formulas (NDC-SEM Sec. IV; the policies' docstrings).

Plays and feedback are scripted (the policy's own choice is ignored where the script says
so); expected indices are computed here from the formulas.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from scipy import stats
from scipy.optimize import minimize

from causalbandits.envs.semibandit import SemiBanditProblem
from causalbandits.estimators.topk import total_effects
from causalbandits.policies import CTS, CUCB, SEMUCB, FTRLHybrid


def mask(*arms: int, n: int = 4, replicates: int = 1) -> np.ndarray:
    out = np.zeros((replicates, n), dtype=bool)
    out[:, list(arms)] = True
    return out


def feedback(played: np.ndarray, values: dict[int, float], unplayed: float = 0.0):
    """``y = z`` with the given values on the played arms and ``unplayed`` elsewhere."""
    y = np.full(played.shape, unplayed)
    for arm, value in values.items():
        y[:, arm] = value
    return SimpleNamespace(y=y, z=np.where(played, y, 0.0))


# (arms, values) of 40 rounds: arm 0 often at 0.5 of the scale, arm 1 once at 0.3, arm 2
# often at 0.45, arm 3 twice (1.0 and 0.1); the scale (running max of played y) is 4.
SCRIPT = [((0, 3), {0: 2.0, 3: 4.0}), ((1, 3), {1: 1.2, 3: 0.4})] + [
    ((0, 2), {0: 2.0, 2: 1.8})
] * 38


def play_script(policy, replicates: int = 1, unplayed: float = 0.0) -> None:
    policy.reset(np.random.SeedSequence(7).spawn(replicates))
    for arms, values in SCRIPT:
        policy.select()
        played = mask(*arms, replicates=replicates)
        policy.update(played, feedback(played, values, unplayed))


def test_cucb_index_and_choice_after_scripted_rounds():
    policy = CUCB(SemiBanditProblem(4, 2, 100))
    policy.reset(np.random.SeedSequence(1).spawn(1))
    policy.select()
    assert np.all(np.isinf(policy.scores(np.zeros((1, 4)))))  # never observed: +inf
    # unplayed arms carry y = 100: the running max must ignore them (scale 4, not 100)
    play_script(policy, unplayed=100.0)
    chosen = policy.select()  # round t = 41
    counts = np.array([39, 1, 38, 2])
    means = np.array([0.5, 0.3, 0.45, 0.55])
    bonus = np.sqrt(3 * np.log(41) / (2 * counts))
    expected = np.minimum(1.0, means + bonus)
    np.testing.assert_allclose(policy.scores(np.zeros((1, 4)))[0], expected, rtol=1e-12)
    assert expected[0] == pytest.approx(0.5 + 0.3779, abs=1e-4)  # 0.5 + sqrt(3 ln 41 / 78)
    # the under-observed arms 1 and 3 win on their bonus (the means alone pick 0 and 3)
    np.testing.assert_array_equal(chosen, mask(1, 3))


def test_cts_posteriors_and_choice_frequencies_after_scripted_rounds():
    """Normalised rewards 1 (success for sure) and 0 (failure for sure) make the Beta
    posteriors deterministic: Beta(3, 1), Beta(1, 3), Beta(2, 2), Beta(1, 1). The top-2 of
    one posterior draw per arm must then be chosen with the probabilities of that rule."""
    replicates = 4000
    policy = CTS(SemiBanditProblem(4, 2, 100))
    policy.reset(np.random.SeedSequence(3).spawn(replicates))
    for arms, values in [((0, 1), {0: 3.0, 1: 0.0}), ((0, 2), {0: 3.0, 2: 3.0})]:
        policy.select()
        played = mask(*arms, replicates=replicates)
        policy.update(played, feedback(played, values))
    policy.select()
    played = mask(1, 2, replicates=replicates)
    policy.update(played, feedback(played, {1: 0.0, 2: 0.0, 0: 3.0}))  # arm 0 not played
    successes, failures = np.array([2, 0, 1, 0]), np.array([0, 2, 1, 0])
    np.testing.assert_array_equal(policy.sums, np.broadcast_to(successes, (replicates, 4)))
    np.testing.assert_array_equal(
        policy.counts - policy.sums, np.broadcast_to(failures, (replicates, 4))
    )
    u = np.array([[0.1, 0.5, 0.9, 0.3]])
    expected = stats.beta.ppf(u[0], 1 + successes, 1 + failures)
    np.testing.assert_allclose(policy.scores(u)[0], expected, rtol=1e-9)
    share = policy.select().mean(axis=0)
    draws = stats.beta.rvs(1 + successes, 1 + failures, size=(200_000, 4), random_state=5)
    top2 = draws >= np.sort(draws, axis=1)[:, [2]]
    probability = top2.mean(axis=0)
    se = np.sqrt(probability * (1 - probability) / replicates)
    assert np.all(np.abs(share - probability) <= 4 * se + 0.005), (share, probability)


def test_cts_bernoulli_trick_succeeds_with_the_normalised_reward():
    replicates = 4000
    policy = CTS(SemiBanditProblem(4, 2, 100))
    policy.reset(np.random.SeedSequence(4).spawn(replicates))
    policy.select()
    played = mask(0, 1, replicates=replicates)
    policy.update(played, feedback(played, {0: 0.6, 1: 2.0}))  # normalised 0.3 and 1
    rate = policy.sums[:, 0].mean()
    assert abs(rate - 0.3) <= 4 * np.sqrt(0.3 * 0.7 / replicates)
    np.testing.assert_array_equal(policy.sums[:, 1], 1.0)


def test_sem_ucb_index_and_choice_after_scripted_rounds():
    """SEM-UCB: ``E_i = beta_i + sqrt((s + 1) ln t / m_i)`` on undiscounted means of z, with
    ``t = 40`` completed rounds; no graph (y = z) gives ``w_hat = 1``, so it plays the top-2
    of ``E``."""
    policy = SEMUCB(SemiBanditProblem(4, 2, 100))
    play_script(policy)
    counts = np.array([39, 1, 38, 2])
    means = np.array([(2.0 + 38 * 2.0) / 39, 1.2, 1.8, (4.0 + 0.4) / 2])
    expected = means + np.sqrt(3 * np.log(40) / counts)
    np.testing.assert_allclose(policy.arms.indices()[0], expected, rtol=1e-12)
    np.testing.assert_allclose(total_effects(policy.adjacency), 1.0, atol=1e-12)
    chosen = policy.select()
    # with the bonus: arms 1 and 3 (the means alone pick 0 and 3)
    np.testing.assert_array_equal(chosen, mask(1, 3))


def ftrl_argmin(losses: np.ndarray, eta: float, super_arm_size: int) -> np.ndarray:
    """``argmin <x, L> + Psi(x) / eta`` over ``{x in [0, 1]^N, sum x = m}``, Psi of HYBRID
    with ``gamma_h = 1`` (``m <= N / 2``), by a generic constrained optimiser."""

    def objective(x: np.ndarray) -> float:
        return float(x @ losses + (-np.sqrt(x) + (1 - x) * np.log1p(-x)).sum() / eta)

    n = losses.size
    result = minimize(
        objective,
        np.full(n, super_arm_size / n),
        method="SLSQP",
        bounds=[(1e-9, 1 - 1e-9)] * n,
        constraints=[{"type": "eq", "fun": lambda x: x.sum() - super_arm_size}],
        options={"ftol": 1e-14, "maxiter": 500},
    )
    return result.x


def played_values(played: np.ndarray, values: np.ndarray):
    """Feedback with ``values`` on the played arms of one replicate, 0 elsewhere."""
    return feedback(played, {int(i): values[i] for i in np.flatnonzero(played[0])})


def test_ftrl_hybrid_losses_and_marginals_on_scripted_rounds():
    policy = FTRLHybrid(SemiBanditProblem(4, 2, 100))
    policy.reset(np.random.SeedSequence(2).spawn(1))
    values = np.array([2.0, 1.0, 0.5, 1.5])
    first = policy.select()
    np.testing.assert_allclose(policy._pending[1][0], 0.5)  # L = 0: uniform m / N
    policy.update(first, played_values(first, values))
    scale = values[first[0]].max()  # the running max of the observations so far
    losses = np.where(first[0], (1 - values / scale) / 0.5, 0.0)  # l 1{i in A} / x_i
    np.testing.assert_allclose(policy.cum_losses[0], losses, rtol=1e-12)
    assert losses.max() > 0.5  # a played arm below the scale really has a loss
    second = policy.select()
    x2 = policy._pending[2][0][0]
    np.testing.assert_allclose(x2, ftrl_argmin(losses, 1 / np.sqrt(2), 2), atol=2e-5)
    policy.update(second, played_values(second, values))
    scale = max(scale, values[second[0]].max())
    losses = losses + np.where(second[0], (1 - values / scale) / x2, 0.0)
    np.testing.assert_allclose(policy.cum_losses[0], losses, rtol=1e-12)
    for t in (3, 4):
        played = policy.select()
        x = policy._pending[t][0][0]
        np.testing.assert_allclose(
            x, ftrl_argmin(policy.cum_losses[0], 1 / np.sqrt(t), 2), atol=2e-5
        )
        policy.update(played, played_values(played, values))


def test_ftrl_running_scale_uses_only_the_played_arms():
    """The observations are y[i] of the selected arms (decisions: ndc-sem 10), as for CUCB
    and CTS: the y of unplayed arms must not enter the running max."""
    policy = FTRLHybrid(SemiBanditProblem(4, 2, 100))
    policy.reset(np.random.SeedSequence(2).spawn(1))
    played = policy.select()
    values = np.where(played[0], 1.0, 100.0)  # the unplayed arms carry y = 100
    policy.update(played, SimpleNamespace(y=values[None, :], z=np.where(played, 1.0, 0.0)))
    np.testing.assert_allclose(policy._scale, 1.0)
