"""SSEM-UCB's Taylor-moment machinery and SSEM-UCB-JO (SSEM-UCB spec Sec. 6)."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import numpy as np
import pytest
from scipy.optimize import minimize

from causalbandits.envs.base_arms import EmpiricalArms
from causalbandits.envs.separable_semibandit import SeparableBanditConfig, SeparableSemiBandit
from causalbandits.envs.super_arms import all_super_arms, members
from causalbandits.estimators.expansion import Expansion
from causalbandits.estimators.jets import monomials, reward_jets
from causalbandits.estimators.taylor_moments import (
    PowerSums,
    addend_intervals,
    confidence_radius,
    external_ucb,
    moment_box,
    per_addend_maximum,
    radius_multipliers,
    vertex_maximum,
)
from causalbandits.experiments.recorders import ReconstructionError
from causalbandits.experiments.simulate import compare, simulate
from causalbandits.policies.semibandit import RandomSuperArm
from causalbandits.policies.ssem_ucb import (
    SSEMUCBJO,
    contracted,
    initial_blocks,
    selection_scores,
)
from causalbandits.random import replicate_seeds
from causalbandits.scm.basis import Dictionary
from causalbandits.scm.separable import SeparableSEM

QUADRATIC = Dictionary.from_names(["linear", "quadratic"])


def taylor_moment_sum(coefficients, exponents, moments, arms) -> float:
    """``sum_alpha c_alpha prod_j phi^(alpha_j)[j]`` of one super arm."""
    factors = moments[exponents, np.asarray(arms)[None, :]]  # (M, k)
    return float(coefficients @ factors.prod(axis=1))


def test_taylor_moment_identity_is_exact_for_a_polynomial_reward() -> None:
    """A chain of quadratic edges makes ``r`` a polynomial of degree 4 in ``b``: with
    ``q = 4`` and the exact moments the Taylor-moment sum is ``E[r]`` (enumerated exactly)."""
    weights = np.zeros((1, 3, 3, 2))
    weights[0, 1, 2, 1], weights[0, 0, 1, 1], weights[0, 0, 2, 0] = 0.8, 0.6, 0.3
    values = [np.array([0.1, 0.5, 0.9]), np.array([0.2, 0.7]), np.array([0.3, 0.4, 1.0])]
    sem = SeparableSEM(weights, QUADRATIC)
    centre = np.array([[0.45, 0.4, 0.5]])
    arms = [0, 1, 2]
    exact = np.mean(
        [sem.solve(np.array(b)[None, None])[0, 0].sum() for b in itertools.product(*values)]
    )
    moments = np.array(
        [[np.mean((v - c) ** p) for v, c in zip(values, centre[0], strict=True)] for p in range(5)]
    )
    expansion = Expansion(dictionary=QUADRATIC)
    coefficients = reward_jets(weights, expansion, centre, np.array([arms]), 4)[0, 0]
    assert taylor_moment_sum(
        coefficients, monomials(3, 4).exponents, moments, arms
    ) == pytest.approx(exact, rel=1e-12)
    # q = 2 misses the degree-3 and -4 terms
    low = reward_jets(weights, expansion, centre, np.array([arms]), 2)[0, 0]
    assert abs(taylor_moment_sum(low, monomials(3, 2).exponents, moments, arms) - exact) > 1e-4


def test_first_order_taylor_of_a_linear_sem_is_sum_of_effects_times_means() -> None:
    adjacency = np.triu(np.random.default_rng(0).uniform(0.2, 0.6, (4, 4)), k=1)
    weights = adjacency[None, ..., None]
    means = np.array([[0.3, 0.6, 0.5, 0.2]])
    arms = np.array([[0, 2, 3]])
    linear = Expansion(dictionary=Dictionary.from_names("linear"))
    c = reward_jets(weights, linear, means, arms, 1)[0, 0]
    effects = np.linalg.solve((np.eye(4) - adjacency).T, np.ones(4))
    assert c[0] == pytest.approx(float(effects[[0, 2, 3]] @ means[0, [0, 2, 3]]))
    np.testing.assert_allclose(c[1:], effects[[0, 2, 3]])


def test_power_sums_give_central_moments_about_any_centre() -> None:
    rng = np.random.default_rng(1)
    sums = PowerSums(2, 3, degree=4)
    data = rng.uniform(0, 1, (50, 2, 3))
    played = rng.random((50, 2, 3)) < 0.6
    for z, x in zip(data, played, strict=True):
        sums.add(z * x, x)
    centre = rng.uniform(0, 1, (2, 3))
    got = sums.central_moments(centre)
    for r, i, p in itertools.product(range(2), range(3), range(5)):
        direct = np.mean((data[played[:, r, i], r, i] - centre[r, i]) ** p)
        assert got[r, p, i] == pytest.approx(direct, rel=1e-10, abs=1e-12)
    np.testing.assert_array_equal(sums.counts, played.sum(axis=0))


def test_confidence_boxes_cover_the_true_moments() -> None:
    """With a fixed centre, ``|phi_hat^(p) - phi^(p)| <= k_p C_t`` essentially always."""
    rng = np.random.default_rng(2)
    s, rounds, trials = 3, 200, 300
    centre = np.full((trials, 1), 0.3)
    true = np.array([np.mean((np.linspace(0, 1, 100001) - 0.3) ** p) for p in range(5)])
    sums = PowerSums(trials, 1, degree=4)
    for _ in range(rounds):
        sums.add(rng.uniform(0, 1, (trials, 1)), np.ones((trials, 1), dtype=bool))
    radius = confidence_radius(rounds, sums.counts, s)
    low, high = moment_box(sums.central_moments(centre), radius, radius_multipliers(4), None)
    covered = (low[:, :, 0] <= true) & (true <= high[:, :, 0])
    assert covered.all()


def box_problem(seed: int, degree: int, k: int):
    rng = np.random.default_rng(seed)
    basis = monomials(k, degree)
    coefficients = rng.normal(size=basis.size)
    centre = rng.uniform(-0.3, 0.5, (degree + 1, k))
    centre[0] = 1.0
    radius = np.concatenate([np.zeros((1, k)), rng.uniform(0.05, 0.3, (degree, k))])
    return coefficients, basis.exponents, centre - radius, centre + radius


@pytest.mark.parametrize("seed", range(4))
def test_vertex_maximum_is_the_box_maximum_and_per_addend_bounds_it(seed: int) -> None:
    coefficients, exponents, low, high = box_problem(seed, degree=2, k=2)
    best = vertex_maximum(coefficients, exponents, low, high)
    q, k = low.shape[0] - 1, low.shape[1]

    def negative(flat: np.ndarray) -> float:
        factors = np.concatenate([np.ones((1, k)), flat.reshape(q, k)])
        return -float(coefficients @ factors[exponents, np.arange(k)].prod(axis=1))

    bounds = list(zip(low[1:].ravel(), high[1:].ravel(), strict=True))
    rng = np.random.default_rng(seed)
    box = max(
        -minimize(negative, rng.uniform(low[1:], high[1:]).ravel(), bounds=bounds).fun
        for _ in range(30)
    )
    assert best == pytest.approx(box, abs=1e-7)
    lo, hi = addend_intervals(exponents, np.arange(k)[None], low[None], high[None])
    assert per_addend_maximum(coefficients[None, None], lo, hi)[0, 0] >= best - 1e-12


def test_per_addend_maximum_equals_the_vertex_maximum_at_degree_one() -> None:
    for seed in range(5):
        coefficients, exponents, low, high = box_problem(seed, degree=1, k=3)
        lo, hi = addend_intervals(exponents, np.arange(3)[None], low[None], high[None])
        per_addend = per_addend_maximum(coefficients[None, None], lo, hi)[0, 0]
        assert per_addend == pytest.approx(vertex_maximum(coefficients, exponents, low, high))


def test_external_bonus_falls_with_plays_and_grows_like_the_joint_rate() -> None:
    arms = members(all_super_arms(3, 2, exact=True))
    counts = np.array([[4.0, 9.0, 16.0]])
    bonus = external_ucb(50, counts, 2, arms)[0]  # {0,1}, {0,2}, {1,2}
    assert bonus[0] == bonus[1] > bonus[2] > 0  # the least played member decides
    more = external_ucb(50, 4 * counts, 2, arms)[0]
    np.testing.assert_allclose(more, bonus / 2)
    t = np.array([10, 100, 1000, 10000])
    joint = np.array([external_ucb(int(n), counts, 2, arms, joint=True)[0, 2] for n in t])
    rate = (t - 1) ** 0.25 * np.sqrt(np.log(t - 1))
    np.testing.assert_allclose(joint / rate, joint[0] / rate[0])
    assert external_ucb(2, counts, 2, arms, joint=True).max() == 0.0  # ln(t - 1) = 0
    summed = external_ucb(50, counts, 2, arms, form="sum")[0]
    assert summed[2] == pytest.approx(4 * np.sqrt(3) * np.log(49) * (1 / 3 + 1 / 4) / 2)


def small_environment(replicates: int = 1, horizon: int = 200) -> SeparableSemiBandit:
    weights = np.zeros((5, 5, 2))
    weights[0, 3, 1], weights[1, 4, 0], weights[2, 4, 1] = 0.8, 0.6, 0.5
    values = [np.linspace(lo, lo + 0.4, 9) for lo in (0.1, 0.5, 0.2, 0.4, 0.3)]
    sem = SeparableSEM(np.repeat(weights[None], replicates, axis=0), QUADRATIC)
    config = SeparableBanditConfig(super_arm_size=2, horizon=horizon, mc_samples=2000)
    return SeparableSemiBandit(sem, EmpiricalArms(values), config)


def test_initial_blocks_cover_every_arm() -> None:
    blocks = initial_blocks(10, 6)
    assert blocks.shape == (2, 10) and blocks.sum(axis=0).tolist() == [1] * 10
    assert blocks[0, :6].all() and blocks[1, 6:].all()


def quadratic_policy_after(rounds: int) -> tuple[SeparableSemiBandit, SSEMUCBJO]:
    """SSEM-UCB-JO (q = 2, quadratic dictionary) after ``rounds`` rounds on the small
    environment."""
    env = small_environment()
    env.reset(0)
    policy = SSEMUCBJO(env.problem, degree=2, dictionary=QUADRATIC.names)
    policy.reset(replicate_seeds(0, 0, [0], 1))
    for _ in range(rounds):
        actions = policy.select()
        policy.update(actions, env.step(actions))
    return env, policy


def test_scores_argmax_matches_a_brute_force_over_super_arms() -> None:
    env, policy = quadratic_policy_after(30)
    policy.t += 1
    scores = policy.scores()[0]
    low, high = moment_box(
        policy.sums.central_moments(policy.centres),
        confidence_radius(policy.t - 1, policy.sums.counts, 2),
        radius_multipliers(2),
    )
    internal = []
    for x in env.super_arms:
        arms = np.flatnonzero(x)
        expansion = Expansion(dictionary=QUADRATIC)
        c = reward_jets(policy.graph.weights, expansion, policy.centres, arms[None], 2)[0, 0]
        if arms.size == 0:
            internal.append(c[0])
            continue
        exponents = monomials(arms.size, 2).exponents
        lo, hi = addend_intervals(exponents, arms[None], low, high)
        internal.append(per_addend_maximum(c[None, None], lo, hi)[0, 0])
    internal = np.array(internal)
    counts = policy.sums.counts[0]
    bonus = [
        0.0
        if not x.any()
        else 4
        * np.sqrt(3 * np.log(policy.t - 1))
        * (policy.t - 1) ** 0.25
        / np.sqrt(counts[x].min())
        for x in env.super_arms
    ]
    brute = internal + (internal.max() - internal.min()) * np.array(bonus)
    np.testing.assert_allclose(scores, brute, rtol=1e-10)


def test_replicates_run_together_equal_replicates_run_alone() -> None:
    def run(replicates: list[int]) -> np.ndarray:
        env = small_environment(len(replicates), horizon=60)
        env.reset(replicate_seeds(3, 0, replicates, 0))
        policy = SSEMUCBJO(env.problem, degree=2, dictionary=QUADRATIC.names)
        policy.reset(replicate_seeds(3, 0, replicates, 1))
        played = []
        for _ in range(60):
            actions = policy.select()
            played.append(actions)
            policy.update(actions, env.step(actions))
        return np.stack(played, axis=1)

    together = run([0, 1, 2])
    np.testing.assert_array_equal(together[2], run([2])[0])


def test_ssem_ucb_jo_learns_a_small_nonlinear_instance() -> None:
    env = small_environment(horizon=600)
    table = compare(
        env,
        {
            "SSEM-UCB-JO": lambda p: SSEMUCBJO(
                p, degree=2, dictionary=QUADRATIC.names, bonus_scale=0.01
            ),
            "Random": RandomSuperArm,
        },
        replicates=1,
        seed=4,
        checkpoints=4,
    )
    final = table[table.t == 600].set_index("algorithm").cum_regret
    assert final["SSEM-UCB-JO"] < 0.25 * final["Random"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"degree": 0}, "degree q"),
        ({"internal_ucb": "exact"}, "internal_ucb"),
        ({"bonus_form": "min"}, "bonus_form"),
        ({"radius_scale": 0}, "radius_scale"),
        ({"radius_rule": "other"}, "rule"),
        ({"dictionary": ("linear", "cos")}, "unknown basis"),
    ],
)
def test_bad_hyper_parameters_are_refused(options: dict, message: str) -> None:
    problem = SimpleNamespace(n_arms=5, super_arm_size=2, horizon=10)
    with pytest.raises(ValueError, match=message):
        SSEMUCBJO(problem, **options)


def test_bad_super_arm_sizes_are_refused() -> None:
    for size in (0, 6):
        with pytest.raises(ValueError, match="super-arm size"):
            SSEMUCBJO(SimpleNamespace(n_arms=5, super_arm_size=size, horizon=10))


def test_super_arms_with_divergent_jets_are_not_played() -> None:
    internal = np.array([[0.0, 2.0, np.nan, 1.0], [0.0, np.inf, 3.0, np.nan]])
    bonus = np.array([[0.0, 0.5, 9.0, 1.0], [0.0, 9.0, 0.5, 9.0]])
    scores = selection_scores(internal, bonus, 1.0)
    np.testing.assert_allclose(scores[0], [0.0, 3.0, -np.inf, 3.0])  # span 2 over the finite
    np.testing.assert_allclose(scores[1], [0.0, -np.inf, 4.5, -np.inf])
    np.testing.assert_allclose(selection_scores(internal, bonus, 1.0, False)[0, 1], 2.5)


def test_a_diverging_fit_is_counted_and_its_super_arms_skipped() -> None:
    env, policy = quadratic_policy_after(10)
    policy.graph.coefficients[:] = 0.0
    # y3 += 1e200 y4^2 and y0 += 1e200 y3^2: y0 overflows whenever arm 4 is played
    policy.graph.coefficients[0, 3, 2 * 4 + 1] = 1e200
    policy.graph.coefficients[0, 0, 2 * 3 + 1] = 1e200
    policy.graph.fit = lambda which: policy.graph.weights  # keep the planted fit
    policy._refit(np.array([True]))
    assert policy.divergent_refits[0] == 1
    scores = policy.scores()[0]
    reaches_node_0 = env.super_arms[:, 4]
    assert np.all(np.isneginf(scores[reaches_node_0])) and np.all(
        np.isfinite(scores[~reaches_node_0])
    )


def planted_two_cycle(**options: object) -> SSEMUCBJO:
    """SSEM-UCB-JO on cycles (q = 2) after 10 rounds of the small environment, its fits
    replaced by a planted 2-cycle of gain 2 (nodes 0 <-> 1), refitted once."""
    env = small_environment()
    env.reset(0)
    policy = SSEMUCBJO(
        env.problem, degree=2, dictionary=QUADRATIC.names, upper_triangular=False, **options
    )
    policy.reset(replicate_seeds(0, 0, [0], 1))
    for _ in range(10):
        actions = policy.select()
        policy.update(actions, env.step(actions))
    policy.graph.coefficients[:] = 0.0
    policy.graph.coefficients[0, 0, 2 * 1] = policy.graph.coefficients[0, 1, 2 * 0] = 2.0
    policy.graph.fit = lambda which: policy.graph.weights.copy()  # keep the planted fit
    policy.shrunk_refits[:] = policy.divergent_refits[:] = 0
    policy._refit(np.array([True]))
    return policy


def test_a_cyclic_fit_that_is_no_contraction_is_counted_and_skipped() -> None:
    """The planted 2-cycle has no equilibrium the process reaches: the cyclic jets raise, the
    refit is counted and no super arm scores until the next refit."""
    policy = planted_two_cycle()
    assert policy.divergent_refits[0] == 1
    assert np.all(np.isneginf(policy.scores()))
    assert np.isnan(policy.reconstruction_error()[0])


def test_reconstruction_error_is_zero_for_the_true_fit_and_the_plain_error_for_none() -> None:
    """Noise-free rounds: the true ``F`` rebuilds every ``y`` from ``z``; the empty fit
    leaves ``mean((y - z)^2)``."""
    env, policy = quadratic_policy_after(20)
    z = np.stack([pair[0] for pair in policy.observations], axis=1)
    y = np.stack([pair[1] for pair in policy.observations], axis=1)
    policy.fitted[:] = env.sem.weights
    assert policy.reconstruction_error()[0] < 1e-20
    policy.fitted[:] = 0.0
    np.testing.assert_allclose(policy.reconstruction_error(), np.mean((y - z) ** 2, axis=(1, 2)))


def test_a_fit_is_shrunk_onto_a_contraction_on_the_observed_range() -> None:
    """A linear 2-cycle of gains 2 and 0.5 has slope bound rho = 1: shrunk by 0.8 / 1; a
    cubic edge's slope bound is its largest slope on the range, 3 a high^2."""
    linear = Dictionary.from_names("linear")
    weights = np.zeros((2, 2, 1))
    weights[0, 1, 0], weights[1, 0, 0] = 2.0, 0.5
    low, high = np.zeros(2), np.ones(2)
    shrunk, factor = contracted(weights, linear, low, high, 0.8)
    assert factor == pytest.approx(0.8) and np.allclose(shrunk, 0.8 * weights)
    kept, factor = contracted(0.5 * weights, linear, low, high, 0.8)
    assert factor == 1.0 and np.array_equal(kept, 0.5 * weights)
    cubic = Dictionary.from_names("cubic")
    weights = np.zeros((2, 2, 1))
    weights[0, 1, 0], weights[1, 0, 0] = 1.0, 1.0  # rho = sqrt(3 h1^2 * 3 h0^2)
    _, factor = contracted(weights, cubic, np.array([-1.0, 0.0]), np.array([0.5, 2.0]), 0.5)
    assert factor == pytest.approx(0.5 / np.sqrt(3 * 1.0 * 3 * 4.0))


