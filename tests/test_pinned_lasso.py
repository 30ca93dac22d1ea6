"""The non-negative lasso of eq. 9 on hand-solvable cases and at its edges: the DAG support
mask, a diagonal Gram matrix (rows decouple into closed forms; small pivots included), the
default tolerance, shared statistics with per-replicate penalties or warm starts, and
SEMLasso before any data, with received masks, with its own tolerance; the messages a user
sees."""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits.estimators.lasso import (
    SEMLasso,
    SEMStatistics,
    lasso_support,
    nonnegative_lasso,
)


def test_dag_support_is_strictly_upper_triangular():
    expected = np.array([[0, 1, 1, 1], [0, 0, 1, 1], [0, 0, 0, 1], [0, 0, 0, 0]], dtype=bool)
    np.testing.assert_array_equal(lasso_support(4, "dag"), expected)
    np.testing.assert_array_equal(lasso_support(3, "cyclic"), ~np.eye(3, dtype=bool))
    with pytest.raises(ValueError, match=r"^structure must be 'dag' or 'cyclic', got 'tree'$"):
        lasso_support(3, "tree")


# G diagonal with pivots below 1: row i, column j > i is max(0, (C[j, i] - lam / 2) / G[j, j])
GRAM = np.diag([0.3, 0.5, 0.04])
CROSS = np.array([[0.0, 0.0, 0.0], [0.2, 0.0, 0.0], [0.1, 0.4, 0.0]])


def closed_form(lam: float) -> np.ndarray:
    a = np.zeros((3, 3))
    for i in range(3):
        for j in range(i + 1, 3):
            a[i, j] = max(0.0, (CROSS[j, i] - lam / 2) / GRAM[j, j])
    return a


def test_diagonal_gram_gives_the_closed_form_with_small_pivots():
    a, sweeps = nonnegative_lasso(GRAM, CROSS, 0.01, lasso_support(3, "dag"), tol=0.0)
    np.testing.assert_allclose(a[0], closed_form(0.01), rtol=1e-14)
    assert closed_form(0.01)[1, 2] == pytest.approx(9.875)  # (0.4 - 0.005) / 0.04
    assert sweeps == 2  # exact after one sweep; the second moves nothing (<= tol = 0)


def test_shared_statistics_with_per_replicate_penalties():
    """2-D ``gram``/``cross`` are shared; the replicates come from ``lam`` (or the start)."""
    lams = np.array([0.01, 0.3, 1.0])
    a, _ = nonnegative_lasso(GRAM, CROSS, lams, lasso_support(3, "dag"))
    assert a.shape == (3, 3, 3)
    for r, lam in enumerate(lams):
        np.testing.assert_allclose(a[r], closed_form(lam), rtol=1e-12, atol=1e-15)
    single, _ = nonnegative_lasso(GRAM, CROSS, 0.01, lasso_support(3, "dag"))
    assert single.shape == (1, 3, 3)
    start = np.zeros((4, 3, 3))
    warm, _ = nonnegative_lasso(GRAM, CROSS, 0.01, lasso_support(3, "dag"), start=start)
    assert warm.shape == (4, 3, 3)
    np.testing.assert_allclose(warm, np.broadcast_to(closed_form(0.01), (4, 3, 3)), rtol=1e-12)


def kkt_violation(gram, cross, lam, support, a):
    """Largest violation of the KKT conditions of a row problem: with the gradient
    ``g = 2 (A G - C^T) + lam``, ``g = 0`` where ``A > 0`` and ``g >= 0`` where ``A = 0``."""
    grad = 2 * (a @ gram - cross.T) + lam
    positive = support & (a > 0)
    return max(np.abs(grad[positive]).max(initial=0), (-grad[support & ~positive]).max(initial=0))


def test_default_tolerance_solves_to_high_accuracy():
    rng = np.random.default_rng(5)
    y = rng.normal(size=(200, 5)) @ np.triu(rng.uniform(0, 0.5, (5, 5)), 1) + rng.normal(
        size=(200, 5)
    )
    z = rng.normal(size=(200, 5)) * 0.3
    gram, cross = y.T @ y, y.T @ (y - z)
    support = lasso_support(5, "dag")
    a, _ = nonnegative_lasso(gram, cross, 5.0, support)
    assert kkt_violation(gram, cross, 5.0, support, a[0]) < 1e-6
    lasso = SEMLasso(1, 5, 5.0)
    lasso.add(y[None], z[None])
    assert kkt_violation(gram, cross, 5.0, support, lasso.fit()[0]) < 1e-6


def test_lasso_messages():
    support = lasso_support(3, "dag")
    with pytest.raises(ValueError, match="^lam must be non-negative$"):
        nonnegative_lasso(GRAM, CROSS, [0.1, -1e-9], support)
    with pytest.raises(ValueError, match=r"^support must be \(3, 3\) with a zero diagonal$"):
        nonnegative_lasso(GRAM, CROSS, 0.1, np.ones((3, 3), dtype=bool))
    with pytest.raises(ValueError, match="^lam must be non-negative$"):
        SEMLasso(2, 3, [0.1, -0.1])


def test_sem_lasso_before_any_data_and_with_zero_penalty():
    lasso = SEMLasso(2, 3, 0.0)  # lam = 0 is allowed: least squares on a >= 0
    np.testing.assert_array_equal(lasso.fit(), np.zeros((2, 3, 3)))
    assert lasso.sweeps == 0  # nothing arrived: no solve


def test_sem_lasso_adds_only_the_received_rounds_and_uses_its_tolerance():
    rng = np.random.default_rng(6)
    y, z = rng.normal(size=(1, 4, 3)), rng.normal(size=(1, 4, 3))
    received = np.array([[True, False, True, False]])
    lasso = SEMLasso(1, 3, 0.1, tol=np.inf)  # stop after the first sweep
    lasso.add(y, z, received)
    reference = SEMStatistics(1, 3)
    reference.add(y[:, [0, 2]], z[:, [0, 2]])
    np.testing.assert_allclose(lasso.statistics.gram, reference.gram, rtol=1e-14)
    np.testing.assert_array_equal(lasso.statistics.counts, [2])
    lasso.fit()
    assert lasso.sweeps == 1


def test_statistics_counts_are_integers_and_shapes_are_checked():
    stats = SEMStatistics(2, 3)
    stats.add(np.ones((2, 3)), np.zeros((2, 3)))
    assert np.issubdtype(stats.counts.dtype, np.integer)
    np.testing.assert_array_equal(stats.counts, [1, 1])
    message = r"^y and z must have shape \(R, \[K,\] N\), got \(2, 1, 3\), \(2, 1, 2\)$"
    with pytest.raises(ValueError, match=message):
        stats.add(np.ones((2, 3)), np.zeros((2, 2)))
    with pytest.raises(ValueError, match=r"^y and z must have shape"):
        stats.add(np.ones((3, 3)), np.zeros((3, 3)))
