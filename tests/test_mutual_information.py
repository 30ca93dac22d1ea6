import numpy as np
import pytest
from scipy.spatial import cKDTree
from scipy.special import digamma

from causalbandits.estimators import mutual_information
from causalbandits.estimators.mutual_information import (
    _constants,
    _sorting,
    ksg_mutual_information,
    ksg_mutual_information_columns,
    ksg_terms,
    ksg_value,
)


def brute_force_ksg2(x, y, k):
    """KSG algorithm 2 straight from the definition, O(n^2), on standardised data."""
    x, y = x / x.std(), y / y.std()
    n = x.size
    dx, dy = np.abs(x[:, None] - x), np.abs(y[:, None] - y)
    joint = np.maximum(dx, dy)
    np.fill_diagonal(joint, np.inf)
    total = 0.0
    for i in range(n):
        nearest = np.argsort(joint[i])[:k]
        eps_x, eps_y = dx[i, nearest].max(), dy[i, nearest].max()
        n_x = np.sum(dx[i] <= eps_x) - 1  # minus the point itself
        n_y = np.sum(dy[i] <= eps_y) - 1
        total += digamma(n_x) + digamma(n_y)
    return digamma(k) - 1 / k - total / n + digamma(n)


def correlated(rho, n, rng):
    z = rng.standard_normal((n, 2))
    return z[:, 0], rho * z[:, 0] + np.sqrt(1 - rho**2) * z[:, 1]


@pytest.mark.parametrize("k", [1, 3, 5])
def test_equals_the_brute_force_definition(k, rng):
    x, y = correlated(0.7, 200, rng)
    y = y + 0.3 * x**2  # non-Gaussian dependence
    assert ksg_mutual_information(x, y, k=k, jitter=0.0) == pytest.approx(
        brute_force_ksg2(x, y, k), abs=1e-12
    )


@pytest.mark.parametrize("rho", [0.0, 0.3, 0.6, 0.9])
def test_matches_the_gaussian_closed_form(rho, rng):
    # One estimate at n = 2000 has a standard deviation of 0.015-0.025 nats (60 replicates
    # at each rho) and a bias below 0.01; the mean of four has sd <= 0.0125, so 0.05 nats
    # is 3 sd beyond the bias. Dropping -1/k would shift it by 0.2.
    truth = -0.5 * np.log(1 - rho**2)
    estimates = [ksg_mutual_information(*correlated(rho, 2000, rng), rng=rng) for _ in range(4)]
    assert np.mean(estimates) == pytest.approx(truth, abs=0.05)


def test_is_scale_free_and_symmetric(rng):
    x, y = correlated(0.5, 500, rng)
    base = ksg_mutual_information(x, y, rng=1)
    assert ksg_mutual_information(x, 1e3 * y - 7, rng=1) == pytest.approx(base, abs=1e-6)
    assert ksg_mutual_information(y, x, jitter=0.0) == pytest.approx(
        ksg_mutual_information(x, y, jitter=0.0), abs=1e-12
    )


def test_columns_equal_pairwise_calls(rng):
    x, y = correlated(0.5, 300, rng)
    columns = np.column_stack([y, rng.standard_normal(300), x + y])
    batched = ksg_mutual_information_columns(x, columns, jitter=0.0)
    single = [ksg_mutual_information(x, c, jitter=0.0) for c in columns.T]
    np.testing.assert_allclose(batched, single, atol=1e-12)
    assert batched[0] > 0.1 > abs(batched[1])


def test_ties_give_finite_seeded_estimates():
    # Lattice data (KSG assumes continuous data, so the value itself is not checked).
    x = np.repeat(np.arange(20.0), 10)
    y = np.tile(np.arange(10.0), 20)
    first = ksg_mutual_information(x, y, rng=3)
    assert np.isfinite(first)
    assert ksg_mutual_information(x, y, rng=3) == first
    duplicated = np.repeat(np.arange(50.0), 2)  # exact duplicate points, no jitter
    assert np.isfinite(ksg_mutual_information(duplicated, duplicated, jitter=0.0))


@pytest.mark.parametrize(
    ("x", "y", "kwargs", "message"),
    [
        (np.ones(10), np.ones(9), {}, "same length"),
        (np.ones((10, 1)), np.ones(10), {}, "1-D"),
        (np.ones(5), np.ones(5), {"k": 5}, "more than k"),
        (np.r_[np.nan, np.ones(9)], np.arange(10.0), {}, "non-finite"),
        (np.arange(10.0), np.r_[np.ones(9), np.inf], {}, "non-finite"),
        (np.arange(10.0), np.arange(10.0), {"k": 0}, "positive integer"),
        (np.arange(10.0), np.arange(10.0), {"jitter": -1.0}, "non-negative"),
    ],
)
def test_bad_input_is_rejected(x, y, kwargs, message):
    with pytest.raises(ValueError, match=message):
        ksg_mutual_information(x, y, **kwargs)


