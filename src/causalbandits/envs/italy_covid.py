"""The NDC-SEM Covid experiment as a bandit (Sec. V-B, App. VII-D): the pre-processed instance
and its replay environment.

Pre-processing (App. VII-D3; decisions: ndc-sem 16-23) of the bulletins that
:mod:`causalbandits.data.italy_covid` loads: daily new cases are ``nuovi_positivi`` clipped at
0; a Gaussian KDE (Scott's rule) per region on 20 Apr - 3 Jun 2020 gives the region-specific
("instantaneous") cases ``b``, sampled every day and clipped at 0; a trailing 7-day moving
average (6 warm-up days) smooths ``b`` and the overall cases ``y``; over the horizon 31 Jul -
18 Oct 2020 (T = 80) the arms are shifted cyclically ``k`` times from day 40 on; everything is
divided by the global max of the smoothed ``y``; one seeded day of every 10-day block is a
validation day (90:10).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import gaussian_kde, norm

from causalbandits.data.italy_covid import REGIONS, daily_new_cases
from causalbandits.envs.semibandit import (
    PiecewiseRounds,
    SemiBanditFeedback,
    SemiBanditProblem,
    check_adjacency,
    check_horizon_and_super_arm_size,
    check_super_arms,
)
from causalbandits.estimators.topk import top_s_mask, total_effects
from causalbandits.random import RNGLike, as_generator


def trailing_mean(series: np.ndarray, window: int) -> np.ndarray:
    """Trailing ``window``-day moving average along axis 0 (drops the first ``window - 1``)."""
    return np.lib.stride_tricks.sliding_window_view(series, window, axis=0).mean(axis=-1)


def shift_arms(series: np.ndarray, change_point: int, shift: int) -> np.ndarray:
    """From 1-based day ``change_point`` on, arm ``i`` takes the values of arm ``(i + k) mod N``
    (the cyclic shift of Sec. V-B); ``series`` is ``(T, ..., N)``."""
    shifted = series.copy()
    shifted[change_point - 1 :] = np.roll(series[change_point - 1 :], -shift, axis=-1)
    return shifted


@dataclass(frozen=True)
class CovidInstance:
    """The pre-processed Covid experiment; every value is divided by ``scale``.

    ``overall`` (T, N) is ``y``; ``kde_data`` (n, N) and ``bandwidths`` (N,) define the
    per-region KDEs of ``b``; ``means`` (2, N) is ``beta`` before and from day
    ``change_point``; ``validation`` (T,) marks the validation days; ``shift`` is ``k``.
    """

    dates: np.ndarray
    overall: np.ndarray
    kde_data: np.ndarray
    bandwidths: np.ndarray
    means: np.ndarray
    change_point: int
    shift: int
    validation: np.ndarray
    scale: float
    window: int

    @property
    def horizon(self) -> int:
        return self.overall.shape[0]

    @property
    def n_arms(self) -> int:
        return self.overall.shape[1]

    def sample_instantaneous(self, generator: np.random.Generator) -> np.ndarray:
        """One draw of the smoothed, shifted region-specific cases ``b`` (T, N) (App. VII-D3)."""
        days = self.horizon + self.window - 1
        n, arms = self.kde_data.shape
        points = self.kde_data[generator.integers(n, size=(days, arms)), np.arange(arms)]
        draws = np.clip(points + self.bandwidths * generator.standard_normal((days, arms)), 0, None)
        return shift_arms(trailing_mean(draws, self.window), self.change_point, self.shift)


def clipped_kde_mean(data: np.ndarray, bandwidths: np.ndarray) -> np.ndarray:
    """``E[max(X, 0)]`` for ``X`` from the Gaussian KDE of each column of ``data``."""
    sigma = np.where(bandwidths > 0, bandwidths, 1.0)
    ratio = data / sigma
    smooth = data * norm.cdf(ratio) + sigma * norm.pdf(ratio)
    return np.where(bandwidths > 0, smooth, np.maximum(data, 0)).mean(axis=0)


def scott_bandwidths(data: np.ndarray) -> np.ndarray:
    """Standard deviation of each column's ``gaussian_kde`` kernel (Scott's rule); 0 if flat."""
    return np.array(
        [
            np.sqrt(gaussian_kde(column).covariance[0, 0]) if np.ptp(column) > 0 else 0.0
            for column in data.T
        ]
    )


def validation_days(horizon: int, block: int, generator: np.random.Generator) -> np.ndarray:
    """One random day of every ``block`` consecutive days (the 90:10 split of Sec. V-B)."""
    mask = np.zeros(horizon, dtype=bool)
    for start in range(0, horizon, block):
        mask[start + generator.integers(min(block, horizon - start))] = True
    return mask


@dataclass(frozen=True, kw_only=True)
class CovidPreprocessing:
    """The pre-processing of the Covid experiment (App. VII-D3, Sec. V-B), the paper's by
    default; checked on construction (the change point against the days by
    :func:`italy_covid_instance`)."""

    #: The experiment's first and last day (App. VII-D3: 2020-07-31 to 2020-10-18, T = 80).
    start: str = "2020-07-31"
    end: str = "2020-10-18"
    #: The days whose new cases estimate the base arms' laws by KDE (App. VII-D3).
    kde_start: str = "2020-04-20"
    kde_end: str = "2020-06-03"
    #: The trailing moving average of the daily new cases, in days (App. VII-D3: a week).
    window: int = 7
    #: The day from which the arms' means are shifted by ``k`` regions (Sec. V-B: 40).
    change_point: int = 40
    #: One random validation day per block of this many days (the 90:10 split of Sec. V-B).
    block: int = 10

    def __post_init__(self) -> None:
        if self.window < 1:
            raise ValueError(f"the moving-average window must be >= 1, got {self.window}")


def italy_covid_instance(
    frame: pd.DataFrame,
    rng: RNGLike = None,
    preprocessing: CovidPreprocessing | None = None,
    shift: int | None = None,
) -> CovidInstance:
    """Pre-process the bulletins for the Covid experiment (``preprocessing``, default
    :class:`CovidPreprocessing`'s).

    ``rng`` draws ``k`` (uniform in ``1..N-1``, unless ``shift`` is given), then the
    validation day of each block.
    """
    options = CovidPreprocessing() if preprocessing is None else preprocessing
    start, end, window = options.start, options.end, options.window
    change_point = options.change_point
    warm_up = (pd.Timestamp(start) - pd.Timedelta(days=window - 1)).strftime("%Y-%m-%d")
    overall = trailing_mean(daily_new_cases(frame, warm_up, end), window)
    horizon, n = overall.shape
    if not 2 <= change_point <= horizon:
        raise ValueError(f"the change point must lie in 2..T = {horizon}, got {change_point}")
    scale = float(overall.max())
    if scale <= 0:
        raise ValueError(f"no new cases at all in {start}..{end}")
    generator = as_generator(rng)
    k = int(generator.integers(1, n)) if shift is None else int(shift)
    if not 1 <= k <= n - 1:
        raise ValueError(f"the shift k must lie in 1..{n - 1}, got {k}")
    kde_data = daily_new_cases(frame, options.kde_start, options.kde_end) / scale
    bandwidths = scott_bandwidths(kde_data)
    mean = clipped_kde_mean(kde_data, bandwidths)
    return CovidInstance(
        dates=pd.date_range(start, end, freq="D").to_numpy().astype("datetime64[D]"),
        overall=shift_arms(overall / scale, change_point, k),
        kde_data=kde_data,
        bandwidths=bandwidths,
        means=np.stack([mean, np.roll(mean, -k)]),
        change_point=int(change_point),
        shift=k,
        validation=validation_days(horizon, options.block, generator),
        scale=scale,
        window=int(window),
    )


@dataclass(frozen=True, kw_only=True)
class CovidProblem(SemiBanditProblem):
    """The learner's view: also the region names and the validation days (T,) for tuning."""

    regions: tuple[str, ...]
    validation: np.ndarray


@dataclass(frozen=True)
class CovidFeedback(SemiBanditFeedback):
    """``z = diag(b) x`` and the real ``y`` (R, N), plus the full ``b`` (R, N) that the graph
    learner uses on training days (decisions: ndc-sem 22)."""

    b: np.ndarray


class ItalyCovidBandit(PiecewiseRounds):
    """Replay of the Covid experiment: ``y`` is the data, ``b`` one KDE draw per replicate.

    ``y`` does not depend on the super arm (the paper applies (9) to real data); the
    environment has no true graph, so :meth:`pseudo_regret` needs a ``reference_adjacency``
    (paper convention; e.g. a graph fitted offline), against ``beta_t`` of ``instance.means``
    (two periods, split at ``instance.change_point``).
    """

    def __init__(
        self,
        instance: CovidInstance,
        super_arm_size: int = 5,
        reference_adjacency: np.ndarray | None = None,
        optimal_tolerance: float = 1e-9,
    ) -> None:
        n = instance.n_arms
        check_horizon_and_super_arm_size(instance.horizon, super_arm_size, n)
        self.instance = instance
        self.horizon = instance.horizon
        self.super_arm_size = int(super_arm_size)
        self.change_points = np.array([instance.change_point])
        self.optimal_tolerance = float(optimal_tolerance)
        self.problem = CovidProblem(
            n_arms=n,
            super_arm_size=self.super_arm_size,
            horizon=self.horizon,
            upper_triangular=False,
            regions=REGIONS,
            validation=instance.validation.copy(),
        )
        self.scores: np.ndarray | None = None
        if reference_adjacency is not None:
            adjacency = check_adjacency(reference_adjacency)
            if adjacency.shape != (n, n):
                raise ValueError(f"the reference graph must be {n} x {n}, got {adjacency.shape}")
            self.scores = total_effects(adjacency) * instance.means
            self.optimal_actions = top_s_mask(self.scores, self.super_arm_size)
            self.optimal_values = np.sum(self.scores * self.optimal_actions, axis=1)
        self._b: np.ndarray | None = None

    @property
    def n_arms(self) -> int:
        return self.instance.n_arms

    @property
    def instantaneous(self) -> np.ndarray:
        """The ``b`` of every day and replicate, (T, R, N)."""
        if self._b is None:
            raise RuntimeError("call reset() before using the environment")
        return self._b

    def start(self, seeds: list[np.random.SeedSequence]) -> None:
        """Replicate ``r`` draws its ``b`` of every day from its own seed."""
        draws = [self.instance.sample_instantaneous(np.random.default_rng(s)) for s in seeds]
        self._b = np.stack(draws, axis=1)

    def play(self, actions: np.ndarray) -> CovidFeedback:
        """``z``, ``y`` and ``b`` of the day for super arms ``(R, N)``."""
        b = self.instantaneous[self.t]
        y = np.broadcast_to(self.instance.overall[self.t], b.shape).copy()
        return CovidFeedback(z=b * actions, y=y, b=b.copy())

    def pseudo_regret(self, actions: np.ndarray) -> np.ndarray:
        """Regret (eq. 7) of the round about to be played under the reference graph."""
        if self.scores is None:
            raise RuntimeError("the Covid data have no true graph: pass reference_adjacency")
        x = check_super_arms(actions, self.n_arms, self.super_arm_size, len(actions))
        return self.optimal_values[self.period] - x @ self.scores[self.period]

    def estimated_overall_rewards(self, actions: np.ndarray, adjacency: np.ndarray) -> np.ndarray:
        """``1^T (I - A_hat)^{-1} diag(b_t) x_t`` per day and replicate (Fig. 9; cumulate it).

        ``actions`` are the masks of days ``1..len(actions)``, shape (days, R, N); ``A_hat`` is
        e.g. the final estimate; ``w = (I - A_hat)^{-T} 1`` by least squares. Row-wise
        products and sums: a replicate's numbers do not depend on how many replicates are
        batched (a BLAS matrix-vector product may round rows differently with the batch size,
        which would break exact ties between replicates that make the same decisions).
        """
        x = np.asarray(actions, dtype=float)
        effects = total_effects(adjacency, least_squares=True)
        return (x * (self.instantaneous[: x.shape[0]] * effects)).sum(axis=-1)
