"""SSEM-UCB's graph fit (eqs. 3-4 with the l1 surrogate of App. -G1) against references that do
not use the code they check (issue 32, mutation testing): the lasso's optimality (KKT)
conditions written on the raw rounds, the edge sizes as root mean squares of the fitted
functions over the rounds, the threshold and the debiasing, the density tuning on a graph
whose edges have known strengths, and the options' checks."""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits.estimators.dictionary_lasso import (
    LASSO_TOL,
    DictionaryLasso,
    DictionaryLassoOptions,
    soft_threshold_lasso,
)
from causalbandits.scm.basis import Dictionary

LINEAR = Dictionary.from_names("linear")
TWO = Dictionary.from_names(["linear", "quadratic"])


def rounds(n: int, seed: int = 0, weak: float = 0.3) -> tuple[np.ndarray, np.ndarray]:
    """``n`` rounds ``(z, y)`` ``(n, 3)`` of ``y2 = z2``, ``y1 = 0.9 y2 + z1``,
    ``y0 = 0.7 y1 + weak y2 + z0`` (``W[i, j]``: edge ``j -> i``), ``z`` uniform on [0, 1)."""
    z = np.random.default_rng(seed).uniform(0, 1, (n, 3))
    y = z.copy()
    y[:, 1] += 0.9 * y[:, 2]
    y[:, 0] += 0.7 * y[:, 1] + weak * y[:, 2]
    return z, y


def filled(dictionary: Dictionary, z: np.ndarray, y: np.ndarray, **options) -> DictionaryLasso:
    lasso = DictionaryLasso(1, 3, dictionary, options=DictionaryLassoOptions(**options))
    for zt, yt in zip(z, y, strict=True):
        lasso.add(zt[None], yt[None])
    return lasso


def design(dictionary: Dictionary, y: np.ndarray) -> np.ndarray:
    """``Phi`` ``(n, N K)``: ``phi_k(y[j])`` at column ``j K + k``, from the dictionary's own
    functions one by one."""
    columns = [
        dictionary.functions[k](y[:, j]) for j in range(y.shape[1]) for k in range(dictionary.size)
    ]
    return np.stack(columns, axis=1)


@pytest.mark.parametrize("n", [1, 40])
def test_the_fixed_penalty_fit_satisfies_eq_3s_optimality_conditions(n: int) -> None:
    """Without debiasing or threshold, row ``i``'s weights minimise ``(1/t) sum_tau (u_tau -
    Phi_tau w)^2 + lam ||w||_1`` over the parents ``j > i``: on the raw rounds, the gradient
    ``g = (2/t) Phi^T (Phi w - u)`` is ``-lam sign(w_p)`` where ``w_p != 0`` and at most ``lam``
    in size where ``w_p = 0`` (the lasso's KKT conditions); also for one round (``t = 1``)."""
    lam = 0.02
    z, y = rounds(n, seed=3)
    lasso = filled(TWO, z, y, lam=lam, edge_threshold=0.0, debias=False)
    weights = lasso.fit()[0].reshape(3, -1)
    phi = design(TWO, y)
    for i in range(3):
        parents = np.repeat(np.arange(3) > i, TWO.size)
        assert not weights[i, ~parents].any()
        if not parents.any():
            continue
        w = weights[i, parents]
        gradient = 2 / n * phi[:, parents].T @ (phi[:, parents] @ w - (y[:, i] - z[:, i]))
        active = w != 0
        assert active.any()
        np.testing.assert_allclose(gradient[active], -lam * np.sign(w[active]), atol=2e-4 * lam)
        assert (np.abs(gradient[~active]) <= lam * (1 + 1e-6)).all()


