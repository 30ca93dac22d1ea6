"""The pooled-testing table's grid, constructor, interpolation and checks against their
documented definitions, on small hand-made tables (issue 32, mutation testing)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from causalbandits.envs import pooled_testing as pt


def test_prevalence_grid_is_the_documented_piecewise_grid() -> None:
    """``0``, 13 log-spaced points on ``[1e-4, 1e-2]``, 14 on ``(0.01, 0.05]``, 19 on ``(0.05,
    0.2]`` and 30 on ``(0.2, 1]`` (each of the last three evenly spaced): 77 increasing
    points with 0.01 exactly, read-only, and the module's ``PREVALENCE_GRID``."""
    grid = pt._prevalence_grid()
    assert grid.shape == (77,) and grid[0] == 0.0 and grid[-1] == 1.0
    assert np.all(np.diff(grid) > 0)
    logs = np.log10(grid[1:14])
    np.testing.assert_allclose(logs, np.arange(-4.0, -1.9, 1 / 6), rtol=0, atol=1e-12)
    assert grid[13] == 0.01
    for piece, (low, high, points) in zip(
        (grid[14:28], grid[28:47], grid[47:]),
        ((0.01, 0.05, 14), (0.05, 0.2, 19), (0.2, 1.0, 30)),
        strict=True,
    ):
        step = (high - low) / points
        np.testing.assert_allclose(piece, low + step * np.arange(1, points + 1), atol=1e-15)
    assert not grid.flags.writeable
    with pytest.raises(ValueError):
        grid[1] = 0.5
    np.testing.assert_array_equal(pt.PREVALENCE_GRID, grid)


def small_table() -> pt.TestPropertiesTable:
    """Prevalences ``0, 0.5, 1`` and group sizes 1, 2: ``qfnr = p + g``, ``qfpr = 2 p``,
    tests per person ``1 / g`` (linear in ``p``, so interpolation is exact)."""
    grid = np.array([0.0, 0.5, 1.0])
    g = np.array([1.0, 2.0])
    values = np.stack(
        np.broadcast_arrays(
            grid[:, None] + g, 2 * grid[:, None] + 0 * g, 1 / g + 0 * grid[:, None]
        ),
        axis=-1,
    )
    return pt.TestPropertiesTable(grid, values)


def test_table_interpolates_linearly_between_grid_points() -> None:
    """Inside a grid interval the table is the straight line between its end values (exact for
    values linear in ``p``), at ``p = 0`` and ``p = 1`` the end values; group sizes pick
    their column; the result has the broadcast shape."""
    table = small_table()
    assert table.max_group_size == 2
    p = np.array([[0.0], [0.2], [0.5], [0.8], [1.0]])
    g = np.array([[1, 2]])
    qfnr, qfpr, tests = table(p, g)
    assert qfnr.shape == qfpr.shape == tests.shape == (5, 2)
    np.testing.assert_allclose(qfnr, p + g, rtol=0, atol=1e-15)
    np.testing.assert_allclose(qfpr, 2 * p + 0 * g, rtol=0, atol=1e-15)
    np.testing.assert_allclose(tests, 1 / g + 0 * p, rtol=0, atol=1e-15)
    checked = table.checked(p, g)
    for a, b in zip(checked, (qfnr, qfpr, tests), strict=True):
        np.testing.assert_array_equal(a, b)


def test_table_queries_are_checked() -> None:
    """``checked`` accepts group sizes up to the table's largest (2 here) and refuses larger
    ones, non-integers, sizes below 1 and prevalences outside ``[0, 1]``, each named."""
    table = small_table()
    assert float(table.checked(0.5, 2).qfnr) == pytest.approx(2.5)
    with pytest.raises(ValueError, match=r"^the table covers group sizes 1\.\.2$"):
        table.checked(0.5, 3)
    with pytest.raises(ValueError, match=r"^group sizes must be integers >= 1, got \[0\]$"):
        table.checked(0.5, 0)
    with pytest.raises(ValueError, match=r"^group sizes must be integers >= 1, got \[1\.5\]$"):
        table.checked(0.5, 1.5)
    with pytest.raises(ValueError, match=r"^prevalence must lie in \[0, 1\], got values in"):
        table.checked(1.5, 1)


@pytest.mark.parametrize(
    ("grid", "shape", "message"),
    [
        ([0.1, 0.5, 1.0], (3, 2, 3), "start at 0 and end at 1"),
        ([0.0, 0.5, 0.9], (3, 2, 3), "start at 0 and end at 1"),
        ([0.0], (1, 2, 3), "start at 0 and end at 1"),
        ([[0.0, 1.0]], (2, 2, 3), "start at 0 and end at 1"),
        ([[0.0, 1.0], [0.0, 1.0]], (2, 2, 3), "start at 0 and end at 1"),
        ([0.0, 0.6, 0.5, 1.0], (4, 2, 3), "must be increasing"),
        ([0.0, 0.5, 0.5, 1.0], (4, 2, 3), "must be increasing"),
        ([0.0, 0.5, 1.0], (3, 2, 2), r"values must have shape \(3, G, 3\), got \(3, 2, 2\)"),
        ([0.0, 0.5, 1.0], (2, 2, 3), r"values must have shape \(3, G, 3\), got \(2, 2, 3\)"),
        ([0.0, 0.5, 1.0], (3, 6), r"values must have shape \(3, G, 3\), got \(3, 6\)"),
    ],
)
def test_table_constructor_refuses_bad_grids_and_values(grid, shape, message) -> None:
    """The grid is a 1-D increasing sequence from 0 to 1 (at least two points) and the values
    are ``(len(grid), G, 3)``."""
    with pytest.raises(ValueError, match=message):
        pt.TestPropertiesTable(np.array(grid), np.zeros(shape))


