"""SSEM-UCB (Alg. 1), SSEM-UCB-Norm (Alg. 3) and q-search (Alg. 4) (SSEM-UCB spec Sec. 3.1,
3.3, 3.4 and testable properties 3, 5 and 9)."""

from __future__ import annotations

import itertools
from math import comb, factorial
from types import SimpleNamespace

import numpy as np
import pytest

from causalbandits.envs.base_arms import EmpiricalArms, NormalArms
from causalbandits.envs.separable_semibandit import SeparableBanditConfig, SeparableSemiBandit
from causalbandits.estimators.column_assembly import assemble_columns
from causalbandits.estimators.expansion import Expansion
from causalbandits.estimators.jets import monomials, reward_jets
from causalbandits.estimators.taylor_moments import (
    MonomialTable,
    addend_intervals,
    moment_box,
    per_addend_maximum,
    radius_multipliers,
)
from causalbandits.experiments.simulate import compare
from causalbandits.policies import POLICIES
from causalbandits.policies.q_search import (
    DegreeSearch,
    QSearchOptions,
    SSEMUCBQSearch,
    degree_scores,
    remainder_bounds,
    search_degree,
)
from causalbandits.policies.semibandit import RandomSuperArm
from causalbandits.policies.ssem_ucb import SSEMUCBJO
from causalbandits.policies.ssem_ucb_dag import SSEMUCB
from causalbandits.policies.ssem_ucb_norm import (
    SSEMUCBNorm,
    double_factorial,
    gaussian_moment_box,
    gaussian_moments,
)
from causalbandits.random import replicate_seeds
from causalbandits.scm.basis import Dictionary
from causalbandits.scm.separable import SeparableSEM

QUADRATIC = Dictionary.from_names(["linear", "quadratic"])
PERIODIC = Dictionary.from_names(["linear", "sin"])
MIXED = Dictionary.from_names(["linear", "sin", "quadratic", "tanh"])


def small_environment(
    replicates: int = 1, horizon: int = 200, normal: bool = False
) -> SeparableSemiBandit:
    """N = 5, s = 2, three quadratic/linear edges (tests/test_ssem_ucb.py's instance); with
    ``normal`` the arms are (clipped) normal instead of empirical."""
    weights = np.zeros((5, 5, 2))
    weights[0, 3, 1], weights[1, 4, 0], weights[2, 4, 1] = 0.8, 0.6, 0.5
    lows = (0.1, 0.5, 0.2, 0.4, 0.3)
    if normal:
        means = np.array([lows]) + 0.2
        arms = NormalArms(np.repeat(means, replicates, 0), np.full((replicates, 5), 0.1))
    else:
        arms = EmpiricalArms([np.linspace(lo, lo + 0.4, 9) for lo in lows])
    sem = SeparableSEM(np.repeat(weights[None], replicates, axis=0), QUADRATIC)
    config = SeparableBanditConfig(super_arm_size=2, horizon=horizon, mc_samples=2000)
    return SeparableSemiBandit(sem, arms, config)


def random_dag(rng: np.random.Generator, n: int, dictionary: Dictionary) -> np.ndarray:
    """Strictly upper-triangular weights, every pair connected with probability 0.7."""
    edges = np.triu(rng.random((n, n)) < 0.7, k=1)
    return edges[..., None] * rng.uniform(0.2, 0.6, (n, n, dictionary.size))


def taylor_groups(weights: np.ndarray, dictionary: Dictionary, centres: np.ndarray, s: int, q: int):
    """The size groups of an SSEM-UCB-JO on ``N = weights.shape[1]`` arms, with the Taylor
    coefficients of ``weights`` about ``centres`` at degree ``q``."""
    n = weights.shape[1]
    problem = SimpleNamespace(n_arms=n, super_arm_size=s, horizon=10, upper_triangular=True)
    policy = SSEMUCBJO(problem, degree=q, dictionary=dictionary)
    policy.reset(replicate_seeds(0, 0, range(len(weights)), 1))
    for group in policy.groups:
        expansion = Expansion(dictionary=dictionary)
        group.coefficients[:] = reward_jets(weights, expansion, centres, group.members, q)
    return policy.groups, policy.super_arms


