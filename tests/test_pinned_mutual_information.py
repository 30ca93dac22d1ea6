"""KSG-2 against closed forms and at its edges: ``n = k + 1`` samples (every estimate is
exactly 0), clusters of exact duplicates without jitter (a closed form through the
duplicate-handling branch), the jitter's role on tied and on continuous data, constant
columns, and the messages a user sees."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import digamma

from causalbandits.estimators.mutual_information import (
    ksg_mutual_information,
    ksg_mutual_information_columns,
)


@pytest.mark.parametrize("k", [1, 3, 5])
def test_k_plus_one_samples_give_exactly_zero(k):
    """Each point's k neighbours are all the others, so ``n_x = n_y = k`` and
    ``I = psi(k) - 1/k - 2 psi(k) + psi(k + 1) = 0``."""
    rng = np.random.default_rng(k)
    x = rng.normal(size=k + 1)
    columns = np.column_stack([x**3 + rng.normal(size=k + 1), rng.normal(size=k + 1)])
    np.testing.assert_allclose(ksg_mutual_information_columns(x, columns, k=k), 0.0, atol=1e-12)


def test_clusters_of_exact_duplicates_without_jitter():
    """5 clusters of 6 identical points, distinct x and y per cluster, k = 3: every point's
    neighbours lie in its cluster at distance 0 (the tree need not list the point itself
    among them), so ``n_x = n_y = 5`` and ``I = psi(3) - 1/3 - 2 psi(5) + psi(30)``."""
    x = np.repeat(np.arange(5.0), 6)
    y = np.repeat([3.0, 1.0, 4.0, 0.0, 2.0], 6)
    expected = digamma(3) - 1 / 3 - 2 * digamma(5) + digamma(30)
    assert ksg_mutual_information(x, y, k=3, jitter=0) == pytest.approx(expected, rel=1e-12)


def tied(n: int = 200) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    x_tied = rng.integers(0, 4, n).astype(float)
    y_cont = x_tied + rng.normal(size=n)
    x_cont = rng.normal(size=n)
    y_tied = (x_cont > 0).astype(float) + rng.integers(0, 2, n)
    return x_tied, y_cont, x_cont, y_tied


@pytest.mark.parametrize("which", ["x", "y"])
def test_the_default_jitter_breaks_ties_of_either_variable(which):
    """KSG assumes continuous data: on tied values the jitter changes the neighbourhoods
    (here by more than 0.1 nats), while ``jitter = 0`` keeps the ties."""
    x_tied, y_cont, x_cont, y_tied = tied()
    x, y = (x_tied, y_cont) if which == "x" else (x_cont, y_tied)
    jittered = ksg_mutual_information(x, y, rng=0)
    exact = ksg_mutual_information(x, y, jitter=0)
    assert abs(jittered - exact) > 0.1
    assert ksg_mutual_information(x, y, jitter=0, rng=5) == exact  # no randomness without it


def test_the_default_jitter_is_negligible_on_continuous_data():
    rng = np.random.default_rng(2)
    x = rng.normal(size=200)
    y = x + 0.5 * rng.normal(size=200)
    assert ksg_mutual_information(x, y, rng=0) == pytest.approx(
        ksg_mutual_information(x, y, jitter=0), abs=1e-9
    )
    columns = np.column_stack([y, x**2])
    np.testing.assert_allclose(
        ksg_mutual_information_columns(x, columns, rng=0),
        ksg_mutual_information_columns(x, columns, jitter=0),
        rtol=0,
        atol=1e-9,
    )


@pytest.mark.parametrize("jitter", [0.0, 1e-10])
def test_a_constant_column_gives_a_finite_estimate(jitter):
    rng = np.random.default_rng(3)
    x = rng.normal(size=100)
    estimates = ksg_mutual_information_columns(
        x, np.column_stack([np.full(100, 3.0), x]), jitter=jitter, rng=0
    )
    assert np.all(np.isfinite(estimates))
    assert estimates[1] > 2.0  # the identical column carries much information


def test_messages_name_the_bad_input():
    x = np.arange(10.0)
    with pytest.raises(ValueError, match=r"^y must be a 1-D array, got shape \(10, 1\)$"):
        ksg_mutual_information(x, x[:, None])
    with pytest.raises(ValueError, match=r"^x and y must have the same length, got 10 and 9$"):
        ksg_mutual_information(x, x[:9])
    bad = x.copy()
    bad[3] = np.nan
    with pytest.raises(ValueError, match=r"^x contains non-finite values"):
        ksg_mutual_information(bad, x)
    with pytest.raises(ValueError, match=r"^columns contains non-finite values"):
        ksg_mutual_information(x, bad)
    with pytest.raises(ValueError, match=r"^columns contains non-finite values"):
        ksg_mutual_information(x, bad, jitter=0)
    with pytest.raises(ValueError, match=r"^x contains non-finite values"):
        ksg_mutual_information(bad, x, jitter=0)
