import numpy as np
import pytest
from scipy import stats

from causalbandits.estimators.change_detection import (
    GaussianGLR,
    WindowedGLR,
    gaussian_window_glr,
    glr_statistics,
)


def test_statistics_equal_the_log_likelihood_ratio_of_eq_47():
    rng = np.random.default_rng(0)
    mean, variance, n = 0.7, 2.3, 30
    y = mean + np.sqrt(variance) * rng.standard_normal(n)
    psi = glr_statistics(y, mean, variance)
    assert psi.shape == (n + 1,)
    for s in range(n - 1):
        tail = y[s:]
        fitted = stats.norm.logpdf(tail, tail.mean(), tail.std())
        null = stats.norm.logpdf(tail, mean, np.sqrt(variance))
        assert psi[s] == pytest.approx(np.sum(fitted - null), rel=1e-10, abs=1e-10)
    assert np.all(psi[n - 1 :] == -np.inf)  # fewer than two samples after s
    assert np.all(glr_statistics(y, mean, variance, min_segment=5)[n - 4 :] == -np.inf)


def _batch_maximum(history: list[float], mean: float, variance: float) -> tuple[float, int]:
    psi = glr_statistics(np.array(history), mean, variance)[1:]  # s >= 1 (eq. 44)
    if psi.size == 0 or np.all(psi == -np.inf):
        return -np.inf, 0
    return psi.max(), len(history) - (1 + int(np.argmax(psi)))


def test_incremental_detector_matches_the_batch_statistic():
    rng = np.random.default_rng(1)
    means, variances = np.array([0.0, 1.0, -2.0]), np.array([1.0, 0.5, 3.0])
    detector = GaussianGLR(3, means, variances, zeta=0.05)
    histories: list[list[float]] = [[], [], []]
    for t in range(150):  # longer than the initial capacity of 64
        streams = np.flatnonzero(rng.random(3) < 0.7)
        shift = 1.5 if t > 90 else 0.0
        values = (
            means[streams] + shift + np.sqrt(variances[streams]) * rng.standard_normal(streams.size)
        )
        flags = detector.update(streams, values)
        for k, value, flag in zip(streams, values, flags, strict=True):
            histories[k].append(value)
            best, post = _batch_maximum(histories[k], means[k], variances[k])
            assert detector.statistic[k] == pytest.approx(best, rel=1e-9, abs=1e-9)
            assert detector.post_change_count[k] == post
            assert flag == (best >= -np.log(0.05))
        if t == 60:
            detector.reset(1, keep=5)
            histories[1] = histories[1][-5:]
            detector.reset(2)
            histories[2] = []
    assert detector.counts.tolist() == [len(h) for h in histories]


def test_null_false_alarm_rate_of_psi_at_s_equal_one_is_zeta():
    # eq. (55): 2 Psi(1) ~ chi^2(2) for large t - s, so P(Psi(1) >= -ln zeta) ~ zeta.
    # Measured here (20,000 runs, t - s = 200): 0.1021 for zeta = 0.1, 0.0117 for 0.01.
    # The exact rate (from (t-s) sigma_hat^2 ~ chi^2(t-s-1)) is 0.1010 and 0.0103 there.
    rng = np.random.default_rng(2)
    runs = 20_000
    y = 1.0 + rng.standard_normal((runs, 201))
    psi_one = glr_statistics(y, 1.0, 1.0)[:, 1]
    for zeta in (0.1, 0.01):
        rate = np.mean(psi_one >= -np.log(zeta))
        assert abs(rate - zeta) < 4 * np.sqrt(zeta * (1 - zeta) / runs)


def test_short_segments_and_the_maximum_over_s_are_anti_conservative():
    rng = np.random.default_rng(3)
    runs, zeta = 20_000, 0.1
    # at t - s = 20 the chi^2(2) approximation is off: exact rate 0.111
    short = glr_statistics(rng.standard_normal((runs, 21)), 0.0, 1.0)[:, 1]
    rate = np.mean(short >= -np.log(zeta))
    assert abs(rate - 0.111) < 4 * np.sqrt(0.111 * 0.889 / runs)
    # the detector maximises over s: at t = 201 it fires in about 25% of null runs for
    # zeta = 0.01 (2.5 times more often for 2-sample segments alone), not in 1%
    psi = glr_statistics(rng.standard_normal((runs, 201)), 0.0, 1.0)[:, 1:]
    assert np.mean(psi.max(axis=1) >= -np.log(0.01)) > 0.15


@pytest.mark.parametrize("delta", [1.0, 2.0])
def test_mean_shift_is_detected_after_about_2_eta_over_delta_squared(delta):
    # Psi grows by the KL divergence delta^2 / (2 sigma^2) per post-change sample.
    # Measured (500 runs): mean delay 14.9 (delta 1) and 5.1 (delta 2) vs 18.4 and 4.6.
    rng = np.random.default_rng(4)
    runs, before, after, zeta = 500, 50, 60, 1e-4
    detector = GaussianGLR(runs, 1.0, 1.0, zeta, min_segment=5)
    streams = np.arange(runs)
    flags = np.array(
        [
            detector.update(streams, 1.0 + delta * (t >= before) + rng.standard_normal(runs))
            for t in range(before + after)
        ]
    )
    assert flags[:before].mean() < 0.01
    post = flags[before:]
    assert post.any(axis=0).all()
    delay = np.argmax(post, axis=0) + 1
    predicted = 2 * -np.log(zeta) / delta**2
    assert 0.5 * predicted < delay.mean() < 1.5 * predicted


