import numpy as np
import pytest
from scipy.optimize import minimize

from causalbandits.estimators.lasso import (
    SEMLasso,
    SEMStatistics,
    lasso_support,
    nonnegative_lasso,
)


def random_data(rng, replicates, n_nodes, rounds, structure="dag"):
    """Noisy data ``y = A y + z + e`` so that eq. 9 has a non-trivial lasso solution."""
    support = lasso_support(n_nodes, structure)
    a = np.where(support & (rng.random((n_nodes, n_nodes)) < 0.5), rng.uniform(0.2, 0.8), 0.0)
    if structure == "cyclic":
        a *= 0.5 / max(np.abs(np.linalg.eigvals(a)).max(), 0.5)
    z = rng.uniform(0, 1, (replicates, rounds, n_nodes))
    noise = 0.3 * rng.standard_normal((replicates, rounds, n_nodes))
    y = np.linalg.solve(np.eye(n_nodes) - a, (z + noise)[..., None])[..., 0]
    return y, z


def row_objective(y, z, row, columns, lam):
    """Row ``row`` of eq. 9: ``||(y_i - z_i) - Y_J^T a||^2 + lam 1^T a`` and its gradient."""
    target = y[:, row] - z[:, row]
    design = y[:, columns]

    def fun(a):
        residual = target - design @ a
        return residual @ residual + lam * a.sum(), -2 * design.T @ residual + lam

    return fun


def scipy_lasso(y, z, lam, support):
    """Eq. 9 row by row with L-BFGS-B on ``a >= 0`` (the L1 term is linear there)."""
    n = y.shape[1]
    a = np.zeros((n, n))
    for i in range(n):
        columns = np.flatnonzero(support[i])
        if columns.size == 0:
            continue
        fun = row_objective(y, z, i, columns, lam)
        result = minimize(
            fun,
            np.zeros(columns.size),
            jac=True,
            method="L-BFGS-B",
            bounds=[(0, None)] * columns.size,
            options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 10_000},
        )
        a[i, columns] = result.x
    return a


def objective(y, z, a, lam):
    residual = y - y @ a.T - z
    return (residual**2).sum() + lam * a.sum()


@pytest.mark.parametrize("structure", ["dag", "cyclic"])
def test_coordinate_descent_matches_scipy(structure, rng):
    n, lams = 6, np.array([0.0, 0.5, 5.0, 50.0])
    y, z = random_data(rng, len(lams), n, 80, structure)
    stats = SEMStatistics(len(lams), n)
    stats.add(y, z)
    support = lasso_support(n, structure)
    a, sweeps = nonnegative_lasso(stats.gram, stats.cross, lams, support, tol=1e-13)
    assert sweeps < 1000
    assert np.all(a >= 0) and np.all(a[:, ~support] == 0)
    for r, lam in enumerate(lams):
        reference = scipy_lasso(y[r], z[r], lam, support)
        np.testing.assert_allclose(a[r], reference, atol=1e-5)
        assert objective(y[r], z[r], a[r], lam) <= objective(y[r], z[r], reference, lam) + 1e-8


@pytest.mark.parametrize("structure", ["dag", "cyclic"])
def test_coordinate_descent_matches_sklearn_with_alpha_lam_over_2n(structure, rng):
    linear_model = pytest.importorskip("sklearn.linear_model")
    n, rounds, lam = 6, 60, 3.0
    y, z = random_data(rng, 1, n, rounds, structure)
    support = lasso_support(n, structure)
    stats = SEMStatistics(1, n)
    stats.add(y, z)
    a = nonnegative_lasso(stats.gram[0], stats.cross[0], lam, support, tol=1e-13)[0][0]
    for i in range(n):
        columns = np.flatnonzero(support[i])
        if columns.size == 0:
            continue
        model = linear_model.Lasso(
            alpha=lam / (2 * rounds),
            positive=True,
            fit_intercept=False,
            tol=1e-14,
            max_iter=100_000,
        )
        model.fit(y[0][:, columns], y[0][:, i] - z[0][:, i])
        np.testing.assert_allclose(a[i, columns], model.coef_, atol=1e-7)


def test_statistics_single_and_batch_updates_equal_the_direct_products(rng):
    replicates, n, rounds = 3, 5, 40
    y, z = rng.random((replicates, rounds, n)), rng.random((replicates, rounds, n))
    received = rng.random((replicates, rounds)) < 0.7
    one, batch = SEMStatistics(replicates, n), SEMStatistics(replicates, n)
    for k in range(rounds):
        one.add(y[:, k], z[:, k], received[:, k])
    batch.add(y[:, :20], z[:, :20], received[:, :20])
    batch.add(y[:, 20:], z[:, 20:], received[:, 20:])
    for r in range(replicates):
        yr, zr = y[r][received[r]].T, z[r][received[r]].T  # N x n, as in the paper
        for stats in (one, batch):
            np.testing.assert_allclose(stats.gram[r], yr @ yr.T, rtol=1e-12)
            np.testing.assert_allclose(stats.cross[r], yr @ (yr - zr).T, rtol=1e-12)
            assert stats.counts[r] == received[r].sum()