@pytest.mark.parametrize("size", [1e-3, 1.0, 1e3])
def test_coordinate_descent_stops_by_its_documented_rule_at_any_scale(size: float) -> None:
    """``w^T G w - 2 w^T c + p ||w||_1`` with correlated features (0.95): the result meets the
    KKT conditions ``2 (G w - c)_p = -p sign(w_p)`` (active) and ``|2 (G w - c)_p| <= p``
    (inactive) to 0.1 % of the penalty, and one more sweep from it (a warm restart) moves no
    coefficient by more than ``LASSO_TOL max|c| / max G_pp`` (the stopping rule), whether the
    data are tiny or huge (``G`` scaled by ``size^2``, ``c`` and ``p`` by ``size``)."""
    rng = np.random.default_rng(5)
    x = rng.normal(size=(60, 1)) + 0.2 * rng.normal(size=(60, 4))
    u = x @ np.array([1.0, -0.5, 0.0, 0.8]) + 0.1 * rng.normal(size=60)
    gram = size**2 * (x.T @ x)[None]
    cross = size * (x.T @ u)[None, :, None]
    penalty = np.array([0.5 * size])
    support = np.ones((1, 4), bool)
    w = soft_threshold_lasso(gram, cross, penalty, support, np.zeros((1, 1, 4)))
    gradient = 2 * (gram[0] @ w[0, 0] - cross[0, :, 0])
    active = w[0, 0] != 0
    assert active.sum() == 3
    np.testing.assert_allclose(
        gradient[active], -penalty[0] * np.sign(w[0, 0, active]), atol=1e-3 * penalty[0]
    )
    assert (np.abs(gradient[~active]) <= penalty[0] * (1 + 1e-3)).all()
    again = soft_threshold_lasso(gram, cross, penalty, support, w.copy())
    rule = LASSO_TOL * np.abs(cross).max() / np.diag(gram[0]).max()
    assert np.abs(again - w).max() <= rule


def test_edge_norms_are_the_root_mean_squares_of_the_edge_functions() -> None:
    """``edge_norms``: the size of ``f_ij(v) = sum_k w_ijk phi_k(v)`` is
    ``sqrt(mean_tau f_ij(y_tau[j])^2)`` over the rounds added, computed here by brute force;
    ``edge_counts`` counts the sizes above the threshold."""
    z, y = rounds(25, seed=1)
    lasso = filled(TWO, z, y, edge_threshold=0.3)
    coefficients = np.random.default_rng(2).normal(size=(1, 3, 3 * TWO.size))
    got = lasso.edge_norms(coefficients, np.array([0]))[0]
    phi = design(TWO, y).reshape(25, 3, TWO.size)
    w = coefficients[0].reshape(3, 3, TWO.size)
    expected = np.sqrt(np.mean(np.einsum("tjk,ijk->tij", phi, w) ** 2, axis=0))
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert lasso.edge_counts(coefficients, np.array([0]))[0] == (expected > 0.3).sum()
    one = filled(TWO, z[:1], y[:1])  # one round: the size is |f_ij(y[j])|
    single = np.abs(np.einsum("jk,ijk->ij", phi[0], w))
    np.testing.assert_allclose(one.edge_norms(coefficients, np.array([0]))[0], single, rtol=1e-12)


def test_threshold_removes_small_edges_before_the_least_squares_refit() -> None:
    """A weak edge ``2 -> 0`` (0.05): a threshold of 0.1 removes it. With ``debias`` the kept
    edges are refitted by least squares on the raw rounds (the removed one stays 0); without,
    the lasso weights of the kept edges stay and the removed one is 0. A zero threshold keeps
    exactly the edges the lasso selected (a weight the lasso set to 0 is not refitted)."""
    z, y = rounds(50, seed=4, weak=0.05)
    u0 = y[:, 0] - z[:, 0]
    debiased = filled(LINEAR, z, y, lam=1e-3, edge_threshold=0.1).fit()[0, :, :, 0]
    assert debiased[0, 2] == 0.0 and debiased[0, 1] != 0.0
    ls = np.linalg.lstsq(y[:, [1]], u0, rcond=None)[0]
    assert debiased[0, 1] == pytest.approx(ls[0], rel=1e-6)
    assert debiased[1, 2] == pytest.approx(0.9, rel=1e-6)
    raw = filled(LINEAR, z, y, lam=1e-3, edge_threshold=0.1, debias=False)
    lasso_only = filled(LINEAR, z, y, lam=1e-3, edge_threshold=0.0, debias=False)
    before = lasso_only.fit()[0, :, :, 0]
    after = raw.fit()[0, :, :, 0]
    assert before[0, 2] != 0.0 and after[0, 2] == 0.0
    np.testing.assert_array_equal(after[0, 1], before[0, 1])
    assert after[0, 1] != pytest.approx(ls[0], rel=1e-4)  # shrunk, not refitted
    sparse = filled(LINEAR, z, y, lam=0.5, edge_threshold=0.0, debias=False).fit()[0, :, :, 0]
    refit = filled(LINEAR, z, y, lam=0.5, edge_threshold=0.0).fit()[0, :, :, 0]
    assert (sparse == 0).sum() > 6  # the lasso zeroed a possible edge ...
    np.testing.assert_array_equal(refit == 0, sparse == 0)  # ... and it stays zero