def test_table_constructor_accepts_the_smallest_grid_and_converts_to_floats() -> None:
    """Two points ``[0, 1]`` suffice; integer grids and values are read as floats."""
    table = pt.TestPropertiesTable(np.array([0, 1]), np.ones((2, 1, 3), dtype=int))
    assert table.grid.dtype == float and table.values.dtype == float
    assert float(table(0.25, 1).tests_per_person) == 1.0


def test_properties_are_ratios_of_sums_and_zero_over_zero_is_zero() -> None:
    """``qfnr = sum missed / sum infected``, ``qfpr = sum false quarantined / sum non-infected``,
    tests per person ``sum tests / sum people``, over the replications (last axis); a ratio
    whose denominator sums to 0 is 0, one whose denominator is a single person is not."""
    counts = pt.TestCounts(
        infected=np.array([[1, 0], [0, 0]]),
        missed=np.array([[1, 0], [0, 0]]),
        non_infected=np.array([[0, 1], [3, 4]]),
        false_quarantined=np.array([[0, 1], [1, 2]]),
        tests=np.array([[2, 2], [3, 5]]),
        people=np.array([[1, 1], [3, 4]]),
    )
    qfnr, qfpr, tests = counts.properties()
    np.testing.assert_array_equal(qfnr, [1.0, 0.0])
    np.testing.assert_array_equal(qfpr, [1.0, 3 / 7])
    np.testing.assert_array_equal(tests, [2.0, 8 / 7])


def test_primary_case_probability_inverts_the_expected_prevalence_in_any_shape() -> None:
    """``r`` solves ``f(r) = prevalence`` (``f`` written out here from the module docstring)
    to 1e-15, element by element in the prevalence's shape; 0 and 1 map to themselves."""
    p = np.array([[0.0, 1e-4, 0.01], [0.3, 0.99, 1.0]])
    r = pt.primary_case_probability(p)
    assert r.shape == (2, 3) and r[0, 0] == 0.0 and r[1, 2] == 1.0
    k, sizes = np.arange(1, 8), np.asarray(pt.HOUSEHOLD_SIZE_PROBABILITIES)
    sar = pt.SECONDARY_ATTACK_RATE

    def share(x: float) -> float:
        return float(k * (x + sar * (1 - x) - sar * (1 - x) ** k) @ sizes / (k @ sizes))

    for value, root in zip(p.ravel()[1:-1], r.ravel()[1:-1], strict=True):
        assert 0 < root < 1 and share(root) == pytest.approx(value, rel=1e-13, abs=1e-15)
    assert pt.primary_case_probability(0.25).shape == ()


def test_household_sizes_follow_the_us_distribution() -> None:
    """10,000 households of one population draw: the sizes 1..7 follow
    ``HOUSEHOLD_SIZE_PROBABILITIES`` (chi-square statistic below 22.46, the 0.999 quantile
    with 6 degrees of freedom; size 7, p = 0.0125, included)."""
    population = pt._Population.draw(1000, 10, np.random.SeedSequence(0))
    observed = np.bincount(population.sizes.ravel(), minlength=8)[1:]
    assert observed.sum() == 10_000 and observed[-1] > 0
    expected = 10_000 * np.asarray(pt.HOUSEHOLD_SIZE_PROBABILITIES)
    assert np.sum((observed - expected) ** 2 / expected) < 22.46


def test_table_settings_are_checked_naming_them(tmp_path) -> None:
    """Households, replications and the largest group size are integers >= 1 and the seed a
    non-negative integer, each refused by name; a cache folder that does not exist yet is
    created (with its parents)."""
    with pytest.raises(ValueError, match=r"^households must be an integer >= 1, got 0$"):
        pt.test_properties_table(households=0)
    with pytest.raises(ValueError, match=r"^replications must be an integer >= 1, got 0$"):
        pt.test_properties_table(replications=0)
    with pytest.raises(ValueError, match=r"^max_group_size must be an integer >= 1, got 0$"):
        pt.TestPropertiesTable.build(households=5, replications=1, max_group_size=0)
    for seed in (-1, True, 1.5):
        with pytest.raises(ValueError, match=r"^the table's seed must be a non-negative integer"):
            pt.test_properties_table(households=5, replications=1, seed=seed)
    folder = tmp_path / "new" / "cache"
    small = {"households": 6, "replications": 1, "grid": np.array([0.0, 1.0]), "max_group_size": 3}
    table = pt.test_properties_table(**small, cache_dir=folder)
    assert len(list(folder.glob("pooled-testing-*.npz"))) == 1
    assert table.values.shape == (2, 3, 3)