def test_noise_free_sem_is_recovered_with_small_lambda(rng):
    """Spec §6.5.5: strictly positive rewards, known order, lam = 1e-6: MSE ~ 0."""
    n = 10
    support = lasso_support(n, "dag")
    a_true = np.zeros((n, n))
    slots = np.flatnonzero(support)
    a_true.flat[rng.choice(slots, 9, replace=False)] = rng.uniform(0.4, 0.7, 9)
    lasso = SEMLasso(2, n, 1e-6, "dag", tol=1e-14, max_sweeps=20_000)
    rounds = 2 * n
    x = np.ones((2, rounds, n), dtype=bool)
    x[1] = rng.random((rounds, n)) < 0.6
    x[1, :n] |= np.eye(n, dtype=bool)
    z = rng.uniform(0.5, 1.0, (2, rounds, n)) * x
    y = z @ np.linalg.inv(np.eye(n) - a_true).T
    lasso.add(y, z)
    a = lasso.fit()
    assert ((a - a_true) ** 2).mean(axis=(1, 2)).max() < 1e-8


def test_fit_warm_starts_and_skips_unchanged_data(rng):
    n = 6
    y, z = random_data(rng, 2, n, 100)
    lasso = SEMLasso(2, n, np.array([1.0, 10.0]), tol=1e-12)
    lasso.add(y[:, :90], z[:, :90])
    lasso.fit()
    cold_sweeps = lasso.sweeps
    lasso.add(y[:, 90], z[:, 90])
    warm = lasso.fit().copy()
    assert lasso.sweeps < cold_sweeps
    cold = nonnegative_lasso(
        lasso.statistics.gram, lasso.statistics.cross, lasso.lam, lasso.support, tol=1e-12
    )[0]
    np.testing.assert_allclose(warm, cold, atol=1e-9)
    lasso.sweeps = -1
    assert lasso.fit() is lasso.adjacency and lasso.sweeps == -1


def test_max_sweeps_bounds_the_work(rng):
    y, z = random_data(rng, 1, 6, 50)
    stats = SEMStatistics(1, 6)
    stats.add(y, z)
    _, sweeps = nonnegative_lasso(
        stats.gram, stats.cross, 0.1, lasso_support(6, "dag"), tol=0.0, max_sweeps=3
    )
    assert sweeps == 3


def test_invalid_arguments():
    with pytest.raises(ValueError):
        lasso_support(3, "tree")
    with pytest.raises(ValueError):
        nonnegative_lasso(np.eye(3), np.eye(3), -1.0, lasso_support(3, "dag"))
    with pytest.raises(ValueError):
        nonnegative_lasso(np.eye(3), np.eye(3), 1.0, np.ones((3, 3), dtype=bool))


def textbook_lasso(gram, cross, lam, support, start, tol, max_sweeps):
    """Cyclic projected coordinate descent written plainly (row-major A, full rank-1 updates
    of q = A G, the largest |delta| tracked entry by entry): the reference iterates."""
    replicates, n = gram.shape[0], gram.shape[-1]
    a = np.where(support, np.maximum(start, 0.0), 0.0)
    diag = np.einsum("rjj->rj", gram)
    for sweep in range(1, max_sweeps + 1):
        q = a @ gram
        change = 0.0
        for j in range(n):
            if not support[:, j].any():
                continue
            for r in range(replicates):
                for i in range(n):
                    old = a[r, i, j]
                    num = cross[r, j, i] - lam[r] / 2 - q[r, i, j] + old * diag[r, j]
                    free = support[i, j] and diag[r, j] > 0
                    new = max(num, 0.0) / diag[r, j] if free else 0.0
                    delta = new - old
                    a[r, i, j] = new
                    q[r, i] += delta * gram[r, j]
                    change = max(change, abs(delta))
        if change <= tol:
            return a, sweep
    return a, max_sweeps


@pytest.mark.parametrize("structure", ["dag", "cyclic"])
def test_iterates_equal_the_textbook_loop_exactly(structure, rng):
    """The vectorised, column-major solver changes no floating-point operation."""
    for trial in range(6):
        replicates, n = 3, 5 + trial % 2
        y, z = random_data(rng, replicates, n, 12 + 3 * trial, structure)
        y[0, :, 1] = 0.0  # a node that never moves: G[1, 1] = 0 in replicate 0
        stats = SEMStatistics(replicates, n)
        stats.add(y, z)
        support = lasso_support(n, structure)
        lam = rng.choice([0.0, 0.01, 1.0, 10.0], replicates)
        start = rng.normal(0.1, 0.2, (replicates, n, n))
        tol, max_sweeps = (1e-9, 500) if trial % 2 else (0.0, 7)
        fast = nonnegative_lasso(
            stats.gram, stats.cross, lam, support, start, tol=tol, max_sweeps=max_sweeps
        )
        slow = textbook_lasso(stats.gram, stats.cross, lam, support, start, tol, max_sweeps)
        np.testing.assert_array_equal(fast[0], slow[0])
        assert fast[1] == slow[1]