def test_windowed_statistic_is_psi_per_sample_and_flags_a_shift():
    rng = np.random.default_rng(5)
    runs, window = 300, 20
    detector = WindowedGLR(runs, 1.0, 4.0, window=window, threshold=2.0, warmup=100)
    streams = np.arange(runs)
    values = 1.0 + 2.0 * rng.standard_normal((400, runs))
    values[250:] += 6.0  # 3 sigma
    flags = np.array([detector.update(streams, v) for v in values])
    last = glr_statistics(values[-window:].T, 1.0, 4.0)[:, 0] / window
    np.testing.assert_allclose(detector.statistic, last, rtol=1e-10)
    assert not flags[:250].any()  # the null never reaches 2 per sample (Psi >= 40)
    delay = np.argmax(flags[250:], axis=0) + 1
    assert flags[250:].any(axis=0).all() and delay.max() <= window


def test_windowed_warmup_and_full_window_are_required():
    rng = np.random.default_rng(7)
    detector = WindowedGLR(2, 0.0, 1.0, window=10, threshold=2.0, warmup=30)
    streams = np.arange(2)
    shifted = 50.0 + rng.standard_normal((50, 2))
    flags = np.array([detector.update(streams, v) for v in shifted[:40]])
    assert not flags[:30].any() and flags[30:].all()  # rounds 1..30 are the warm-up
    detector.reset(0)
    assert detector.update(streams, shifted[40]).tolist() == [False, True]
    later = [detector.update(np.array([0]), v[:1])[0] for v in shifted[41:]]
    assert later == [False] * 8 + [True]  # stream 0 flags again once its window is full


def test_window_glr_is_the_log_likelihood_ratio_per_sample_and_node():
    rng = np.random.default_rng(6)
    n, w = 4, 20
    factor = rng.standard_normal((n, n))
    covariance = factor @ factor.T + n * np.eye(n)
    mean = rng.standard_normal(n)
    samples = rng.multivariate_normal(mean, covariance, size=w)
    fitted = stats.multivariate_normal(samples.mean(axis=0), np.cov(samples, rowvar=False))
    null = stats.multivariate_normal(mean, covariance)
    expected = np.sum(fitted.logpdf(samples) - null.logpdf(samples)) / (w * n)
    assert gaussian_window_glr(samples, mean, covariance) == pytest.approx(expected, rel=1e-10)
    shifted = gaussian_window_glr(samples + 5 * np.sqrt(np.diag(covariance)), mean, covariance)
    assert shifted > gaussian_window_glr(samples, mean, covariance) + 5


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="n_streams"):
        GaussianGLR(0, 0.0, 1.0, 0.1)
    with pytest.raises(ValueError, match="variances"):
        GaussianGLR(2, 0.0, [1.0, 0.0], 0.1)
    with pytest.raises(ValueError, match="means"):
        WindowedGLR(2, [0.0, np.nan], 1.0)
    with pytest.raises(ValueError, match="zeta"):
        GaussianGLR(2, 0.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="min_segment"):
        GaussianGLR(2, 0.0, 1.0, 0.1, min_segment=1)
    with pytest.raises(ValueError, match="min_segment"):
        glr_statistics(np.zeros(5), 0.0, 1.0, min_segment=1)
    with pytest.raises(ValueError, match="window"):
        WindowedGLR(2, 0.0, 1.0, window=1)
    with pytest.raises(ValueError, match="warmup"):
        WindowedGLR(2, 0.0, 1.0, warmup=-1)
    for detector in (GaussianGLR(3, 0.0, 1.0, 0.1), WindowedGLR(3, 0.0, 1.0)):
        with pytest.raises(ValueError, match="at most one value"):
            detector.update(np.array([1, 1]), np.zeros(2))
        with pytest.raises(ValueError, match="one value per stream"):
            detector.update(np.array([0, 1]), np.zeros(3))
        with pytest.raises(ValueError, match="0..2"):
            detector.update(np.array([3]), np.zeros(1))
        with pytest.raises(ValueError, match="integer ids"):
            detector.update(np.array([0.0]), np.zeros(1))
        with pytest.raises(ValueError, match="finite"):
            detector.update(np.array([0]), np.array([np.inf]))
    with pytest.raises(ValueError, match="keep"):
        GaussianGLR(1, 0.0, 1.0, 0.1).reset(0, keep=1)
    with pytest.raises(ValueError, match="more than N"):
        gaussian_window_glr(np.zeros((3, 3)), np.zeros(3), np.eye(3))
    with pytest.raises(ValueError, match="positive definite"):
        gaussian_window_glr(np.ones((5, 2)), np.zeros(2), -np.eye(2))
    with pytest.raises(ValueError, match="mean"):
        gaussian_window_glr(np.ones((5, 2)), np.zeros(3), np.eye(2))
