"""The German train-delay simulator of SSEM-UCB (Sec. V-B, App. -G2): a separable SEM fitted
to the 80 available hours of :mod:`causalbandits.data.train_delays` (the fit, every choice
of it and its diagnostics: :mod:`causalbandits.envs.train_delay_fit`), run as a
:class:`~causalbandits.envs.separable_semibandit.SeparableSemiBandit` over the 20 stations of
Table II for the paper's ``T = 342`` rounds with super arms of at most ``s = 6`` stations
(60,460 super arms). Its real-data sibling, the replay of the available hours, is
:mod:`causalbandits.envs.train_delay_replay`.

The simulator is ``y = F(y) + x * b (+ e)`` with the fitted zero-true ``F``: the payoff is the
delay the selected stations' own delays cause in the network ("when only selected stations
contribute their inherent delay", Sec. V-B). The external delays ``c_i`` and the hours'
residuals are not part of it; the replay keeps them (:mod:`causalbandits.envs.
train_delay_replay`). The SEM is a :class:`~causalbandits.scm.separable.ChordSEM`, a
:class:`~causalbandits.scm.separable.SeparableSEM` with a faster cyclic solve (8 times on
this SEM; same fixed points).

Model noise is optional (:attr:`SimulatorConfig.model_noise`): ``"residual"`` adds Gaussian
noise with the pooled residual standard deviation of the fit (0.089, 7.3 min) to every station
(Thm IV.6); the default 0 is the paper's "feedback ... generated according to the SEM
computation structure".

Measured on the shared data (2 cores shared with other runs): the simulator at ``s = 6`` with
the default 256 common samples took 7.4 min under load (60,460 super arms, 29 us per super arm
and sample; the solve alone measured 16 us less loaded, the plain fixed point 127 us). Its
optimal super arm is EISN ERFU WEIM KASH JENP FULD (``mu = 15.1`` min; the next 15.06), the
same with 128 samples.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from causalbandits.data.train_delays import TrainDelayData
from causalbandits.envs.separable_semibandit import SeparableBanditConfig, SeparableSemiBandit
from causalbandits.envs.super_arms import check_sizes
from causalbandits.envs.train_delay_fit import TrainDelayFit, _resolve_data, fit_train_delay_sem
from causalbandits.random import RNGLike, SubStream, derive
from causalbandits.scm.separable import ChordSEM
from causalbandits.validation import count, horizon

#: The paper's horizon: the source's 342 hourly files.
HORIZON = 342
#: The paper's super-arm size.
MAX_ARMS = 6
#: Common Monte Carlo samples of ``mu(x)`` (the simulator's default).
MC_SAMPLES = 256


@dataclass(frozen=True, kw_only=True)
class SimulatorConfig:
    """The simulator's settings (module docstring), checked on construction (the super-arm size
    against the stations by :func:`train_delay_simulator`)."""

    #: ``T``: the paper's 342 hourly files (Sec. V-B).
    horizon: int = HORIZON
    #: ``s``: super arms of at most this many stations (the paper's 6).
    super_arm_size: int = MAX_ARMS
    #: Common Monte Carlo samples of ``mu(x)`` per copy.
    mc_samples: int = MC_SAMPLES
    #: The model noise's standard deviation (normalised; Thm IV.6) or ``"residual"``: the
    #: fit's pooled residual standard deviation.
    model_noise: float | str = 0.0
    #: Copies of the instance (the Monte Carlo table is computed once per copy).
    replicates: int = 1
    #: The fixed point's tolerance.
    tol: float = 1e-10

    def __post_init__(self) -> None:
        object.__setattr__(self, "horizon", horizon(self.horizon))
        object.__setattr__(self, "replicates", count("replicates", self.replicates))
        if isinstance(self.model_noise, str) and self.model_noise != "residual":
            raise ValueError(
                f"model_noise must be a number or 'residual', got {self.model_noise!r}"
            )


class TrainDelaySimulator(SeparableSemiBandit):
    """:class:`~causalbandits.envs.separable_semibandit.SeparableSemiBandit` on the fitted
    train-delay SEM (:func:`train_delay_simulator`), with the fit (``fit``), the stations'
    names and the build time (``build_seconds``); nothing else differs."""

    def __init__(self, fit: TrainDelayFit, *args: Any, **kwargs: Any) -> None:
        started = time.perf_counter()
        super().__init__(*args, **kwargs)
        self.fit = fit
        self.names, self.short_names = fit.names, fit.short_names
        #: ``[i, j]``: the fitted edge ``i -> j``.
        self.fitted_edges = fit.edges
        #: Seconds spent on the Monte Carlo table of ``mu`` (the fit's are ``fit.fit_seconds``).
        self.build_seconds = time.perf_counter() - started


def train_delay_simulator(
    data: TrainDelayData | None = None,
    path: str | Path | None = None,
    *,
    fit: TrainDelayFit | None = None,
    config: SimulatorConfig | None = None,
    seed: RNGLike = 0,
) -> TrainDelaySimulator:
    """The calibrated train-delay simulator (module docstring) with ``config``
    (:class:`SimulatorConfig`, default its defaults).

    - ``data`` (or ``path`` for :func:`~causalbandits.data.train_delays.load_train_delays`):
      the hours in minutes, fitted with the default options; not read when ``fit`` is given;
    - ``fit``: a ready :func:`~causalbandits.envs.train_delay_fit.fit_train_delay_sem` result;
    - ``seed``: the ``mc_samples`` common Monte Carlo samples of ``mu(x)`` come from its stream
      :attr:`~causalbandits.random.SubStream.MONTE_CARLO` (the fit is deterministic).
    """
    config = SimulatorConfig() if config is None else config
    if fit is None:
        fit = fit_train_delay_sem(_resolve_data(data, path))
    check_sizes(fit.n_stations, config.super_arm_size)
    noise = fit.pooled_residual_sd if config.model_noise == "residual" else config.model_noise
    weights = np.repeat(fit.weights[None], config.replicates, axis=0)
    sem = ChordSEM(weights, fit.dictionary, tol=config.tol)
    root = (
        seed
        if isinstance(seed, np.random.SeedSequence)
        else np.random.SeedSequence(
            seed if not isinstance(seed, np.random.Generator) else seed.integers(2**63)
        )
    )
    mc_seeds = derive([root], SubStream.MONTE_CARLO) * config.replicates
    bandit = SeparableBanditConfig(
        super_arm_size=int(config.super_arm_size),
        horizon=config.horizon,
        model_noise=float(noise),
        mc_samples=config.mc_samples,
    )
    return TrainDelaySimulator(fit, sem, fit.arms(), bandit, mc_seeds)