def test_with_max_contraction_the_same_fit_is_shrunk_and_played() -> None:
    policy = planted_two_cycle(max_contraction=0.9)
    assert policy.shrunk_refits[0] == 1 and policy.divergent_refits[0] == 0
    assert np.isfinite(policy.scores()).all()
    # the 2-cycle of gains 2 has rho = 2: both gains shrink to 0.9
    np.testing.assert_allclose(policy.fitted[0, [0, 1], [1, 0], 0], [0.9, 0.9])


def test_reference_rounds_are_fixed_noise_free_rounds_of_valid_super_arms() -> None:
    env = small_environment(replicates=2)
    z, y = env.reference_rounds(50)
    again = env.reference_rounds(50)
    assert z.shape == y.shape == (2, 50, 5)
    np.testing.assert_array_equal(z, again[0])
    np.testing.assert_allclose(y, env.sem.mechanisms(y) + z, atol=1e-10)
    assert ((z != 0).sum(axis=2) <= env.super_arm_size).all() and (z != 0).any()
    # the held-out error of the true fit is zero, of the empty fit the plain error
    env.reset(0)
    policy = SSEMUCBJO(env.problem, degree=2, dictionary=QUADRATIC.names)
    policy.reset(replicate_seeds(0, 0, [0, 1], 1))
    policy.fitted[:] = env.sem.weights
    assert np.all(policy.reconstruction_error(z, y) < 1e-20)
    policy.fitted[:] = 0.0
    np.testing.assert_allclose(policy.reconstruction_error(z, y), ((y - z) ** 2).mean(axis=(1, 2)))


