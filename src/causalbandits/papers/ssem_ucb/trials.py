"""SSEM-UCB (Bauschmann & Maghsudi, arXiv 2606.14650): the linear sanity check and the three
synthetic trials (Sec. V-A, App. -G1; Figs. 2, 4 and 5).

Every replicate draws its own instance of the trial's design (:mod:`~causalbandits.envs.
separable_instances`); all algorithms see the same instances and the same base-arm signals
(common random numbers: no grid axis changes the seeds). The grid is
``(algorithm[, radius scale][, bonus scale])`` times chunks of replicates; each chunk runs the
one round loop over its replicates at once and records the regret, its time average ``R(t)/t``
(the paper's metric), the optimal share, the super arm played at each recorded round
(``regret_now``, ``optimal_now``) and the loop's wall time (``elapsed``).

The endogenous noise is on the observations (the designs' ``noise_placement="observation"``,
Sec. V-A), so the expected payoffs are the noise-free SEM's; ``design={"noise_placement":
"model"}`` puts it inside the SEM instead. The configuration (and so the fingerprint) records
the resolved instance design, defaults included (:meth:`SyntheticTrial.config`).

A label ``"SSEM-UCB-JO q=<q> fd=<h>"`` (or ``SSEM-UCB-Norm``) computes the Taylor
coefficients by central differences of step ``h`` instead of exact jets (the paper's numerical
derivatives, App. -G1; :func:`~causalbandits.estimators.finite_differences.
finite_difference_jets`); the ``ssem-ucb-trial-1-fd`` preset compares the steps of
:data:`~causalbandits.papers.ssem_ucb.paper.FD_STEPS` with the exact jets on trial 1.

``radius_scale`` and ``bonus_scale`` multiply the confidence radius ``C_t`` and the external
UCB of the SSEM-UCB variants (the paper: the bonus "can be fine-tuned by multiplication with a
hyperparameter"; "scaling down C_t ... often led to faster convergence"); the defaults are the
values the tuning grid chose (:data:`~causalbandits.papers.ssem_ucb.paper.RADIUS_SCALE`), and
``radius_grid`` / ``bonus_grid`` sweep them (the ``ssem-ucb-tuning`` preset).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from causalbandits.envs.separable_instances import TrialDesign, trial_environment
from causalbandits.envs.separable_semibandit import SeparableSemiBandit
from causalbandits.experiments.bandit_grid import BanditGrid, BanditRun, regular_rounds
from causalbandits.experiments.metrics import metric_columns
from causalbandits.experiments.recorders import (
    CurrentAction,
    Elapsed,
    Recorder,
    default_recorders,
)
from causalbandits.experiments.spec import plain
from causalbandits.papers.ssem_ucb.paper import (
    ALGORITHMS,
    BONUS_GRID,
    BONUS_SCALE,
    DEGREES,
    DESIGNS,
    EVALUATION_SEED,
    FD_FAMILIES,
    FD_STEPS,
    HORIZON,
    MC_SAMPLES,
    METS_RANGES,
    PAPER_RUNS,
    PAPER_SUPER_ARM_SIZE,
    RADIUS_GRID,
    RADIUS_SCALE,
    TUNING_SEED,
    algorithm_family,
    finite_difference_step,
    jo,
    jo_fd,
    policy_entry,
    uses_scales,
)
from causalbandits.papers.ssem_ucb.report import build_report, plot_all
from causalbandits.policies import POLICIES
from causalbandits.random import Stream
from causalbandits.validation import count, each, non_negative, positive

KEY_COLUMNS = (
    "experiment",
    "setting",
    "scale_point",
    "trial",
    "algorithm",
    "radius_scale",
    "bonus_scale",
    "replicate",
    "t",
)


@dataclass(frozen=True, kw_only=True)
class SyntheticTrial(BanditGrid):
    """One synthetic trial (or the linear sanity check) of the SSEM-UCB paper.

    Parameters
    ----------
    trial: ``"linear"``, ``"trial-1"``, ``"trial-2"`` or ``"trial-3"`` (:data:`DESIGNS`).
    design: overrides of the trial's :class:`~causalbandits.envs.separable_instances.
        TrialDesign` fields (sensitivities, e.g. ``{"coefficient_range": (0.1, 0.2)}``).
    algorithms: labels: ``"SSEM-UCB-JO q=<q>"``, ``"SSEM-UCB-Norm q=<q>"``,
        ``"SEM-UCB (linear dictionary)"``, ``"METS"``, ``"SGB"``, ``"IGP-UCB"``, ``"Random"``,
        ``"Taylor oracle q=<q>"``; the first two with ``" fd=<h>"`` appended use
        finite-difference derivatives of step ``h``.
    replicates: instances (and runs) per algorithm.
    horizon, super_arm_size: ``T`` and ``s``.
    radius_scale, bonus_scale: multipliers of ``C_t`` and of the external UCB (SSEM-UCB
        variants only); radius_grid, bonus_grid: sweep them instead (tuning runs).
    mc_samples: common Monte Carlo samples of ``mu(x)`` per instance.
    seed, chunk_size, checkpoint_every: root seed, replicates per task, recorded rounds.
    name, description: catalogue name and one line.
    """

    trial: str = "trial-1"
    design: dict[str, Any] = field(default_factory=dict)
    algorithms: tuple[str, ...] = ALGORITHMS["trial-1"]
    replicates: int = PAPER_RUNS["trial-1"]
    horizon: int = HORIZON
    super_arm_size: int = PAPER_SUPER_ARM_SIZE
    radius_scale: float = RADIUS_SCALE
    bonus_scale: float = BONUS_SCALE
    radius_grid: tuple[float, ...] = ()
    bonus_grid: tuple[float, ...] = ()
    mc_samples: int = MC_SAMPLES["trial-1"]
    seed: int = EVALUATION_SEED
    chunk_size: int = 5
    checkpoint_every: int = 20
    name: str = "ssem-ucb-trial-1"
    description: str = ""

    #: Common random numbers: every grid point sees the same instances and signals.
    SEED_AXES: ClassVar[tuple[str, ...]] = ()
    FIGURES = staticmethod(plot_all)
    REPORT = staticmethod(build_report)

    def check(self) -> None:
        for name in ("radius_grid", "bonus_grid"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        if self.trial not in DESIGNS:
            raise ValueError(f"trial must be one of {sorted(DESIGNS)}, got {self.trial!r}")
        unknown = set(self.design) - {f.name for f in fields(TrialDesign)}
        if unknown:
            raise ValueError(f"unknown design fields {sorted(unknown)}")
        self.instance_design()  # validates the overridden values
        self.distinct("algorithms")
        for label in self.algorithms:
            family = algorithm_family(label)[0]
            policy_entry(label, (), {})  # unknown labels raise here
            if finite_difference_step(label) is not None and family not in FD_FAMILIES:
                raise ValueError(f"{label!r}: only {FD_FAMILIES} take a finite-difference step")
        for name in ("super_arm_size", "checkpoint_every"):
            count(name, getattr(self, name))
        count("horizon", self.horizon, minimum=2)
        count("mc_samples", self.mc_samples, minimum=2)
        positive("radius_scale", self.radius_scale)
        each(positive, "radius_grid", self.radius_grid)
        non_negative("bonus_scale", self.bonus_scale)
        each(non_negative, "bonus_grid", self.bonus_grid)

    def config(self) -> dict[str, Any]:
        """The fields plus the resolved :meth:`instance_design` (defaults included, e.g. its
        ``noise_placement``), so that a changed default changes the fingerprint."""
        return {**super().config(), "instance_design": plain(asdict(self.instance_design()))}

    def instance_design(self) -> TrialDesign:
        """The trial's instance design with :attr:`design`'s overrides."""
        overrides = {
            name: tuple(value) if isinstance(value, list) else value
            for name, value in self.design.items()
        }
        return replace(DESIGNS[self.trial], **overrides)

    # ---------------------------------------------------------------- the grid

    def axes(self) -> dict[str, Sequence[Any]]:
        axes: dict[str, Sequence[Any]] = {"algorithm": self.algorithms}
        if self.radius_grid:
            axes["radius_scale"] = self.radius_grid
        if self.bonus_grid:
            axes["bonus_scale"] = self.bonus_grid
        return axes

    def scale_point(self, setting: int) -> int:
        """The index of grid point ``setting`` on the scale axes alone (the ``scale_point``
        column), so that every algorithm of one (radius, bonus) point shares a figure panel."""
        sizes = [len(values) for values in self.axes().values()][1:]
        rest = self.point_index(setting)[1:]
        return int(np.ravel_multi_index(rest, sizes)) if sizes else 0

    def task_cost(self, point: Mapping[str, Any]) -> float:
        """Higher Taylor degrees first, then the other learners."""
        family, degree = algorithm_family(point["algorithm"])
        return float(degree or 0) + (0.5 if family in ("METS", "IGP-UCB") else 0.0)

    def checkpoints(self) -> np.ndarray:
        return regular_rounds(self.horizon, self.checkpoint_every, [1])

    # ---------------------------------------------------------------- running

    def environment(self, replicates: Sequence[int], setting: int) -> SeparableSemiBandit:
        """The trial's instances of ``replicates``, reset with their signal streams."""
        return self.reset_environment(BanditRun({}, setting, replicates))

    def policy(self, label: str, env: SeparableSemiBandit, scales: dict[str, float]) -> Any:
        """A fresh policy for ``env`` (not yet reset): ``label``'s registry entry
        (:func:`~causalbandits.papers.ssem_ucb.paper.policy_entry`) with the trial's
        dictionary, signal width and METS ranges."""
        design = self.instance_design()
        width = None if design.arm_law != "normal" else 1.0
        means, sds = METS_RANGES[self.trial]
        fixed = {"METS": {"mean_range": means, "sd_range": sds}}
        name, options = policy_entry(
            label, design.families, {"signal_width": width, **scales}, fixed
        )
        return POLICIES.build(name, env, **options)

    def scales(self, point: Mapping[str, Any]) -> dict[str, float]:
        """The radius and bonus scales at ``point`` (its grid values, else the fields)."""
        return {
            "radius_scale": float(point.get("radius_scale", self.radius_scale)),
            "bonus_scale": float(point.get("bonus_scale", self.bonus_scale)),
        }

    # ---------------------------------------------------------------- the hooks

    def make_environment(self, run: BanditRun) -> SeparableSemiBandit:
        return trial_environment(
            self.instance_design(),
            self.seeds(run.setting, run.replicates, Stream.INSTANCE),
            super_arm_size=self.super_arm_size,
            horizon=self.horizon,
            mc_samples=self.mc_samples,
        )

    def make_policy(self, run: BanditRun) -> Any:
        return self.policy(run.point["algorithm"], run.env, self.scales(run.point))

    def recorded_rounds(self, run: BanditRun) -> np.ndarray:
        return self.checkpoints()

    def make_recorders(self, run: BanditRun) -> list[Recorder]:
        return [*default_recorders(), CurrentAction(), Elapsed()]

    def columns(self, run: BanditRun) -> dict[str, Any]:
        scales = self.scales(run.point) if uses_scales(run.point["algorithm"]) else {}
        return {
            **super().columns(run),
            "scale_point": self.scale_point(run.setting),
            "trial": self.trial,
            "radius_scale": scales.get("radius_scale", np.nan),
            "bonus_scale": scales.get("bonus_scale", np.nan),
        }

    def finish(self, frame: pd.DataFrame, point: Mapping[str, Any]) -> pd.DataFrame:
        frame["avg_regret"] = frame["cum_regret"] / frame["t"]
        return frame[[*KEY_COLUMNS, *metric_columns(frame)]]


# -------------------------------------------------------------------- presets

QUICK_HORIZON = 200
QUICK_REPLICATES = 2


def tuning(quick: bool = False) -> SyntheticTrial:
    """The scale tuning of decisions: ssem-ucb 12: SSEM-UCB-JO q = 1 and 4 on 4 trial-1
    instances of their own seed, every (radius scale, bonus scale) of the grid (quick: T = 200,
    2 instances, two scales each)."""
    return SyntheticTrial(
        trial="trial-1",
        algorithms=(jo(1), jo(4)),
        replicates=QUICK_REPLICATES if quick else 4,
        horizon=QUICK_HORIZON if quick else HORIZON,
        radius_grid=RADIUS_GRID[::2] if quick else RADIUS_GRID,
        bonus_grid=BONUS_GRID[:2] if quick else BONUS_GRID,
        mc_samples=2000 if quick else MC_SAMPLES["trial-1"],
        seed=TUNING_SEED,
        chunk_size=4,
        name="ssem-ucb-tuning" + ("-quick" if quick else ""),
        description="SSEM-UCB paper: tuning of the radius and bonus scales on trial 1 "
        "(instances disjoint from the reported ones)",
    )


def preset(trial: str, quick: bool = False, noise_placement: str | None = None) -> SyntheticTrial:
    """The paper's setup of ``trial`` (quick: ``T = 200``, 2 replicates, 2,000 MC samples);
    ``noise_placement`` overrides the design's (e.g. ``"model"``: the run named
    ``ssem-ucb-<trial>-model-noise``)."""
    name = f"ssem-ucb-{trial}"
    design: dict[str, Any] = {}
    if noise_placement is not None:
        design = {"noise_placement": noise_placement}
        name += f"-{noise_placement}-noise"
    title = {
        "linear": "linear sanity check: SSEM-UCB-JO q = 1..3 on linear SEMs",
        "trial-1": "trial 1 (Fig. 2): sin and linear edges, normal arms, N = 10, s = 6",
        "trial-2": "trial 2 (Fig. 4): linear, quadratic and tanh edges, with SSEM-UCB-Norm",
        "trial-3": "trial 3 (Fig. 5): arcsine arms, N = 15 (9,949 super arms)",
    }[trial]
    full = SyntheticTrial(
        trial=trial,
        design=design,
        algorithms=ALGORITHMS[trial],
        replicates=PAPER_RUNS[trial],
        mc_samples=MC_SAMPLES[trial],
        name=name,
        description=f"SSEM-UCB paper, {title}",
    )
    return quick_version(full) if quick else full


def quick_version(full: SyntheticTrial) -> SyntheticTrial:
    """``full`` with ``T = 200``, 2 replicates and 2,000 MC samples, named ``<name>-quick``."""
    return dataclasses.replace(
        full,
        replicates=QUICK_REPLICATES,
        horizon=QUICK_HORIZON,
        mc_samples=2000,
        checkpoint_every=10,
        name=f"{full.name}-quick",
        description=f"{full.description}; quick: T = 200, 2 replicates",
    )


#: How :func:`trial_variant` names each trial in its description.
VARIANT_SUBJECTS = {
    "linear": "linear sanity check",
    "trial-1": "trial 1",
    "trial-2": "trial 2",
    "trial-3": "trial 3",
}


def trial_variant(
    trial: str, name: str, title: str, quick: bool = False, **changes: Any
) -> SyntheticTrial:
    """``trial``'s preset (``ssem-ucb-<trial>``: same seed, so the same instances and signals)
    with ``changes`` to its fields, named ``ssem-ucb-<trial>-<name>`` and described as
    ``"SSEM-UCB paper, <trial> <title>"`` (quick: ``T = 200``, 2 replicates, 2,000 MC
    samples)."""
    description = f"SSEM-UCB paper, {VARIANT_SUBJECTS[trial]} {title}"
    full = preset(trial).variant(name, description, **changes)
    return quick_version(full) if quick else full


def linear_long_preset(quick: bool = False) -> SyntheticTrial:
    """The linear sanity check at ``T = 2000`` (same instances and signals as
    ``ssem-ucb-linear``): does R(t)/t keep falling, and is the final super arm then optimal?"""
    return trial_variant("linear", "long", "at T = 2000", quick, horizon=2000)


def finite_difference_preset(quick: bool = False) -> SyntheticTrial:
    """Trial 1 with finite-difference derivatives (App. -G1): SSEM-UCB-JO q = 1 and q = 4 with
    exact jets and q = 4 with central differences of every step of :data:`~causalbandits.
    papers.ssem_ucb.paper.FD_STEPS` (does q = 4 beat q = 1 on the paper's route?)."""
    steps = ", ".join(f"{step:g}" for step in FD_STEPS)
    return trial_variant(
        "trial-1",
        "fd",
        f"with finite-difference derivatives (q = 4, steps {steps}) against exact jets",
        quick,
        algorithms=(jo(1), jo(4), *(jo_fd(4, step) for step in FD_STEPS)),
    )


def paper_constants_preset(quick: bool = False) -> SyntheticTrial:
    """Trial 1 with the paper's printed constants: SSEM-UCB-JO q = 1..4 with radius and bonus
    scales 1 (no tuning; the scales change no other algorithm)."""
    return trial_variant(
        "trial-1",
        "paper-constants",
        "with the paper's printed constants (SSEM-UCB-JO, radius and bonus scales 1, no tuning)",
        quick,
        algorithms=tuple(jo(q) for q in DEGREES),
        radius_scale=1.0,
        bonus_scale=1.0,
    )
