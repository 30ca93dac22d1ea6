"""The train-delay SEM fit on small hand-built data (issue 32, mutation testing): structures the
fit must recover exactly (noise-free data of a known separable SEM with linear, cubic and
zero-true tanh edges), the bounded least squares and the cross-validated family choice against
a brute-force active-set solver written here, the contraction box and shrink against closed
forms, the diagnostics against numpy recomputations, and every refusal's message. No data file
needed (one tiny folder is written for the ``path=`` route)."""

from __future__ import annotations

import itertools
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from causalbandits.data.train_delays import TrainDelayData, load_train_delays
from causalbandits.envs.train_delay_fit import (
    FAMILY_SWEEPS,
    FOLDS,
    TANH_MODES,
    TANH_SHIFTS,
    TANH_WIDTHS,
    TrainDelayFit,
    TrainDelayFitOptions,
    check_data,
    check_scale,
    fit_train_delay_sem,
    fixed_point_rate,
    held_out_errors,
    max_slope,
    replay_inputs,
    tanh_grid,
)
from causalbandits.scm.basis import CUBIC, LINEAR, BasisFunction, Dictionary, ScaledTanh
from causalbandits.scm.separable import ChordSEM, SeparableSEM

SCALE = 10.0
NAN = np.nan
#: The chain fixture: data, normalised ``b`` and the fit.
Chain = tuple[TrainDelayData, np.ndarray, TrainDelayFit]


def make_data(exogenous: np.ndarray, endogenous: np.ndarray, edges: list) -> TrainDelayData:
    """A :class:`TrainDelayData` in minutes with the candidate edges ``(i, j)``: ``i -> j``."""
    exo, endo = np.asarray(exogenous, float), np.asarray(endogenous, float)
    hours, n = exo.shape
    adjacency = np.zeros((n, n), dtype=bool)
    for i, j in edges:
        adjacency[i, j] = True
    names = tuple(f"Station {i}" for i in range(n))
    return TrainDelayData(
        names=names,
        short_names=tuple(f"ST{i}" for i in range(n)),
        eva_nr=np.arange(n),
        lat=np.zeros(n),
        long=np.zeros(n),
        distance_km=np.zeros(n),
        hours=tuple(f"h{t}" for t in range(hours)),
        listed_hours=tuple(f"h{t}" for t in range(hours)),
        positions=np.arange(hours),
        exogenous=exo,
        endogenous=endo,
        observed=np.isfinite(endo),
        exogenous_observed=np.isfinite(exo),
        trains=np.isfinite(endo).astype(int),
        adjacency=adjacency,
        edge_counts=adjacency.astype(int),
    )


def zero_true_tanh(v: np.ndarray, rate: float, shift: float) -> np.ndarray:
    """``tanh(c (v - d)) - tanh(-c d)`` (the module docstring's tanh family)."""
    return np.tanh(rate * (v - shift)) - np.tanh(-rate * shift)


def tanh_slope(v: np.ndarray, rate: float, shift: float) -> np.ndarray:
    return rate / np.cosh(rate * (v - shift)) ** 2


#: The chain's true edges (normalised units): 0 -> 1 tanh (rate 2, shift 0.5: width 5 min,
#: threshold 5 min at scale 10), 0 -> 2 linear 0.6, 1 -> 3 cubic 0.2, 2 -> 4 linear -0.3 (a
#: negative association: no edge survives the bound a >= 0).
CHAIN_INTERCEPTS = np.array([0.1, 0.2, -0.1, 0.05, 0.3])
CHAIN_EDGES = [(0, 1), (0, 2), (1, 3), (2, 4)]


def chain_values(b: np.ndarray, noise: np.ndarray | None = None) -> np.ndarray:
    """The chain SEM's normalised ``y`` for normalised exogenous values ``b`` ``(T, 5)``."""
    e = np.zeros_like(b) if noise is None else noise
    c = CHAIN_INTERCEPTS
    v = np.zeros_like(b)
    v[:, 0] = b[:, 0] + c[0] + e[:, 0]
    v[:, 1] = b[:, 1] + c[1] + 0.4 * zero_true_tanh(v[:, 0], 2.0, 0.5) + e[:, 1]
    v[:, 2] = b[:, 2] + c[2] + 0.6 * v[:, 0] + e[:, 2]
    v[:, 3] = b[:, 3] + c[3] + 0.2 * v[:, 1] ** 3 + e[:, 3]
    v[:, 4] = b[:, 4] + c[4] - 0.3 * v[:, 2] + e[:, 4]
    return v


def chain_data(hours: int = 30, seed: int = 0) -> tuple[TrainDelayData, np.ndarray]:
    """Noise-free data of the chain (minutes, scale 10) and its normalised ``b``."""
    b = np.random.default_rng(seed).uniform(-0.1, 0.6, (hours, 5))
    return make_data(b * SCALE, chain_values(b) * SCALE, CHAIN_EDGES), b


def box_lsq(x: np.ndarray, y: np.ndarray, upper: np.ndarray) -> tuple[np.ndarray, float]:
    """``min ||y - c - X a||`` over ``0 <= a <= upper``, ``c`` free, by brute force over the
    active sets (each coefficient at 0, at its upper bound or free; the best feasible one)."""
    n, p = x.shape
    best = (np.inf, np.zeros(p), float(np.mean(y)))
    for states in itertools.product((0, 1, 2), repeat=p):
        a = np.array([upper[k] if s == 1 else 0.0 for k, s in enumerate(states)])
        free = [k for k, s in enumerate(states) if s == 2]
        design = np.column_stack([np.ones(n), x[:, free]])
        solution = np.linalg.lstsq(design, y - x @ a, rcond=None)[0]
        a[free] = solution[1:]
        if np.any(a < -1e-12) or np.any(a > upper + 1e-12):
            continue
        sse = float(((y - solution[0] - x @ a) ** 2).sum())
        if sse < best[0] - 1e-15:
            best = (sse, a, float(solution[0]))
    return best[1], best[2]


def blocks(count: int, folds: int) -> np.ndarray:
    """Row ``r`` of ``count`` lies in the contiguous block ``floor(r folds / count)``."""
    return np.floor(np.arange(count) * folds / count).astype(int)


def cv_error(features: np.ndarray, y: np.ndarray, upper: np.ndarray, folds: int) -> float:
    """The summed held-out squared error of :func:`box_lsq` over contiguous folds."""
    fold = blocks(y.size, folds)
    total = 0.0
    for f in range(folds):
        a, c = box_lsq(features[fold != f], y[fold != f], upper)
        total += float(((y[fold == f] - c - features[fold == f] @ a) ** 2).sum())
    return total


def slope_bound(kind: str | ScaledTanh, low: float, high: float) -> float:
    """``max |f'|`` on ``[low, high]`` in closed form."""
    if kind == "linear":
        return 1.0
    if kind == "cubic":
        return 3.0 * max(low**2, high**2)
    nearest = min(max(kind.shift, low), high)
    return float(tanh_slope(nearest, kind.rate, kind.shift))


def evaluate(kind: str | ScaledTanh, v: np.ndarray) -> np.ndarray:
    if kind == "linear":
        return v
    if kind == "cubic":
        return v**3
    return zero_true_tanh(v, kind.rate, kind.shift)


