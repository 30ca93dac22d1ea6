"""GLR change detectors for the sub-graph residuals of CSL-UCB-CD (Sec. V).

Ids (A11) and [code] refer to docs/decisions/csl-ucb.md.

Each detector watches ``n_streams`` independent streams (e.g. the ``2N`` (node, mode) pairs),
fed one scalar at a time, whose null distribution is ``N(mean, variance)`` (eq. 41). A
stream's history starts at construction or at its last :meth:`reset`.

Calibration (measured, ``tests/test_change_detection.py``). Under the null,
``P(Psi(s = 1) >= -ln zeta)`` is close to ``zeta`` for ``t - s >= 200`` (the chi^2(2)
approximation of eq. 55): 10^7 draws from the exact law give 0.1010 and 0.0103 for
``zeta`` = 0.1 and 0.01 at ``t - s = 200``, and 0.111 and 0.0124 at ``t - s = 20``.
The detector's statistic is the maximum over ``s``, which is much larger: a 2-sample segment
alone exceeds ``-ln 0.01`` about 10% of the time, and at ``t = 201`` the maximum does so about
25% of the time. Run sequentially on a null stream, with a reset after each alarm, the alarm
rate per round is 0.094 for ``zeta = 0.01`` (0.0054 with ``min_segment = 20``) and 0.012 for
``zeta = 1e-4`` (0.0002 with ``min_segment = 20``): raise ``min_segment`` or lower ``zeta``
to keep false alarms rare.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike


def _null_parameters(
    n_streams: int, mean: ArrayLike, variance: ArrayLike
) -> tuple[np.ndarray, np.ndarray]:
    if int(n_streams) != n_streams or n_streams < 1:
        raise ValueError(f"n_streams must be a positive integer, got {n_streams}")
    mean = np.broadcast_to(np.asarray(mean, dtype=float), (n_streams,)).copy()
    variance = np.broadcast_to(np.asarray(variance, dtype=float), (n_streams,)).copy()
    if not np.all(np.isfinite(mean)):
        raise ValueError("the null means must be finite")
    if not (np.all(np.isfinite(variance)) and np.all(variance > 0)):
        raise ValueError("the null variances must be positive and finite")
    return mean, variance


def _check_update(
    streams: ArrayLike, values: ArrayLike, n_streams: int
) -> tuple[np.ndarray, np.ndarray]:
    streams = np.asarray(streams)
    values = np.asarray(values, dtype=float)
    if streams.ndim != 1 or not np.issubdtype(streams.dtype, np.integer):
        raise ValueError(f"streams must be a 1-D array of integer ids, got {streams!r}")
    if values.shape != streams.shape:
        raise ValueError(f"need one value per stream, got {values.shape} for {streams.shape}")
    if streams.size and (streams.min() < 0 or streams.max() >= n_streams):
        raise ValueError(f"stream ids must lie in 0..{n_streams - 1}")
    if np.unique(streams).size != streams.size:
        raise ValueError("each stream can receive at most one value per update")
    if not np.all(np.isfinite(values)):
        raise ValueError("values must be finite")
    return streams.astype(np.intp), values


def _check_min_segment(min_segment: int) -> None:
    if min_segment < 2:
        raise ValueError(
            f"min_segment must be >= 2 (a variance needs two samples), got {min_segment}"
        )


def _psi(sum1: np.ndarray, sum2: np.ndarray, count: np.ndarray, variance: ArrayLike) -> np.ndarray:
    """Eq. (49) from the sums of ``d = y - nu`` and ``d^2`` over ``count`` samples."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (sum2 / count - (sum1 / count) ** 2) / variance  # sigma_hat^2 / sigma^2
        psi = count / 2 * (-np.log(ratio) - 1) + sum2 / (2 * variance)
    return np.where(ratio > 0, psi, np.inf)


def glr_statistics(
    values: ArrayLike, mean: ArrayLike, variance: ArrayLike, min_segment: int = 2
) -> np.ndarray:
    """``Psi(s)`` of eq. (49) for every split ``s = 0..n`` of ``values`` (last axis, length n).

    ``Psi(s)`` uses the samples ``(s, n]``; it is ``-inf`` where fewer than ``min_segment``
    samples follow ``s``. Output shape ``(..., n + 1)``, indexed by ``s``.
    """
    _check_min_segment(min_segment)
    if not np.all(np.asarray(variance) > 0):
        raise ValueError(f"the null variance must be positive, got {variance}")
    d = np.asarray(values, dtype=float) - mean
    n = d.shape[-1]
    zero = np.zeros((*d.shape[:-1], 1))
    total1 = np.concatenate([zero, np.cumsum(d, axis=-1)], axis=-1)
    total2 = np.concatenate([zero, np.cumsum(d**2, axis=-1)], axis=-1)
    count = n - np.arange(n + 1)
    psi = _psi(total1[..., -1:] - total1, total2[..., -1:] - total2, count, variance)
    return np.where(count >= min_segment, psi, -np.inf)