def test_the_prequential_error_rebuilds_each_round_through_the_fit_that_chose_it() -> None:
    """``prequential_mse`` of round ``t`` is the error of rebuilding round ``t`` through the
    fit used to choose it (fitted on earlier rounds only): from the last refit on, that is
    the final fit, whose error on each of those rounds is recomputed here."""
    env = small_environment(replicates=2, horizon=60)
    env.reset(0)
    policy = SSEMUCBJO(env.problem, degree=2, dictionary=QUADRATIC.names, refit_every=20)
    policy.reset(replicate_seeds(0, 0, [0, 1], 1))
    recorder = ReconstructionError()
    simulate(env, policy, np.arange(1, 61), [recorder])
    errors = recorder.values["prequential_mse"]  # (T, R)
    z = np.stack([pair[0] for pair in policy.observations], axis=1)
    y = np.stack([pair[1] for pair in policy.observations], axis=1)
    for r in range(2):
        start = int(policy.last_fit[r])  # the round whose selection made the final fit
        assert 30 <= start <= 50
        for t in range(start, 61):
            single = policy.reconstruction_error(z[:, t - 1 : t], y[:, t - 1 : t])[r]
            assert errors[t - 1, r] == pytest.approx(single, rel=1e-12)
        # the fits before it were worse on the rounds they had not seen
        assert errors[4:14, r].mean() > errors[start - 1 :, r].mean()
