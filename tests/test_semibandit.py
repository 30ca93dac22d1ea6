import itertools

import numpy as np
import pytest

from causalbandits.envs.semibandit import (
    DROP_FRACTION,
    MEAN_RANGE,
    Bernoulli,
    SemiBanditEnv,
    SemiBanditFeedback,
    SyntheticDesign,
    Uniform,
    adjacency_from_weights,
    ndc_synthetic_env,
    random_upper_triangular,
    synthetic_means,
    weights_from_adjacency,
)
from causalbandits.estimators.topk import total_effects
from causalbandits.experiments.simulate import simulate


def _cyclic(n: int, rng: np.random.Generator) -> np.ndarray:
    """A non-negative graph with cycles and spectral radius 0.8."""
    a = rng.uniform(0, 1, (n, n)) * (rng.random((n, n)) < 0.5)
    np.fill_diagonal(a, 0)
    a[0, n - 1] = a[n - 1, 0] = 0.5  # a 2-cycle
    return 0.8 * a / np.max(np.abs(np.linalg.eigvals(a)))


def _masks(n: int, super_arm_size: int) -> np.ndarray:
    """Every super arm with at most ``super_arm_size`` base arms."""
    rows = [
        np.isin(np.arange(n), subset)
        for k in range(super_arm_size + 1)
        for subset in itertools.combinations(range(n), k)
    ]
    return np.array(rows)


def _env(
    rng, n=5, super_arm_size=2, horizon=30, cps=(10, 20), adjacency=None, **kw
) -> SemiBanditEnv:
    a = random_upper_triangular(n, 6, (0.4, 0.7), rng) if adjacency is None else adjacency
    means = rng.uniform(0.05, 0.95, (len(cps) + 1, n))
    return SemiBanditEnv(a, means, super_arm_size, horizon, cps, **kw)


@pytest.mark.parametrize("cyclic", [False, True])
def test_y_solves_the_sem_and_z_is_zero_off_the_super_arm(rng, cyclic):
    a = _cyclic(6, rng) if cyclic else random_upper_triangular(6, 8, (0.4, 0.7), rng)
    env = _env(rng, n=6, super_arm_size=3, adjacency=a)
    env.reset(3, replicates=7)
    for _ in range(12):
        x = np.zeros((7, 6), dtype=bool)
        for r in range(7):
            x[r, rng.choice(6, size=rng.integers(0, 4), replace=False)] = True
        fb = env.step(x)
        assert isinstance(fb, SemiBanditFeedback)
        assert np.all(fb.z[~x] == 0)
        assert set(np.unique(fb.z)) <= {0.0, 1.0}  # Bernoulli
        direct = np.linalg.solve(np.eye(6) - a, fb.z.T).T
        np.testing.assert_allclose(fb.y, direct, atol=1e-12)
        np.testing.assert_allclose(fb.y, fb.y @ a.T + fb.z, atol=1e-12)  # y = A y + z


def test_weight_conversion_follows_the_edge_direction():
    w = np.zeros((3, 3))
    w[0, 1] = 0.5  # edge 0 -> 1 in the library convention
    w[1, 2] = 0.25  # edge 1 -> 2
    a = adjacency_from_weights(w)
    assert a[1, 0] == 0.5 and a[2, 1] == 0.25  # A[i, j]: effect of j on i
    np.testing.assert_array_equal(weights_from_adjacency(a), w)
    env = SemiBanditEnv.from_weights(w, np.ones((1, 3)), super_arm_size=1, horizon=3)
    env.reset(0, replicates=1)
    y = env.step(np.array([[True, False, False]])).y[0]
    np.testing.assert_allclose(y, [1.0, 0.5, 0.125])  # the cause drives its effects
    assert env.problem.upper_triangular is False  # W upper triangular -> A lower triangular
    np.testing.assert_allclose(env.total_effects, [1.625, 1.25, 1.0])


def test_total_effects_of_a_dag_are_the_neumann_series(rng):
    a = random_upper_triangular(8, 12, (0.4, 0.7), rng)
    series = sum(np.linalg.matrix_power(a, k) for k in range(8))
    np.testing.assert_array_equal(np.linalg.matrix_power(a, 8), 0)
    np.testing.assert_allclose(total_effects(a), series.sum(axis=0))
    assert np.all(total_effects(a) >= 1)


