"""SSEM-UCB (Bauschmann & Maghsudi, arXiv 2606.14650): the linear sanity check and the three
synthetic trials (Sec. V-A, App. -G1; Figs. 2, 4 and 5).

Every replicate draws its own instance of the trial's design (:mod:`~causalbandits.envs.
separable_instances`); all algorithms see the same instances and the same base-arm signals
(common random numbers: no grid axis changes the seeds). The grid is (algorithm[, radius
scale][, bonus scale]) times chunks of replicates; each chunk runs the one round loop over its
replicates at once and records the regret, its time average ``R(t)/t`` (the paper's metric),
the optimal share, the super arm played at each recorded round (``regret_now``,
``optimal_now``) and the loop's wall time (``elapsed``).

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
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from causalbandits.envs.separable_instances import TrialDesign, trial_environment
from causalbandits.envs.separable_semibandit import SeparableSemiBandit
from causalbandits.experiments.grid import TaskGrid
from causalbandits.experiments.metrics import METRICS
from causalbandits.experiments.recorders import CurrentAction, Elapsed, default_recorders
from causalbandits.experiments.simulate import results_frame, simulate
from causalbandits.experiments.spec import plain
from causalbandits.papers.ssem_ucb.paper import (
    ALGORITHMS,
    BONUS_GRID,
    BONUS_SCALE,
    DEGREES,
    DESIGNS,
    EVALUATION_SEED,
    FD_STEPS,
    HORIZON,
    MC_SAMPLES,
    METS_RANGES,
    PAPER_RUNS,
    PAPER_SUPER_ARM_SIZE,
    RADIUS_GRID,
    RADIUS_SCALE,
    TUNING_SEED,
    jo,
    jo_fd,
)
from causalbandits.papers.ssem_ucb.report import build_report, plot_all
from causalbandits.policies.igp_ucb import IGPUCB
from causalbandits.policies.mets import METS
from causalbandits.policies.semibandit import RandomSuperArm
from causalbandits.policies.sgb import SGB
from causalbandits.policies.ssem_ucb import SSEMUCBJO
from causalbandits.policies.ssem_ucb_norm import SSEMUCBNorm
from causalbandits.policies.taylor_oracle import TaylorOracle
from causalbandits.random import Stream, policy_stream
from causalbandits.validation import count, each, non_negative, positive

_DEGREE = re.compile(r"^(SSEM-UCB-JO|SSEM-UCB-Norm|Taylor oracle) q=(\d+)(?: fd=(\S+))?$")
SSEM_FAMILIES = ("SSEM-UCB-JO", "SSEM-UCB-Norm", "SEM-UCB")
#: The families whose label may name a finite-difference step (``" fd=<h>"``).
FD_FAMILIES = ("SSEM-UCB-JO", "SSEM-UCB-Norm")
KEY_COLUMNS = (
    "experiment",
    "setting",
    "trial",
    "algorithm",
    "radius_scale",
    "bonus_scale",
    "replicate",
    "t",
)


def algorithm_family(label: str) -> tuple[str, int | None]:
    """``("SSEM-UCB-JO", 4)`` for ``"SSEM-UCB-JO q=4"``; ``(label, None)`` for the others."""
    match = _DEGREE.match(label)
    return (match.group(1), int(match.group(2))) if match else (label, None)


def finite_difference_step(label: str) -> float | None:
    """The step ``h`` of ``"SSEM-UCB-JO q=4 fd=0.001"`` (0.001); ``None`` for exact
    derivatives (no ``fd=``). Raises for a step that is no positive number."""
    match = _DEGREE.match(label)
    if match is None or match.group(3) is None:
        return None
    try:
        step = float(match.group(3))
    except ValueError:
        raise ValueError(f"bad finite-difference step in {label!r}") from None
    if not step > 0 or not np.isfinite(step):
        raise ValueError(f"the finite-difference step must be > 0, got {label!r}")
    return step


def derivative_options(label: str) -> dict[str, Any]:
    """The policy options of ``label``'s derivatives: ``{}`` (exact jets) or
    ``{"derivatives": "finite-difference", "fd_step": h}``."""
    step = finite_difference_step(label)
    return {} if step is None else {"derivatives": "finite-difference", "fd_step": step}


def uses_scales(label: str) -> bool:
    """Whether the radius and bonus scales apply to ``label`` (the SSEM-UCB variants)."""
    return algorithm_family(label)[0] in SSEM_FAMILIES


@dataclass(frozen=True)
class SyntheticTrial(TaskGrid):
    """One synthetic trial (or the linear sanity check) of the SSEM-UCB paper.

    Parameters
    ----------
    trial: ``"linear"``, ``"trial-1"``, ``"trial-2"`` or ``"trial-3"`` (:data:`DESIGNS`).
    design: overrides of the trial's :class:`~causalbandits.envs.separable_instances.
        TrialDesign` fields (sensitivities, e.g. ``{"coefficient_range": (0.1, 0.2)}``).
    algorithms: labels: ``"SSEM-UCB-JO q=<q>"``, ``"SSEM-UCB-Norm q=<q>"``, ``"SEM-UCB"``,
        ``"METS"``, ``"SGB"``, ``"IGP-UCB"``, ``"Random"``, ``"Taylor oracle q=<q>"``; the
        first two with ``" fd=<h>"`` appended use finite-difference derivatives of step ``h``.
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

    def __post_init__(self) -> None:
        for name in ("algorithms", "radius_grid", "bonus_grid"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        if self.trial not in DESIGNS:
            raise ValueError(f"trial must be one of {sorted(DESIGNS)}, got {self.trial!r}")
        unknown = set(self.design) - {f.name for f in fields(TrialDesign)}
        if unknown:
            raise ValueError(f"unknown design fields {sorted(unknown)}")
        self.instance_design()  # validates the overridden values
        if not self.algorithms or len(set(self.algorithms)) != len(self.algorithms):
            raise ValueError(f"algorithms must be distinct and non-empty, got {self.algorithms}")
        known = {"SSEM-UCB-JO", "SSEM-UCB-Norm", "Taylor oracle", "SEM-UCB", "METS", "SGB"}
        known |= {"IGP-UCB", "Random"}
        for label in self.algorithms:
            family, degree = algorithm_family(label)
            if family not in known or (degree is not None and degree < 1):
                raise ValueError(f"unknown algorithm {label!r}")
            if finite_difference_step(label) is not None and family not in FD_FAMILIES:
                raise ValueError(f"{label!r}: only {FD_FAMILIES} take a finite-difference step")
        for name in ("replicates", "super_arm_size", "chunk_size", "checkpoint_every"):
            count(name, getattr(self, name))
        count("horizon", self.horizon, minimum=2)
        count("mc_samples", self.mc_samples, minimum=2)
        count("seed", self.seed, minimum=0)
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

    def scale_setting(self, setting: int) -> int:
        """The index of grid point ``setting`` on the scale axes alone: the ``setting`` column,
        so that every algorithm of one (radius, bonus) point shares a figure panel."""
        sizes = [len(values) for values in self.axes().values()][1:]
        rest = self.point_index(setting)[1:]
        return int(np.ravel_multi_index(rest, sizes)) if sizes else 0

    def task_cost(self, point: Mapping[str, Any]) -> float:
        """Higher Taylor degrees first, then the other learners."""
        family, degree = algorithm_family(point["algorithm"])
        return float(degree or 0) + (0.5 if family in ("METS", "IGP-UCB") else 0.0)

    def checkpoints(self) -> np.ndarray:
        regular = np.arange(self.checkpoint_every, self.horizon + 1, self.checkpoint_every)
        return np.unique(np.concatenate([[1], regular, [self.horizon]])).astype(np.int64)

    # ---------------------------------------------------------------- running

    def environment(self, replicates: Sequence[int], setting: int) -> SeparableSemiBandit:
        env = trial_environment(
            self.instance_design(),
            self.seeds(setting, replicates, Stream.INSTANCE),
            super_arm_size=self.super_arm_size,
            horizon=self.horizon,
            mc_samples=self.mc_samples,
        )
        env.reset(self.seeds(setting, replicates, Stream.NOISE))
        return env

    def policy(self, label: str, env: SeparableSemiBandit, scales: dict[str, float]) -> Any:
        """A fresh policy for ``env`` (not yet reset)."""
        family, degree = algorithm_family(label)
        design = self.instance_design()
        problem, families = env.problem, design.families
        width = None if design.arm_law != "normal" else 1.0
        options = dict(signal_width=width, **scales, **derivative_options(label))
        if family == "SSEM-UCB-JO":
            return SSEMUCBJO(problem, degree=degree, dictionary=families, **options)
        if family == "SSEM-UCB-Norm":
            return SSEMUCBNorm(problem, degree=degree, dictionary=families, **options)
        if family == "SEM-UCB":
            return SSEMUCBJO(problem, degree=1, dictionary=("linear",), **options)
        if family == "Taylor oracle":
            return TaylorOracle.from_environment(env, degree)
        if family == "METS":
            means, sds = METS_RANGES[self.trial]
            return METS(problem, mean_range=means, sd_range=sds)
        if family == "SGB":
            return SGB(problem)
        if family == "IGP-UCB":
            return IGPUCB.from_environment(env)
        return RandomSuperArm(problem)

    def run_chunk(self, point: Mapping[str, Any], setting: int, replicates: range) -> pd.DataFrame:
        label = point["algorithm"]
        scales = {
            "radius_scale": float(point.get("radius_scale", self.radius_scale)),
            "bonus_scale": float(point.get("bonus_scale", self.bonus_scale)),
        }
        with threadpool_limits(limits=1):
            env = self.environment(replicates, setting)
            policy = self.policy(label, env, scales)
            policy.reset(self.seeds(setting, replicates, policy_stream(label)))
            recorders = [*default_recorders(), CurrentAction(), Elapsed()]
            result = simulate(env, policy, self.checkpoints(), recorders)
        scaled = uses_scales(label)
        frame = results_frame(
            result,
            label,
            replicates,
            experiment=self.name,
            setting=self.scale_setting(setting),
            trial=self.trial,
            radius_scale=scales["radius_scale"] if scaled else np.nan,
            bonus_scale=scales["bonus_scale"] if scaled else np.nan,
        )
        frame["avg_regret"] = frame["cum_regret"] / frame["t"]
        return frame[[*KEY_COLUMNS, *(name for name in METRICS if name in frame)]]

    # ---------------------------------------------------------------- outputs

    def plot(self, df: pd.DataFrame, out_dir: Path) -> list[Path]:
        return plot_all(df, Path(out_dir), self)

    def report(self, df: pd.DataFrame) -> str:
        return build_report(df, self)


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
    if not quick:
        return full
    return SyntheticTrial(
        **{
            **{f: getattr(full, f) for f in ("trial", "design", "algorithms")},
            "replicates": QUICK_REPLICATES,
            "horizon": QUICK_HORIZON,
            "mc_samples": 2000,
            "checkpoint_every": 10,
            "name": f"{name}-quick",
            "description": f"SSEM-UCB paper, {title}; quick: T = 200, 2 replicates",
        }
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
    full = dataclasses.replace(
        preset(trial),
        name=f"ssem-ucb-{trial}-{name}",
        description=f"SSEM-UCB paper, {VARIANT_SUBJECTS[trial]} {title}",
        **changes,
    )
    if not quick:
        return full
    return dataclasses.replace(
        full,
        replicates=QUICK_REPLICATES,
        horizon=QUICK_HORIZON,
        mc_samples=2000,
        checkpoint_every=10,
        name=f"{full.name}-quick",
        description=f"{full.description}; quick: T = 200, 2 replicates",
    )


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