#: The graphs of a fixed penalty on :func:`rounds` (60 rounds, seed 0), by a scan of ``lam``:
#: all three edges below 0.04, ``1 -> 0`` and ``2 -> 1`` from 0.06 to 0.4, ``1 -> 0`` alone
#: from 0.6 to 1.4 (the weak ``2 -> 0`` goes first; ``1 -> 0``'s function is the largest).
GRAPHS = {1: {(0, 1)}, 2: {(0, 1), (1, 2)}, 3: {(0, 1), (0, 2), (1, 2)}}


@pytest.mark.parametrize(
    ("edges", "starts", "threshold"),
    [(1, (0.05, 10.0), 0.05), (2, (3e-3, 5.0), 0.05), (2, (5.0,), 0.0), (3, (0.5,), 0.05)],
)
def test_tuning_reaches_the_graph_with_the_target_number_of_edges(
    edges: int, starts: tuple[float, ...], threshold: float
) -> None:
    """A target density of ``edges / 3`` of the 3 possible edges gives the fixed-penalty graph
    with that many edges (:data:`GRAPHS`), whether ``lam`` has to rise or fall from its start
    (within the bracket ``start e^(+-4)``), also with a zero edge threshold (an edge counts
    when its function is not 0); the tuned ``lam``, used as a fixed penalty, gives the same
    graph, and a second fit starts from it."""
    z, y = rounds(60, seed=0)
    for start in starts:
        options = {"edge_threshold": threshold, "target_density": edges / 3}
        lasso = filled(LINEAR, z, y, lam=start, **options)
        assert lasso.possible_edges == 3
        weights = lasso.fit()[0, :, :, 0]
        assert {tuple(map(int, e)) for e in np.argwhere(weights != 0)} == GRAPHS[edges]
        tuned = float(lasso.lam[0])
        assert np.isfinite(tuned) and tuned != start
        fixed = filled(LINEAR, z, y, lam=tuned, edge_threshold=threshold).fit()[0, :, :, 0]
        np.testing.assert_array_equal(fixed != 0, weights != 0)
        np.testing.assert_array_equal(lasso.fit()[0, :, :, 0] != 0, weights != 0)


def test_default_and_cyclic_fits_count_their_possible_edges() -> None:
    """The default is the paper's DAG order (``j > i`` only: 3 possible edges of 3 nodes); the
    cyclic fit has ``N (N - 1) = 6`` and may use ``j < i``."""
    default = DictionaryLasso(1, 3, LINEAR)
    assert default.possible_edges == 3 and not np.tril(default.support).any()
    cyclic = DictionaryLasso(1, 3, LINEAR, upper_triangular=False)
    assert cyclic.possible_edges == 6 and np.tril(cyclic.support, k=-1).any()


def test_options_are_checked_naming_the_parameter() -> None:
    """``lam > 0``, ``target_density`` ``None`` or in ``(0, 1]``, ``edge_threshold >= 0``, all
    finite, each refused with its name; integers are kept as floats."""
    options = DictionaryLassoOptions(lam=1, edge_threshold=0, target_density=1)
    assert isinstance(options.lam, float) and isinstance(options.edge_threshold, float)
    assert options.target_density == 1 and DictionaryLassoOptions().target_density is None
    for bad, message in [
        ({"lam": 0.0}, r"^lam must be > 0 and finite, got 0.0$"),
        ({"lam": np.inf}, r"^lam must be > 0 and finite"),
        ({"target_density": 0.0}, r"^target_density must lie in \(0, 1\], got 0.0$"),
        ({"target_density": 1.5}, r"^target_density must lie in \(0, 1\], got 1.5$"),
        ({"target_density": -0.5}, r"^target_density must lie in \(0, 1\]"),
        ({"edge_threshold": -0.1}, r"^edge_threshold must be >= 0 and finite, got -0.1$"),
    ]:
        with pytest.raises(ValueError, match=message):
            DictionaryLassoOptions(**bad)