@pytest.mark.parametrize("cyclic", [False, True])
def test_oracle_and_regret_match_brute_force_over_all_super_arms(rng, cyclic):
    n, super_arm_size = 6, 3
    masks = _masks(n, super_arm_size)
    for _ in range(5):
        a = _cyclic(n, rng) if cyclic else random_upper_triangular(n, 7, (0.4, 0.7), rng)
        env = _env(rng, n=n, super_arm_size=super_arm_size, adjacency=a)
        inverse = np.linalg.inv(np.eye(n) - a)
        for period, beta in enumerate(env.means):
            env.t = [0, 10, 25][period]  # 1-based rounds 1, 11, 26
            assert env.period == period
            mu = np.ones(n) @ inverse @ (beta * masks).T  # eq. 6, one solve per super arm
            np.testing.assert_allclose(env.expected_payoff(masks), mu, atol=1e-12)
            assert env.optimal_value == pytest.approx(mu.max(), abs=1e-12)
            assert mu[np.all(masks == env.optimal_action, axis=1)][0] == pytest.approx(mu.max())
            assert env.optimal_action.sum() == super_arm_size  # all scores are positive
            regret = env.pseudo_regret(masks)
            np.testing.assert_allclose(regret, mu.max() - mu, atol=1e-12)
            np.testing.assert_array_equal(env.is_optimal(masks), regret <= 1e-9)


@pytest.mark.parametrize("distribution", [Bernoulli(), Uniform(0.05)])
def test_monte_carlo_payoff_matches_the_closed_form(rng, distribution):
    env = _env(rng, n=6, super_arm_size=3, horizon=3, cps=(2, 3), distribution=distribution)
    replicates = 4000
    env.reset(11, replicates=replicates)
    x = np.zeros((replicates, 6), dtype=bool)
    x[:, [0, 2, 5]] = True
    for _ in range(3):
        expected = env.expected_payoff(x[0])
        payoff = env.step(x).y.sum(axis=1)  # eq. 5
        error = payoff.std(ddof=1) / np.sqrt(replicates)
        assert abs(payoff.mean() - expected) < 4 * error


def test_means_change_exactly_at_the_change_points():
    means = np.array([[1.0, 1.0], [0.0, 0.0], [1.0, 0.0]])
    env = SemiBanditEnv(np.zeros((2, 2)), means, super_arm_size=2, horizon=6, change_points=[3, 5])
    env.reset(0, replicates=2)
    periods, rewards = [], []
    for _ in range(6):
        periods.append(env.period)
        rewards.append(env.step(np.ones((2, 2), dtype=bool)).z[0].tolist())
    assert periods == [0, 0, 1, 1, 2, 2]
    assert rewards == [[1, 1], [1, 1], [0, 0], [0, 0], [1, 0], [1, 0]]
    np.testing.assert_array_equal(env.period_of([1, 2, 3, 4, 5, 6]), periods)


def test_noise_does_not_depend_on_the_actions(rng):
    env = _env(rng, n=4, super_arm_size=2)
    draws = {}
    for arms in ([0, 1], [2, 3], [0, 2]):
        env.reset(5, replicates=3)
        x = np.zeros((3, 4), dtype=bool)
        x[:, arms] = True
        draws[tuple(arms)] = np.stack([env.step(x).z for _ in range(20)])
    np.testing.assert_array_equal(draws[(0, 2)][..., 0], draws[(0, 1)][..., 0])
    np.testing.assert_array_equal(draws[(0, 2)][..., 2], draws[(2, 3)][..., 2])
    assert not np.array_equal(draws[(0, 1)][:, 0, 0], draws[(0, 1)][:, 1, 0])  # replicates differ


def test_synthetic_experiment_follows_section_5_1(rng):
    env = ndc_synthetic_env(np.random.default_rng(7))
    again = ndc_synthetic_env(np.random.default_rng(7))
    np.testing.assert_array_equal(env.adjacency, again.adjacency)
    np.testing.assert_array_equal(env.means, again.means)
    assert (env.n_arms, env.super_arm_size, env.horizon) == (10, 4, 5000)
    np.testing.assert_array_equal(env.change_points, [1000, 2500, 4000])
    a = env.adjacency
    assert np.count_nonzero(a) == 9 and np.all(np.tril(a) == 0)
    assert np.all((a[a != 0] >= 0.4) & (a[a != 0] <= 0.7))
    assert env.problem.upper_triangular
    assert np.all((env.means >= 0.05) & (env.means <= 0.95))
    for before, after in itertools.pairwise(env.optimal_actions):
        assert np.any(before != after)  # the optimal super arm changes at every change point
    ranked = -np.sort(-env.scores, axis=1)
    assert np.all(ranked[:, 3] - ranked[:, 4] >= 0.05)


