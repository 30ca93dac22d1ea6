"""GOLEM-EV, DAGMA-linear, graph metrics and the whole-graph GLR (spec 001 §4.2-4.5, E1)."""

from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from causalbandits.estimators.change_detection import gaussian_window_glr, sem_window_glr
from causalbandits.estimators.structure_learning import (
    _centred_gram,
    _golem_value_grad,
    dagma_linear,
    dagma_linear_batch,
    golem_ev,
    golem_ev_objective,
    graph_metrics,
    is_dag,
    threshold_to_dag,
)


@pytest.fixture(autouse=True)
def _one_blas_thread():
    """Small matrices: multi-threaded BLAS only slows these tests down (a lot, under load)."""
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def paper_weights(n: int, rng: np.random.Generator, p: float = 0.5) -> np.ndarray:
    """The authors' generator (A1): upper-triangular, edge prob. p, |w| ~ U(0.5, 2), signed."""
    present = rng.random((n, n)) < p
    signs = rng.choice([-1.0, 1.0], (n, n))
    return np.triu(rng.uniform(0.5, 2.0, (n, n)) * present * signs, k=1)


def sample_sem(B: np.ndarray, n: int, rng: np.random.Generator, nu: float = 1.0) -> np.ndarray:
    """Rows x with x = B^T x + eps, eps ~ N(nu, 1): x^T = eps^T (I - B)^{-1}."""
    eps = rng.normal(nu, 1.0, (n, B.shape[0]))
    return eps @ np.linalg.inv(np.eye(B.shape[0]) - B)


# ---------------------------------------------------------------------------- graphs, metrics


def test_is_dag_and_threshold_to_dag():
    assert is_dag(np.triu(np.ones((4, 4)), 1))
    assert not is_dag(np.eye(3))
    cyclic = np.array([[0, 0.9, 0], [0, 0, 0.8], [0.4, 0, 0]])
    assert not is_dag(cyclic)
    out = threshold_to_dag(cyclic, threshold=0.3)
    # the weakest edge of the cycle (2 -> 0, 0.4) goes; the others stay
    np.testing.assert_array_equal(out, np.array([[0, 0.9, 0], [0, 0, 0.8], [0, 0, 0]]))
    # entries at or below the threshold are zeroed first
    assert threshold_to_dag(np.array([[0, 0.3], [0, 0]]), 0.3).sum() == 0


def test_graph_metrics_hand_computed():
    # true: 0->1, 1->2, 0->2 ; estimate: 1->0 (reversed), 1->2 (correct), 2->3 (extra)
    true = np.zeros((4, 4))
    true[0, 1] = true[1, 2] = true[0, 2] = 1.0
    est = np.zeros((4, 4))
    est[1, 0] = est[1, 2] = est[2, 3] = 0.5
    m = graph_metrics(true, est)
    assert m["fn_any"] is True
    assert m["precision"] == pytest.approx(1 / 3)  # 1 of 3 estimated edges is true
    assert m["recall"] == pytest.approx(1 / 3)  # 1 of 3 true edges is found
    # FP: (1,0), (2,3) = 2; FN: (0,1), (0,2) = 2; reversed (0,1)/(1,0) = 1 -> 3 / 16
    assert m["nshd"] == pytest.approx(3 / 16)
    assert (m["n_fn"], m["n_fp"], m["n_true"], m["n_est"]) == (2, 2, 3, 3)

    perfect = graph_metrics(true, 2 * true)
    assert perfect == {
        "fn_any": False,
        "precision": 1.0,
        "recall": 1.0,
        "nshd": 0.0,
        "n_fn": 0,
        "n_fp": 0,
        "n_true": 3,
        "n_est": 3,
    }
    # a superset: no FN, precision < 1
    extra = true.copy()
    extra[2, 3] = 1.0
    m = graph_metrics(true, extra)
    assert m["fn_any"] is False and m["recall"] == 1.0 and m["precision"] == 0.75
    assert m["nshd"] == pytest.approx(1 / 16)
    # an empty estimate has no false positives
    m = graph_metrics(true, np.zeros((4, 4)))
    assert m["precision"] == 1.0 and m["recall"] == 0.0 and m["nshd"] == pytest.approx(3 / 16)


# ---------------------------------------------------------------------------------- GOLEM-EV


def test_golem_gradient_matches_finite_differences():
    rng = np.random.default_rng(0)
    X = sample_sem(paper_weights(4, rng, p=0.7), 200, rng)
    gram = _centred_gram(X)
    B = 0.3 * rng.standard_normal((4, 4))
    np.fill_diagonal(B, 0)
    value, grad = _golem_value_grad(B, gram, 0.0, 5.0)
    assert value == pytest.approx(golem_ev_objective(B, X, 0.0, 5.0))
    h = 1e-6
    for i, j in [(0, 1), (1, 0), (2, 3), (3, 1)]:
        E = np.zeros_like(B)
        E[i, j] = h
        fd = (
            _golem_value_grad(B + E, gram, 0.0, 5.0)[0]
            - _golem_value_grad(B - E, gram, 0.0, 5.0)[0]
        ) / (2 * h)
        assert grad[i, j] == pytest.approx(fd, rel=1e-5, abs=1e-6)