def test_columns_shape_is_checked():
    with pytest.raises(ValueError, match="columns must have shape"):
        ksg_mutual_information_columns(np.arange(10.0), np.ones((9, 2)))


def straightforward_counts(values, neighbours):
    """``n(i)`` per marginal, one point at a time: the widened reach of ``i``'s neighbours."""
    counts = []
    for i, near in enumerate(values[neighbours]):
        reach = max(values[i] - near.min(), near.max() - values[i])
        low, high = min(values[i] - reach, near.min()), max(values[i] + reach, near.max())
        counts.append(np.sum((values >= low) & (values <= high)) - 1)
    return np.array(counts)


def block_test_data(duplicates, n, rng):
    """Correlated samples, with lattice values and repeated points if ``duplicates``."""
    xs, ys = correlated(0.6, n, rng)
    if duplicates:
        xs, ys = np.round(xs, 1), np.round(ys, 1)
        xs[:20], ys[:20] = xs[20:40], ys[20:40]
    return xs, ys


def tree_terms(xs, ys, k):
    """Every sample's KSG-2 term through the KD-tree path."""
    tree = cKDTree(np.column_stack([xs, ys]))
    rows = np.arange(xs.size)
    psi = _constants(xs.size, k)[2]
    return mutual_information.tree_terms(tree, xs, ys, np.sort(xs), np.sort(ys), psi, k, rows)


@pytest.mark.parametrize("duplicates", [False, True])
def test_terms_equal_a_straightforward_pass(duplicates, rng):
    """The terms of the KD-tree path, and of the kernel with the tree for tied samples,
    equal per-point counts from the same KD-tree neighbours, bit for bit (ties included)."""
    n, k = 237, 5
    xs, ys = block_test_data(duplicates, n, rng)
    _, index = cKDTree(np.column_stack([xs, ys])).query(
        np.column_stack([xs, ys]), k=k + 1, p=np.inf
    )
    rows = np.arange(n)
    is_self = index == rows[:, None]
    is_self[~is_self.any(axis=1), -1] = True
    neighbours = index[~is_self].reshape(n, k)
    psi = _constants(n, k)[2]
    n_x, n_y = straightforward_counts(xs, neighbours), straightforward_counts(ys, neighbours)
    expected = psi[n_x - 1] + psi[n_y - 1]
    np.testing.assert_array_equal(tree_terms(xs, ys, k), expected)
    terms = ksg_terms(xs, _sorting(xs), ys, k, psi)
    np.testing.assert_array_equal(terms, expected)
    head, tail, _ = _constants(n, k)
    assert ksg_value(terms, k) == head - np.cumsum(expected)[-1] / n + tail


@pytest.mark.parametrize(("duplicates", "k"), [(False, 1), (False, 5), (True, 1), (True, 5)])
def test_kernel_leaves_exactly_the_tied_samples_to_the_tree(duplicates, k, rng):
    """The kernel's own terms equal the tree's; it hands over the samples (and only them)
    whose k-th and (k + 1)-th neighbour distances are equal."""
    kernel = pytest.importorskip("causalbandits.estimators.ksg_kernel")
    n = 237
    xs, ys = block_test_data(duplicates, n, rng)
    order = np.argsort(xs)
    rank = np.empty_like(order)
    rank[order] = np.arange(n)
    terms = np.full(n, np.nan)
    psi = _constants(n, k)[2]
    tied = kernel.ksg_block_terms(np.sort(xs), ys[order], rank, np.sort(ys), psi, k, 0, n, terms)
    distances = np.maximum(np.abs(xs[:, None] - xs), np.abs(ys[:, None] - ys))
    np.fill_diagonal(distances, np.inf)
    nearest = np.sort(distances, axis=1)
    np.testing.assert_array_equal(tied, np.flatnonzero(nearest[:, k - 1] == nearest[:, k]))
    assert tied.size > 0 if duplicates else tied.size == 0
    own = np.setdiff1d(np.arange(n), tied)
    assert np.isnan(terms[tied]).all()
    np.testing.assert_array_equal(terms[own], tree_terms(xs, ys, k)[own])


def test_a_constant_column_has_a_finite_estimate_near_zero(rng):
    """A constant column keeps its scale at 1 (no division by zero); the jitter breaks its
    ties and the estimate is about 0."""
    x = rng.standard_normal(200)
    estimates = ksg_mutual_information_columns(x, np.column_stack([np.full(200, 3.0), x]), rng=2)
    assert np.all(np.isfinite(estimates)) and abs(estimates[0]) < 0.1 < estimates[1]
