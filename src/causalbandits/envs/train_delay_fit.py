"""The fit of the German train-delay simulator of SSEM-UCB (Sec. V-B, App. -G2): a separable
SEM and exogenous laws calibrated on the 80 available hours of :mod:`causalbandits.data.
train_delays` (:func:`fit_train_delay_sem`), and diagnostics of the fit. The simulator that
runs it is :mod:`causalbandits.envs.train_delays`, the replay of the hours
:mod:`causalbandits.envs.train_delay_replay`.

What is fitted, and how (every choice; the paper gives only the model class)
---------------------------------------------------------------------------
- **Normalisation: one scale for every signal, no shift.** Both signals are divided by one
  number of minutes, ``scale`` (default: the range ``max - min`` of every observed exogenous
  value, 82 min: -11 min at Halberstadt to 71 min at Kassel Hbf). So the base arms lie in an
  interval of width 1 (``[-0.134, 0.866]``), the range SSEM-UCB's moment clipping
  (``signal_width = 1``) and Hoeffding radius assume (the paper's "[0, 1] w.l.o.g."), and 0
  keeps its meaning: an unselected station (``z = 0``) adds no delay of its own. A shift to
  ``[0, 1]`` would make an unselected station add ``min b`` instead, and would break the
  units of ``y = F(y) + z`` unless ``y`` moved with it. Per-station z-scores
  (:meth:`TrainDelayData.standardised`) are rejected: they erase the differences in mean
  delay the agent is meant to find (every arm would have mean 0, as spec decision 3.6.7 warns
  for the synthetic arms), give ``y`` and ``z`` of one station different units, and move 0.
- **Exogenous laws.** Station ``i`` draws ``b_i`` from the empirical law of its observed
  normalised exogenous values (:class:`~causalbandits.envs.base_arms.EmpiricalArms`:
  resampling, common random numbers through the quantile). The fewest values are 14
  (Saalfeld), then 16 (Leinefelde), 17 (Nordhausen) and 19 (Goslar): coarse laws (atoms of
  1/14), kept as they are rather than smoothed. Kassel Hbf, a terminus, uses the loader's
  fallback (``terminus_exogenous="origin"``: the departure delay of the trains starting there,
  59 of its 63 hours). A station without any exogenous value would get a point mass at 0.
- **Structural equation per station** (eq. 2, ``W[i, j, k]``: basis ``k`` on the edge
  ``j -> i``): ``y_i - b_i = c_i + sum_{j -> i} f_ij(y_j) + e_i`` on the hours where ``b_i`` is
  observed (a through train; then ``y_i`` is observed too). Only the track-record edges of
  ``data.adjacency`` are candidates (60 directed edges, 2-cycles included). A parent without
  trains in that hour enters as ``y_j = 0`` (no train: no delay passed on); requiring every
  parent to be observed would leave 3 hours at Saalfeld and 12 at Erfurt. The intercept
  ``c_i`` (the mean delay brought in from outside the 20 stations, up to 11 min at Göttingen)
  is a nuisance of the fit: the SEM stays zero-true (``F(0) = 0``, the paper's Sec. II) and
  the simulator has no external input (see below).
- **Edge families** ``{linear, cubic, zero-true shifted tanh}``: ``a v``, ``a v^3`` and ``a
  (tanh(c (v - d)) - tanh(-c d))`` (:class:`~causalbandits.scm.basis.ScaledTanh`). The
  tanh's shape ``(c, d)`` comes from a grid: width ``1/c`` in :data:`TANH_WIDTHS` = (2, 5,
  10) min, threshold ``d`` in :data:`TANH_SHIFTS` = (0, 5, 10) min (``d = 0``: a saturating
  edge; ``d > 0``: buffer times absorb small delays, larger ones pass on). The grid keeps
  every candidate a linear least squares problem in ``a``. ``tanh_shapes="shared"``
  (default) gives every tanh edge the one shape whose fit has the smallest cross-validated
  error summed over the stations, so the SEM's dictionary has ``K <= 3`` bases;
  ``"per-edge"`` lets each edge pick its own shape (``K`` up to 11). The data cannot tell
  the shapes apart per edge (held-out structural error 0.746 of the empty graph's per edge,
  0.747 shared, mean over the four splits below; summed cross-validated error 3 % lower per
  edge, in sample), while the plain solve of
  :class:`~causalbandits.scm.separable.SeparableSEM` evaluates every basis at every node
  (``K = 10`` costs 5 times ``K = 3``).
- **Amplitudes: box-constrained least squares** per station (intercept free), ``0 <= a`` and
  an edge's largest slope on the data range of its parent at most ``max_edge_slope`` (1: an
  edge never passes on more than a minute per minute of upstream delay); delay propagation is
  monotone. Without these bounds the few hours do not pin the edges down: unconstrained least
  squares gives negative gains on the 2-cycles and cubic coefficients near 1,000 (Leinefelde,
  16 hours), non-negative least squares cubic coefficients near 9 on single outlier hours,
  and both predict held-out hours 5 to 400 times worse than the empty graph. An amplitude at 0
  removes the edge (no positive association in the data).
- **Family per edge by held-out error**: 5-fold cross-validation over contiguous blocks of the
  station's hours. Every edge starts linear; sweeps over the edges try every candidate of
  each with the others fixed and keep the best if it lowers the cross-validated error by at
  least ``min_improvement`` (1 %), until a sweep changes nothing (at most 3 sweeps). Stations
  with fewer than ``min_hours`` (10) hours would keep linear edges (all have at least 14).
- **Contraction** (the cyclic solve, Prop. IV.4, and the jets' fixed point of
  :func:`~causalbandits.estimators.jets.reward_jets`): every fitted edge is non-decreasing, so
  the solutions for inputs between the smallest and the largest signals lie between the
  solutions of those two extreme inputs; on that box, joined with the data's range, ``M[i, j]``
  is the largest slope of ``f_ij`` (``fit.slopes``) and ``rho(M)`` bounds the fixed point's
  contraction (in the max norm weighted by ``M``'s Perron vector). The least-squares fit is not
  a contraction (``rho = 1.32``: the hourly means of neighbouring stations share trains, so
  both directions of a 2-cycle explain the same delay); every amplitude is then multiplied by
  ``max_contraction / rho`` (default 0.8: the jets' 200 sweeps reach 1e-12 for rates up to
  0.87, with a margin for a learner's estimate) and the box recomputed.

Measured on the shared data (20 stations, 80 hours; 2 cores shared with other runs)
-------------------------------------------------------------------------------
- edges: 28 of the 60 track-record edges kept (amplitude > 0): 13 linear, 6 cubic and 9 tanh,
  all with the shape ``1/c = 10`` min, ``d = 10`` min (a buffer of about 10 minutes); Göttingen,
  Leinefelde, Nordhausen and Halberstadt keep no incoming edge;
- contraction: ``rho(M) = 1.32`` for the bounded least-squares fit, 0.80 after the shrink
  (factor 0.61); the plain fixed point from the data hours contracts at an observed 0.69 per
  sweep (``b``), 0.72 (``b`` plus the intercepts) and 0.66 (the hours' own residuals);
- held-out, fitting on the first 40 / 48 / 56 / 64 hours and predicting the rest, mean squared
  error of the structural equations (``y_i`` from ``b_i`` and the parents' real ``y``) 60.5 /
  73.7 / 74.1 / 25.4 min^2 against 88.0 / 103.1 / 91.9 / 32.6 for the empty graph with its own
  intercepts (0.69 / 0.71 / 0.81 / 0.78 of it). From the hour's exogenous signals alone (the
  cyclic solve of ``b + c``) the SEM does not beat the intercepts (74.0 / 85.7 / 76.9 / 33.9
  vs 73.9 / 85.0 / 75.7 / 30.4): the hour's own stay delays explain little of its delays,
  most of which come from outside the 20 stations;
- time: the fit 3 s (10 s under load).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from causalbandits.data.train_delays import TrainDelayData, load_train_delays
from causalbandits.envs.base_arms import EmpiricalArms
from causalbandits.estimators.box_least_squares import box_least_squares
from causalbandits.scm.basis import CUBIC, LINEAR, BasisFunction, Dictionary, ScaledTanh
from causalbandits.scm.separable import ChordSEM, SeparableSEM

#: Widths ``1/c`` of the tanh edges' grid, in minutes.
TANH_WIDTHS: tuple[float, ...] = (2.0, 5.0, 10.0)
#: Thresholds ``d`` of the tanh edges' grid, in minutes.
TANH_SHIFTS: tuple[float, ...] = (0.0, 5.0, 10.0)
#: Cross-validation folds of the family choice.
FOLDS = 5
#: How the tanh edges' shapes are chosen (:attr:`TrainDelayFitOptions.tanh_shapes`).
TANH_MODES = ("shared", "per-edge")
#: Sweeps over the edges of the family choice at most (:func:`_select_families`).
FAMILY_SWEEPS = 3


@dataclass(frozen=True, kw_only=True)
class TrainDelayFitOptions:
    """The choices of :func:`fit_train_delay_sem` (module docstring), checked on construction."""

    #: Minutes per normalised unit; ``None``: the range ``max - min`` of the observed
    #: exogenous values (82 min on the shared data).
    scale: float | None = None
    #: ``"shared"``: one grid shape for every tanh edge, the one with the smallest summed
    #: cross-validated error (``K <= 3``); ``"per-edge"``: any grid shape per edge
    #: (``K <= 11``).
    tanh_shapes: str = "shared"
    #: The largest slope of an edge on its parent's data range (1: an edge never passes on
    #: more than a minute per minute of upstream delay).
    max_edge_slope: float = 1.0
    #: The largest ``rho(M)`` kept (Prop. IV.4's contraction; ``None``: no shrink, report
    #: only).
    max_contraction: float | None = 0.8
    #: The relative drop of cross-validated error a family other than the current one needs.
    min_improvement: float = 0.01
    #: Cross-validation folds (contiguous blocks of a station's hours).
    folds: int = FOLDS
    #: Stations with fewer fitting hours keep linear edges.
    min_hours: int = 10

    def __post_init__(self) -> None:
        if self.tanh_shapes not in TANH_MODES:
            raise ValueError(f"tanh_shapes must be one of {TANH_MODES}, got {self.tanh_shapes!r}")
        if self.max_edge_slope <= 0 or self.folds < 2 or self.min_hours < self.folds:
            raise ValueError("need max_edge_slope > 0, folds >= 2 and min_hours >= folds")
        if self.max_contraction is not None and not 0 < self.max_contraction < 1:
            raise ValueError(f"max_contraction must lie in (0, 1), got {self.max_contraction}")
        if self.scale is not None:
            check_scale(self.scale)


def check_scale(scale: float) -> float:
    """``scale`` as a float; ``ValueError`` unless a positive finite number of minutes."""
    if not (np.isfinite(scale) and scale > 0):
        raise ValueError(f"scale must be a positive number of minutes, got {scale}")
    return float(scale)


@dataclass(frozen=True)
class TrainDelayFit:
    """The calibrated SEM and laws (normalised units: minutes divided by ``scale``).

    ``weights`` ``(N, N, K)`` over ``dictionary`` (``W[i, j, k]``: basis ``k`` on ``j -> i``);
    ``families[i][j]`` the family of edge ``j -> i`` ("linear", "cubic", "tanh" or "" for no
    candidate); ``intercepts`` ``(N,)`` and ``residual_sd`` ``(N,)`` of the structural
    equations (normalised); ``exogenous_values`` the normalised observed exogenous values per
    station (the laws); ``box`` ``(2, N)`` the range on which ``contraction`` (``rho(M)``,
    after the shrink) holds, ``raw_contraction`` the least-squares fit's ``rho``, ``shrink``
    the factor applied to every amplitude; ``hours`` the hours fitted on; ``options`` the
    fit's choices and ``cv_sse`` the summed cross-validated error of the chosen families.
    """

    names: tuple[str, ...]
    short_names: tuple[str, ...]
    scale: float
    weights: np.ndarray
    dictionary: Dictionary
    families: tuple[tuple[str, ...], ...]
    intercepts: np.ndarray
    residual_sd: np.ndarray
    pooled_residual_sd: float
    exogenous_values: tuple[np.ndarray, ...]
    box: np.ndarray
    slopes: np.ndarray
    contraction: float
    raw_contraction: float
    shrink: float
    hours: np.ndarray
    fit_seconds: float
    options: TrainDelayFitOptions
    cv_sse: float

    @property
    def n_stations(self) -> int:
        return len(self.names)

    @property
    def edges(self) -> np.ndarray:
        """``(N, N)`` booleans, ``[i, j]``: the fitted edge ``i -> j`` (the project's
        adjacency convention; the transpose of the support of ``W``)."""
        return (np.abs(self.weights).max(axis=-1) > 0).T

    def family_counts(self) -> dict[str, int]:
        """Edges kept (amplitude > 0) per family."""
        kept = np.abs(self.weights).max(axis=-1) > 0
        counts = {"linear": 0, "cubic": 0, "tanh": 0}
        for i, j in zip(*np.nonzero(kept), strict=True):
            counts[self.families[i][j]] += 1
        return counts

    def sem(self, method: str = "auto", tol: float = 1e-12, max_iter: int = 500) -> SeparableSEM:
        """The fitted SEM (one instance)."""
        return ChordSEM(self.weights, self.dictionary, method, tol, max_iter)

    def arms(self) -> EmpiricalArms:
        """The exogenous laws."""
        return EmpiricalArms(self.exogenous_values)

    def normalise(self, minutes: np.ndarray) -> np.ndarray:
        return np.asarray(minutes, dtype=float) / self.scale


# --- checks ----------------------------------------------------------------------------------


def check_data(data: TrainDelayData) -> TrainDelayData:
    """Raise ``ValueError`` unless ``data`` holds raw (minutes) signals of consistent shapes:
    ``exogenous``, ``endogenous``, ``observed``, ``exogenous_observed`` ``(T, N)``, ``adjacency``
    ``(N, N)`` without self-loops, ``N`` names, at least one observed exogenous value."""
    if not isinstance(data, TrainDelayData):
        raise ValueError(f"need a TrainDelayData, got {type(data).__name__}")
    if data.standardised_signals:
        raise ValueError(
            "the simulator normalises the signals itself: pass the data in minutes, not "
            "TrainDelayData.standardised()"
        )
    n = len(data.names)
    hours = np.shape(data.endogenous)[0] if np.ndim(data.endogenous) == 2 else -1
    for name in ("exogenous", "endogenous", "observed", "exogenous_observed"):
        shape = np.shape(getattr(data, name))
        if len(shape) != 2 or shape != (hours, n) or hours < 1:
            raise ValueError(
                f"data.{name} must have shape (hours, stations) = ({hours}, {n}), got {shape}"
            )
    if np.shape(data.adjacency) != (n, n):
        raise ValueError(f"data.adjacency must be ({n}, {n}), got {np.shape(data.adjacency)}")
    if np.any(np.diag(np.asarray(data.adjacency, dtype=bool))):
        raise ValueError("data.adjacency must have no self-loops")
    exo, endo = np.asarray(data.exogenous, float), np.asarray(data.endogenous, float)
    if not np.array_equal(np.isfinite(exo), np.asarray(data.exogenous_observed, bool)):
        raise ValueError("data.exogenous_observed must mark the finite exogenous values")
    if not np.array_equal(np.isfinite(endo), np.asarray(data.observed, bool)):
        raise ValueError("data.observed must mark the finite endogenous values")
    if not np.isfinite(exo).any():
        raise ValueError("data hold no exogenous value")
    return data


def _resolve_data(data: TrainDelayData | None, path: str | Path | None) -> TrainDelayData:
    return check_data(load_train_delays(path) if data is None else data)


def _check_hours(hours: np.ndarray | Sequence[int] | None, count: int) -> np.ndarray:
    """A boolean mask of the hours to fit on from a mask, indices or ``None`` (all)."""
    if hours is None:
        return np.ones(count, dtype=bool)
    h = np.asarray(hours)
    if h.dtype == bool:
        if h.shape != (count,):
            raise ValueError(f"an hour mask must have shape ({count},), got {h.shape}")
        return h.copy()
    mask = np.zeros(count, dtype=bool)
    if h.size and (h.min() < 0 or h.max() >= count or np.any(h != h.astype(int))):
        raise ValueError(f"hour indices must be integers in 0..{count - 1}")
    mask[h.astype(int)] = True
    return mask


# --- the fit ---------------------------------------------------------------------------------


def tanh_grid(scale: float) -> tuple[ScaledTanh, ...]:
    """The tanh shapes of :data:`TANH_WIDTHS` x :data:`TANH_SHIFTS` in normalised units."""
    return tuple(ScaledTanh(scale / w, d / scale) for w in TANH_WIDTHS for d in TANH_SHIFTS)


def max_slope(basis: BasisFunction, low: float, high: float) -> float:
    """``max |f'(v)|`` over ``[low, high]`` (513 points plus a tanh's inflection point)."""
    points = np.linspace(low, high, 513)
    if isinstance(basis, ScaledTanh):
        points = np.append(points, np.clip(basis.shift, low, high))
    return float(np.abs(basis.derivatives(points, 1)[1]).max())


def _folds(count: int, folds: int) -> np.ndarray:
    """Contiguous blocks: fold of each of ``count`` rows."""
    return np.arange(count) * folds // max(count, 1)


def _select_families(
    candidates: np.ndarray, target: np.ndarray, uppers: np.ndarray, options: TrainDelayFitOptions
) -> tuple[np.ndarray, float]:
    """Greedy family choice per edge by cross-validated error: ``candidates`` ``(p, C, n)``
    (candidate ``m`` of edge ``k`` evaluated on the rows), ``uppers`` ``(p, C)``; returns the
    chosen candidate per edge (all start at 0, the linear one) and its cross-validated sum of
    squared errors (``options.folds`` folds, ``options.min_improvement``)."""
    folds = options.folds
    p, count, n = candidates.shape
    choice = np.zeros(p, dtype=int)
    fold = _folds(n, folds)
    train = np.stack([fold != f for f in range(folds)])  # (F, n)
    edges = np.arange(p)

    def errors(k: int | None) -> np.ndarray:
        """CV sums of squares of every candidate of edge ``k`` (others fixed), or of the
        current choice."""
        alternatives = range(count) if k is not None else [int(choice[0])]
        feats, ups = [], []
        for m in alternatives:
            pick = choice.copy()
            if k is not None:
                pick[k] = m
            feats.append(candidates[edges, pick].T)  # (n, p)
            ups.append(uppers[edges, pick])
        x = np.repeat(np.stack(feats), folds, axis=0)  # (M F, n, p)
        up = np.repeat(np.stack(ups), folds, axis=0)
        rows = np.tile(train, (len(feats), 1))
        a, c = box_least_squares(x, target, rows, up)
        residual = (target[None] - c[:, None] - np.einsum("bnp,bp->bn", x, a)) * ~rows
        return (residual**2).sum(axis=1).reshape(len(feats), folds).sum(axis=1)

    best = float(errors(None)[0])
    for _ in range(FAMILY_SWEEPS):
        changed = False
        for k in range(p):
            trial = errors(k)
            m = int(np.argmin(trial))
            if m != choice[k] and trial[m] < best * (1 - options.min_improvement):
                choice[k], best, changed = m, float(trial[m]), True
        if not changed:
            break
    return choice, best


@dataclass(frozen=True)
class _NodeFits:
    """Per station: the candidate chosen for each edge ``j -> i`` (``choice[i, j]``, -1: no
    candidate), the amplitudes and the summed cross-validated errors (the intercepts are
    refitted after any shrink: :func:`_residuals`)."""

    choice: np.ndarray
    amplitude: np.ndarray
    cv_sse: float


@dataclass(frozen=True)
class _Signals:
    """The fitting hours' signals, normalised: ``exo`` and ``endo`` ``(T, N)`` (NaN where
    missing or not fitted on), ``filled`` the endogenous values with 0 for no train,
    ``adjacency`` the candidate edges and ``data_box`` ``(2, N)`` the data's range."""

    exo: np.ndarray
    endo: np.ndarray
    filled: np.ndarray
    adjacency: np.ndarray
    data_box: np.ndarray


