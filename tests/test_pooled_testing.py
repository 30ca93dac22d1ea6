"""Pooled testing (EXCBO Sec. 7.4): the vectorised array-testing Monte Carlo against a plain
loop version of the same model, closed forms at prevalence 0 and 1, the interpolation table,
the period dynamics and the COVID bandit."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from causalbandits.envs import covid_testing as ct
from causalbandits.envs import pooled_testing as pt
from causalbandits.envs.pooled_testing import pooled_test_counts, test_properties

P = np.asarray(pt.HOUSEHOLD_SIZE_PROBABILITIES)
K = np.arange(1, 8)
SMALL = {"households": pt.TEST_HOUSEHOLDS, "replications": pt.TEST_REPLICATIONS}


# -- a plain-loop version of the model (pooled_testing's module docstring) ----------------------


def loop_test_counts(
    prevalence: float, group_size: int, households: int, replications: int, seed: int
) -> np.ndarray:
    """Per replication ``(infected, missed, non_infected, false_quarantined, tests, people)``,
    person by person and pool by pool with Python's ``random`` (also timed by
    ``benchmarks/bench_pooled_testing.py`` as the pure-Python reference)."""
    rng = random.Random(seed)
    sar = pt.SECONDARY_ATTACK_RATE
    mean_size = sum(
        k * p for k, p in zip(range(1, 8), pt.HOUSEHOLD_SIZE_PROBABILITIES, strict=True)
    )

    def share(r: float) -> float:
        return (
            sum(
                k * (r + sar * (1 - r) - sar * (1 - r) ** k) * p
                for k, p in zip(range(1, 8), pt.HOUSEHOLD_SIZE_PROBABILITIES, strict=True)
            )
            / mean_size
        )

    low, high = 0.0, 1.0
    for _ in range(100):  # bisection: share is increasing, share(0) = 0, share(1) = 1
        mid = (low + high) / 2
        low, high = (mid, high) if share(mid) < prevalence else (low, mid)
    r = 0.0 if prevalence == 0 else 1.0 if prevalence == 1 else (low + high) / 2
    cdf = list(np.cumsum(pt.HOUSEHOLD_SIZE_PROBABILITIES))[:-1]
    side = math.ceil(group_size / mean_size)
    rows = []
    for _ in range(replications):
        homes = []  # per household: [(infected, swab successful), ...]
        for _ in range(households):
            u = rng.random()
            size = 1 + sum(u >= c for c in cdf)
            primary = [rng.random() < r for _ in range(size)]
            outbreak = any(primary)
            people = []
            for is_primary in primary:
                infected = is_primary or (outbreak and rng.random() < sar)
                people.append((infected, rng.random() >= pt.SWAB_FNR))
            homes.append(people)
        quarantined = [False] * households
        tests = 0

        def pool_positive(pool: list[int], homes: list = homes) -> bool:
            k = sum(inf and swab for h in pool for inf, swab in homes[h])
            if k == 0:
                return rng.random() < pt.POOL_FPR
            fnr = pt.DILUTION_BASE ** (k / len(pool) ** pt.DILUTION_EXPONENT)
            return rng.random() >= fnr

        if group_size == 1:
            for h, people in enumerate(homes):
                for infected, swab in people:
                    tests += 1
                    if infected and swab:
                        positive = rng.random() >= pt.DILUTION_BASE
                    else:
                        positive = rng.random() < pt.POOL_FPR
                    quarantined[h] = quarantined[h] or positive
        else:
            for start in range(0, households, side * side):
                block = list(range(start, min(start + side * side, households)))
                row_pools = [block[i : i + side] for i in range(0, len(block), side)]
                col_pools = [block[c::side] for c in range(min(side, len(block)))]
                tests += len(row_pools) + len(col_pools)
                row_pos = [pool_positive(pool) for pool in row_pools]
                col_pos = [pool_positive(pool) for pool in col_pools]
                for position, h in enumerate(block):
                    row, col = divmod(position, side)
                    quarantined[h] = row_pos[row] and col_pos[col]
        infected = missed = non_infected = false_q = people_count = 0
        for h, people in enumerate(homes):
            for is_infected, _ in people:
                people_count += 1
                infected += is_infected
                missed += is_infected and not quarantined[h]
                non_infected += not is_infected
                false_q += (not is_infected) and quarantined[h]
        rows.append((infected, missed, non_infected, false_q, tests, people_count))
    return np.array(rows, dtype=np.int64)


def _ratios(counts: np.ndarray) -> np.ndarray:
    """``(qfnr, qfpr, tests per person)`` of per-replication counts ``(..., 6, R)`` pooled
    over replications."""
    total = counts.sum(axis=-1)
    return np.stack(
        [
            total[..., 1] / np.maximum(total[..., 0], 1),
            total[..., 3] / np.maximum(total[..., 2], 1),
            total[..., 4] / total[..., 5],
        ],
        axis=-1,
    )


def _se_agree(a: np.ndarray, b: np.ndarray, z: float = 4.0) -> None:
    """Means over axis 0 agree within ``z`` standard errors of their difference."""
    se = np.sqrt(a.var(axis=0, ddof=1) / len(a) + b.var(axis=0, ddof=1) / len(b))
    diff = np.abs(a.mean(axis=0) - b.mean(axis=0))
    assert np.all(diff <= z * se + 1e-12), (a.mean(axis=0), b.mean(axis=0), se)


@pytest.mark.parametrize("prevalence", [0.03, 0.3])
def test_vectorised_simulator_agrees_with_the_loop_version(prevalence):
    """Independent seeds of both versions; group sizes 1 (individual), 2 (1 x 1 arrays), 7
    (3 x 3 arrays, the last one partial) and 30 (one partial 13 x 13 array)."""
    groups, seeds, households, replications = [1, 2, 7, 30], range(30), 150, 3
    fast = np.stack(
        [
            np.stack(pooled_test_counts(prevalence, groups, households, replications, s), 1)
            for s in seeds
        ]
    )  # (seeds, groups, 6, R)
    slow = np.stack(
        [
            np.stack(
                [loop_test_counts(prevalence, g, households, replications, s).T for g in groups]
            )
            for s in seeds
        ]
    )
    _se_agree(_ratios(fast), _ratios(slow))
    _se_agree(fast.sum(-1)[..., :4].astype(float), slow.sum(-1)[..., :4].astype(float))
    # tests per person do not depend on the infections: the same in every seed's structure
    assert np.all(fast[:, 1:, 4] == slow[:, 1:, 4])


def test_infected_share_matches_the_prevalence():
    p = np.array([0.001, 0.01, 0.1, 0.5, 0.9])
    assert np.allclose(pt.expected_prevalence(pt.primary_case_probability(p)), p, atol=1e-12)
    assert pt.primary_case_probability(0.0) == 0 and pt.primary_case_probability(1.0) == 1
    counts = pooled_test_counts(p, 2, 1000, 50, seed=3)
    share = counts.infected / counts.people  # (5, R)
    se = share.std(axis=1, ddof=1) / np.sqrt(share.shape[1])
    assert np.all(np.abs(share.mean(axis=1) - p) < 4 * se)


def test_group_size_one_is_one_test_per_person():
    result = test_properties([0.0, 0.01, 0.4, 1.0], 1, **SMALL)
    assert np.all(result.tests_per_person == 1.0)
    counts = pooled_test_counts(0.01, [1, 2, 3, 30], 1000, 10, seed=1)
    assert np.all(counts.tests[0] == counts.people[0])
    # 1 x 1 arrays (group size 2): a row and a column per household
    assert np.all(counts.tests[1] == 2 * 1000)
    # 2 x 2 arrays: 250 full ones, two rows and two columns each
    assert np.all(counts.tests[2] == 250 * 4)
    # side ceil(30 / 2.4485) = 13: 5 full arrays and 155 households in the last one
    # (rows: ceil(1000 / 13) = 77; columns: 5 * 13 + 13)
    assert pt.array_side(30) == 13
    assert np.all(counts.tests[3] == 77 + 78)


def test_prevalence_zero_and_one_closed_forms():
    counts = pooled_test_counts([[0.0], [1.0]], [1, 2, 10, 200], 1000, 40, seed=5)
    props = counts.properties()
    assert np.all(props.qfnr[0] == 0) and np.all(props.qfpr[1] == 0)  # 0/0 counts as 0
    # prevalence 0: an array household is quarantined when both of its pools are false
    # positives (0.1^2); under individual testing when any member is (1 - 0.9^k)
    expected_fpr = [K @ (P * (1 - 0.9**K)) / pt.MEAN_HOUSEHOLD_SIZE] + [pt.POOL_FPR**2] * 3
    per_rep = counts.false_quarantined[0] / counts.non_infected[0]
    se = per_rep.std(axis=1, ddof=1) / np.sqrt(per_rep.shape[1])
    assert np.all(np.abs(props.qfpr[0] - expected_fpr) < 4 * se)
    # prevalence 1, individual testing: a person tests negative with probability
    # 0.7 * 0.05 + 0.3 * 0.9, a household of k is missed when all k do
    negative = (1 - pt.SWAB_FNR) * pt.DILUTION_BASE + pt.SWAB_FNR * (1 - pt.POOL_FPR)
    expected_fnr = K @ (P * negative**K) / pt.MEAN_HOUSEHOLD_SIZE
    per_rep = counts.missed[1, 0] / counts.infected[1, 0]
    se = per_rep.std(ddof=1) / np.sqrt(len(per_rep))
    assert abs(props.qfnr[1, 0] - expected_fnr) < 4 * se


def test_deterministic_for_a_seed_and_common_random_numbers():
    a = test_properties([0.02, 0.2], [[1], [7], [50]], **SMALL, seed=11)
    b = test_properties([0.02, 0.2], [[1], [7], [50]], **SMALL, seed=11)
    for x, y in zip(a, b, strict=True):
        assert np.array_equal(x, y) and x.shape == (3, 2)
    single = test_properties(0.2, 7, **SMALL, seed=11)
    assert all(float(s) == x[1, 1] for s, x in zip(single, a, strict=True))
    other = test_properties([0.02, 0.2], [[1], [7], [50]], **SMALL, seed=12)
    assert not np.array_equal(a.qfpr, other.qfpr)
    seq = np.random.SeedSequence(11)
    assert np.array_equal(test_properties(0.2, 7, **SMALL, seed=seq).qfnr, single.qfnr)


@pytest.fixture(scope="module")
def small_table() -> pt.TestPropertiesTable:
    return pt.test_properties_table(**SMALL)


def test_table_equals_the_simulator_on_the_grid(small_table):
    direct = np.stack(
        test_properties(pt.PREVALENCE_GRID[:, None], np.arange(1, 201)[None], **SMALL), -1
    )
    values = small_table.values
    assert np.array_equal(values[1:, :, 0], direct[1:, :, 0])  # qfnr at 0: its limit
    assert np.array_equal(values[0, :, 0], direct[1, :, 0])
    assert np.array_equal(values[:-1, :, 1:], direct[:-1, :, 1:])
    assert np.array_equal(values[-1, :, 1], direct[-2, :, 1])  # qfpr at 1: its limit
    at_grid = small_table(pt.PREVALENCE_GRID[:, None], np.arange(1, 201)[None])
    assert np.allclose(np.stack(at_grid, -1), values, rtol=0, atol=1e-15)


def test_table_interpolates_within_the_measured_error(small_table):
    """Off-grid prevalences against the simulator at the same (reduced) fidelity, in the
    shares the dynamics use: free infected ``p qfnr`` and quarantined healthy ``(1 - p)
    qfpr`` (a raw ``qfnr`` rests on a handful of infected people at low prevalence). The
    bounds are about twice the errors ``benchmarks/bench_pooled_testing.py`` measures at this
    fidelity (worst 0.0007 and 0.016); at full fidelity they are 5-10 times smaller."""
    grid = pt.PREVALENCE_GRID
    between = grid[:-1] + np.random.default_rng(1).random(len(grid) - 1) * np.diff(grid)
    p, groups = between[:, None], np.array([1, 2, 5, 13, 40, 100, 200])[None]
    direct = test_properties(p, groups, **SMALL)
    table = small_table(p, groups)
    free_infected = p * np.abs(table.qfnr - direct.qfnr)
    quarantined_healthy = (1 - p) * np.abs(table.qfpr - direct.qfpr)
    assert np.median(free_infected) < 1e-4 and free_infected.max() < 0.0015
    assert np.median(quarantined_healthy) < 0.002 and quarantined_healthy.max() < 0.03
    assert np.array_equal(table.tests_per_person, direct.tests_per_person)


def test_table_disk_cache(tmp_path):
    kwargs = {"households": 20, "replications": 2, "seed": 4, "grid": np.linspace(0, 1, 5)}
    table = pt.test_properties_table(**kwargs, cache_dir=tmp_path)
    files = list(tmp_path.glob("pooled-testing-*.npz"))
    assert len(files) == 1
    again = pt.test_properties_table(**kwargs, cache_dir=tmp_path)
    assert np.array_equal(again.values, table.values) and again is not table
    other = pt.test_properties_table(**{**kwargs, "seed": 5}, cache_dir=tmp_path)
    assert len(list(tmp_path.glob("*.npz"))) == 2 and not np.array_equal(other.values, table.values)


# -- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize("prevalence", [-0.01, 1.01, np.nan, np.inf, [0.5, -1.0]])
def test_bad_prevalence(prevalence):
    with pytest.raises(ValueError, match="prevalence"):
        test_properties(prevalence, 5, **SMALL)


@pytest.mark.parametrize("group_size", [0, -3, 2.5, np.nan, np.inf, True, "5"])
def test_bad_group_size(group_size):
    with pytest.raises(ValueError, match="group sizes"):
        test_properties(0.1, group_size, **SMALL)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"households": 0},
        {"replications": 0},
        {"households": 2.5},
        {"replications": -1},
        {"households": np.nan},
    ],
)
def test_bad_fidelity(kwargs):
    with pytest.raises(ValueError, match="households|replications"):
        test_properties(0.1, 5, **{**SMALL, **kwargs})


def test_bad_table_queries(small_table):
    with pytest.raises(ValueError, match="group sizes 1..200"):
        small_table.checked(0.1, 201)
    with pytest.raises(ValueError, match="prevalence"):
        small_table.checked(np.nan, 3)
    with pytest.raises(ValueError, match="seed"):
        test_properties(0.1, 3, **SMALL, seed=-1)


# -- the COVID problem ---------------------------------------------------------------------


def test_period_dynamics_by_hand():
    i, s, r, qfnr, qfpr, tests = 0.02, 0.9, 0.08, 0.2, 0.05, 0.3
    free_i, free_s, free_r = 0.02 * 0.2, 0.9 * 0.95, 0.08 * 0.95  # 0.004, 0.855, 0.076
    quarantined = 0.02 * 0.8 + 0.9 * 0.05 + 0.08 * 0.05  # 0.065
    growth = 2 ** (14 / 3 * free_s / (free_s + free_i + free_r))  # alpha^(14 frac_sus)
    new = free_i * (growth - 1)
    out = ct.period_dynamics(i, s, r, pt.TestProperties(qfnr, qfpr, tests))
    assert math.isclose(out.loss, 0.001 * 0.3 + 0.01 * quarantined + new, rel_tol=1e-12)
    assert math.isclose(out.infected, new, rel_tol=1e-12)
    assert math.isclose(out.susceptible, 0.9 - new, rel_tol=1e-12)
    assert math.isclose(out.recovered, 0.1, rel_tol=1e-12)
    assert math.isclose(new, 0.004 * (2 ** (14 / 3 * 0.855 / 0.935) - 1), rel_tol=1e-12)
    nobody_free = ct.period_dynamics(0.5, 0.5, 0.0, pt.TestProperties(0.0, 1.0, 0.1))
    assert nobody_free.infected == 0 and math.isclose(nobody_free.loss, 0.0001 + 0.01)


def test_pool_sizes():
    g = np.arange(1, 201)
    assert np.array_equal(ct.pool_size(ct.pool_size_action(g)), g)
    assert ct.pool_size(0.0) == 1 and ct.pool_size(1.0) == 200
    assert ct.pool_size(0.5) == int(199 * 0.5 + 1)
    classes = ct.pool_size_classes()
    assert len(classes) == 83 and classes[0] == 1 and classes[1] == 2
    assert len(np.unique(pt.array_side(classes))) == 83


def test_network_structure_and_mechanisms(small_table):
    net = ct.covid_network(small_table)
    assert net.names == ct.NODE_NAMES
    assert net.parents[:3] == ((), (), ())
    assert all(net.parents[k] == (3 * (k // 3) - 3, 3 * (k // 3) - 2) for k in range(3, 9))
    assert net.active_inputs == tuple((t,) for t in range(3) for _ in range(3))
    a = np.array([0.3, 0.6, 0.9])
    x = net.evaluate(a, np.zeros(9))
    i, s, r = ct.INITIAL_INFECTED, ct.INITIAL_SUSCEPTIBLE, 0.0
    for t in range(3):
        props = small_table(i, ct.pool_size(a[t]))
        out = ct.period_dynamics(i, s, r, props)
        assert np.allclose(x[3 * t : 3 * t + 3], 100 * np.array([*out[:2], out[3]]))
        i, s, r = out.infected, out.susceptible, out.recovered
    # noisy parents outside [0, 100] are read clipped: I in [0, 1], S in [0, 1 - I]
    u = np.zeros(9)
    u[0], u[1] = 150.0, 40.0
    clipped = net.evaluate(a, u)
    props = small_table(1.0, ct.pool_size(a[1]))
    out = ct.period_dynamics(1.0, 0.0, 0.0, props)
    assert np.allclose(clipped[3:6], 100 * np.array([*out[:2], out[3]]))


def test_objective_on_numpy_and_torch():
    objective = ct.NegativeTotalLoss()
    x = np.arange(18.0).reshape(2, 9)
    assert np.array_equal(objective(x), -(x[:, 2] + x[:, 5] + x[:, 8]))
    assert objective.nodes(9) == (2, 5, 8)
    with pytest.raises(ValueError, match="loss nodes"):
        objective.nodes(6)
    torch = pytest.importorskip("torch")
    assert torch.equal(objective(torch.as_tensor(x)), torch.as_tensor(objective(x)))


def test_covid_bandit_optimum_beats_random_actions():
    env = ct.covid_pooled_testing(**SMALL, mc_samples=300)
    assert env.horizon == 58 and env.problem.n_actions == 3 and env.problem.noise_std == 0.2
    best = env.optimal_action
    assert env.pseudo_regret(best) == 0
    actions = np.random.default_rng(0).random((400, 3))
    assert np.all(env.expected_reward(actions) <= env.optimum)
    # no single period's pool size improves on it (coordinate-wise optimality)
    for t in range(3):
        trial = np.repeat(best[None], 200, axis=0)
        trial[:, t] = ct.pool_size_action(np.arange(1, 201))
        assert np.all(env.expected_reward(trial) <= env.optimum)
    env.reset(seed=1, replicates=4)
    x = env.step(np.tile(best, (4, 1)))
    assert x.shape == (4, 9) and np.all(np.isfinite(x))
    y = env.objective(x)
    assert y.shape == (4,) and np.all(y < 0)