def data_box(exo: np.ndarray, endo: np.ndarray) -> np.ndarray:
    """The data's range per station (normalised): ``[min(y, 0, min of every b), max(y, 0 for
    an hour without train)]``."""
    filled = np.where(np.isfinite(endo), endo, 0.0)
    low = np.minimum(np.minimum(np.nanmin(endo, axis=0), 0.0), np.nanmin(exo))
    return np.stack([low, filled.max(axis=0)])


# --- the chain: exact recovery ---------------------------------------------------------------


@pytest.fixture
def chain() -> Chain:
    """Fitted per test (mutmut attributes a module-scoped fixture's calls to the first test)."""
    data, b = chain_data()
    return data, b, fit_train_delay_sem(data, options=TrainDelayFitOptions(scale=SCALE))


def test_noise_free_chain_is_recovered_edge_by_edge(chain: Chain) -> None:
    """Eq. 2 with one edge per family: the CV choice finds linear, cubic and the grid's tanh
    shape (width 5 min, threshold 5 min), the bounded least squares their amplitudes, and the
    negative association is no edge (``a >= 0``)."""
    data, b, fit = chain
    assert fit.dictionary.functions == (LINEAR, CUBIC, ScaledTanh(2.0, 0.5))
    expected = np.zeros((5, 5, 3))
    expected[1, 0, 2], expected[2, 0, 0], expected[3, 1, 1] = 0.4, 0.6, 0.2
    np.testing.assert_allclose(fit.weights, expected, atol=1e-7)
    families = [[""] * 5 for _ in range(5)]
    families[1][0], families[2][0], families[3][1], families[4][2] = (
        "tanh",
        "linear",
        "cubic",
        "linear",
    )
    assert fit.families == tuple(tuple(row) for row in families)
    assert fit.family_counts() == {"linear": 1, "cubic": 1, "tanh": 1}
    edges = np.zeros((5, 5), dtype=bool)
    edges[0, 1] = edges[0, 2] = edges[1, 3] = True
    np.testing.assert_array_equal(fit.edges, edges)
    assert (fit.raw_contraction, fit.contraction, fit.shrink) == (0.0, 0.0, 1.0)
    assert fit.n_stations == 5 and fit.names == data.names and fit.short_names == data.short_names
    assert fit.scale == 10.0 and isinstance(fit.scale, float) and fit.options.scale == SCALE
    np.testing.assert_array_equal(fit.hours, np.ones(30, dtype=bool))


def test_fit_seconds_is_the_fits_wall_time() -> None:
    data = chain_data()[0]
    started = time.perf_counter()
    fit = fit_train_delay_sem(data, options=TrainDelayFitOptions(scale=SCALE))
    assert 0 < fit.fit_seconds <= time.perf_counter() - started


def test_intercepts_and_residuals_are_the_structural_equations_moments(chain: Chain) -> None:
    """``c_i`` is the mean and ``residual_sd`` the population sd of ``y_i - b_i - F_i(y)``;
    the empty station 4 keeps its whole ``-0.3 y_2`` in the residual; pooled: the root mean
    square of every station's centred residual."""
    data, b, fit = chain
    v = data.endogenous / SCALE
    residual = (v - b).copy()
    residual[:, 1] -= 0.4 * zero_true_tanh(v[:, 0], 2.0, 0.5)
    residual[:, 2] -= 0.6 * v[:, 0]
    residual[:, 3] -= 0.2 * v[:, 1] ** 3
    np.testing.assert_allclose(fit.intercepts, residual.mean(axis=0), atol=1e-8)
    np.testing.assert_allclose(fit.intercepts[:4], CHAIN_INTERCEPTS[:4], atol=1e-8)
    np.testing.assert_allclose(fit.residual_sd, residual.std(axis=0), atol=1e-8)
    assert fit.residual_sd[4] == pytest.approx(0.3 * v[:, 2].std(), rel=1e-9)
    pooled = np.sqrt(((residual - residual.mean(axis=0)) ** 2).mean())
    assert fit.pooled_residual_sd == pytest.approx(pooled, rel=1e-7)


def test_box_and_slopes_of_the_chain_are_the_extreme_solutions_and_largest_slopes(
    chain: Chain,
) -> None:
    """The box joins the data's range with the solutions for the smallest and the largest
    inputs (each station's extreme ``b``, and 0); ``M[i, j]`` is the largest slope of ``f_ij``
    on node ``j``'s side of it (here in closed form)."""
    data, b, fit = chain
    v = data.endogenous / SCALE
    box = data_box(b, v)
    for u in (np.minimum(b.min(axis=0), 0.0), np.maximum(b.max(axis=0), 0.0)):
        y = u.copy()  # forward substitution along the chain
        y[1] += 0.4 * zero_true_tanh(y[0], 2.0, 0.5)
        y[2] += 0.6 * y[0]
        y[3] += 0.2 * y[1] ** 3
        box = np.stack([np.minimum(box[0], y), np.maximum(box[1], y)])
    np.testing.assert_allclose(fit.box, box, atol=1e-9)
    slopes = np.zeros((5, 5))
    slopes[1, 0] = 0.4 * slope_bound(ScaledTanh(2.0, 0.5), *box[:, 0])
    slopes[2, 0] = 0.6
    slopes[3, 1] = 0.2 * 3 * max(box[0, 1] ** 2, box[1, 1] ** 2)
    np.testing.assert_allclose(fit.slopes, slopes, rtol=1e-6, atol=1e-9)


def test_the_fits_arrays_are_read_only(chain: Chain) -> None:
    fit = chain[2]
    for array in (fit.weights, fit.intercepts, fit.residual_sd, fit.box, fit.slopes):
        assert not array.flags.writeable
    assert all(not values.flags.writeable for values in fit.exogenous_values)


def test_laws_are_the_normalised_observed_exogenous_values(chain: Chain) -> None:
    data, b, fit = chain
    for i in range(5):
        np.testing.assert_allclose(fit.exogenous_values[i], b[:, i], rtol=1e-12)
    np.testing.assert_allclose(fit.arms().values[2], np.sort(b[:, 2]), rtol=1e-12)


def test_the_sem_is_a_chord_sem_of_the_weights_with_the_given_solve_settings(chain: Chain) -> None:
    fit = chain[2]
    sem = fit.sem("newton", tol=1e-9, max_iter=7)
    assert isinstance(sem, ChordSEM)
    assert (sem.method, sem.tol, sem.max_iter) == ("newton", 1e-9, 7)
    np.testing.assert_array_equal(sem.weights[0], fit.weights)
    assert sem.dictionary == fit.dictionary
    default = fit.sem()
    assert (default.method, default.tol, default.max_iter) == ("fixed-point", 1e-12, 500)
    np.testing.assert_allclose(fit.normalise(np.array([5, -2.5])), [0.5, -0.25])
    assert fit.normalise(np.array([5.0], dtype=np.float32)).dtype == np.float64