def _signals(data: TrainDelayData, mask: np.ndarray, scale: float) -> _Signals:
    """The signals of the hours ``mask`` divided by ``scale``."""
    exo_all = np.asarray(data.exogenous, dtype=float)
    exo = np.where(mask[:, None], exo_all, np.nan) / scale
    endo = np.where(mask[:, None], np.asarray(data.endogenous, dtype=float), np.nan) / scale
    if not np.isfinite(exo).any():
        raise ValueError("the fitting hours hold no exogenous value")
    filled = np.where(np.isfinite(endo), endo, 0.0)  # no train: no delay passed on
    lows = np.minimum(np.nanmin(np.where(np.isfinite(endo), endo, 0.0), axis=0), 0.0)
    data_box = np.stack([np.minimum(lows, np.nanmin(exo)), filled.max(axis=0)])
    return _Signals(exo, endo, filled, np.asarray(data.adjacency, dtype=bool), data_box)


def _fit_nodes(
    bases: Sequence[BasisFunction], signals: _Signals, options: TrainDelayFitOptions
) -> _NodeFits:
    """The structural equation of every station over the candidate ``bases`` (module
    docstring: box-constrained least squares, families by cross-validation)."""
    exo, endo, box = signals.exo, signals.endo, signals.data_box
    n = signals.adjacency.shape[0]
    choice = np.full((n, n), -1, dtype=int)
    amplitude = np.zeros((n, n))
    cv_sse = 0.0
    slope_cache = {j: np.array([max_slope(f, *box[:, j]) for f in bases]) for j in range(n)}
    for i in range(n):
        parents = np.flatnonzero(signals.adjacency[:, i])
        rows = np.isfinite(exo[:, i])
        if not rows.any() or parents.size == 0:
            continue
        target = endo[rows, i] - exo[rows, i]
        values = signals.filled[rows][:, parents]  # (n_i, p)
        candidates = np.stack(
            [np.stack([f(values[:, k]) for f in bases]) for k in range(parents.size)]
        )  # (p, C, n_i)
        uppers = options.max_edge_slope / np.maximum(
            np.stack([slope_cache[j] for j in parents]), 1e-12
        )
        picked = np.zeros(parents.size, dtype=int)
        if rows.sum() >= options.min_hours:
            picked, sse = _select_families(candidates, target, uppers, options)
            cv_sse += sse
        edges = np.arange(parents.size)
        a, _ = box_least_squares(
            candidates[edges, picked].T[None],
            target,
            np.ones((1, target.size), dtype=bool),
            uppers[edges, picked][None],
        )
        choice[i, parents] = picked
        amplitude[i, parents] = a[0]
    return _NodeFits(choice, amplitude, cv_sse)


