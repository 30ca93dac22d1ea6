"""Replay of the German train-delay hours (SSEM-UCB Sec. V-B; the spec's option (c), real-data
check): the available hours in order, one per round, for super arms of at most ``s`` stations.

The real hours are observations of the real system, in which every station adds its own
delay: the *complete* super arm. For a played super arm ``x`` the environment serves the
counterfactual of hour ``t`` under the SEM fitted by :func:`~causalbandits.envs.train_delay_fit.
fit_train_delay_sem` (normalised units, minutes / ``fit.scale``), with the hour's structural
residual held fixed (abduction, action, prediction for an additive-noise SEM):

    u_t = y_t - F(y_t) - b_t          (everything the SEM does not explain: the delay brought
                                       in from outside the 20 stations, the hour's noise)
    y_t(x) solves  y = F(y) + x * b_t + u_t,      z_t(x) = x * b_t.

So the fitted SEM is used only for the unobserved counterfactual part: with every station
selected, ``y_t(x) = y_t`` exactly; a station ``i`` none of whose ancestors in the fitted graph
(itself included) is an unselected station with a non-zero own delay has ``y_t(x)[i] =
y_t[i]``, served exactly (not through the solver); a selected station's ``z`` is its real
``b_t``. Only stations downstream of a dropped own delay get a counterfactual value.

Missing values (flagged in :attr:`TrainDelayReplay.exogenous_imputed` and
:attr:`TrainDelayReplay.endogenous_imputed`, per served hour and station):

- **no through train** (``b_t[i]`` missing, 45 % of the served station-hours): not a lost
  measurement but an hour without a stay, so no own delay: ``b_t[i] = 0`` (default,
  ``missing_exogenous="zero"``); ``"law"`` draws it from the station's fitted law instead
  (the simulator's :class:`~causalbandits.envs.base_arms.EmpiricalArms`, one uniform per
  replicate, hour and station from the replicate's seed: common random numbers);
- **no train at all** (``y_t[i]`` missing): the station passes on no delay, ``y_t[i] = 0`` as
  in the fit (its residual makes the complete super arm reproduce that 0);
- **hours without any train** (the source's header-only ``hourly2/240706_13.csv``) are not
  served (``skip_empty_hours``): ``T = 79`` of the 80 present hours.

Each hour is seen once, so the replay's regret is unknown. :meth:`TrainDelayReplay.
pseudo_regret` and :meth:`~TrainDelayReplay.is_optimal` report the regret under an ``oracle``
(a :class:`~causalbandits.envs.separable_semibandit.SeparableSemiBandit` on the same fit, e.g.
:func:`~causalbandits.envs.train_delays.train_delay_simulator`): a diagnostic (the simulator's
``mu``, without the hours' external delays), not the replay's regret; without an oracle they
raise.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from causalbandits.data.train_delays import TrainDelayData
from causalbandits.envs.base import ReplicatedEnvironment
from causalbandits.envs.semibandit import (
    SemiBanditFeedback,
    SemiBanditProblem,
    check_horizon_and_super_arm_size,
    check_super_arms,
)
from causalbandits.envs.separable_semibandit import SeparableSemiBandit
from causalbandits.envs.train_delay_fit import TrainDelayFit, _resolve_data, fit_train_delay_sem
from causalbandits.envs.train_delays import MAX_ARMS

MISSING_EXOGENOUS = ("zero", "law")


@dataclass(frozen=True, kw_only=True)
class ReplayConfig:
    """The replay's settings (module docstring), checked on construction (the super-arm size
    against the hours and stations by :class:`TrainDelayReplay`)."""

    #: ``s``: super arms of at most this many stations (the paper's 6).
    super_arm_size: int = MAX_ARMS
    #: A missing ``b_t[i]`` (no through train): ``"zero"`` (no own delay) or ``"law"`` (a draw
    #: from the station's fitted law).
    missing_exogenous: str = "zero"
    #: Leave out hours in which no station has a train (``T = 79`` of the 80 present hours).
    skip_empty_hours: bool = True
    #: The counterfactual solve's tolerance.
    tol: float = 1e-12

    def __post_init__(self) -> None:
        if self.missing_exogenous not in MISSING_EXOGENOUS:
            raise ValueError(
                f"missing_exogenous must be one of {MISSING_EXOGENOUS}, "
                f"got {self.missing_exogenous!r}"
            )


def descendants(edges: np.ndarray) -> np.ndarray:
    """``(N, N)`` booleans, ``[j, i]``: ``i`` is ``j`` or reachable from ``j`` along ``edges``
    (``[a, b]``: the edge ``a -> b``)."""
    reach = np.eye(len(edges), dtype=bool) | np.asarray(edges, dtype=bool)
    while True:
        grown = reach | ((reach.astype(np.int64) @ reach.astype(np.int64)) > 0)
        if np.array_equal(grown, reach):
            return reach
        reach = grown


class TrainDelayReplay(ReplicatedEnvironment):
    """The available train-delay hours replayed (module docstring).

    Parameters
    ----------
    fit: the fitted SEM and laws (:func:`~causalbandits.envs.train_delay_fit.
        fit_train_delay_sem`).
    data: the hours (in minutes) the fit's stations come from.
    config: the replay's settings (:class:`ReplayConfig`, default its defaults).
    oracle: a :class:`SeparableSemiBandit` on the same fit for the diagnostic regret.
    """

    def __init__(
        self,
        fit: TrainDelayFit,
        data: TrainDelayData,
        config: ReplayConfig | None = None,
        oracle: SeparableSemiBandit | None = None,
    ) -> None:
        config = ReplayConfig() if config is None else config
        data = _resolve_data(data, None)
        n = fit.n_stations
        if tuple(data.names) != tuple(fit.names):
            raise ValueError("the data's stations are not the fit's")
        super_arm_size = config.super_arm_size
        observed = np.asarray(data.observed, dtype=bool)
        served = observed.any(axis=1) if config.skip_empty_hours else np.ones(data.n_hours, bool)
        self.hour_index = np.flatnonzero(served)
        self.hours = tuple(data.hours[t] for t in self.hour_index)
        check_horizon_and_super_arm_size(len(self.hour_index), super_arm_size, n)
        self.horizon = len(self.hour_index)
        self.super_arm_size = int(super_arm_size)
        self.fit, self.names, self.short_names = fit, fit.names, fit.short_names
        self.missing_exogenous = config.missing_exogenous
        self.sem = fit.sem(tol=config.tol)
        exo = fit.normalise(data.exogenous)[self.hour_index]
        endo = fit.normalise(data.endogenous)[self.hour_index]
        #: ``(T, N)``: served exogenous values that are not data (no through train).
        self.exogenous_imputed = ~np.isfinite(exo)
        #: ``(T, N)``: endogenous values that are not data (no train: 0).
        self.endogenous_imputed = ~np.isfinite(endo)
        #: The real exogenous signals (normalised), NaN where missing, ``(T, N)``.
        self.exogenous = exo
        #: The endogenous values of the complete super arm (normalised; missing: 0), ``(T, N)``.
        self.endogenous = np.where(np.isfinite(endo), endo, 0.0)
        self._pushed = self.sem.mechanisms(self.endogenous[None])[0]  # F(y_t)
        for array in (self.exogenous_imputed, self.endogenous_imputed, self.exogenous):
            array.setflags(write=False)
        self.endogenous.setflags(write=False)
        self._reach = descendants(fit.edges)
        self.oracle = oracle
        if oracle is not None:
            same = oracle.sem.weights.shape[1:] == fit.weights.shape and all(
                np.array_equal(w, fit.weights) for w in oracle.sem.weights
            )
            if not same or oracle.super_arm_size != self.super_arm_size:
                raise ValueError(
                    f"the oracle must be built on the same fit with super_arm_size = "
                    f"{self.super_arm_size}"
                )
        self.problem = SemiBanditProblem(
            n_arms=n,
            super_arm_size=self.super_arm_size,
            horizon=self.horizon,
            upper_triangular=False,
        )
        self._signals: np.ndarray | None = None

    @property
    def n_arms(self) -> int:
        return self.fit.n_stations

    def start(self, seeds: list[np.random.SeedSequence]) -> None:
        """The served exogenous signals of every hour and replicate, ``(T, R, N)``, and the
        hours' residuals ``u_t``."""
        exo = np.where(self.exogenous_imputed, 0.0, self.exogenous)
        signals = np.repeat(exo[:, None], len(seeds), axis=1)
        if self.missing_exogenous == "law" and self.exogenous_imputed.any():
            uniforms = np.stack(
                [np.random.default_rng(s).random((self.horizon, self.n_arms)) for s in seeds],
                axis=1,
            )
            draws = self.fit.arms().quantile(uniforms)
            signals = np.where(self.exogenous_imputed[:, None], draws, signals)
        self._signals = signals
        self._residuals = self.endogenous[:, None] - self._pushed[:, None] - signals

    @property
    def signals(self) -> np.ndarray:
        """The exogenous signals ``b_t`` served (real, or imputed where flagged), ``(T, R, N)``."""
        if self._signals is None:
            raise RuntimeError("call reset() before using the environment")
        return self._signals

    @property
    def residuals(self) -> np.ndarray:
        """The hours' structural residuals ``u_t = y_t - F(y_t) - b_t``, ``(T, R, N)``."""
        if self._signals is None:
            raise RuntimeError("call reset() before using the environment")
        return self._residuals

    def reference_rounds(self) -> tuple[np.ndarray, np.ndarray]:
        """The served hours as they were (the complete super arm): ``z_t = b_t`` and the real
        ``y_t``, each ``(R, T, N)`` (a fit's error of rebuilding the real delays)."""
        z = np.moveaxis(self.signals, 0, 1)
        return z, np.broadcast_to(self.endogenous[None], z.shape)

    def check_actions(self, actions: np.ndarray) -> np.ndarray:
        return check_super_arms(actions, self.n_arms, self.super_arm_size, self.replicates)

    def counterfactual(self, t: int, actions: np.ndarray) -> np.ndarray:
        """``y_t(x)`` of hour ``t`` (0-based among the served hours) for super arms ``(R, N)``:
        the real values where no dropped own delay reaches, the SEM's solve elsewhere."""
        x = np.asarray(actions, dtype=bool)
        b, u = self.signals[t], self._residuals[t]
        y = np.broadcast_to(self.endogenous[t], b.shape).copy()
        dropped = ~x & (b != 0)
        affected = (dropped.astype(np.int64) @ self._reach.astype(np.int64)) > 0
        rows = np.flatnonzero(affected.any(axis=1))
        if rows.size:
            solved = self.sem.solve((x[rows] * b[rows] + u[rows])[None])[0]
            y[rows] = np.where(affected[rows], solved, y[rows])
        return y

    def play(self, actions: np.ndarray) -> SemiBanditFeedback:
        """Hour ``t``'s ``z = x * b_t`` and ``y_t(x)``."""
        z = self.signals[self.t] * actions
        return SemiBanditFeedback(z=z, y=self.counterfactual(self.t, actions))

    def _oracle(self) -> SeparableSemiBandit:
        if self.oracle is None:
            raise RuntimeError(
                "the replay's regret is unknown (each hour is seen once): pass an oracle (e.g. "
                "train_delay_simulator on the same fit) for the simulator's diagnostic regret"
            )
        return self.oracle

    def expected_payoff(self, actions: np.ndarray) -> np.ndarray:
        """The oracle's ``mu(x)`` (diagnostic) of each replicate's super arm."""
        oracle = self._oracle()
        x = check_super_arms(actions, self.n_arms, self.super_arm_size, len(actions))
        return oracle.expected_payoffs[0, oracle.index_of(x)]

    def pseudo_regret(self, actions: np.ndarray) -> np.ndarray:
        """``mu(x*) - mu(x)`` under the oracle (a diagnostic, not the replay's regret)."""
        return self._oracle().optimal_value[0] - self.expected_payoff(actions)

    def is_optimal(self, actions: np.ndarray) -> np.ndarray:
        return self.pseudo_regret(actions) <= self._oracle().optimal_tolerance


def train_delay_replay(
    data: TrainDelayData | None = None,
    path: str | Path | None = None,
    *,
    fit: TrainDelayFit | None = None,
    config: ReplayConfig | None = None,
    oracle: SeparableSemiBandit | None = None,
) -> TrainDelayReplay:
    """The replay of the available hours (module docstring) with ``config``
    (:class:`ReplayConfig`); ``fit``: a ready fit on ``data`` (else fitted with the default
    options); ``oracle``: e.g. ``train_delay_simulator(data, fit=fit, config=...)`` with the
    same super-arm size."""
    data = _resolve_data(data, path)
    if fit is None:
        fit = fit_train_delay_sem(data)
    return TrainDelayReplay(fit, data, config, oracle)