def run(make, env: SeparableSemiBandit, rounds: int, seed: int = 0) -> np.ndarray:
    env.reset(replicate_seeds(seed, 0, range(env.replicates), 0))
    policy = make(env.problem)
    policy.reset(replicate_seeds(seed, 0, range(env.replicates), 1))
    played = []
    for _ in range(rounds):
        actions = policy.select()
        played.append(actions)
        policy.update(actions, env.step(actions))
    return np.stack(played, axis=1)


# ------------------------------------------------------------------ eq. 5, Alg. 1


@pytest.mark.parametrize("seed", range(3))
def test_consistent_per_arm_fits_assemble_back_to_the_dag(seed: int) -> None:
    """Testable property 3. With every ``F_hat^(o) = F`` the compositions of eq. 5 cancel:
    each entry is exactly ``F[i, o]``, a dictionary member, so its projection is exact up to
    rounding. The random DAGs (sin and linear edges on 70 % of the pairs) have nodes with a
    parent and a grandparent on one path through sin edges: exactness holds there too."""
    rng = np.random.default_rng(seed)
    weights = random_dag(rng, 6, PERIODIC)
    per_arm = np.repeat(weights[None], 6, axis=0)
    assembled = assemble_columns(per_arm, PERIODIC, (np.zeros(6), np.full(6, 1.7)))
    np.testing.assert_allclose(assembled, weights, atol=1e-10)


def closure_entry(per_arm: np.ndarray, assembled: np.ndarray, dictionary, i, o, b):
    """The right-hand side of eq. 5 at the signals ``b`` (exact compositions)."""
    inputs = np.zeros((b.size, per_arm.shape[1]))
    inputs[:, o] = b
    y = SeparableSEM(per_arm[o], dictionary).solve(inputs[None])[0]
    earlier = sum(dictionary.evaluate(y[:, j]) @ assembled[i, j] for j in range(i + 1, o))
    return y[:, i] - earlier


def test_disagreeing_linear_fits_assemble_exactly() -> None:
    """Compositions of linear maps are linear: eq. 5 stays in the dictionary {v} even when the
    per-arm fits disagree, so the assembled entries equal the closures exactly."""
    rng = np.random.default_rng(3)
    linear = Dictionary.from_names("linear")
    per_arm = np.stack([random_dag(rng, 5, linear) for _ in range(5)])
    assembled = assemble_columns(per_arm, linear, (np.full(5, -0.5), np.full(5, 2.0)))
    b = np.linspace(-1.0, 3.0, 7)
    for o in range(1, 5):
        for i in range(o):
            exact = closure_entry(per_arm, assembled, linear, i, o, b)
            np.testing.assert_allclose(assembled[i, o, 0] * b, exact, atol=1e-12)


def test_disagreeing_nonlinear_fits_are_projected_on_the_grid() -> None:
    """Only approximation holds here: when ``F_hat^(2)`` disagrees with the assembled
    ``F_hat[0, 1]`` on the sin edge, entry ``(0, 2)`` is ``sin`` of a sum of ``sin`` (not in the
    dictionary); the assembly returns its least-squares projection on the grid."""
    weights = np.zeros((3, 3, 2))
    weights[0, 1, 1], weights[1, 2, 1], weights[0, 2, 0] = 0.5, 0.4, 0.3
    per_arm = np.repeat(weights[None], 3, axis=0)
    per_arm[2, 0, 1, 1] = 0.7  # arm 2's fit of the edge 1 -> 0 disagrees
    low, high = np.array([0.0, 0.0, -0.2]), np.array([0.0, 0.0, 1.3])
    assembled = assemble_columns(per_arm, PERIODIC, (low, high), grid_size=40)
    np.testing.assert_allclose(assembled[:, 1], weights[:, 1], atol=1e-12)
    grid = np.linspace(-0.2, 1.3, 40)
    target = closure_entry(per_arm, assembled, PERIODIC, 0, 2, grid)
    basis = PERIODIC.evaluate(grid)
    projection = np.linalg.lstsq(basis, target, rcond=None)[0]
    np.testing.assert_allclose(assembled[0, 2], projection, atol=1e-10)
    assert np.abs(basis @ projection - target).max() > 1e-3  # not exact
    # the residual is orthogonal to the dictionary (least squares)
    np.testing.assert_allclose(basis.T @ (target - basis @ projection), 0.0, atol=1e-9)