class GaussianGLR:
    """The paper's GLR (eq. 43-49, 56): flag when ``max_{s >= 1} Psi(s) >= -ln zeta``.

    ``Psi(s)`` compares the MLE mean and variance of the samples after ``s`` with the known
    null, for every split ``s >= 1`` followed by at least ``min_segment`` samples. Prefix sums
    of ``y - nu`` and ``(y - nu)^2`` make one update of a stream cost O(its length).
    After an update, ``statistic[k]`` is stream ``k``'s maximum and ``post_change_count[k]``
    the number of its latest samples after the maximising split (to keep them when
    re-learning, A11's alternative: ``reset(k, keep=post_change_count[k])``).
    """

    def __init__(
        self,
        n_streams: int,
        mean: ArrayLike,
        variance: ArrayLike,
        zeta: float,
        min_segment: int = 2,
    ) -> None:
        self.mean, self.variance = _null_parameters(n_streams, mean, variance)
        if not 0 < zeta < 1:
            raise ValueError(f"the false-alarm rate zeta must lie in (0, 1), got {zeta}")
        _check_min_segment(min_segment)
        self.n_streams = int(n_streams)
        self.zeta = float(zeta)
        self.threshold = -np.log(zeta)  # eta = F_2^{-1}(1 - zeta) / 2, eq. (56)
        self.min_segment = int(min_segment)
        self.counts = np.zeros(self.n_streams, dtype=np.intp)
        self.statistic = np.full(self.n_streams, -np.inf)
        self.post_change_count = np.zeros(self.n_streams, dtype=np.intp)
        self._sum1 = np.zeros((self.n_streams, 64))
        self._sum2 = np.zeros((self.n_streams, 64))

    def update(self, streams: ArrayLike, values: ArrayLike) -> np.ndarray:
        """Append one value to each of ``streams``; return which of them flag a change."""
        streams, values = _check_update(streams, values, self.n_streams)
        if streams.size == 0:
            return np.zeros(0, dtype=bool)
        counts = self.counts[streams] + 1
        if counts.max() >= self._sum1.shape[1]:
            extra = self._sum1.shape[1]
            self._sum1 = np.pad(self._sum1, ((0, 0), (0, extra)))
            self._sum2 = np.pad(self._sum2, ((0, 0), (0, extra)))
        d = values - self.mean[streams]
        self._sum1[streams, counts] = self._sum1[streams, counts - 1] + d
        self._sum2[streams, counts] = self._sum2[streams, counts - 1] + d**2
        self.counts[streams] = counts

        splits = np.arange(counts.max() + 1)
        rows = streams[:, None]
        tail = counts[:, None] - splits
        valid = (splits >= 1) & (tail >= self.min_segment)
        psi = _psi(
            self._sum1[rows, counts[:, None]] - self._sum1[streams, : splits.size],
            self._sum2[rows, counts[:, None]] - self._sum2[streams, : splits.size],
            tail,
            self.variance[rows],
        )
        psi = np.where(valid, psi, -np.inf)
        best = np.argmax(psi, axis=1)
        self.statistic[streams] = psi[np.arange(streams.size), best]
        self.post_change_count[streams] = np.where(valid.any(axis=1), counts - best, 0)
        return self.statistic[streams] >= self.threshold

    def reset(self, stream: int, keep: int = 0) -> None:
        """Forget stream ``stream``'s history except its latest ``keep`` samples."""
        count = int(self.counts[stream])
        if not 0 <= keep <= count:
            raise ValueError(f"keep must lie in 0..{count}, got {keep}")
        start = count - keep
        for sums in (self._sum1, self._sum2):
            sums[stream, : keep + 1] = sums[stream, start : count + 1] - sums[stream, start]
        self.counts[stream] = keep
        self.statistic[stream] = -np.inf
        self.post_change_count[stream] = 0


