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