@pytest.mark.parametrize("seed", range(5))
def test_incumbent_drop_sinks_the_optimal_arms_at_every_change_point(seed):
    """``change="incumbent-drop"``: the arms optimal before a change point get means in the
    lowest quarter of the range; the other arms are redrawn (not kept, unlike ``"redraw"``)."""
    env = ndc_synthetic_env(np.random.default_rng(seed), SyntheticDesign(change="incumbent-drop"))
    low, high = MEAN_RANGE
    ceiling = low + DROP_FRACTION * (high - low)
    for k, (before, after) in enumerate(itertools.pairwise(env.optimal_actions)):
        assert np.any(before != after)
        dropped = env.means[k + 1][before]
        assert np.all((dropped >= low) & (dropped <= ceiling))
        assert np.all(env.means[k][~before] != env.means[k + 1][~before])
    redrawn = ndc_synthetic_env(np.random.default_rng(seed))
    kept = [(a == b).sum() for a, b in itertools.pairwise(redrawn.means)]
    assert kept == [10 - 10 // 2] * 3  # the default keeps the means of N - N // 2 arms
    ranked = -np.sort(-env.scores, axis=1)
    assert np.all(ranked[:, 3] - ranked[:, 4] >= 0.05)


def test_bad_mean_schedules_are_rejected():
    weights = np.ones(6)
    with pytest.raises(ValueError, match="change must be"):
        SyntheticDesign(change="swap")
    with pytest.raises(ValueError, match="n_redraw"):
        SyntheticDesign(n_redraw=2, change="incumbent-drop")
    with pytest.raises(ValueError, match="n_redraw"):
        synthetic_means(weights, SyntheticDesign(n_redraw=7), 0)


def test_the_round_loop_runs_an_oracle_with_zero_regret(rng):
    env = _env(rng, n=5, super_arm_size=2)

    class Clairvoyant:  # reads the oracle: for this test only
        def reset(self, seeds):
            self.replicates = len(seeds)

        def select(self):
            return np.tile(env.optimal_action, (self.replicates, 1))

        def update(self, actions, feedback):
            assert feedback.z.shape == actions.shape

    env.reset(0, replicates=3)
    policy = Clairvoyant()
    policy.reset([None] * 3)
    result = simulate(env, policy, checkpoints=3)
    np.testing.assert_array_equal(result["cum_regret"], 0)
    np.testing.assert_array_equal(result["optimal_share"], 1)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"super_arm_size": 6}, "super-arm size s"),
        ({"super_arm_size": 0}, "super-arm size s"),
        ({"horizon": 0}, "horizon"),
        ({"horizon": 2.5}, "horizon"),
        ({"means": np.full((3, 5), 1.5)}, r"\[0, 1\]"),
        ({"means": np.full((2, 5), 0.5)}, "shape"),
        ({"change_points": [10, 40]}, "2..T"),
        ({"change_points": [1, 20]}, "2..T"),
        ({"change_points": [20, 10]}, "increasing"),
        ({"change_points": [10.5, 20]}, "integers"),
        ({"adjacency": np.ones((5, 5)) - np.eye(5)}, "spectral radius"),
        ({"adjacency": np.eye(5) * 0.1}, "diagonal"),
        ({"adjacency": np.zeros((5, 4))}, "square"),
        ({"optimal_tolerance": -1.0}, "tolerance"),
    ],
)
def test_invalid_configurations_are_rejected(kwargs, message):
    config = {
        "adjacency": np.zeros((5, 5)),
        "means": np.full((3, 5), 0.5),
        "super_arm_size": 2,
        "horizon": 30,
        "change_points": [10, 20],
        **kwargs,
    }
    with pytest.raises(ValueError, match=message):
        SemiBanditEnv(**config)


def test_invalid_actions_and_misuse_are_rejected(rng):
    env = _env(rng, n=5, super_arm_size=2, horizon=2, cps=())
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.zeros((1, 5), dtype=bool))
    env.reset(0, replicates=2)
    with pytest.raises(ValueError, match="shape"):
        env.step(np.zeros((3, 5), dtype=bool))
    with pytest.raises(ValueError, match="shape"):
        env.step(np.zeros(5, dtype=bool))
    with pytest.raises(ValueError, match="at most s = 2"):
        env.step(np.ones((2, 5), dtype=bool))
    with pytest.raises(ValueError, match="0/1"):
        env.step(np.full((2, 5), 2))
    with pytest.raises(ValueError, match="at most s = 2"):
        env.pseudo_regret(np.ones((2, 5), dtype=bool))
    env.step(np.eye(5, dtype=int)[:2])  # integer 0/1 masks are accepted
    env.step(np.zeros((2, 5), dtype=bool))  # the empty super arm is feasible
    with pytest.raises(RuntimeError, match="horizon"):
        env.step(np.zeros((2, 5), dtype=bool))
    with pytest.raises(ValueError, match="half width"):
        Uniform(0.7)
    with pytest.raises(ValueError, match="uniform means"):
        SemiBanditEnv(np.zeros((2, 2)), [[0.1, 0.5]], 1, 5, distribution=Uniform(0.2))