def fit_train_delay_sem(
    data: TrainDelayData | None = None,
    path: str | Path | None = None,
    *,
    hours: np.ndarray | Sequence[int] | None = None,
    options: TrainDelayFitOptions | None = None,
) -> TrainDelayFit:
    """Fit the train-delay SEM and laws (module docstring) on ``hours`` (mask or indices of
    ``data``'s hours, or of those read from ``path``; default all) with ``options``
    (:class:`TrainDelayFitOptions`, default its defaults)."""
    started = time.perf_counter()
    options = TrainDelayFitOptions() if options is None else options
    data = _resolve_data(data, path)
    n = data.n_stations
    mask = _check_hours(hours, data.n_hours)
    exo_all = np.asarray(data.exogenous, dtype=float)
    scale = options.scale
    if scale is None:
        scale = check_scale(float(np.nanmax(exo_all) - np.nanmin(exo_all)))
    signals = _signals(data, mask, scale)
    bases, fits = _best_fits(tanh_grid(scale), signals, options)
    choice, amplitude = fits.choice, fits.amplitude
    dictionary, weights_of = _assembly(bases, choice, amplitude)
    raw_box, raw_slopes = _contraction_box(weights_of(amplitude), dictionary, signals)
    raw_rho = _spectral_radius(raw_slopes)
    shrink = 1.0
    if options.max_contraction is not None and raw_rho > options.max_contraction:
        shrink = options.max_contraction / raw_rho
    weights = weights_of(amplitude * shrink)
    box, slopes = _contraction_box(weights, dictionary, signals)
    intercepts, residual_sd, pooled = _residuals(SeparableSEM(weights, dictionary), signals)
    values = tuple(
        exo_all[np.isfinite(exo_all[:, i]) & mask, i] / scale
        if np.any(np.isfinite(exo_all[:, i]) & mask)
        else np.zeros(1)
        for i in range(n)
    )
    family_of = ("linear", "cubic") + ("tanh",) * (len(bases) - 2)
    families = tuple(
        tuple(family_of[choice[i, j]] if choice[i, j] >= 0 else "" for j in range(n))
        for i in range(n)
    )
    for array in (weights, intercepts, residual_sd, box, slopes, *values):
        array.setflags(write=False)
    return TrainDelayFit(
        names=tuple(data.names),
        short_names=tuple(data.short_names),
        scale=float(scale),
        weights=weights,
        dictionary=dictionary,
        families=families,
        intercepts=intercepts,
        residual_sd=residual_sd,
        pooled_residual_sd=pooled,
        exogenous_values=values,
        box=box,
        slopes=slopes,
        contraction=_spectral_radius(slopes),
        raw_contraction=raw_rho,
        shrink=shrink,
        hours=mask,
        fit_seconds=time.perf_counter() - started,
        options=options,
        cv_sse=fits.cv_sse,
    )