def padded(values: np.ndarray, side: int) -> np.ndarray:
    """``(R, N)`` household values laid out row by row in ``side x side`` arrays, zeros after
    the last household (the module docstring's layout, written out here)."""
    reps, n = values.shape
    arrays = -(-n // (side * side))
    out = np.zeros((reps, arrays * side * side), dtype=np.int64)
    out[:, :n] = values
    return out.reshape(reps, arrays, side, side)


@pytest.mark.parametrize("group_size", [2, 8, 30])
def test_array_pools_follow_the_documented_model(group_size: int) -> None:
    """174 households in arrays of side 1 (group size 2), 4 (8) or 13 (30; the last array holds
    5 households: one row, columns of one household, 8 empty columns): every non-empty row and
    column is one test; a pool with ``k >= 1`` detectable infections among ``n`` households
    is positive with probability ``1 - 0.05^(k / n^0.076)`` (else 0.1); a household is
    quarantined at a positive row and a positive column. Each pool's uniform is put 1e-9
    below or above its documented probability, so every pool's result is fixed by the
    formula, and the layout's counts equal this restatement exactly."""
    population = pt._Population.draw(174, 3, np.random.SeedSequence(3))
    side = int(pt.array_side(group_size))
    _, i_h, k_h = population.household_counts(float(pt.primary_case_probability(0.3)))
    sizes = padded(population.sizes, side)
    present = sizes > 0
    row_n, col_n = present.sum(axis=3), present.sum(axis=2)
    layout = pt._Layout.build(population, side)
    np.testing.assert_array_equal(layout.tests, (row_n > 0).sum((1, 2)) + (col_n > 0).sum((1, 2)))

    def probability(k: np.ndarray, n: np.ndarray) -> np.ndarray:
        hit = 1 - pt.DILUTION_BASE ** (k / np.maximum(n, 1) ** pt.DILUTION_EXPONENT)
        return np.where(k > 0, hit, pt.POOL_FPR)

    rng = np.random.default_rng(4)
    k_pad, i_pad = padded(k_h, side), padded(i_h, side)
    p_rows, p_cols = probability(k_pad.sum(axis=3), row_n), probability(k_pad.sum(axis=2), col_n)
    row_u = p_rows + np.where(rng.random(p_rows.shape) < 0.5, -1e-9, 1e-9)
    col_u = p_cols + np.where(rng.random(p_cols.shape) < 0.5, -1e-9, 1e-9)
    layout = dataclasses.replace(layout, row_u=row_u, col_u=col_u)
    rows, cols = (row_u < p_rows) & (row_n > 0), (col_u < p_cols) & (col_n > 0)
    quarantined = rows[..., :, None] & cols[..., None, :]
    caught = np.where(quarantined, i_pad, 0).sum(axis=(1, 2, 3))
    people = np.where(quarantined, sizes, 0).sum(axis=(1, 2, 3))
    missed, false_q = layout.quarantine(i_h, k_h)
    np.testing.assert_array_equal(missed, i_h.sum(axis=1) - caught)
    np.testing.assert_array_equal(false_q, people - caught)
    assert caught.sum() > 0 and (people - caught).sum() > 0
    if side == 13:
        assert (col_n == 1).any() and (col_n == 0).any()


def test_group_sizes_become_integer_array_sides_and_bad_seeds_are_refused() -> None:
    """``check_group_size`` returns int64 (also from whole floats), ``array_side`` integer sides
    ``ceil(g / 2.4485)`` (0 for group size 1); a seed that is a bool, not whole or negative is
    refused, and a bad fidelity names its parameter."""
    assert pt.check_group_size(np.array([2.0, 7.0])).dtype == np.int64
    sides = pt.array_side([1, 2, 8, 30])
    assert sides.dtype.kind == "i" and sides.tolist() == [0, 1, 4, 13]
    for seed in (True, 2.5, -1):
        with pytest.raises(ValueError, match=r"^seed must be a non-negative integer"):
            pt.test_properties(0.1, 3, households=5, replications=1, seed=seed)
    with pytest.raises(ValueError, match=r"^households must be an integer >= 1, got 0$"):
        pt.test_properties(0.1, 3, households=0, replications=1)
    with pytest.raises(ValueError, match=r"^replications must be an integer >= 1, got 0$"):
        pt.test_properties(0.1, 3, households=5, replications=0)


def test_pool_uniforms_have_a_stream_of_their_own_per_array_side() -> None:
    """The pool results of each array side come from a stream of their own (module
    docstring): the uniforms of sides 1..4 differ from each other and from the individual
    tests' uniforms of the same population."""
    population = pt._Population.draw(40, 2, np.random.SeedSequence(7))
    firsts = [population.test[:8]]
    for side in (1, 2, 3, 4):
        layout = pt._Layout.build(population, side)
        firsts.append(np.concatenate([layout.row_u[0].ravel(), layout.col_u[0].ravel()])[:8])
    for a in range(len(firsts)):
        for b in range(a):
            assert not np.array_equal(firsts[a], firsts[b])