def test_per_edge_tanh_shapes_each_recover_their_own_grid_shape() -> None:
    """``tanh_shapes="per-edge"``: two tanh edges of different grid shapes, no cubic edge:
    the dictionary holds the linear basis (always) and the two shapes used, in grid order."""
    b = np.random.default_rng(3).uniform(-0.1, 0.9, (24, 3))
    v = b.copy()
    v[:, 1] += 0.15 * zero_true_tanh(v[:, 0], 5.0, 0.0)
    v[:, 2] += 0.5 * zero_true_tanh(v[:, 0], 1.0, 1.0)
    data = make_data(b * SCALE, v * SCALE, [(0, 1), (0, 2)])
    options = TrainDelayFitOptions(scale=SCALE, tanh_shapes="per-edge")
    fit = fit_train_delay_sem(data, options=options)
    assert fit.dictionary.functions == (LINEAR, ScaledTanh(5.0, 0.0), ScaledTanh(1.0, 1.0))
    expected = np.zeros((3, 3, 3))
    expected[1, 0, 1], expected[2, 0, 2] = 0.15, 0.5
    np.testing.assert_allclose(fit.weights, expected, atol=1e-7)
    assert fit.families[1][0] == fit.families[2][0] == "tanh"
    assert fit.family_counts() == {"linear": 0, "cubic": 0, "tanh": 2}
    shared = fit_train_delay_sem(data, options=TrainDelayFitOptions(scale=SCALE))
    assert len(shared.dictionary.functions) <= 3 and shared.cv_sse > fit.cv_sse


def test_a_cubic_only_fit_keeps_the_linear_basis_first() -> None:
    b = np.random.default_rng(4).uniform(0.0, 1.0, (20, 2))
    v = b.copy()
    v[:, 1] += 0.25 * v[:, 0] ** 3
    fit = fit_train_delay_sem(
        make_data(b * SCALE, v * SCALE, [(0, 1)]), options=TrainDelayFitOptions(scale=SCALE)
    )
    assert fit.dictionary.functions == (LINEAR, CUBIC)
    np.testing.assert_allclose(fit.weights[1, 0], [0.0, 0.25], atol=1e-7)
    assert fit.family_counts() == {"linear": 0, "cubic": 1, "tanh": 0}


# --- bounded amplitudes and the family choice against brute force ----------------------------