def _best_fits(
    grid: Sequence[ScaledTanh], signals: _Signals, options: TrainDelayFitOptions
) -> tuple[tuple[BasisFunction, ...], _NodeFits]:
    """The candidate bases and the stations' fits over them: linear, cubic and every tanh
    shape of ``grid`` per edge, or (``"shared"``) the one shape of the smallest summed
    cross-validated error."""
    if options.tanh_shapes == "per-edge":
        bases: tuple[BasisFunction, ...] = (LINEAR, CUBIC, *grid)
        return bases, _fit_nodes(bases, signals, options)
    trials = [
        ((LINEAR, CUBIC, shape), _fit_nodes((LINEAR, CUBIC, shape), signals, options))
        for shape in grid
    ]
    return min(trials, key=lambda trial: trial[1].cv_sse)


def _assembly(
    bases: Sequence[BasisFunction], choice: np.ndarray, amplitude: np.ndarray
) -> tuple[Dictionary, Callable[[np.ndarray], np.ndarray]]:
    """The dictionary of the bases the kept edges use (the linear one always) and the map from
    amplitudes ``(N, N)`` to its weights ``(N, N, K)``."""
    n = choice.shape[0]
    used = sorted({int(k) for k in choice[amplitude > 0]} | {0})
    position = {k: m for m, k in enumerate(used)}

    def weights_of(amp: np.ndarray) -> np.ndarray:
        w = np.zeros((n, n, len(used)))
        for i, j in zip(*np.nonzero(amp > 0), strict=True):
            w[i, j, position[choice[i, j]]] = amp[i, j]
        return w

    return Dictionary(tuple(bases[k] for k in used)), weights_of