class WindowedGLR:
    """The authors' detector [code, ``det_change_col``]: per-sample GLR of the last ``window``.

    With ``e = y - nu`` over the window, the statistic is
    ``log(sigma / sigma_hat) + mean((e / sigma)^2) / 2 - mean(((e - mu_hat) / sigma_hat)^2) / 2``
    (``mu_hat``, ``sigma_hat``: MLE mean and standard deviation), i.e. ``Psi / window`` with the
    split ``window`` samples back. A stream flags when it holds a full window, the statistic
    exceeds ``threshold`` and more than ``warmup`` updates (rounds) have been made. Unlike the
    code, ``sigma`` is the square root of the variance (the code uses the variance; the same
    at ``sigma^2 = 1``).
    """

    def __init__(
        self,
        n_streams: int,
        mean: ArrayLike,
        variance: ArrayLike,
        window: int = 20,
        threshold: float = 2.0,
        warmup: int = 200,
    ) -> None:
        self.mean, self.variance = _null_parameters(n_streams, mean, variance)
        if window < 2:
            raise ValueError(f"window must be >= 2 (a variance needs two samples), got {window}")
        if warmup < 0:
            raise ValueError(f"warmup must be >= 0, got {warmup}")
        self.n_streams = int(n_streams)
        self.window = int(window)
        self.threshold = float(threshold)
        self.warmup = int(warmup)
        self.rounds = 0
        self.counts = np.zeros(self.n_streams, dtype=np.intp)
        self.statistic = np.full(self.n_streams, -np.inf)
        self._buffer = np.zeros((self.n_streams, self.window))

    def update(self, streams: ArrayLike, values: ArrayLike) -> np.ndarray:
        """Append one value to each of ``streams``; return which of them flag a change."""
        streams, values = _check_update(streams, values, self.n_streams)
        self.rounds += 1
        self._buffer[streams, self.counts[streams] % self.window] = values - self.mean[streams]
        self.counts[streams] += 1
        full = self.counts[streams] >= self.window
        e = self._buffer[streams]
        sigma2 = self.variance[streams]
        with np.errstate(divide="ignore", invalid="ignore"):
            mu_hat = e.mean(axis=1)
            var_hat = e.var(axis=1)
            diff = (
                0.5 * np.log(sigma2 / var_hat)
                + 0.5 * np.mean(e**2, axis=1) / sigma2
                - 0.5 * np.mean((e - mu_hat[:, None]) ** 2, axis=1) / var_hat
            )
        diff = np.where(var_hat > 0, diff, np.inf)
        self.statistic[streams] = np.where(full, diff, -np.inf)
        return (self.statistic[streams] > self.threshold) & (self.rounds > self.warmup)

    def reset(self, stream: int) -> None:
        """Forget stream ``stream``'s history: it flags again only after a full window."""
        self.counts[stream] = 0
        self.statistic[stream] = -np.inf


def gaussian_window_glr(samples: np.ndarray, mean: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """Average generalised log-likelihood ratio of a window of samples, per sample and per
    dimension: the window's Gaussian fit (sample mean, ``np.cov`` covariance with ``n - 1``)
    against the model ``N(mean, cov)``.

    ``[n/2 log(det cov / det S) + 1/2 sum_tau (x - mean)^T cov^{-1} (x - mean)
    - 1/2 sum_tau (x - xbar)^T S^{-1} (x - xbar)] / (n N)``; the last sum equals
    ``(n - 1) N`` exactly. Batched: ``samples`` (..., n, N), ``mean`` (..., N),
    ``cov`` (..., N, N). Needs ``n > N`` (otherwise ``S`` is singular and the value is inf).
    """
    x = np.asarray(samples, dtype=float)
    mean, cov = np.asarray(mean, dtype=float), np.asarray(cov, dtype=float)
    if x.ndim < 2:
        raise ValueError(f"samples must have shape (..., w, N), got {x.shape}")
    n_win, dim = x.shape[-2:]
    if mean.shape[-1:] != (dim,) or cov.shape[-2:] != (dim, dim):
        raise ValueError(f"need mean (..., {dim}) and covariance (..., {dim}, {dim})")
    if n_win <= dim:
        raise ValueError(f"the sample covariance needs more than N = {dim} samples, got {n_win}")
    try:
        chol = np.linalg.cholesky(cov)
    except np.linalg.LinAlgError as error:
        raise ValueError("the null covariance must be positive definite") from error
    xbar = x.mean(axis=-2, keepdims=True)
    dev = x - xbar
    S = np.swapaxes(dev, -1, -2) @ dev / (n_win - 1)
    sign_s, logdet_s = np.linalg.slogdet(S)
    logdet_s = np.where(sign_s > 0, logdet_s, -np.inf)
    _, logdet_c = np.linalg.slogdet(cov)
    r = x - mean[..., None, :]
    z = np.linalg.solve(chol[..., None, :, :], r[..., None])[..., 0]
    mahal = np.sum(z * z, axis=(-1, -2))
    with np.errstate(invalid="ignore"):
        glr = 0.5 * n_win * (logdet_c - logdet_s) + 0.5 * mahal - 0.5 * (n_win - 1) * dim
    return glr / (n_win * dim)


def sem_window_glr(
    samples: np.ndarray,
    weights: np.ndarray,
    noise_mean: np.ndarray,
    noise_variance: float | np.ndarray = 1.0,
) -> np.ndarray:
    """:func:`gaussian_window_glr` of a window under the linear SEM ``x = B^T x + eps``,
    ``eps ~ N(nu, diag(sigma^2))``, i.e. the model ``N(C^T nu, C^T diag(sigma^2) C)`` with
    ``C = (I - B)^{-1}`` (GOLEM-MAB-CD's whole-graph detector; decisions: csl-ucb B5).

    Computed on the whitened residuals ``y = (I - B)^T x`` (model ``N(nu, diag(sigma^2))``):
    the GLR is invariant under an invertible linear map of the data, and this avoids the
    badly conditioned ``C^T C``. Batched: ``samples`` (..., n, N), ``weights`` (..., N, N).
    """
    x = np.asarray(samples, dtype=float)
    B = np.asarray(weights, dtype=float)
    n = B.shape[-1]
    y = x @ (np.eye(n) - B)  # rows: y_tau^T = x_tau^T (I - B)
    var = np.broadcast_to(np.asarray(noise_variance, dtype=float), (n,))
    cov = np.diag(var)
    return gaussian_window_glr(y, np.asarray(noise_mean, dtype=float), cov)