def _adam_golem(X: np.ndarray, steps: int, lr: float, lambda1: float = 2e-2) -> np.ndarray:
    """The reference optimiser (GOLEM's Adam from B = 0) on the same objective."""
    gram = _centred_gram(X)
    n = gram.shape[0]
    B, m, v = np.zeros((n, n)), np.zeros((n, n)), np.zeros((n, n))
    off = 1.0 - np.eye(n)
    for t in range(1, steps + 1):
        g = (_golem_value_grad(B, gram, 0.0, 5.0)[1] + lambda1 * np.sign(B)) * off
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        B = B - lr * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
    return B


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_golem_lbfgs_at_least_as_good_as_adam(seed):
    rng = np.random.default_rng(seed)
    n_nodes = 3 + seed % 2
    X = sample_sem(paper_weights(n_nodes, rng, p=0.7), 300, rng)
    b_lbfgs = golem_ev(X, threshold=None)
    b_adam = _adam_golem(X, steps=4000, lr=1e-2)
    f_lbfgs, f_adam = golem_ev_objective(b_lbfgs, X), golem_ev_objective(b_adam, X)
    assert f_lbfgs <= f_adam + 1e-6
    assert np.all(np.diag(b_lbfgs) == 0)


@pytest.mark.parametrize("seed", [10, 11])
def test_golem_recovers_support_with_ample_data(seed):
    rng = np.random.default_rng(seed)
    B = paper_weights(5, rng, p=0.6)
    X = sample_sem(B, 2000, rng)
    B_hat = golem_ev(X)
    assert is_dag(B_hat)
    m = graph_metrics(B, B_hat)
    assert m["recall"] >= 0.9
    assert m["precision"] >= 0.8
    found = (B != 0) & (B_hat != 0)
    np.testing.assert_allclose(B_hat[found], B[found], atol=0.25)


def test_golem_rejects_bad_input():
    with pytest.raises(ValueError):
        golem_ev(np.ones((1, 3)))
    with pytest.raises(ValueError):
        golem_ev(np.column_stack([np.arange(5.0), np.ones(5)]))


# ------------------------------------------------------------------------------------- DAGMA


def test_dagma_recovers_small_dag():
    rng = np.random.default_rng(4)
    B = paper_weights(5, rng, p=0.6)
    X = sample_sem(B, 1000, rng)
    # A shorter schedule than the package's defaults (same algorithm) keeps the test fast.
    W = dagma_linear(X, warm_iter=1500, max_iter=2500, lr=5e-3)
    m = graph_metrics(B, W)
    assert m["recall"] >= 0.9 and m["precision"] >= 0.8
    assert np.all(np.diag(W) == 0)
    assert is_dag(threshold_to_dag(W, 0.0))


def test_dagma_batch_equals_single_fits():
    rng = np.random.default_rng(6)
    Xs = [sample_sem(paper_weights(4, rng), n, rng) for n in (200, 300, 400)]
    kw = dict(warm_iter=400, max_iter=600, lr=1e-2)
    batch = dagma_linear_batch(Xs, **kw)
    for X, W in zip(Xs, batch, strict=True):
        np.testing.assert_allclose(dagma_linear(X, **kw), W, atol=1e-10)


def test_dagma_matches_reference_package():
    """Same steps as ``dagma`` 1.1.1 (only when the package is installed)."""
    linear = pytest.importorskip("dagma.linear")
    rng = np.random.default_rng(7)
    X = sample_sem(paper_weights(5, rng), 300, rng)
    kw = dict(warm_iter=2000, max_iter=3000)
    ref = linear.DagmaLinear(loss_type="l2").fit(X.copy(), s=[1.0, 0.9, 0.8, 0.7, 0.6], **kw)
    np.fill_diagonal(ref, 0.0)
    np.testing.assert_allclose(dagma_linear(X, **kw), ref, atol=1e-10)


# --------------------------------------------------------------------------------------- GLR


def test_sem_window_glr_equals_direct_formula():
    """The whitened computation equals the authors' formula with C^T nu, C^T Sigma C."""
    rng = np.random.default_rng(8)
    n = 5
    B = paper_weights(n, rng, p=0.7)
    window = sample_sem(B, 20, rng)
    B_hat = B + 0.1 * np.triu(rng.standard_normal((n, n)), 1)
    C = np.linalg.inv(np.eye(n) - B_hat)
    mean, cov = C.T @ np.ones(n), C.T @ C
    S = np.cov(window.T)
    direct = 20 * np.log(np.linalg.det(cov) / np.linalg.det(S)) / 2
    for x in window:
        direct += (x - mean) @ np.linalg.solve(cov, x - mean) / 2
        direct -= (x - window.mean(0)) @ np.linalg.solve(S, x - window.mean(0)) / 2
    direct /= 20 * n
    assert sem_window_glr(window, B_hat, np.ones(n)) == pytest.approx(direct, rel=1e-8)
    assert gaussian_window_glr(window, mean, cov) == pytest.approx(direct, rel=1e-6)
    # batched
    batch = sem_window_glr(np.stack([window, window]), np.stack([B_hat, B]), np.ones(n))
    assert batch.shape == (2,) and batch[0] == pytest.approx(direct, rel=1e-8)


def test_sem_window_glr_null_is_small_and_shift_is_large():
    rng = np.random.default_rng(9)
    n = 6
    B = paper_weights(n, rng)
    windows = np.stack([sample_sem(B, 20, rng) for _ in range(200)])
    null = sem_window_glr(windows, np.broadcast_to(B, (200, n, n)), np.ones(n))
    # E ~ 0.5 E[-log det S]/N + small: far below the authors' threshold 20
    assert null.max() < 2.0 and 0.0 < np.median(null) < 1.0
    shifted = windows + 30.0  # every node's mean moves by 30 standard deviations or more
    alt = sem_window_glr(shifted, np.broadcast_to(B, (200, n, n)), np.ones(n))
    assert alt.min() > 20.0