def _residuals(sem: SeparableSEM, signals: _Signals) -> tuple[np.ndarray, np.ndarray, float]:
    """The intercepts ``c_i`` and residual standard deviations of the structural equations
    ``(N,)`` on the hours with ``b_i`` observed, and the pooled residual standard deviation."""
    exo, endo, filled = signals.exo, signals.endo, signals.filled
    n = exo.shape[1]
    intercepts, residual_sd = np.zeros(n), np.zeros(n)
    squares, total = 0.0, 0
    for i in range(n):
        rows = np.isfinite(exo[:, i])
        if not rows.any():
            continue
        pushed = sem.mechanisms(filled[rows][None])[0][:, i]
        residual = endo[rows, i] - exo[rows, i] - pushed
        intercepts[i] = residual.mean()
        residual_sd[i] = residual.std()
        squares += float(((residual - intercepts[i]) ** 2).sum())
        total += residual.size
    return intercepts, residual_sd, float(np.sqrt(squares / max(total, 1)))


def _spectral_radius(matrix: np.ndarray) -> float:
    return float(np.abs(np.linalg.eigvals(matrix)).max(initial=0.0))


def _slope_matrix(weights: np.ndarray, dictionary: Dictionary, box: np.ndarray) -> np.ndarray:
    """``M[i, j] = max |f_ij'|`` over node ``j``'s box ``[box[0, j], box[1, j]]``."""
    n = weights.shape[0]
    out = np.zeros((n, n))
    for j in range(n):
        slopes = np.array([max_slope(f, box[0, j], box[1, j]) for f in dictionary.functions])
        out[:, j] = np.abs(weights[:, j]) @ slopes
    return out


