"""The one protocol every experiment follows, and the grid that a bandit spec declares.

``causalbandits reproduce`` (and any user code) drives an experiment the same way whatever
it is: ``with_replicates(R)`` for ``--replicates``, ``run(out_dir, ...)`` to compute or
resume its long results table, ``write_tables`` / ``plot`` / ``report`` for its outputs.
Every experiment is a :class:`~causalbandits.experiments.grid.TaskGrid`, run by the one
executor of :mod:`~causalbandits.experiments.runner`. A bandit experiment given by an
:class:`~causalbandits.experiments.spec.ExperimentSpec` (a YAML file or a paper preset) is
a :class:`SpecExperiment`: the :class:`~causalbandits.experiments.bandit_grid.BanditGrid`
whose hooks read the spec.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, Protocol

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from causalbandits.experiments.bandit_grid import BanditGrid, BanditRun
from causalbandits.experiments.change_metrics import detection_columns
from causalbandits.experiments.metrics import final, summarise
from causalbandits.experiments.plots import standard_plots
from causalbandits.experiments.recorders import RECORDERS, Recorder, default_recorders
from causalbandits.experiments.runner import config_fingerprint
from causalbandits.experiments.simulate import results_frame
from causalbandits.experiments.spec import ExperimentSpec, resolve_environment, resolve_policy
from causalbandits.policies.registry import construct
from causalbandits.random import Stream


class Experiment(Protocol):
    """What ``causalbandits reproduce`` needs of an experiment."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    def with_replicates(self, replicates: int) -> Experiment:
        """The same experiment with ``replicates`` independent replicates (instance and noise)."""

    def setup(self, setting: int, algorithm: str, replicates: Sequence[int]) -> BanditRun:
        """The run of ``algorithm`` (a label) on ``replicates`` of the spec's setting
        ``setting``, set up as its task sets it up (:meth:`prepare`), not run."""
        index = setting * len(self.labels) + self.labels.index(algorithm)
        return self.prepare(BanditRun(self.points()[index], index, replicates))

    def run(self, out_dir: str | Path, **options: Any) -> pd.DataFrame:
        """Compute (or resume) the long results table into ``out_dir``; ``options`` are those
        of :func:`~causalbandits.experiments.runner.run_tasks` (``jobs``, ``backend``,
        ``progress``, ``metadata``, ``allow_code_change``)."""

    def write_tables(self, df: pd.DataFrame, out_dir: Path) -> list[Path]:
        """Write the results tables; return their paths."""

    def plot(self, df: pd.DataFrame, out_dir: Path) -> list[Path]:
        """Draw the figures into ``out_dir``; return their paths."""

    def report(self, df: pd.DataFrame) -> str:
        """A markdown report: our numbers beside the paper's claims."""


