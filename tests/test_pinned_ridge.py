"""WeightedRidge at its boundaries: the regularisation must be positive, integer sample
counts, and the weight rule refused by a unit-weight estimator."""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits.estimators import WeightedRidge


@pytest.mark.parametrize("regularisation", [0.0, -1.0])
def test_regularisation_must_be_positive(regularisation):
    """``V = lam I + ...`` must be invertible before any sample: ``lam = 0`` is refused."""
    with pytest.raises(ValueError, match="regularisation must be positive, got"):
        WeightedRidge((2,), 3, regularisation=regularisation)


def test_smallest_positive_regularisation_is_accepted():
    ridge = WeightedRidge((1,), 2, regularisation=1e-3)
    np.testing.assert_allclose(ridge.gram_inv[0], np.eye(2) * 1e3)


def test_counts_are_integers_per_slot():
    ridge = WeightedRidge((2, 2), 2, unit_weights=True)
    ridge.update(np.array([0, 3]), np.ones((2, 2)), np.ones(2))
    ridge.update(np.array([3]), np.ones((1, 2)), np.ones(1))
    assert np.issubdtype(ridge.counts.dtype, np.integer)
    np.testing.assert_array_equal(ridge.counts, [[1, 0], [0, 2]])


def test_a_unit_weight_estimator_refuses_a_weight_rule():
    ridge = WeightedRidge((1,), 2, unit_weights=True)
    with pytest.raises(ValueError, match="^an estimator with unit_weights takes no weight rule$"):
        ridge.update(np.array([0]), np.ones((1, 2)), np.ones(1), lambda bonus: bonus)


@pytest.mark.parametrize(("unit_weights", "regularisation"), [(True, 1.0), (False, 0.5)])
def test_log_det_gram_is_the_log_determinant_of_the_gram_matrix(unit_weights, regularisation):
    """The determinant-lemma updates against ``slogdet`` of ``lam I + sum w x x^T``."""
    rng = np.random.default_rng(3)
    ridge = WeightedRidge((3,), 4, regularisation=regularisation, unit_weights=unit_weights)
    gram = np.tile(regularisation * np.eye(4), (3, 1, 1))
    rule = None if unit_weights else (lambda bonus: np.minimum(1.0, 1.0 / bonus) / 2)
    for _ in range(25):
        slots = rng.choice(3, size=2, replace=False)
        x = rng.normal(0.0, 3.0, (2, 4))
        weights = ridge.update(slots, x, rng.normal(size=2), rule)
        gram[slots] += weights[:, None, None] * x[:, :, None] * x[:, None, :]
    np.testing.assert_allclose(ridge.log_det_gram, np.linalg.slogdet(gram)[1], rtol=1e-10)