def _contraction_box(
    weights: np.ndarray, dictionary: Dictionary, signals: _Signals
) -> tuple[np.ndarray, np.ndarray]:
    """The box of the solutions (the data's range joined with the solutions for the smallest
    and the largest exogenous inputs; the edges are non-decreasing) and ``M`` on it. Without
    a contraction the extreme solves may diverge: the data's range is kept then."""
    box, exo = signals.data_box.copy(), signals.exo
    finite = np.isfinite(exo)
    low = np.minimum(np.where(finite, exo, np.inf).min(axis=0), 0.0)
    high = np.maximum(np.where(finite, exo, -np.inf).max(axis=0), 0.0)
    for _ in range(5):
        slopes = _slope_matrix(weights, dictionary, box)
        if _spectral_radius(slopes) >= 1:
            return box, slopes
        sem = SeparableSEM(weights, dictionary, "newton")
        try:
            extremes = sem.solve(np.stack([low, high])[None])[0]
        except ValueError:
            return box, slopes
        grown = np.stack([np.minimum(box[0], extremes[0]), np.maximum(box[1], extremes[1])])
        if np.allclose(grown, box, rtol=0, atol=1e-12):
            return box, slopes
        box = grown
    return box, _slope_matrix(weights, dictionary, box)


# --- diagnostics -----------------------------------------------------------------------------