@dataclasses.dataclass(frozen=True)
class SpecExperiment(BanditGrid):
    """The bandit grid of a spec: ``SpecExperiment(spec)``; paper modules subclass it for their
    figures and report (the defaults: standard plots and no report text).

    The grid is settings x algorithms (task ids ``s000-a000-c00000``); the name, seed,
    replicates, chunk size and description are the spec's. The seeds are keyed by the
    setting alone, so every algorithm meets the same noise and instances (common random
    numbers), and each draws its own randomness from the stream of its label. A factory with
    an ``instance_seeds`` parameter gets one instance seed per replicate (stream
    ``INSTANCE``). The manifest keeps the spec and its fingerprint.
    """

    spec: ExperimentSpec
    name: str = dataclasses.field(init=False)
    seed: int = dataclasses.field(init=False)
    replicates: int = dataclasses.field(init=False)
    chunk_size: int = dataclasses.field(init=False)
    description: str = dataclasses.field(init=False)

    SEED_AXES: ClassVar[tuple[str, ...]] = ("setting",)
    ID_LETTERS: ClassVar[str] = "sa"

    def __post_init__(self) -> None:
        for name in ("name", "seed", "replicates", "chunk_size", "description"):
            object.__setattr__(self, name, getattr(self.spec, name))
        super().__post_init__()

    @property
    def labels(self) -> list[str]:
        """The algorithms' labels, in the spec's order."""
        return [algorithm.label for algorithm in self.spec.algorithms]

    def axes(self) -> dict[str, list[Any]]:
        return {"setting": list(range(len(self.spec.settings))), "algorithm": self.labels}

    def make_environment(self, run: BanditRun) -> Any:
        factory = resolve_environment(self.spec.environment)
        params = {**self.spec.env_params, **self.spec.settings[run.point["setting"]]}
        if "instance_seeds" in inspect.signature(factory).parameters:
            params["instance_seeds"] = self.seeds(run.setting, run.replicates, Stream.INSTANCE)
        return factory(horizon=self.spec.horizon, **params)

    def make_policy(self, run: BanditRun) -> Any:
        """The algorithm of ``run`` built as its :class:`AlgorithmSpec` says."""
        entry = self.spec.algorithms[self.labels.index(run.algorithm)]
        params = entry.params_for(self.spec.settings[run.point["setting"]])
        return construct(resolve_policy(entry.policy), run.env, **params)

    def recorded_rounds(self, run: BanditRun) -> np.ndarray:
        return np.asarray(self.spec.checkpoints)

    def make_recorders(self, run: BanditRun) -> list[Recorder]:
        return [*default_recorders(), *(RECORDERS[name](run.env) for name in self.spec.recorders)]

    def columns(self, run: BanditRun) -> dict[str, Any]:
        """``experiment``, ``setting`` (the spec's index) and the setting's parameters."""
        setting = run.point["setting"]
        return {"experiment": self.name, "setting": setting, **self.spec.settings[setting]}

    def table(self, run: BanditRun) -> pd.DataFrame:
        """The long table, with the change-detection scores of policies that detect."""
        detection = detection_columns(run.env, run.policy)
        return results_frame(
            run.result, run.algorithm, run.replicates, detection, **self.columns(run)
        )

    def validate(self) -> None:
        """Set up replicate 0 of every (setting, algorithm) in this process, so that an
        unknown or mistyped parameter fails at once, before any output exists. Raises
        ``ValueError`` naming the setting or algorithm by its key path."""
        with threadpool_limits(limits=1):
            for index, point in enumerate(self.points()):
                run = BanditRun(point, index, [0], point["algorithm"])
                where = f"settings[{point['setting']}] (the environment)"
                try:
                    run.env = self.make_environment(run)
                    run.env.reset(self.noise_seeds(run))
                    where = (
                        f"algorithms[{self.labels.index(run.algorithm)}] ({run.algorithm!r}) with "
                        f"settings[{point['setting']}]"
                    )
                    self.make_policy(run).reset(self.policy_seeds(run))
                except (TypeError, ValueError) as error:
                    raise ValueError(f"{self.name}: {where}: {error}") from error

    def setup(self, setting: int, algorithm: str, replicates: Sequence[int]) -> BanditRun:
        """The run of ``algorithm`` (a label) on ``replicates`` of the spec's setting
        ``setting``, set up as its task sets it up (:meth:`prepare`), not run."""
        index = setting * len(self.labels) + self.labels.index(algorithm)
        return self.prepare(BanditRun(self.points()[index], index, replicates))

    def run(self, out_dir: str | Path, **options: Any) -> pd.DataFrame:
        """:meth:`validate`, then run the grid (:meth:`TaskGrid.run`)."""
        self.validate()
        return super().run(out_dir, **options)

    def header(self) -> dict[str, Any]:
        """The manifest header: the spec and the fingerprint of its numbers."""
        fingerprint = config_fingerprint({"spec": self.spec.fingerprint()})
        return {"experiment": self.name, "fingerprint": fingerprint, "spec": self.spec.to_dict()}

    def with_replicates(self, replicates: int) -> SpecExperiment:
        return dataclasses.replace(self, spec=self.spec.replace(replicates=int(replicates)))

    def write_tables(self, df: pd.DataFrame, out_dir: Path) -> list[Path]:
        """``results.csv``: mean, standard error and 95% band of every metric at ``T``."""
        path = Path(out_dir) / "results.csv"
        summarise(final(df)).to_csv(path, index=False)
        return [path]

    def plot(self, df: pd.DataFrame, out_dir: Path) -> list[Path]:
        return standard_plots(df, out_dir, self.spec.sweep)


def run_experiment(spec: ExperimentSpec, out_dir: str | Path, **options: Any) -> pd.DataFrame:
    """Run (or resume) the bandit experiment ``spec`` into ``out_dir``; ``options`` as for
    :meth:`SpecExperiment.run` (``jobs``, ``backend``, ``progress``, ``metadata``,
    ``allow_code_change``)."""
    return SpecExperiment(spec).run(out_dir, **options)