def noisy_chain(hours: int = 37) -> tuple[TrainDelayData, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(11)
    b = rng.uniform(-0.1, 0.6, (hours, 5))
    v = chain_values(b, rng.normal(0.0, 0.05, (hours, 5)))
    return make_data(b * SCALE, v * SCALE, CHAIN_EDGES + [(3, 2)]), b, v


def test_amplitudes_and_cv_error_match_brute_force_box_least_squares() -> None:
    """With noise: every station's amplitudes are the box-constrained least squares of its
    chosen families (bounds ``0 <= a``, slope ``<= max_edge_slope`` on the parent's data
    range, brute force here) and ``cv_sse`` their summed 5-fold contiguous-block CV error;
    no shrink is needed (a DAG)."""
    data, b, v = noisy_chain()
    options = TrainDelayFitOptions(scale=SCALE, max_edge_slope=0.9)
    fit = fit_train_delay_sem(data, options=options)
    shape = fit.dictionary.functions[-1]
    assert isinstance(shape, ScaledTanh) and shape in tanh_grid(SCALE)
    box = data_box(b, v)
    total = 0.0
    for i in range(5):
        parents = [j for j in range(5) if data.adjacency[j, i]]
        if not parents:
            assert all(f == "" for f in fit.families[i])
            continue
        kinds = [fit.families[i][j] for j in parents]
        kinds = [shape if k == "tanh" else k for k in kinds]
        x = np.column_stack([evaluate(k, v[:, j]) for k, j in zip(kinds, parents, strict=True)])
        upper = np.array(
            [0.9 / slope_bound(k, *box[:, j]) for k, j in zip(kinds, parents, strict=True)]
        )
        a, _ = box_lsq(x, v[:, i] - b[:, i], upper)
        amplitude = [fit.weights[i, j].sum() for j in parents]
        np.testing.assert_allclose(amplitude, a, atol=1e-7)
        total += cv_error(x, v[:, i] - b[:, i], upper, FOLDS)
    assert fit.cv_sse == pytest.approx(total, rel=1e-6)


def single_edge_data(hours: int, seed: int) -> tuple[TrainDelayData, np.ndarray, np.ndarray]:
    """One edge 0 -> 1 with a mildly curved effect and noise: the families' CV errors differ
    by a few per cent."""
    rng = np.random.default_rng(seed)
    b = rng.uniform(0.0, 0.8, (hours, 2))
    v = b.copy()
    v[:, 1] += 0.5 * v[:, 0] + 0.2 * v[:, 0] ** 3 + rng.normal(0, 0.05, hours)
    return make_data(b * SCALE, v * SCALE, [(0, 1)]), b, v


def candidate_errors(b: np.ndarray, v: np.ndarray, folds: int) -> tuple[list, np.ndarray]:
    """Per-edge mode's eleven candidates of the edge 0 -> 1 and their CV errors."""
    kinds = ["linear", "cubic", *tanh_grid(SCALE)]
    box = data_box(b, v)
    errors = [
        cv_error(
            evaluate(k, v[:, 0])[:, None],
            v[:, 1] - b[:, 1],
            np.array([1.0 / slope_bound(k, *box[:, 0])]),
            folds,
        )
        for k in kinds
    ]
    return kinds, np.array(errors)


@pytest.mark.parametrize("side", [-1, 1])
def test_a_family_replaces_linear_only_if_it_lowers_cv_error_by_min_improvement(
    side: int,
) -> None:
    """The family choice (module docstring): the best candidate replaces the linear start
    only if its CV error is below ``(1 - min_improvement)`` times the linear one's."""
    data, b, v = single_edge_data(23, 5)
    kinds, errors = candidate_errors(b, v, 4)
    best = int(np.argmin(errors))
    gain = 1 - errors[best] / errors[0]
    assert best > 0 and 0.005 < gain < 0.5
    improvement = gain * (1 + side * 1e-3)
    options = TrainDelayFitOptions(
        scale=SCALE, tanh_shapes="per-edge", folds=4, min_improvement=improvement
    )
    fit = fit_train_delay_sem(data, options=options)
    if side > 0:  # the required drop exceeds the gain: linear is kept
        assert fit.families[1][0] == "linear" and fit.cv_sse == pytest.approx(errors[0], 1e-6)
    else:
        family = "linear" if best == 0 else "cubic" if best == 1 else "tanh"
        assert fit.families[1][0] == family and fit.cv_sse == pytest.approx(errors[best], 1e-6)
        if family == "tanh":
            assert fit.dictionary.functions[-1] == kinds[best]


def test_the_family_choice_sweeps_until_no_single_edge_change_helps() -> None:
    """Two correlated parents: the first sweep's choice is revised in the second. The result
    is a local optimum (no other family of one edge lowers the CV error by
    ``min_improvement``) and ``cv_sse`` its CV error (per-edge shapes, 4 folds)."""
    rng = np.random.default_rng(26)
    b = rng.uniform(0, 1, (20, 3))
    v = b.copy()
    v[:, 1] = 0.7 * v[:, 0] + rng.uniform(0, 0.5, 20)
    coef = rng.uniform(0, 0.4, 4)
    v[:, 2] += (
        coef[0] * v[:, 0]
        + coef[1] * v[:, 1] ** 3
        + coef[2] * zero_true_tanh(v[:, 0], 2, 0.5)
        + coef[3] * v[:, 1]
        + rng.normal(0, 0.03, 20)
    )
    b[:, 1] = v[:, 1] - 0.7 * v[:, 0]
    data = make_data(b * SCALE, v * SCALE, [(0, 2), (1, 2)])
    options = TrainDelayFitOptions(scale=SCALE, tanh_shapes="per-edge", folds=4)
    fit = fit_train_delay_sem(data, options=options)
    kinds = ["linear", "cubic", *tanh_grid(SCALE)]
    box = data_box(b, v)
    columns = [[evaluate(k, v[:, j]) for k in kinds] for j in (0, 1)]
    uppers = [[1.0 / slope_bound(k, *box[:, j]) for k in kinds] for j in (0, 1)]

    def error(pick: tuple[int, int]) -> float:
        x = np.column_stack([columns[e][pick[e]] for e in (0, 1)])
        upper = np.array([uppers[e][pick[e]] for e in (0, 1)])
        return cv_error(x, v[:, 2] - b[:, 2], upper, 4)

    chosen = []
    for j in (0, 1):
        family = fit.families[2][j]
        if family == "tanh":
            column = [k for k in range(fit.dictionary.size) if fit.weights[2, j, k] > 0]
            chosen.append(kinds.index(fit.dictionary.functions[column[0]]))
        else:
            chosen.append(kinds.index(family))
    assert chosen == [2 + 6, 1]  # tanh (width 10 min, no threshold) on 0 -> 2, cubic on 1 -> 2
    best = error(tuple(chosen))
    assert fit.cv_sse == pytest.approx(best, rel=1e-6)
    for e in (0, 1):
        for m in range(len(kinds)):
            pick = list(chosen)
            pick[e] = m
            assert error(tuple(pick)) >= best * 0.99 - 1e-15


def test_stations_with_too_few_hours_keep_linear_edges_and_add_no_cv_error() -> None:
    """``min_hours``: a station with fewer fitting hours keeps its edges linear (bounded least
    squares of the linear family) and adds nothing to ``cv_sse``; at exactly ``min_hours`` the
    choice runs."""
    b = np.random.default_rng(6).uniform(0.0, 1.0, (12, 2))
    v = b.copy()
    v[:, 1] += 0.3 * v[:, 0] ** 3
    data = make_data(b * SCALE, v * SCALE, [(0, 1)])
    few = fit_train_delay_sem(data, options=TrainDelayFitOptions(scale=SCALE, min_hours=13))
    assert few.families[1][0] == "linear" and few.cv_sse == 0.0
    upper = np.array([1.0])
    a, c = box_lsq(v[:, :1], v[:, 1] - b[:, 1], upper)
    np.testing.assert_allclose(few.weights[1, 0, 0], a[0], atol=1e-8)
    enough = fit_train_delay_sem(data, options=TrainDelayFitOptions(scale=SCALE, min_hours=12))
    assert enough.families[1][0] == "cubic" and enough.cv_sse < 1e-12
    np.testing.assert_allclose(enough.weights[1, 0], [0.0, 0.3], atol=1e-7)


def test_the_slope_bound_caps_an_amplitude_on_the_parents_data_range() -> None:
    """An edge's largest slope on its parent's data range is at most ``max_edge_slope``: a
    true gain of 0.9 is fitted as 0.5 under ``max_edge_slope=0.5``; a cubic edge within its
    bound ``0.5 / (3 max v^2)`` is recovered, ``M`` its slope ``0.3 max v^2``."""
    b = np.random.default_rng(7).uniform(0.0, 1.0, (15, 3))
    v = b.copy()
    v[:, 1] += 0.9 * v[:, 0]
    v[:, 2] += 0.1 * v[:, 0] ** 3
    data = make_data(b * SCALE, v * SCALE, [(0, 1), (0, 2)])
    fit = fit_train_delay_sem(
        data, options=TrainDelayFitOptions(scale=SCALE, max_edge_slope=0.5, min_hours=15)
    )
    assert fit.weights[1, 0].sum() == pytest.approx(0.5, rel=1e-9)
    assert fit.families[2][0] == "cubic"
    assert fit.weights[2, 0, 1] == pytest.approx(0.1, rel=1e-6)
    np.testing.assert_allclose(fit.slopes[1, 0], 0.5, rtol=1e-9)
    np.testing.assert_allclose(fit.slopes[2, 0], 0.3 * fit.box[1, 0] ** 2, rtol=1e-6)


# --- missing values and hour selections ------------------------------------------------------


def gappy_chain() -> tuple[TrainDelayData, np.ndarray, np.ndarray]:
    """The chain with gaps: hours without a train at station 0 (its children see ``y_0 = 0``),
    hours where stations 2 and 3 have trains but no through train (``b`` missing: their ``y``
    is then junk that must not enter their own equations)."""
    b = chain_data(36, seed=2)[1].copy()
    b[[3, 10, 17], 0] = NAN
    filled = np.where(np.isfinite(b), b, 0.0)
    c = CHAIN_INTERCEPTS
    v = np.zeros_like(b)
    v[:, 0] = np.where(np.isfinite(b[:, 0]), b[:, 0] + c[0], NAN)
    parent = np.where(np.isfinite(v[:, 0]), v[:, 0], 0.0)
    v[:, 1] = filled[:, 1] + c[1] + 0.4 * zero_true_tanh(parent, 2.0, 0.5)
    v[:, 2] = filled[:, 2] + c[2] + 0.6 * parent
    v[:, 3] = filled[:, 3] + c[3] + 0.2 * v[:, 1] ** 3
    v[:, 4] = filled[:, 4] + c[4] - 0.3 * v[:, 2]
    b[[5, 20], 2] = NAN
    v[[5, 20], 2] = 9.0
    b[[6, 21, 30], 3] = NAN
    v[[6, 21, 30], 3] = -7.0
    return make_data(b * SCALE, v * SCALE, CHAIN_EDGES), b, v


def test_a_parent_without_trains_enters_as_zero_and_hours_without_b_are_left_out() -> None:
    data, b, v = gappy_chain()
    fit = fit_train_delay_sem(data, options=TrainDelayFitOptions(scale=SCALE))
    assert fit.families[1][0] == "tanh" and fit.families[3][1] == "cubic"
    np.testing.assert_allclose(
        [fit.weights[1, 0].sum(), fit.weights[2, 0].sum(), fit.weights[3, 1].sum()],
        [0.4, 0.6, 0.2],
        atol=1e-7,
    )
    np.testing.assert_allclose(fit.intercepts[:4], CHAIN_INTERCEPTS[:4], atol=1e-8)
    np.testing.assert_allclose(fit.residual_sd[:4], 0.0, atol=1e-8)
    assert fit.exogenous_values[2].size == 34 and fit.exogenous_values[3].size == 33
    assert fit.box[0, 3] == -7.0 and fit.box[1, 2] == 9.0
    assert fit.box[0, [0, 1, 2, 4]].min() > -1 and fit.box[1, [0, 1, 3, 4]].max() < 9


def test_only_the_selected_hours_are_fitted_and_indices_equal_a_mask() -> None:
    """``hours``: junk in the other hours changes nothing; indices and the equivalent mask give
    the same fit as the data cut to those hours (with the same ``scale``); the laws hold the
    selected hours' values only."""
    data, b = chain_data(40, seed=8)
    exo, endo = data.exogenous.copy(), data.endogenous.copy()
    junk = np.arange(25, 40)
    endo[junk] = np.random.default_rng(1).uniform(-3, 30, (15, 5))
    dirty = make_data(exo, endo, CHAIN_EDGES)
    options = TrainDelayFitOptions(scale=SCALE)
    by_index = fit_train_delay_sem(dirty, hours=list(range(25)), options=options)
    mask = np.arange(40) < 25
    by_mask = fit_train_delay_sem(dirty, hours=mask, options=options)
    cut = fit_train_delay_sem(make_data(exo[:25], endo[:25], CHAIN_EDGES), options=options)
    for fit in (by_index, by_mask):
        np.testing.assert_allclose(fit.weights, cut.weights, atol=1e-12)
        np.testing.assert_allclose(fit.intercepts, cut.intercepts, atol=1e-12)
        np.testing.assert_allclose(fit.box, cut.box, atol=1e-12)
        np.testing.assert_array_equal(fit.hours, mask)
        assert fit.cv_sse == pytest.approx(cut.cv_sse, abs=1e-15)
        for i in range(5):
            np.testing.assert_allclose(fit.exogenous_values[i], b[:25, i], rtol=1e-12)
    np.testing.assert_allclose(by_index.weights[2, 0, 0], 0.6, atol=1e-7)


def test_the_default_scale_is_the_range_of_every_observed_exogenous_value() -> None:
    """Also of the hours not fitted on (module docstring: every observed exogenous value)."""
    b = np.array([[1.0, -2.0], [4.0, NAN], [3.0, 6.0], [0.0, 1.0]])
    data = make_data(b, b + 1.0, [(0, 1)])
    fit = fit_train_delay_sem(data, hours=[0, 1, 3])
    assert fit.scale == 8.0 and fit.options.scale is None
    np.testing.assert_allclose(fit.exogenous_values[1], [-0.25, 0.125])
    np.testing.assert_allclose(fit.exogenous_values[0], [0.125, 0.5, 0.0])


def test_a_station_without_exogenous_values_gets_a_point_mass_at_zero() -> None:
    """No ``b`` in the fitting hours: no equation (no family, intercept and sd 0) and the law
    ``{0}``."""
    b = np.random.default_rng(9).uniform(0, 1, (12, 3))
    v = b + 0.1
    v[:, 2] += np.arange(12) / 100  # a spread of residuals: sd > 0
    b[:, 0] = NAN
    b[:4, 1] = NAN
    data = make_data(b * SCALE, v * SCALE, [(2, 0), (1, 0), (2, 1)])
    fit = fit_train_delay_sem(data, hours=np.arange(12) < 4, options=TrainDelayFitOptions())
    np.testing.assert_array_equal(fit.exogenous_values[0], [0.0])
    np.testing.assert_array_equal(fit.exogenous_values[1], [0.0])
    assert fit.families[0] == ("", "", "") and fit.families[1] == ("", "", "")
    assert fit.intercepts[0] == 0.0 and fit.residual_sd[0] == 0.0
    assert fit.intercepts[1] == 0.0 and fit.residual_sd[1] == 0.0
    ratio = SCALE / fit.scale
    assert fit.intercepts[2] == pytest.approx((0.1 + 0.015) * ratio)
    assert fit.residual_sd[2] == pytest.approx(np.arange(4).std() / 100 * ratio)
    assert fit.pooled_residual_sd == pytest.approx(fit.residual_sd[2])


# --- contraction: the shrink and the box -----------------------------------------------------


def two_cycle(
    gain: float, hours: int = 20, offset: float = 0.0
) -> tuple[TrainDelayData, np.ndarray, np.ndarray]:
    """Data whose structural equations are exactly ``y_0 - b_0 = 0.1 + offset + gain y_1``
    and ``y_1 - b_1 = -0.05 + offset + gain y_0`` (``b`` derived from freely drawn ``y``)."""
    y = np.random.default_rng(12).uniform(0.0, 0.7, (hours, 2))
    b = np.column_stack([y[:, 0] - 0.1 - gain * y[:, 1], y[:, 1] + 0.05 - gain * y[:, 0]])
    b -= offset
    return make_data(b * SCALE, y * SCALE, [(0, 1), (1, 0)]), b, y


@pytest.mark.parametrize(
    ("cap", "shrink"), [(0.8, 0.8 / 0.9), (None, 1.0), (0.95, 1.0), (0.5, 0.5 / 0.9)]
)
def test_a_two_cycle_is_shrunk_to_the_contraction_cap(cap: float | None, shrink: float) -> None:
    """Linear 2-cycle of gains 0.9: ``rho(M) = 0.9``; every amplitude is multiplied by
    ``max_contraction / rho`` when ``rho`` exceeds it (Prop. IV.4), and the intercepts are
    refitted for the shrunk edges."""
    data, b, y = two_cycle(0.9)
    fit = fit_train_delay_sem(data, options=TrainDelayFitOptions(scale=SCALE, max_contraction=cap))
    assert fit.raw_contraction == pytest.approx(0.9, rel=1e-9)
    assert fit.shrink == pytest.approx(shrink, rel=1e-12)
    gain = 0.9 * shrink
    np.testing.assert_allclose(fit.weights[..., 0], [[0.0, gain], [gain, 0.0]], rtol=1e-9)
    np.testing.assert_allclose(fit.slopes, [[0.0, gain], [gain, 0.0]], rtol=1e-9)
    assert fit.contraction == pytest.approx(gain, rel=1e-9)
    residual = y - b - gain * y[:, ::-1]
    np.testing.assert_allclose(fit.intercepts, residual.mean(axis=0), atol=1e-9)
    np.testing.assert_allclose(fit.residual_sd, residual.std(axis=0), atol=1e-9)
    pooled = np.sqrt(((residual - residual.mean(axis=0)) ** 2).mean())
    assert fit.pooled_residual_sd == pytest.approx(pooled, rel=1e-7, abs=1e-12)
    w = np.array([[0.0, gain], [gain, 0.0]])
    box = data_box(b, y)
    for u in (np.minimum(b.min(axis=0), 0.0), np.maximum(b.max(axis=0), 0.0)):
        solution = np.linalg.solve(np.eye(2) - w, u)
        box = np.stack([np.minimum(box[0], solution), np.maximum(box[1], solution)])
    np.testing.assert_allclose(fit.box, box, atol=1e-9)


def test_without_a_contraction_the_box_is_the_datas_range() -> None:
    """Gains clipped to 1 (``max_edge_slope``) on a 2-cycle: ``rho = 1``, no shrink asked: the
    extreme solves would diverge, so the box is the data's range (with every ``b``'s
    minimum)."""
    data, b, y = two_cycle(1.3)
    fit = fit_train_delay_sem(data, options=TrainDelayFitOptions(scale=SCALE, max_contraction=None))
    assert fit.raw_contraction == pytest.approx(1.0) and fit.contraction == pytest.approx(1.0)
    np.testing.assert_allclose(fit.box, data_box(b, y), atol=1e-12)
    assert fit.box[0].max() < 0


def test_the_box_reaches_the_smallest_inputs_solution_when_the_largest_has_none() -> None:
    """A cubic 2-cycle (``rho = 0.59`` on the data's range): the smallest inputs' solution
    (found by Newton's method, here by plain iteration) lies 3e-9 below the data's range and
    widens the box; the largest inputs (``b_0`` near 3.9) have no solution near the data,
    so the upper side stays the data's."""
    y = np.random.default_rng(13).uniform(0.0, 0.9, (16, 2))
    b = np.column_stack([y[:, 0] + 3.0 - 0.25 * y[:, 1] ** 3, y[:, 1] - 0.15 - 0.25 * y[:, 0] ** 3])
    data = make_data(b * SCALE, y * SCALE, [(0, 1), (1, 0)])
    options = TrainDelayFitOptions(scale=SCALE, min_hours=15, max_contraction=None)
    fit = fit_train_delay_sem(data, options=options)
    assert fit.families[0][1] == fit.families[1][0] == "cubic" and fit.shrink == 1.0
    np.testing.assert_allclose(fit.weights[[0, 1], [1, 0], 1], 0.25, rtol=1e-6)
    w = fit.weights[..., 1]
    u = np.array([0.0, b[:, 1].min()])
    low = u.copy()
    for _ in range(100):
        low = u + w @ low**3
    box = data_box(b, y)
    assert 1e-9 < box[0, 1] - low[1] < 1e-8
    np.testing.assert_allclose(fit.box[0], [box[0, 0], low[1]], rtol=0, atol=1e-14)
    np.testing.assert_array_equal(fit.box[1], box[1])
    np.testing.assert_allclose(fit.slopes[0, 1], 0.75 * fit.box[1, 1] ** 2, rtol=1e-6)
    np.testing.assert_allclose(fit.slopes[1, 0], 0.75 * fit.box[1, 0] ** 2, rtol=1e-6)
    assert fit.intercepts == pytest.approx([-3.0, 0.15], rel=1e-6)


def test_a_spectral_radius_between_one_and_two_keeps_the_datas_range() -> None:
    """``rho(M) = 1.3`` (gains 1.3 under ``max_edge_slope=1.5``): no contraction, the box is
    the data's range; with the default cap every amplitude is shrunk by ``0.8 / 1.3``."""
    data, b, y = two_cycle(1.3)
    loose = TrainDelayFitOptions(scale=SCALE, max_edge_slope=1.5, max_contraction=None)
    fit = fit_train_delay_sem(data, options=loose)
    assert fit.contraction == pytest.approx(1.3, rel=1e-9)
    np.testing.assert_allclose(fit.box, data_box(b, y), atol=1e-12)
    capped = fit_train_delay_sem(data, options=replace(loose, max_contraction=0.8))
    assert capped.shrink == pytest.approx(0.8 / 1.3, rel=1e-9)
    np.testing.assert_allclose(capped.weights[[0, 1], [1, 0], 0], 0.8, rtol=1e-9)


def test_a_tanh_cycle_without_contraction_keeps_the_datas_range() -> None:
    """Tanh 2-cycle of largest slope 1.3 (amplitude 0.26, rate 5): ``rho(M) = 1.3``, so the
    box is the data's range, although Newton's method would find solutions outside it."""
    y = np.random.default_rng(17).uniform(0.0, 0.9, (24, 2))
    b = y - 0.26 * zero_true_tanh(y[:, ::-1], 5.0, 0.5) - 0.05
    data = make_data(b * SCALE, y * SCALE, [(0, 1), (1, 0)])
    options = TrainDelayFitOptions(scale=SCALE, max_edge_slope=1.5, max_contraction=None)
    fit = fit_train_delay_sem(data, options=options)
    assert fit.dictionary.functions == (LINEAR, ScaledTanh(5.0, 0.5))
    np.testing.assert_allclose(fit.weights[[0, 1], [1, 0], 1], 0.26, rtol=1e-7)
    assert fit.contraction == pytest.approx(1.3, rel=1e-7)
    np.testing.assert_allclose(fit.box, data_box(b, y), atol=1e-12)


def test_the_datas_range_reaches_zero_for_positive_signals() -> None:
    """Every ``b`` and ``y`` positive (``rho = 1``, so the box is the data's range): its lower
    side is 0, the delay of an hour without train."""
    data, b, y = two_cycle(1.3, offset=-2.0)
    assert b.min() > 0 and y.min() > 0
    fit = fit_train_delay_sem(data, options=TrainDelayFitOptions(scale=SCALE, max_contraction=None))
    np.testing.assert_array_equal(fit.box, [[0.0, 0.0], y.max(axis=0)])


# --- building blocks --------------------------------------------------------------------------


def test_tanh_grid_is_widths_times_shifts_in_normalised_units() -> None:
    assert (TANH_WIDTHS, TANH_SHIFTS, FOLDS, FAMILY_SWEEPS) == ((2, 5, 10), (0, 5, 10), 5, 3)
    assert TANH_MODES == ("shared", "per-edge")
    grid = tanh_grid(20.0)
    expected = [(20.0 / w, d / 20.0) for w in (2.0, 5.0, 10.0) for d in (0.0, 5.0, 10.0)]
    assert [(g.rate, g.shift) for g in grid] == expected


@pytest.mark.parametrize(
    ("basis", "low", "high"),
    [
        (LINEAR, -0.3, 0.9),
        (CUBIC, -0.8, 0.5),
        (CUBIC, -0.2, 0.7),
        (ScaledTanh(40.0, 0.3001), -1.0, 1.0),
        (ScaledTanh(3.0, 0.9), -0.5, 0.4),
        (ScaledTanh(3.0, -0.9), -0.5, 0.4),
    ],
)
def test_max_slope_is_the_largest_derivative_on_the_interval(
    basis: BasisFunction, low: float, high: float
) -> None:
    """Closed forms: 1, ``3 max(low^2, high^2)``, and a tanh's rate at its inflection point
    (found even between the grid's points) or its slope at the nearer end."""
    kind = "linear" if basis == LINEAR else "cubic" if basis == CUBIC else basis
    assert max_slope(basis, low, high) == pytest.approx(slope_bound(kind, low, high), rel=1e-12)


def test_fixed_point_rate_is_the_geometric_mean_ratio_of_the_changes() -> None:
    """For a linear SEM the changes of ``y <- W y + u`` are ``max |W^k u|``: the rate is
    ``(c_last / c_1)^(1 / (n - 1))`` over the changes above 1e-13 (matrix powers here)."""
    w = np.array([[0.0, 0.6], [0.3, 0.0]])
    sem = SeparableSEM(w[..., None], Dictionary((LINEAR,)))
    u = np.array([[1.0, 0.0], [0.5, 2.0]])

    def expected(sweeps: int) -> float:
        changes = []
        for k in range(1, sweeps + 1):
            change = np.abs(u @ np.linalg.matrix_power(w, k).T).max()
            changes.append(change)
            if change < 1e-13:
                break
        usable = [c for c in changes if c >= 1e-13]
        return (usable[-1] / usable[0]) ** (1 / (len(usable) - 1))

    assert fixed_point_rate(sem, u) == pytest.approx(expected(60), rel=1e-4)  # rounding
    assert fixed_point_rate(sem, u, sweeps=4) == pytest.approx(expected(4), rel=1e-12)
    assert fixed_point_rate(sem, u, sweeps=4) != pytest.approx(expected(60), rel=1e-6)
    assert fixed_point_rate(sem, u, sweeps=1) == 0.0
    chain = SeparableSEM(np.array([[[0.0], [0.0]], [[0.5], [0.0]]]), Dictionary((LINEAR,)))
    assert fixed_point_rate(chain, u) == 0.0  # one nonzero change, then exactly 0
    three = np.zeros((3, 3, 1))
    three[1, 0, 0], three[2, 1, 0] = 0.5, 0.25
    assert fixed_point_rate(
        SeparableSEM(three, Dictionary((LINEAR,))), np.ones((1, 3))
    ) == pytest.approx(0.125 / 0.5)


def rate_of(changes: list[float]) -> float:
    usable = [c for c in changes if c >= 1e-13]
    return (usable[-1] / usable[0]) ** (1 / (len(usable) - 1))


def test_fixed_point_rate_counts_sixty_sweeps_by_default() -> None:
    """A slow 2-cycle (gains 0.6 and 0.95, changes alternating ratios): the default stops
    after 60 sweeps, each change ``max |W^k u|``."""
    w = np.array([[0.0, 0.6], [0.95, 0.0]])
    sem = SeparableSEM(w[..., None], Dictionary((LINEAR,)))
    u = np.array([[1.0, 0.0]])
    changes = [np.abs(np.linalg.matrix_power(w, k) @ u[0]).max() for k in range(1, 62)]
    assert rate_of(changes[:60]) != pytest.approx(rate_of(changes), rel=1e-6)
    assert fixed_point_rate(sem, u) == pytest.approx(rate_of(changes[:60]), rel=1e-9)


def test_fixed_point_rate_of_a_tanh_cycle_follows_the_plain_iteration() -> None:
    """``y <- F(y) + u`` with zero-true tanh edges (iterated here with numpy's tanh)."""
    shape = ScaledTanh(2.0, 0.5)
    w = np.zeros((2, 2, 1))
    w[0, 1, 0], w[1, 0, 0] = 0.45, 0.3
    sem = SeparableSEM(w, Dictionary((shape,)))
    u = np.array([[0.9, 0.2], [0.1, 1.0]])
    y, changes = u.copy(), []
    for _ in range(60):
        new = u + np.column_stack(
            [0.45 * zero_true_tanh(y[:, 1], 2.0, 0.5), 0.3 * zero_true_tanh(y[:, 0], 2.0, 0.5)]
        )
        changes.append(np.abs(new - y).max())
        y = new
        if changes[-1] < 1e-13:
            break
    assert fixed_point_rate(sem, u) == pytest.approx(rate_of(changes), rel=1e-3)
    assert fixed_point_rate(sem, u, sweeps=6) == pytest.approx(rate_of(changes[:6]), rel=1e-9)


def test_replay_inputs_normalise_and_fill_missing_values_with_zero(chain: Chain) -> None:
    fit = chain[2]
    exo = np.array([[5.0, NAN, 1, 2, 3], [NAN, -2.0, 0, 0, 0]])
    endo = np.array([[NAN, 8.0, 1, 1, 1], [4.0, NAN, 2, 2, 2]])
    inputs, values = replay_inputs(fit, make_data(exo, endo, []))
    np.testing.assert_allclose(inputs, np.where(np.isfinite(exo), exo, 0) / 10)
    np.testing.assert_allclose(values, np.where(np.isfinite(endo), endo, 0) / 10)


def test_held_out_errors_against_a_numpy_recomputation() -> None:
    """Structural and solve errors of the SEM fitted on the training hours, and of the empty
    graph with its own training intercepts, in minutes^2 over the held-out station-hours."""
    rng = np.random.default_rng(14)
    b = rng.uniform(-0.1, 0.6, (30, 5))
    y = b + np.array([0.1, -0.05, 0.2, 0.3, -0.2]) + rng.normal(0, 0.05, (30, 5))
    b[[t for t in range(20) if t != 6], 3] = NAN  # one training value of y_3 - b_3
    b[:20, 4] = NAN  # none of y_4 - b_4
    y[:, 1] += 0.5 * y[:, 0]
    y[:, 2] += 0.3 * y[:, 1] + 0.4 * y[:, 0]
    y[:, 0] += 0.2 * y[:, 2]  # a cycle 0 -> 2 -> 0, shrunk to rho = 0.3
    y[[22, 27], 1] = NAN
    b[[22, 27, 25], 1] = NAN
    b[24, 0] = NAN
    data = make_data(b * SCALE, y * SCALE, [(0, 1), (1, 2), (0, 2), (2, 0)])
    options = TrainDelayFitOptions(scale=SCALE, max_contraction=0.3, min_hours=21)
    result = held_out_errors(data, train=20, options=options)
    mask = np.arange(30) < 20
    fit = fit_train_delay_sem(data, hours=mask, options=options)
    assert set(fit.families[0]) <= {"", "linear"} and fit.dictionary.functions == (LINEAR,)
    w = fit.weights[..., 0]
    test = ~mask
    filled, inputs = np.nan_to_num(y[test]), np.nan_to_num(b[test])
    rows, seen = np.isfinite(b[test]), np.isfinite(y[test])
    empty = np.array(
        [np.mean(d[np.isfinite(d)]) if np.isfinite(d).any() else 0.0 for d in (y - b)[:20].T]
    )
    assert empty[4] == 0.0 and empty[3] == y[6, 3] - b[6, 3]
    truth = (y - b)[test]
    structural = ((truth - fit.intercepts - filled @ w.T)[rows] ** 2).mean()
    structural_empty = ((truth - empty)[rows] ** 2).mean()
    solved = np.linalg.solve(np.eye(5) - w, (inputs + fit.intercepts).T).T
    solve = ((y[test] - solved)[seen] ** 2).mean()
    solve_empty = ((y[test] - inputs - empty)[seen] ** 2).mean()
    expected = {
        "structural": structural * 100,
        "structural_empty": structural_empty * 100,
        "solve": solve * 100,
        "solve_empty": solve_empty * 100,
    }
    for key, value in expected.items():
        assert result[key] == pytest.approx(value, rel=1e-7), key
    assert result["train_hours"] == 20 and result["test_station_hours"] == 46
    assert result["contraction"] == pytest.approx(fit.contraction, rel=1e-12)
    assert result["contraction"] == pytest.approx(0.3) and fit.shrink < 1
    assert held_out_errors(data, train=mask, options=options) == result
    assert held_out_errors(data, train=np.arange(20), options=options) == result
    assert held_out_errors(data, train=np.float64(20.0), options=options) == result


def test_held_out_errors_train_on_the_first_48_hours_by_default() -> None:
    b = np.random.default_rng(15).uniform(0, 1, (60, 2))
    y = b + 0.1
    y[:, 1] += 0.4 * y[:, 0] + np.random.default_rng(16).normal(0, 0.05, 60)
    data = make_data(b * SCALE, y * SCALE, [(0, 1)])
    options = TrainDelayFitOptions(min_hours=61)
    result = held_out_errors(data, options=options)
    assert result["train_hours"] == 48 and result == held_out_errors(
        data, train=48, options=options
    )


def write_folder(folder: Path) -> Path:
    """A tiny copy of the four data files: Gotha -> Erfurt Hbf in four hours (plus the excluded
    Naumburg), read with the loader's defaults."""
    folder.mkdir()
    pd.DataFrame(
        {
            "eva_nr": [1, 2, 3],
            "name": ["Gotha", "Erfurt Hbf", "Naumburg (Saale) Hbf"],
            "long": [10.7, 11.0, 11.8],
            "lat": [50.9, 51.0, 51.1],
            "distance_km": [5.0, 6.0, 7.0],
        }
    ).to_csv(folder / "stations.csv", index=False)
    plan = "2024-06-24 00:10:00"
    rows = []
    for k, hour in enumerate(["a", "b", "c", "d"]):
        for eva, arrival, departure in [(1, k, 2 * k + 1), (2, 3 * k + 1, 4 * k + 2)]:
            rows.append(
                {
                    "hour_file": hour,
                    "ID": f"{hour}{eva}",
                    "path": "Gotha" if eva == 2 else None,
                    "eva_nr": eva,
                    "arrival_plan": plan,
                    "departure_plan": plan,
                    "arrival_delay_m": arrival,
                    "depature_delay_m": departure,
                }
            )
    pd.DataFrame(rows).to_csv(folder / "hourly_20_stations.csv.gz", index=False)
    (folder / "hours_listed.txt").write_text("a\nb\nc\nd\n", encoding="utf-8")
    (folder / "hours_present.txt").write_text("a\nb\nc\nd\n", encoding="utf-8")
    return folder


def test_path_reads_the_folder_like_the_loader(tmp_path: Path) -> None:
    folder = write_folder(tmp_path / "copy")
    data = load_train_delays(folder)
    options = TrainDelayFitOptions(min_hours=5)
    from_path = fit_train_delay_sem(path=folder, options=options)
    direct = fit_train_delay_sem(data, options=options)
    assert from_path.names == ("Gotha", "Erfurt Hbf")
    np.testing.assert_allclose(from_path.weights, direct.weights, atol=1e-12)
    assert from_path.weights[1, 0].sum() > 0
    with_path = held_out_errors(path=folder, train=3, options=options)
    assert with_path == held_out_errors(data, train=3, options=options)


# --- refusals ---------------------------------------------------------------------------------


def test_options_defaults_and_refusals() -> None:
    options = TrainDelayFitOptions()
    assert (options.scale, options.tanh_shapes, options.max_edge_slope) == (None, "shared", 1.0)
    assert (options.max_contraction, options.min_improvement) == (0.8, 0.01)
    assert (options.folds, options.min_hours) == (5, 10)
    with pytest.raises(
        ValueError, match=r"^tanh_shapes must be one of \('shared', 'per-edge'\), got 'all'$"
    ):
        TrainDelayFitOptions(tanh_shapes="all")
    both = r"^need max_edge_slope > 0, folds >= 2 and min_hours >= folds$"
    for bad in ({"max_edge_slope": 0.0}, {"folds": 1, "min_hours": 3}, {"min_hours": 4}):
        with pytest.raises(ValueError, match=both):
            TrainDelayFitOptions(**bad)
    TrainDelayFitOptions(max_edge_slope=1e-9, folds=2, min_hours=2)
    TrainDelayFitOptions(min_hours=5, folds=5)
    for cap in (0.0, 1.0, -0.5):
        with pytest.raises(ValueError, match=rf"^max_contraction must lie in \(0, 1\), got {cap}$"):
            TrainDelayFitOptions(max_contraction=cap)
    TrainDelayFitOptions(max_contraction=0.999)
    with pytest.raises(ValueError, match=r"^scale must be a positive number of minutes, got 0$"):
        TrainDelayFitOptions(scale=0)


@pytest.mark.parametrize("scale", [0.0, -1.0, np.inf, np.nan])
def test_check_scale_refuses_what_is_not_a_positive_finite_number(scale: float) -> None:
    with pytest.raises(ValueError, match=r"^scale must be a positive number of minutes, got "):
        check_scale(scale)


def test_check_scale_returns_a_float() -> None:
    assert check_scale(3) == 3.0 and type(check_scale(np.float32(2.5))) is float


def test_a_constant_exogenous_signal_has_no_default_scale() -> None:
    b = np.full((4, 2), 2.0)
    with pytest.raises(ValueError, match=r"^scale must be a positive number of minutes, got 0"):
        fit_train_delay_sem(make_data(b, b, [(0, 1)]))


def base_data() -> TrainDelayData:
    b = np.array([[1.0, 2.0], [NAN, 3.0], [2.0, NAN]])
    return make_data(b, np.where(np.isfinite(b), b + 1, NAN), [(0, 1)])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"exogenous": np.zeros((3, 3))}, r"data\.exogenous must have shape \(hours, stations\) "),
        ({"endogenous": np.zeros((2, 2))}, r"data\.exogenous must have shape .* = \(2, 2\), got "),
        ({"endogenous": np.zeros(3)}, r"data\.exogenous must have shape .* = \(-1, 2\), got "),
        ({"observed": np.ones((3, 1), bool)}, r"data\.observed must have shape .*, got \(3, 1\)"),
        ({"exogenous_observed": np.ones(3, bool)}, r"data\.exogenous_observed must have shape"),
        (
            {"adjacency": np.zeros((3, 3), bool)},
            r"^data\.adjacency must be \(2, 2\), got \(3, 3\)$",
        ),
        ({"adjacency": np.eye(2, dtype=bool)}, r"^data\.adjacency must have no self-loops$"),
        (
            {"exogenous_observed": np.ones((3, 2), bool)},
            r"^data\.exogenous_observed must mark the finite exogenous values$",
        ),
        ({"observed": np.ones((3, 2), bool)}, r"^data\.observed must mark the finite endogenous"),
        (
            {"standardised_signals": True},
            r"^the simulator normalises the signals itself: pass the data in minutes, not "
            r"TrainDelayData\.standardised\(\)$",
        ),
    ],
)
def test_bad_data_are_refused_naming_the_problem(change: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        check_data(replace(base_data(), **change))
    with pytest.raises(ValueError, match=message):
        fit_train_delay_sem(replace(base_data(), **change))


def test_data_without_hours_or_exogenous_values_are_refused() -> None:
    empty = np.zeros((0, 2))
    with pytest.raises(ValueError, match=r"= \(0, 2\), got \(0, 2\)$"):
        check_data(make_data(empty, empty, []))
    nothing = np.full((3, 2), NAN)
    with pytest.raises(ValueError, match=r"^data hold no exogenous value$"):
        check_data(make_data(nothing, np.ones((3, 2)), []))
    with pytest.raises(ValueError, match=r"^need a TrainDelayData, got dict$"):
        check_data({})
    data = base_data()
    assert check_data(data) is data
    one = make_data(np.ones((1, 2)), np.ones((1, 2)), [])
    assert check_data(one) is one


def test_bad_hours_are_refused() -> None:
    data = base_data()
    with pytest.raises(ValueError, match=r"^an hour mask must have shape \(3,\), got \(2,\)$"):
        fit_train_delay_sem(data, hours=np.array([True, False]))
    for hours in ([3], [-1], [0.5]):
        with pytest.raises(ValueError, match=r"^hour indices must be integers in 0\.\.2$"):
            fit_train_delay_sem(data, hours=hours)
    with pytest.raises(ValueError, match=r"^the fitting hours hold no exogenous value$"):
        fit_train_delay_sem(data, hours=[], options=TrainDelayFitOptions(scale=1.0))
    with pytest.raises(ValueError, match=r"^the fitting hours hold no exogenous value$"):
        fit_train_delay_sem(data, hours=np.zeros(3, bool), options=TrainDelayFitOptions(scale=1))
    fit = fit_train_delay_sem(data, hours=[2, 1.0], options=TrainDelayFitOptions(scale=1.0))
    np.testing.assert_array_equal(fit.hours, [False, True, True])
    mask = np.array([True, True, False])
    fit = fit_train_delay_sem(data, hours=mask, options=TrainDelayFitOptions(scale=1.0))
    mask[2] = True
    np.testing.assert_array_equal(fit.hours, [True, True, False])