def test_assembly_thresholds_small_entries() -> None:
    weights = np.zeros((3, 3, 2))
    weights[0, 2, 0], weights[1, 2, 0] = 0.01, 0.5
    per_arm = np.repeat(weights[None], 3, axis=0)
    observed = (np.zeros(3), np.ones(3))
    assembled = assemble_columns(per_arm, PERIODIC, observed, edge_threshold=0.05)
    assert assembled[0, 2].tolist() == [0.0, 0.0]
    assert assembled[1, 2, 0] == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"per_arm_weights": np.zeros((3, 3, 2, 2))}, "shape"),
        ({"per_arm_weights": np.zeros((3, 3, 3, 1))}, "basis coefficients"),
        (
            {
                "per_arm_weights": np.tril(np.ones((3, 3)), -1)[None, ..., None]
                * np.ones((3, 1, 1, 2))
            },
            "upper",
        ),
        ({"observed": (np.ones(3), np.zeros(3))}, "low <= high"),
        ({"observed": (np.zeros(3), np.full(3, np.nan))}, "finite"),
        ({"observed": (np.zeros(2), np.ones(3))}, "shape"),
        ({"grid_size": 1}, "grid_size"),
        ({"edge_threshold": -1.0}, "edge_threshold"),
    ],
)
def test_assembly_refuses_bad_input(change: dict, message: str) -> None:
    arguments = {
        "per_arm_weights": np.zeros((3, 3, 3, 2)),
        "dictionary": PERIODIC,
        "observed": (np.zeros(3), np.ones(3)),
    } | change
    with pytest.raises(ValueError, match=message):
        assemble_columns(**arguments)


def test_per_arm_statistics_see_only_the_rounds_that_played_the_arm() -> None:
    env = small_environment(replicates=2)
    env.reset(replicate_seeds(5, 0, range(2), 0))
    policy = SSEMUCB(env.problem, degree=2, dictionary=QUADRATIC.names)
    policy.reset(replicate_seeds(5, 0, range(2), 1))
    rounds = []
    for _ in range(40):
        actions = policy.select()
        feedback = env.step(actions)
        policy.update(actions, feedback)
        rounds.append((actions, feedback.z, feedback.y))
    counts = policy.per_arm.counts.reshape(2, 5)
    np.testing.assert_array_equal(counts, policy.sums.counts)
    r, o = 1, 3
    ys = np.array([y[r] for x, _, y in rounds if x[r, o]])
    phi = QUADRATIC.evaluate(ys).reshape(len(ys), -1)
    np.testing.assert_allclose(policy.per_arm.gram[r * 5 + o], phi.T @ phi)
    # F_hat is eq. 5 on the per-arm fits; the joint statistics hold it for the refit test
    assembled = policy.fit_graph(np.ones(2, dtype=bool))
    per_arm = policy.per_arm.weights.reshape(2, 5, 5, 5, 2)
    expected = assemble_columns(
        per_arm[0], QUADRATIC, (policy.y_low[0], policy.y_high[0]), edge_threshold=0.05
    )
    np.testing.assert_allclose(assembled[0], expected)
    np.testing.assert_array_equal(policy.graph.weights, assembled)
    assert np.any(assembled[0]) and not np.any(np.tril(np.abs(assembled[0]).sum(-1)))


def test_ssem_ucb_needs_a_dag_order() -> None:
    problem = SimpleNamespace(n_arms=5, super_arm_size=2, horizon=10, upper_triangular=False)
    with pytest.raises(ValueError, match="DAG order"):
        SSEMUCB(problem)
    with pytest.raises(ValueError, match="grid_size"):
        SSEMUCB(
            SimpleNamespace(n_arms=5, super_arm_size=2, horizon=10),
            upper_triangular=True,
            grid_size=1,
        )


# ------------------------------------------------------------------ Alg. 3


def central_gaussian_moments(sd: np.ndarray, degree: int) -> np.ndarray:
    """``E(b - mu)^p`` of ``N(mu, sd^2)``, ``(q + 1, N)``: ``(p - 1)!! sd^p`` for even ``p``."""
    return np.array(
        [(p % 2 == 0) * double_factorial(p - 1) * sd**p for p in range(degree + 1)], dtype=float
    )


