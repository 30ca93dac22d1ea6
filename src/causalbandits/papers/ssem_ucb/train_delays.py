"""SSEM-UCB on the German train delays (Sec. V-B, App. -G2; Figs. 3 and 6).

Two environments on one SEM fitted to the 80 available hours
(:func:`~causalbandits.envs.train_delay_fit.fit_train_delay_sem`): the calibrated simulator
(``T = 342``, whose optimum is known, so the regret is measured) and the replay of the real
hours (``T = 79``, :mod:`~causalbandits.envs.train_delay_replay`; its regret is the
simulator's diagnostic). The learners: SSEM-UCB-JO with the paper's ``s = 6``, ``q = 3`` and
the alternative external UCB of App. -G2 (``bonus_form="sum"``) on a cyclic ``F_hat`` (jets
solved degree by degree, :func:`~causalbandits.estimators.jets.reward_jets`), with the
fitted SEM's dictionary (linear, cubic and the fitted shifted tanh); SEM-UCB (``q = 1``,
linear dictionary) and random super arms as baselines, which the paper does not report.
The radius and bonus scales are the values tuned on trial 1 (decisions: ssem-ucb 12). Both
learners shrink each fit of ``F_hat`` onto a contraction of rate 0.9 (Prop. IV.4's assumption;
decisions: ssem-ucb 16): unshrunk, SSEM-UCB's fits of the real hours are no contraction in
most rounds of the replay, and it then plays at random.

Every round is recorded: the regret, the super arm played (``super_arm``: bit ``i`` is
station ``i``; ``optimal_super_arm``: the simulator's), the error of rebuilding ``y`` from
``z`` through the learner's fit (Fig. 3): prequential (the round through the fit that chose
it), in sample and on fixed held-out rounds (the simulator: 200 rounds of random super arms;
the replay: the real hours as they were), and the wall time. The learners' lasso penalty and
edge threshold are the synthetic trials' scaled to the normalised delays
(:data:`LASSO_PENALTY`, :data:`EDGE_THRESHOLD`). The replicates share the fit and the Monte
Carlo table and differ in the base-arm draws and the policies' tie-breaking (the paper
reports one run).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from causalbandits.data.train_delays import (
    FILES,
    TrainDelayData,
    load_train_delays,
    resolve_data_dir,
)
from causalbandits.envs.train_delay_fit import TrainDelayFit, fit_train_delay_sem
from causalbandits.envs.train_delay_replay import (
    ReplayConfig,
    TrainDelayReplay,
    train_delay_replay,
)
from causalbandits.envs.train_delays import (
    HORIZON,
    MAX_ARMS,
    MC_SAMPLES,
    SimulatorConfig,
    TrainDelaySimulator,
    train_delay_simulator,
)
from causalbandits.experiments.bandit_grid import BanditGrid, BanditRun
from causalbandits.experiments.metrics import metric_columns
from causalbandits.experiments.recorders import (
    ActionLog,
    CurrentAction,
    Elapsed,
    ReconstructionError,
    Recorder,
    default_recorders,
)
from causalbandits.papers.ssem_ucb.paper import (
    BONUS_SCALE,
    EVALUATION_SEED,
    RADIUS_SCALE,
    SEM_UCB,
    algorithm_family,
    finite_difference_step,
    jo,
    policy_entry,
)
from causalbandits.papers.ssem_ucb.train_delay_report import build_report, plot_all
from causalbandits.policies import POLICIES
from causalbandits.policies.ssem_ucb import SSEMOptions
from causalbandits.validation import count

ENVIRONMENTS = ("simulator", "replay")
#: The paper's Taylor degree on this data.
DEGREE = 3
ALGORITHMS = (jo(DEGREE), SEM_UCB, "Random")
#: The label families this run takes (no finite differences).
LEARNERS = ("SSEM-UCB-JO", SEM_UCB, "Random")
#: The learners' fits are shrunk onto contractions of this rate (decisions: ssem-ucb 16).
MAX_CONTRACTION = 0.9
#: The learners' lasso penalty and edge threshold: the synthetic trials' 1e-3 and 0.05 carried
#: over to the normalised delays, whose root mean square is about 0.03 instead of about 1 (the
#: penalty scales with the signal's square, the threshold, a root mean square, with the
#: signal); the trials' values themselves keep no edge here (decisions: ssem-ucb 16).
LASSO_PENALTY = 1e-6
EDGE_THRESHOLD = 1.5e-3
#: The run's fields that are the learners' knobs (:class:`~causalbandits.policies.ssem_ucb.
#: SSEMOptions` of the same names).
LEARNER_FIELDS = (
    "radius_scale",
    "bonus_scale",
    "bonus_form",
    "max_contraction",
    "lam",
    "target_density",
    "edge_threshold",
)


@cache
def loaded(folder: str) -> TrainDelayData:
    """The data of ``folder``, read and checked once per process."""
    return load_train_delays(folder)


@cache
def fitted(folder: str) -> tuple[TrainDelayData, TrainDelayFit]:
    """The data of ``folder`` and the SEM fitted to them (once per process)."""
    data = loaded(folder)
    return data, fit_train_delay_sem(data)


@cache
def simulator(folder: str, config: SimulatorConfig, seed: int) -> TrainDelaySimulator:
    """The calibrated simulator on ``folder``'s fit (its Monte Carlo table built once per
    process, configuration and seed)."""
    _, fit = fitted(folder)
    return train_delay_simulator(fit=fit, config=config, seed=seed)


@dataclass(frozen=True, kw_only=True)
class TrainDelayRun(BanditGrid):
    """SSEM-UCB and the baselines on the simulator or the replay (module docstring).

    Parameters
    ----------
    environment: ``"simulator"`` or ``"replay"``.
    algorithms: ``"SSEM-UCB-JO q=<q>"``, ``"SEM-UCB (linear dictionary)"``, ``"Random"``.
    replicates: runs per algorithm (the paper: one).
    horizon: ``T`` of the simulator (the replay serves every present hour once).
    super_arm_size: ``s``.
    radius_scale, bonus_scale, bonus_form: SSEM-UCB's confidence radius and external UCB.
    lam, target_density, edge_threshold: the learners' dictionary-lasso penalty (fixed, or
        tuned at each fit towards ``target_density`` of the possible edges) and edge
        threshold, scaled to the normalised delays (decisions: ssem-ucb 16).
    max_contraction: the learners shrink a fit of ``F_hat`` onto a contraction of this rate
        (:func:`~causalbandits.policies.ssem_ucb.contracted`; ``None``: the fits as they are).
    mc_samples: the simulator's common Monte Carlo samples of ``mu(x)``.
    data_path: the data folder (:func:`~causalbandits.data.train_delays.resolve_data_dir`);
        not fingerprinted, the files' SHA-256 are.
    """

    environment: str = "simulator"
    algorithms: tuple[str, ...] = ALGORITHMS
    replicates: int = 1
    horizon: int = HORIZON
    super_arm_size: int = MAX_ARMS
    radius_scale: float = RADIUS_SCALE
    bonus_scale: float = BONUS_SCALE
    bonus_form: str = "sum"
    max_contraction: float | None = MAX_CONTRACTION
    lam: float = LASSO_PENALTY
    target_density: float | None = None
    edge_threshold: float = EDGE_THRESHOLD
    mc_samples: int = MC_SAMPLES
    seed: int = EVALUATION_SEED
    chunk_size: int = 1
    name: str = "ssem-ucb-train-delays"
    description: str = "SSEM-UCB paper Sec. V-B (Figs. 3, 6): German train delays, simulator"

    DATA = staticmethod(resolve_data_dir)
    #: Common random numbers: every algorithm meets the same signals.
    SEED_AXES: ClassVar[tuple[str, ...]] = ()

    def check(self) -> None:
        if self.environment not in ENVIRONMENTS:
            raise ValueError(f"environment must be one of {ENVIRONMENTS}, got {self.environment!r}")
        self.distinct("algorithms")
        for label in self.algorithms:
            self.degree(label)  # unknown labels raise here
        for name in ("horizon", "super_arm_size", "mc_samples"):
            count(name, getattr(self, name))
        SSEMOptions(**self.learner())  # checks the learners' knobs

    @staticmethod
    def degree(label: str) -> int:
        """The Taylor degree of an algorithm label (1 for SEM-UCB and Random); raises for a
        label this run does not take (another family, finite differences)."""
        family, degree = algorithm_family(label)
        exact = finite_difference_step(label) is None
        if family in LEARNERS and exact and (degree is None or degree >= 1):
            return degree or 1
        raise ValueError(f"unknown algorithm {label!r}; use {ALGORITHMS} or another degree")

    # ---------------------------------------------------------------- the grid

    def axes(self) -> dict[str, Sequence[Any]]:
        return {"algorithm": self.algorithms}

    def task_cost(self, point: Mapping[str, Any]) -> float:
        return float(self.degree(point["algorithm"]))

    def folder(self) -> str:
        """The data folder, absolute."""
        return str(self.data_location())

    def load_data(self) -> None:
        """Read and check the data before any output exists (bad data leave nothing)."""
        loaded(self.folder())

    def data_files(self) -> dict[str, Path]:
        """The four data files (their SHA-256 join the fingerprint)."""
        folder = Path(self.folder())
        return {name: folder / name for name in FILES}

    # ---------------------------------------------------------------- running

    def oracle(self, replicates: int = 1) -> TrainDelaySimulator:
        """The simulator (the replay's diagnostic oracle with ``replicates = 1``)."""
        config = SimulatorConfig(
            horizon=self.horizon,
            super_arm_size=self.super_arm_size,
            mc_samples=self.mc_samples,
            replicates=replicates,
        )
        return simulator(self.folder(), config, self.seed)

    def build_environment(self, count: int) -> TrainDelaySimulator | TrainDelayReplay:
        """The environment of ``count`` replicates (not yet reset)."""
        if self.environment == "simulator":
            return self.oracle(count)
        data, fit = fitted(self.folder())
        config = ReplayConfig(super_arm_size=self.super_arm_size)
        return train_delay_replay(data, fit=fit, config=config, oracle=self.oracle())

    def policy(self, label: str, env: Any) -> Any:
        """A fresh policy (not yet reset): ``label``'s registry entry
        (:func:`~causalbandits.papers.ssem_ucb.paper.policy_entry`) with the fitted SEM's
        dictionary and this run's learner options."""
        self.degree(label)
        name, options = policy_entry(label, fitted(self.folder())[1].dictionary, self.learner())
        return POLICIES.build(name, env, **options)

    def learner(self) -> dict[str, Any]:
        """The SSEM-UCB knobs of this run (:class:`~causalbandits.policies.ssem_ucb.
        SSEMOptions` by name): its :data:`LEARNER_FIELDS`, signals in an interval of width 1
        and a cyclic ``F_hat``."""
        own = {name: getattr(self, name) for name in LEARNER_FIELDS}
        return {**own, "signal_width": 1.0, "upper_triangular": False}

    # ---------------------------------------------------------------- the hooks

    def make_environment(self, run: BanditRun) -> TrainDelaySimulator | TrainDelayReplay:
        return self.build_environment(len(run.replicates))

    def make_policy(self, run: BanditRun) -> Any:
        return self.policy(run.point["algorithm"], run.env)

    def recorded_rounds(self, run: BanditRun) -> np.ndarray:
        return np.arange(1, run.env.horizon + 1)  # every round

    def make_recorders(self, run: BanditRun) -> list[Recorder]:
        extra = [CurrentAction(), Elapsed(), ReconstructionError(), ActionLog()]
        return [*default_recorders(), *extra]

    def columns(self, run: BanditRun) -> dict[str, Any]:
        return {**super().columns(run), "environment": self.environment}

    def table(self, run: BanditRun) -> pd.DataFrame:
        """The rows, with the super arm played and the simulator's optimum as bit codes."""
        frame = super().table(run)
        bits = 1 << np.arange(run.env.n_arms, dtype=np.int64)
        codes = run.recorders[-1].stacked().astype(np.int64) @ bits
        frame["super_arm"] = codes.T.ravel()  # (T, R) -> replicate-major, as the frame
        frame["optimal_super_arm"] = self.oracle().optimal_action[0].astype(np.int64) @ bits
        frame["avg_regret"] = frame["cum_regret"] / frame["t"]
        keys = ["experiment", "setting", "environment", "algorithm", "replicate", "t"]
        codes_columns = ["super_arm", "optimal_super_arm"]
        return frame[[*keys, *metric_columns(frame), *codes_columns]]

    # ---------------------------------------------------------------- outputs

    def plot(self, df: pd.DataFrame, out_dir: Path) -> list[Path]:
        return plot_all(df, Path(out_dir), fitted(self.folder())[0])

    def report(self, df: pd.DataFrame) -> str:
        return build_report(df, self, fitted(self.folder())[0])


# -------------------------------------------------------------------- presets

#: Quick variants: s = 2 (211 super arms), 40 rounds, 32 Monte Carlo samples.
QUICK = {"super_arm_size": 2, "horizon": 40, "mc_samples": 32}


def preset(environment: str, quick: bool = False) -> TrainDelayRun:
    """The paper's train-delay run on the ``"simulator"`` or the ``"replay"``."""
    suffix = "" if environment == "simulator" else "-replay"
    what = "calibrated simulator, T = 342" if environment == "simulator" else "replay, T = 79"
    fields: dict[str, Any] = {
        "environment": environment,
        "name": f"ssem-ucb-train-delays{suffix}",
        "description": f"SSEM-UCB paper Sec. V-B (Figs. 3, 6): German train delays, {what}",
    }
    if quick:
        fields = {**fields, **QUICK, "name": fields["name"] + "-quick"}
    return TrainDelayRun(**fields)
