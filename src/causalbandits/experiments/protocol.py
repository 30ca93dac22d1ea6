"""The one protocol every experiment follows, and its implementation for bandit specs.

``causalbandits reproduce`` (and any user code) drives an experiment the same way whatever
it is: ``with_replicates(R)`` for ``--replicates``, ``run(out_dir, ...)`` to compute or
resume its long results table, ``write_tables`` / ``plot`` / ``report`` for its outputs.
A bandit experiment is an :class:`~causalbandits.experiments.spec.ExperimentSpec` wrapped
in :class:`SpecExperiment`; an experiment that is not a bandit run (graph identification,
tuning then evaluation, ...) is a :class:`~causalbandits.experiments.grid.TaskGrid`.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Protocol

import pandas as pd

from causalbandits.experiments.metrics import final, summarise
from causalbandits.experiments.plots import standard_plots
from causalbandits.experiments.runner import run_experiment
from causalbandits.experiments.spec import ExperimentSpec


class Experiment(Protocol):
    """What ``causalbandits reproduce`` needs of an experiment."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    def with_replicates(self, replicates: int) -> Experiment:
        """The same experiment with ``replicates`` independent replicates (instance and noise)."""

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
class SpecExperiment:
    """A bandit experiment given by a spec; paper modules subclass it for their figures and
    report (the defaults: standard plots and no report text)."""

    spec: ExperimentSpec

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def description(self) -> str:
        return self.spec.description

    def with_replicates(self, replicates: int) -> SpecExperiment:
        return dataclasses.replace(self, spec=self.spec.replace(replicates=int(replicates)))

    def run(self, out_dir: str | Path, **options: Any) -> pd.DataFrame:
        return run_experiment(self.spec, out_dir, **options)

    def write_tables(self, df: pd.DataFrame, out_dir: Path) -> list[Path]:
        """``results.csv``: mean, standard error and 95% band of every metric at ``T``."""
        path = Path(out_dir) / "results.csv"
        summarise(final(df)).to_csv(path, index=False)
        return [path]

    def plot(self, df: pd.DataFrame, out_dir: Path) -> list[Path]:
        return standard_plots(df, out_dir, self.spec.sweep)

    def report(self, df: pd.DataFrame) -> str:
        return ""