def fixed_point_rate(sem: SeparableSEM, inputs: np.ndarray, sweeps: int = 60) -> float:
    """The observed contraction of ``y <- F(y) + u`` from ``u`` (inputs ``(S, N)``): the
    geometric mean ratio of successive largest changes over the sweeps before the change
    falls below 1e-13 (0 if it converges in one sweep)."""
    u = np.asarray(inputs, dtype=float)[None]
    y = u.copy()
    changes = []
    for _ in range(sweeps):
        new = u + sem.mechanisms(y)
        changes.append(float(np.abs(new - y).max(initial=0.0)))
        y = new
        if changes[-1] < 1e-13:
            break
    usable = [c for c in changes if c >= 1e-13]
    if len(usable) < 2:
        return 0.0
    return float((usable[-1] / usable[0]) ** (1 / (len(usable) - 1)))


def replay_inputs(fit: TrainDelayFit, data: TrainDelayData) -> tuple[np.ndarray, np.ndarray]:
    """The hours' exogenous inputs (missing: 0, no through train) and endogenous values
    (missing: 0, no train), normalised, ``(T, N)`` each."""
    exo = fit.normalise(data.exogenous)
    endo = fit.normalise(data.endogenous)
    return np.where(np.isfinite(exo), exo, 0.0), np.where(np.isfinite(endo), endo, 0.0)


