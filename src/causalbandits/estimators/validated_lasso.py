"""Eq. 9 with the lasso penalty tuned online on validation rounds (NDC-SEM Sec. V-B).

The Covid experiment splits the rounds into training and validation days (one validation day
per block of 10, 90:10). On day ``t`` the graph ``A_hat(lam)`` of eq. 9 is fitted on the
training days received so far for every ``lam`` of a grid, and the ``lam`` with the lowest
prediction error on the validation days received so far wins:

    eps(t) = 1 / (N K(t)) * sum_{tau in K(t)} || y_tau - y_hat_tau ||_1,
    y_hat_tau = (I - A_hat)^{-1} b_tau                    (decisions: ndc-sem 21).

``(I - A_hat)^{-1}`` is the solution (4) of the SEM only when the spectral radius of ``A_hat``
is below 1; with cycles allowed it may not be, and the prediction then falls back to the
pseudo-inverse of ``I - A_hat`` with a warning (decisions: ndc-sem 25). A fit with a spectral
radius >= 1 still competes on its (pseudo-inverse) validation error.

Ties in ``eps`` (e.g. every ``lam`` large enough to give the empty graph) go to the smallest
such ``lam``. Before the first validation day arrives, ``initial`` is used (default: the
largest grid value, i.e. no causal effect is assumed until one is validated).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from causalbandits.estimators.lasso import (
    SEMStatistics,
    Structure,
    lasso_support,
    nonnegative_lasso,
)

#: Decades 1e-5 ... 1e6: the range the paper grid-searches (Sec. V-A; decisions: ndc-sem 2).
DECADE_GRID: tuple[float, ...] = tuple(10.0**k for k in range(-5, 7))
#: Spectral radius from which ``(I - A)^{-1}`` no longer solves the SEM (4).
UNSTABLE_RADIUS = 1.0 - 1e-12


def check_positive_grid(
    grid: Sequence[float] | np.ndarray, name: str, upper: float | None = None
) -> np.ndarray:
    """A tuning grid as a sorted float array; raise for an empty grid, values that are not
    finite and ``> 0`` (and ``<= upper`` if given) or duplicates."""
    values = np.asarray(grid, dtype=float).reshape(-1)
    if values.size == 0:
        raise ValueError(f"the {name} grid is empty")
    bad = ~np.isfinite(values) | (values <= 0)
    if upper is not None:
        bad |= values > upper
    if bad.any():
        bound = f"in (0, {upper:g}]" if upper is not None else "> 0"
        raise ValueError(f"{name} grid values must be finite and {bound}, got {values.tolist()}")
    ordered = np.sort(values)
    if np.any(np.diff(ordered) == 0):
        raise ValueError(f"the {name} grid has duplicated values: {values.tolist()}")
    return ordered


def check_lambda_grid(grid: Sequence[float] | np.ndarray) -> np.ndarray:
    """The ``lam`` grid of eq. 9 (:func:`check_positive_grid`)."""
    return check_positive_grid(grid, "lambda")


def spectral_radius(adjacency: np.ndarray) -> np.ndarray:
    """``max |eig(A)|`` of a batch ``(..., N, N)``."""
    return np.abs(np.linalg.eigvals(adjacency)).max(axis=-1)


def predict_overall(adjacency: np.ndarray, exogenous: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``y_hat = (I - A)^{-1} b`` (eq. 4) for ``A`` ``(..., N, N)`` and ``b`` ``(..., K, N)``.

    Returns ``(y_hat (..., K, N), unstable (...))``; where the spectral radius of ``A`` is
    ``>= 1`` the pseudo-inverse of ``I - A`` is used and a ``RuntimeWarning`` is issued.
    """
    adjacency = np.asarray(adjacency, dtype=float)
    exogenous = np.asarray(exogenous, dtype=float)
    n = adjacency.shape[-1]
    system = np.eye(n) - adjacency
    unstable = spectral_radius(adjacency) >= UNSTABLE_RADIUS
    shape = np.broadcast_shapes(adjacency.shape[:-2], exogenous.shape[:-2])
    system = np.broadcast_to(system, (*shape, n, n))
    rhs = np.swapaxes(np.broadcast_to(exogenous, (*shape, *exogenous.shape[-2:])), -1, -2)
    flags = np.broadcast_to(unstable, shape)
    safe = np.where(flags[..., None, None], np.eye(n), system)
    predicted = np.linalg.solve(safe, rhs)
    if flags.any():
        warnings.warn(
            "an estimated graph has spectral radius >= 1, so (I - A_hat)^{-1} b does not solve "
            "the SEM; its prediction uses the pseudo-inverse of I - A_hat",
            RuntimeWarning,
            stacklevel=2,
        )
        predicted[flags] = np.linalg.pinv(system[flags]) @ rhs[flags]
    return np.swapaxes(predicted, -1, -2), np.asarray(unstable)