def printed_norm_sum(c: np.ndarray, exponents: np.ndarray, shift: np.ndarray, variance: np.ndarray):
    """Alg. 3's sum as printed, for the Taylor polynomial ``P`` with coefficients ``c`` of one
    super arm: ``sum_{gamma even} D^gamma P(a + d) / gamma!! prod_j V_j^(gamma_j / 2)``, the
    derivatives by re-expanding ``P`` about ``a + d``."""
    total = 0.0
    for gamma in exponents:
        if np.any(gamma % 2):
            continue
        derivative = sum(
            c[m]
            * np.prod([comb(int(b), int(g)) for b, g in zip(beta, gamma, strict=True)])
            * np.prod(shift ** (beta - gamma))
            * np.prod([factorial(int(g)) for g in gamma])
            for m, beta in enumerate(exponents)
            if np.all(beta >= gamma)
        )
        double = np.prod([double_factorial(int(g)) for g in gamma])
        total += derivative / double * np.prod(variance ** (gamma // 2))
    return total


@pytest.mark.parametrize("seed", range(2))
def test_norm_taylor_sum_is_the_full_sum_with_gaussian_moments(seed: int) -> None:
    """Testable property 9 on a random SEM (sin, quadratic, tanh, linear edges), ``q = 4``:
    with the true mean as centre, the true variance and zero radii, Alg. 3's even-index sum
    (as printed, and as the policy evaluates it) equals JO's full Taylor-moment sum with the
    exact Gaussian moments (odd ones 0); with a centre off the mean, the shifted form equals
    the full sum with the Gaussian raw moments about the centre."""
    rng = np.random.default_rng(seed)
    n, q = 5, 4
    weights = random_dag(rng, n, MIXED)[None] * 0.6
    mean, sd = rng.uniform(0.3, 0.7, (1, n)), rng.uniform(0.05, 0.2, (1, n))
    for centre in (mean, rng.uniform(0.3, 0.7, (1, n))):
        shift, variance = mean - centre, sd**2
        low, high = gaussian_moment_box(shift, shift, variance, variance, q)
        np.testing.assert_array_equal(low, high)
        raw = np.array(
            [
                [
                    sum(
                        comb(p, k)
                        * shift[0, j] ** (p - k)
                        * central_gaussian_moments(sd[0, j], k)[k]
                        for k in range(p + 1)
                    )
                    for j in range(n)
                ]
                for p in range(q + 1)
            ]
        )
        np.testing.assert_allclose(low[0], raw, rtol=1e-12, atol=1e-15)
        if centre is mean:
            np.testing.assert_allclose(low[0], central_gaussian_moments(sd[0], q), atol=1e-15)
        for k in (1, 2, 3):
            arms = np.array(list(itertools.combinations(range(n), k)))
            c = reward_jets(weights, Expansion(dictionary=MIXED), centre, arms, q)
            exponents = monomials(k, q).exponents
            lo, hi = addend_intervals(exponents, arms, low, high)
            norm = per_addend_maximum(c, lo, hi)[0]
            full = (c[0] * raw[exponents, arms[:, None, :]].prod(axis=-1)).sum(axis=-1)
            printed = [
                printed_norm_sum(c[0, a], exponents, shift[0, arm], variance[0, arm])
                for a, arm in enumerate(arms)
            ]
            np.testing.assert_allclose(norm, full, rtol=1e-10)
            np.testing.assert_allclose(printed, full, rtol=1e-10)


def test_gaussian_moments_and_their_exact_ranges() -> None:
    d, v = np.array([0.3, -0.2]), np.array([0.04, 0.09])
    m = gaussian_moments(d, v, 4)
    np.testing.assert_allclose(m[:, 3], d**3 + 3 * d * v)
    np.testing.assert_allclose(m[:, 4], d**4 + 6 * d**2 * v + 3 * v**2)
    rng = np.random.default_rng(7)
    shift_low = rng.uniform(-0.4, 0.2, (2, 6))
    shift_high = shift_low + rng.uniform(0, 0.5, (2, 6))
    variance_low = rng.uniform(0, 0.05, (2, 6))
    variance_high = variance_low + rng.uniform(0, 0.05, (2, 6))
    low, high = gaussian_moment_box(shift_low, shift_high, variance_low, variance_high, 5)
    steps = np.linspace(0, 1, 101)
    shifts = shift_low[..., None, None] + (shift_high - shift_low)[..., None, None] * steps[:, None]
    variances = (
        variance_low[..., None, None] + (variance_high - variance_low)[..., None, None] * steps
    )
    grid = gaussian_moments(*np.broadcast_arrays(shifts, variances), 5)  # (2, 6, 101, 101, 6)
    assert np.all(np.moveaxis(low, 1, -1) <= grid.min(axis=(2, 3)) + 1e-12)
    assert np.all(np.moveaxis(high, 1, -1) >= grid.max(axis=(2, 3)) - 1e-12)
    np.testing.assert_allclose(np.moveaxis(high, 1, -1), grid.max(axis=(2, 3)), atol=1e-12)
    np.testing.assert_allclose(np.moveaxis(low, 1, -1), grid.min(axis=(2, 3)), atol=1e-5)
    with pytest.raises(ValueError, match="variance"):
        gaussian_moment_box(shift_low, shift_high, -variance_high, variance_low, 5)
    with pytest.raises(ValueError, match="shift"):
        gaussian_moment_box(shift_high, shift_low, variance_low, variance_high, 5)


def test_monomial_ranges_gather_the_addend_intervals() -> None:
    rng = np.random.default_rng(8)
    n, q = 6, 4
    low = rng.uniform(-0.5, 0.5, (2, q + 1, n))
    high = low + rng.uniform(0, 0.4, (2, q + 1, n))
    low[:, 0] = high[:, 0] = 1.0
    table = MonomialTable(n, q)
    lows, highs = table.intervals(low, high)
    for k in (0, 2, 3):
        arms = np.array(list(itertools.combinations(range(n), k)), dtype=np.intp).reshape(
            comb(n, k), k
        )
        exponents = monomials(k, q).exponents
        rows = table.index(exponents, arms)
        lo, hi = addend_intervals(exponents, arms, low, high)
        np.testing.assert_allclose(lows[:, rows], lo, rtol=1e-12)
        np.testing.assert_allclose(highs[:, rows], hi, rtol=1e-12)


def test_norm_boxes_hold_the_unbiased_variance_and_the_internal_ucb_is_optimistic() -> None:
    env = small_environment(normal=True)
    env.reset(replicate_seeds(2, 0, [0], 0))
    policy = SSEMUCBNorm(env.problem, degree=3, dictionary=QUADRATIC.names, signal_width=None)
    policy.reset(replicate_seeds(2, 0, [0], 1))
    observed = [[] for _ in range(5)]
    for t in range(25):
        actions = policy.select()
        if t < 6:  # ceil(5 / 2) = 3 initial blocks, played twice
            np.testing.assert_array_equal(actions[0], policy.blocks[t % 3])
        feedback = env.step(actions)
        policy.update(actions, feedback)
        for j in np.flatnonzero(actions[0]):
            observed[j].append(feedback.z[0, j])
    policy.t += 1
    shift_low, shift_high, variance_low, variance_high = policy.variance_boxes()
    means = np.array([np.mean(v) for v in observed])
    np.testing.assert_allclose((shift_low + shift_high)[0] / 2, means - policy.centres[0])
    unbiased = np.array([np.var(v, ddof=1) for v in observed])
    radius = (shift_high - shift_low)[0] / 2
    counts = policy.sums.counts[0]
    np.testing.assert_allclose(variance_high[0], unbiased + np.sqrt(counts / (counts - 1)) * radius)
    # the internal UCB bounds Alg. 3's sum at random (C, W) in the boxes from above
    internal = policy.internal_upper_bounds()[0]
    rng = np.random.default_rng(0)
    for _ in range(20):
        shift = rng.uniform(shift_low, shift_high)
        variance = np.where(rng.random(5) < 0.5, variance_low, variance_high)
        moments = np.moveaxis(gaussian_moments(shift, variance, 3), -1, 1)
        for group in policy.groups:
            value = (
                group.coefficients[0]
                * moments[0][group.exponents[None], group.members[:, None, :]].prod(axis=-1)
            ).sum(axis=-1)
            assert np.all(internal[group.rows] >= value - 1e-12)


def test_norm_bonus_weight_is_configurable() -> None:
    env = small_environment(normal=True)
    for weight in ("span", "none"):
        env.reset(replicate_seeds(1, 0, [0], 0))
        policy = SSEMUCBNorm(env.problem, degree=2, dictionary=QUADRATIC.names, bonus_weight=weight)
        policy.reset(replicate_seeds(1, 0, [0], 1))
        for _ in range(12):
            actions = policy.select()
            policy.update(actions, env.step(actions))
        policy.t += 1
        internal, bonus = policy.internal_upper_bounds(), policy.external_bonus()
        factor = internal.max() - internal.min() if weight == "span" else 1.0
        np.testing.assert_allclose(policy.scores() - internal, factor * bonus)
        assert bonus.max() > 0 and factor > 0


# ------------------------------------------------------------------ Alg. 4


def test_search_degree_follows_the_loop_of_alg_4() -> None:
    scores = np.zeros((3, 5, 4))
    scores[:, :, 1] = -0.4  # the smallest gap is 0.4 at every degree: stop once Gamma < 0.1
    remainders = np.array([[1.0, 0.5, 0.05, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0, 1.0], [0.0] * 5])
    result = search_degree(scores, remainders, t=50)
    assert result.degrees.tolist() == [2, 4, 0]  # first q with Gamma_q < gap / 4; else q = Q
    np.testing.assert_allclose(result.gaps, 0.4)
    assert search_degree(scores, remainders, t=1).degrees.tolist() == [1, 1, 0]  # q <= t
    tied = search_degree(np.zeros((1, 5, 4)), np.ones((1, 5)), t=50)
    assert tied.degrees.tolist() == [0] and np.isinf(tied.gaps).all()  # no gap to protect
    with pytest.raises(ValueError, match="time step"):
        search_degree(scores, remainders, t=0)


def search_inputs(weights: np.ndarray, dictionary: Dictionary, s: int, q: int):
    n = weights.shape[1]
    centres = np.full((1, n), 0.5)
    groups, super_arms = taylor_groups(weights, dictionary, centres, s, q)
    moments = np.array([[[(0.2**p if p % 2 == 0 else 0.0)] * n for p in range(q + 1)]])
    moments[:, 0] = 1.0
    low, high = moment_box(moments, np.full((1, n), 0.05), radius_multipliers(q))
    return groups, low, high, np.zeros((1, len(super_arms)))


def search_options(dictionary: Dictionary, **changes) -> QSearchOptions:
    """q-search up to degree 4 on a known DAG (the remainder's default design)."""
    return QSearchOptions(
        dictionary=dictionary, upper_triangular=True, **{"max_degree": 4, **changes}
    )


def q_search(groups, weights, moment_box, bonus, signal_box, s, options) -> DegreeSearch:
    """Alg. 4 at ``t = 100``, as :meth:`SSEMUCBQSearch._refit` runs it."""
    scores = degree_scores(groups, *moment_box, bonus, options)
    return search_degree(scores, remainder_bounds(weights, *signal_box, s, options), 100)


def test_q_search_stops_at_degree_one_on_a_linear_sem() -> None:
    """A linear SEM has no remainder beyond degree 1; at degree 0 the remainder bound ``s max
    |grad r|`` exceeds every score gap, so Alg. 4 returns ``q = 1``."""
    rng = np.random.default_rng(4)
    linear = Dictionary.from_names("linear")
    weights = random_dag(rng, 5, linear)[None]
    groups, low, high, bonus = search_inputs(weights, linear, 2, 4)
    box = (np.zeros((1, 5)), np.ones((1, 5)))
    result = q_search(groups, weights, (low, high), bonus, box, 2, search_options(linear))
    np.testing.assert_array_equal(result.remainders[0, 1:], 0.0)
    assert result.remainders[0, 0] >= result.gaps[0, 0] / 4 > 0
    assert result.degrees.tolist() == [1]


def test_q_search_remainder_vanishes_at_degree_four_on_a_quadratic_chain() -> None:
    """``y2 = b2``, ``y1 = b1 + 0.7 y2^2``, ``y0 = b0 + 0.6 y1^2``: the reward is a polynomial of
    degree 4, so ``Gamma_4 = 0 < Gamma_3``."""
    weights = np.zeros((1, 3, 3, 2))
    weights[0, 1, 2, 1], weights[0, 0, 1, 1] = 0.7, 0.6
    box = (np.zeros((1, 3)), np.ones((1, 3)))
    gamma = remainder_bounds(weights, *box, 3, search_options(QUADRATIC))
    assert gamma[0, 4] == 0.0 and gamma[0, 3] > 0
    # D^4 r / db2^4 = 0.6 * 0.7^2 * 4! is the largest fourth derivative
    assert gamma[0, 3] == pytest.approx(3**4 / factorial(4) * 0.6 * 0.7**2 * 24)
    groups, low, high, bonus = search_inputs(weights, QUADRATIC, 3, 4)
    result = q_search(groups, weights, (low, high), bonus, box, 3, search_options(QUADRATIC))
    assert result.degrees[0] <= 4 and result.remainders[0, 4] == 0.0


def test_remainder_bounds_refuse_bad_boxes() -> None:
    weights = np.zeros((1, 3, 3, 2))
    options = search_options(QUADRATIC, max_degree=2)
    with pytest.raises(ValueError, match="box"):
        remainder_bounds(weights, np.ones((1, 3)), np.zeros((1, 3)), 2, options)
    with pytest.raises(ValueError, match="remainder_arms"):
        search_options(QUADRATIC, remainder_arms=0)


def test_q_search_policy_truncates_its_jets_to_the_chosen_degree() -> None:
    env = small_environment(replicates=2)
    env.reset(replicate_seeds(6, 0, range(2), 0))
    policy = SSEMUCBQSearch(env.problem, max_degree=3, dictionary=QUADRATIC.names)
    policy.reset(replicate_seeds(6, 0, range(2), 1))
    assert policy.degrees.tolist() == [-1, -1]
    for _ in range(30):
        actions = policy.select()
        policy.update(actions, env.step(actions))
    assert np.all((policy.degrees >= 0) & (policy.degrees <= 3))
    for group in policy.groups:
        total = group.exponents.sum(axis=1)
        for r, q in enumerate(policy.degrees):
            assert not np.any(group.coefficients[r][:, total > q])


# ------------------------------------------------------------------ the policies


VARIANTS = {
    "ssem-ucb": lambda p: SSEMUCB(p, degree=2, dictionary=QUADRATIC.names, bonus_scale=0.01),
    "ssem-ucb-norm": lambda p: SSEMUCBNorm(
        p, degree=2, dictionary=QUADRATIC.names, bonus_scale=0.01
    ),
    "ssem-ucb-q-search": lambda p: SSEMUCBQSearch(
        p, max_degree=3, dictionary=QUADRATIC.names, bonus_scale=0.01
    ),
}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_variant_learns_a_small_instance_better_than_random(name: str) -> None:
    env = small_environment(horizon=150, normal=name == "ssem-ucb-norm")
    table = compare(env, {name: VARIANTS[name], "Random": RandomSuperArm}, 1, seed=4, checkpoints=3)
    final = table[table.t == 150].set_index("algorithm").cum_regret
    assert final[name] < 0.5 * final["Random"]


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_replicates_run_together_equal_replicates_run_alone(name: str) -> None:
    def played(replicates: list[int]) -> np.ndarray:
        env = small_environment(len(replicates), horizon=60, normal=name == "ssem-ucb-norm")
        env.reset(replicate_seeds(3, 0, replicates, 0))
        policy = VARIANTS[name](env.problem)
        policy.reset(replicate_seeds(3, 0, replicates, 1))
        out = []
        for _ in range(60):
            actions = policy.select()
            assert np.all(actions.sum(axis=1) <= 2)
            out.append(actions)
            policy.update(actions, env.step(actions))
        return np.stack(out, axis=1)

    together = played([0, 1, 2])
    np.testing.assert_array_equal(together[2], played([2])[0])


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: SSEMUCBNorm(p, bonus_weight="half"), "bonus_weight"),
        (lambda p: SSEMUCBNorm(p, internal_ucb="vertex"), "per-addend"),
        (lambda p: SSEMUCBNorm(p, degree=0), "degree q"),
        (lambda p: SSEMUCBQSearch(p, degree=3), "max_degree"),
        (lambda p: SSEMUCBQSearch(p, max_degree=0), "max_degree"),
        (lambda p: SSEMUCBQSearch(p, remainder_points=0), "remainder"),
        (lambda p: SSEMUCBQSearch(p, internal_ucb="vertex"), "per-addend"),
    ],
)
def test_bad_options_are_refused(make, message: str) -> None:
    problem = SimpleNamespace(n_arms=5, super_arm_size=2, horizon=10, upper_triangular=True)
    with pytest.raises(ValueError, match=message):
        make(problem)


def test_variants_are_registered() -> None:
    assert POLICIES["ssem-ucb"] is SSEMUCB
    assert POLICIES["ssem-ucb-jo"] is SSEMUCBJO
    assert POLICIES["ssem-ucb-norm"] is SSEMUCBNorm
    assert POLICIES["ssem-ucb-q-search"] is SSEMUCBQSearch