def held_out_errors(
    data: TrainDelayData | None = None,
    path: str | Path | None = None,
    *,
    train: int | np.ndarray = 48,
    options: TrainDelayFitOptions | None = None,
) -> dict[str, float]:
    """Fit on the training hours (the first ``train`` hours, or a mask; with ``options``) and
    predict the others, in minutes^2 (mean over the held-out station-hours):

    - ``structural`` / ``structural_empty``: ``y_i - b_i`` from the real ``y`` of the parents
      (hours with ``b_i`` observed), the fitted SEM plus its intercepts vs the intercepts
      alone (``F = 0``, intercepts refitted);
    - ``solve`` / ``solve_empty``: ``y`` from the hour's exogenous inputs alone, the cyclic
      solve ``(I - F)^{-1}(b + c)`` vs ``b + c`` (missing ``b``: 0; observed ``y`` only).
    """
    data = _resolve_data(data, path)
    mask = (
        np.arange(data.n_hours) < int(train)
        if np.ndim(train) == 0
        else _check_hours(train, data.n_hours)
    )
    fit = fit_train_delay_sem(data, hours=mask, options=options)
    exo, endo = fit.normalise(data.exogenous), fit.normalise(data.endogenous)
    filled = np.where(np.isfinite(endo), endo, 0.0)
    inputs = np.where(np.isfinite(exo), exo, 0.0)
    test = ~mask
    sem = fit.sem()
    # intercepts of the empty graph: the mean of y - b per station on the training hours
    diff = np.where(mask[:, None], endo - exo, np.nan)
    counts = np.isfinite(diff).sum(axis=0)
    empty_intercepts = np.where(counts > 0, np.nansum(diff, axis=0) / np.maximum(counts, 1), 0.0)

    pushed = sem.mechanisms(filled[test][None])[0]
    rows = np.isfinite(exo[test])
    truth = (endo - exo)[test]
    structural = ((truth - fit.intercepts - pushed)[rows] ** 2).mean()
    structural_empty = ((truth - empty_intercepts)[rows] ** 2).mean()

    solved = sem.solve((inputs[test] + fit.intercepts)[None])[0]
    seen = np.isfinite(endo[test])
    solve = ((endo[test] - solved)[seen] ** 2).mean()
    solve_empty = ((endo[test] - inputs[test] - empty_intercepts)[seen] ** 2).mean()
    minutes = fit.scale**2
    return {
        "structural": float(structural * minutes),
        "structural_empty": float(structural_empty * minutes),
        "solve": float(solve * minutes),
        "solve_empty": float(solve_empty * minutes),
        "train_hours": int(mask.sum()),
        "test_station_hours": int(rows.sum()),
        "contraction": fit.contraction,
    }