def validation_error(
    adjacency: np.ndarray, y: np.ndarray, exogenous: np.ndarray, received: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``eps = 1/(N K) sum_tau ||y_tau - (I - A)^{-1} b_tau||_1`` over the received days.

    ``adjacency`` is ``(..., N, N)``; ``y`` and ``exogenous`` ``(..., K, N)`` hold the
    validation days and ``received`` ``(..., K)`` marks those counted. Returns
    ``(eps (...), unstable (...))`` with ``eps = nan`` where no day is counted.
    """
    predicted, unstable = predict_overall(adjacency, exogenous)
    received = np.asarray(received, dtype=bool)
    per_day = np.abs(np.asarray(y, dtype=float) - predicted).sum(axis=-1)
    total = np.where(received, per_day, 0.0).sum(axis=-1)
    count = received.sum(axis=-1) * adjacency.shape[-1]
    with np.errstate(invalid="ignore", divide="ignore"):
        eps = np.where(count > 0, total / np.where(count > 0, count, 1), np.nan)
    return eps, unstable


class ValidatedSEMLasso:
    """Eq. 9 on the training rounds for every ``lam`` of a grid; ``lam`` chosen by ``eps(t)``.

    Parameters
    ----------
    replicates, n_nodes: ``R`` and ``N``.
    grid: the ``lam`` values (> 0; sorted ascending internally).
    validation: ``(T,)`` booleans, ``True`` for the (1-based) rounds ``1..T`` held out for
        validation; the others are training rounds.
    structure: ``"cyclic"`` (the Covid experiment: cycles allowed) or ``"dag"``.
    initial: ``lam`` used while no validation round has arrived; ``None`` is the largest grid
        value. It need not be on the grid.
    tol, max_sweeps: stopping rule of :func:`~causalbandits.estimators.lasso.nonnegative_lasso`
        (warm-started from the previous fit of the same ``lam``).

    After :meth:`fit`, ``errors`` ``(R, L)`` holds ``eps(t)`` per ``lam`` (``nan`` without
    validation data), ``unstable`` ``(R, L)`` the fits with spectral radius >= 1, ``choice``
    ``(R,)`` the grid index used (``-1`` for ``initial``), ``lam`` ``(R,)`` its value and
    ``fits`` ``(R, L, N, N)`` every ``A_hat``.
    """

    def __init__(
        self,
        replicates: int,
        n_nodes: int,
        grid: Sequence[float] | np.ndarray,
        validation: Sequence[bool] | np.ndarray,
        structure: Structure = "cyclic",
        initial: float | None = None,
        tol: float = 1e-8,
        max_sweeps: int = 1000,
    ) -> None:
        self.grid = check_lambda_grid(grid)
        self.validation = np.asarray(validation, dtype=bool).reshape(-1)
        if self.validation.size == 0:
            raise ValueError("the validation mask must cover at least one round")
        if initial is not None and not (np.isfinite(initial) and initial >= 0):
            raise ValueError(f"initial lambda must be finite and >= 0, got {initial}")
        self.initial = float(self.grid[-1] if initial is None else initial)
        self.support = lasso_support(n_nodes, structure)
        self.tol, self.max_sweeps = float(tol), int(max_sweeps)
        self.replicates, self.n_nodes = int(replicates), int(n_nodes)
        slots = int(self.validation.sum())
        self._slot = np.cumsum(self.validation) - 1  # validation round -> slot
        self.statistics = SEMStatistics(self.replicates, self.n_nodes)
        self.validation_y = np.zeros((self.replicates, slots, self.n_nodes))
        self.validation_b = np.zeros((self.replicates, slots, self.n_nodes))
        self.validation_received = np.zeros((self.replicates, slots), dtype=bool)
        shape = (self.replicates, self.grid.size)
        self.fits = np.zeros((*shape, self.n_nodes, self.n_nodes))
        self.errors = np.full(shape, np.nan)
        self.unstable = np.zeros(shape, dtype=bool)
        self.choice = np.full(self.replicates, -1)
        self._initial_fit = np.zeros((self.replicates, self.n_nodes, self.n_nodes))
        self.adjacency = np.zeros((self.replicates, self.n_nodes, self.n_nodes))
        self._stale = False

    @property
    def lam(self) -> np.ndarray:
        """The ``lam`` in use per replicate, ``(R,)``."""
        return np.where(self.choice >= 0, self.grid[np.maximum(self.choice, 0)], self.initial)

    @property
    def n_validation(self) -> np.ndarray:
        """``K(t)``: validation rounds received per replicate, ``(R,)``."""
        return self.validation_received.sum(axis=1)

    @property
    def epsilon(self) -> np.ndarray:
        """``eps(t)`` of the ``lam`` in use, ``(R,)`` (``nan`` before validation data)."""
        rows = np.arange(self.replicates)
        return np.where(self.choice >= 0, self.errors[rows, np.maximum(self.choice, 0)], np.nan)

    def add(self, rounds: np.ndarray, y: np.ndarray, exogenous: np.ndarray) -> None:
        """Add arrived rounds: ``rounds`` ``(R, K)`` (1-based, ``<= 0`` marks an empty slot),
        ``y`` and ``exogenous`` (``b``, or ``z``) of shape ``(R, K, N)``."""
        rounds = np.asarray(rounds, dtype=np.int64)
        y = np.asarray(y, dtype=float)
        exogenous = np.asarray(exogenous, dtype=float)
        if (
            rounds.ndim != 2
            or y.shape != (*rounds.shape, self.n_nodes)
            or y.shape != exogenous.shape
        ):
            raise ValueError(
                f"rounds must be (R, K) and y, exogenous (R, K, N = {self.n_nodes}); got "
                f"{rounds.shape}, {y.shape}, {exogenous.shape}"
            )
        if rounds.max(initial=0) > self.validation.size:
            raise ValueError(
                f"round {rounds.max()} lies beyond the validation mask of {self.validation.size}"
            )
        present = rounds > 0
        held_out = present & self.validation[np.maximum(rounds, 1) - 1]
        training = present & ~held_out
        if training.any():
            self.statistics.add(y, exogenous, training)
        replicate, item = np.nonzero(held_out)
        if replicate.size:
            slot = self._slot[rounds[replicate, item] - 1]
            self.validation_y[replicate, slot] = y[replicate, item]
            self.validation_b[replicate, slot] = exogenous[replicate, item]
            self.validation_received[replicate, slot] = True
        self._stale = self._stale or bool(present.any())

    def fit(self) -> np.ndarray:
        """``A_hat`` ``(R, N, N)`` of the chosen ``lam``; refitted only when data arrived."""
        if not self._stale:
            return self.adjacency
        r, grid_size, n = self.replicates, self.grid.size, self.n_nodes
        fits, _ = nonnegative_lasso(
            np.repeat(self.statistics.gram, grid_size, axis=0),
            np.repeat(self.statistics.cross, grid_size, axis=0),
            np.tile(self.grid, r),
            self.support,
            start=self.fits.reshape(r * grid_size, n, n),
            tol=self.tol,
            max_sweeps=self.max_sweeps,
        )
        self.fits = fits.reshape(r, grid_size, n, n)
        self.errors, self.unstable = validation_error(
            self.fits,
            self.validation_y[:, None],
            self.validation_b[:, None],
            self.validation_received[:, None],
        )
        counted = self.n_validation > 0
        best = np.argmin(np.where(np.isnan(self.errors), np.inf, self.errors), axis=1)
        self.choice = np.where(counted, best, -1)
        if not counted.all():
            self._initial_fit, _ = nonnegative_lasso(
                self.statistics.gram,
                self.statistics.cross,
                self.initial,
                self.support,
                start=self._initial_fit,
                tol=self.tol,
                max_sweeps=self.max_sweeps,
            )
        rows = np.arange(r)
        chosen = self.fits[rows, np.maximum(self.choice, 0)]
        self.adjacency = np.where(counted[:, None, None], chosen, self._initial_fit)
        self._stale = False
        return self.adjacency


class SharedValidatedSEMLasso:
    """One single-replicate :class:`ValidatedSEMLasso` serving ``R`` replicates with equal data.

    Replicates that differ only in what the graph learner ignores learn the same graphs: with
    the full ``(y_tau, b_tau)`` as input (decisions: ndc-sem 22) the learner ignores the decisions,
    so e.g. NDC-SEM with a grid of ``(gamma, xi)`` (App. VII-D5), run as replicates on one
    reward sample, needs eq. 9 fitted once per day, not once per replicate. :meth:`add`
    checks that every replicate's arrivals equal replicate 0's; the outputs are broadcast
    (read-only) to ``R`` replicates.
    """

    def __init__(self, replicates: int, learner: ValidatedSEMLasso) -> None:
        if learner.replicates != 1:
            raise ValueError(f"the shared learner must have 1 replicate, got {learner.replicates}")
        if replicates < 1:
            raise ValueError(f"replicates must be >= 1, got {replicates}")
        self.replicates = int(replicates)
        self.learner = learner

    def _broadcast(self, value: np.ndarray) -> np.ndarray:
        return np.broadcast_to(value, (self.replicates, *np.shape(value)[1:]))

    @property
    def lam(self) -> np.ndarray:
        return self._broadcast(self.learner.lam)

    @property
    def n_validation(self) -> np.ndarray:
        return self._broadcast(self.learner.n_validation)

    @property
    def epsilon(self) -> np.ndarray:
        return self._broadcast(self.learner.epsilon)

    def add(self, rounds: np.ndarray, y: np.ndarray, exogenous: np.ndarray) -> None:
        """As :meth:`ValidatedSEMLasso.add`; raise unless all replicates bring the same data."""
        rounds, y, exogenous = (np.asarray(v) for v in (rounds, y, exogenous))
        if len(rounds) != self.replicates:
            raise ValueError(f"expected {self.replicates} replicates, got {len(rounds)}")
        if not all((v == v[:1]).all() for v in (rounds, y, exogenous)):
            raise ValueError(
                "a shared graph learner needs the same arrivals in every replicate (the same "
                "reward sample and delays, and graph input independent of the decisions)"
            )
        self.learner.add(rounds[:1], y[:1], exogenous[:1])

    def fit(self) -> np.ndarray:
        """``A_hat`` ``(R, N, N)``: the single fit, broadcast."""
        return self._broadcast(self.learner.fit())
