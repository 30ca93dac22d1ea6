"""The catalogue of paper experiments, by name, for ``causalbandits reproduce``.

Each entry is the dotted path of a function ``(quick: bool) -> PaperExperiment`` in the
``papers`` layer; strings keep this layer free of upward imports.

Two kinds of experiment: a bandit experiment has a ``spec`` that ``reproduce`` runs through
:func:`~causalbandits.experiments.runner.run_experiment`; an experiment that is not a bandit
(e.g. graph identification) has ``run(out_dir, jobs, backend, progress) -> DataFrame``
instead (:class:`RunPaperExperiment`), which ``reproduce`` calls when present.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import pandas as pd

from causalbandits.experiments.spec import ExperimentSpec, import_object

EXPERIMENTS: dict[str, str] = {
    "robust-lcb-fig1b": "causalbandits.papers.robust_lcb:fig1b",
    "robust-lcb-fig1c": "causalbandits.papers.robust_lcb:fig1c",
    "csl-ucb-e3": "causalbandits.papers.csl_ucb:e3",
    "csl-ucb-e2": "causalbandits.papers.csl_ucb_fn:e2",
    "csl-ucb-e4": "causalbandits.papers.csl_ucb:e4",
    "csl-ucb-e1": "causalbandits.papers.csl_ucb_graphs:e1",
    "csl-ucb-e1-observational": "causalbandits.papers.csl_ucb_graphs:e1_observational",
    "ndc-sem-synthetic": "causalbandits.papers.ndc_sem:synthetic",
    "ndc-sem-covid": "causalbandits.papers.ndc_sem_covid:covid",
}


class PaperExperiment(Protocol):
    """A paper's experiment: its spec, its figures and a report beside the paper's claims."""

    spec: ExperimentSpec

    def plot(self, df: pd.DataFrame, out_dir: Path) -> list[Path]:
        """Draw the paper's figures from our results into ``out_dir``."""

    def report(self, df: pd.DataFrame) -> str:
        """A text table of our numbers beside the paper's reported outcomes."""


class RunPaperExperiment(Protocol):
    """A paper experiment that runs itself (no bandit spec): results, figures and a report.

    It may also provide ``with_replicates(n) -> RunPaperExperiment`` (``reproduce
    --replicates``); without it ``--replicates`` is rejected.
    """

    description: str

    def run(self, out_dir: Path, jobs: int, backend: str, progress: bool) -> pd.DataFrame:
        """Compute (or resume) the results into ``out_dir``; return the long results table."""

    def plot(self, df: pd.DataFrame, out_dir: Path) -> list[Path]:
        """Draw the paper's figures from our results into ``out_dir``."""

    def report(self, df: pd.DataFrame) -> str:
        """A text table of our numbers beside the paper's reported outcomes."""


class UnknownExperimentError(KeyError):
    """Raised for a name that is not in ``EXPERIMENTS``."""

    def __str__(self) -> str:
        return str(self.args[0])


def load_experiment(name: str, quick: bool = False) -> PaperExperiment | RunPaperExperiment:
    """Build the catalogue experiment ``name`` (``quick``: a small version for smoke runs)."""
    if name not in EXPERIMENTS:
        known = ", ".join(sorted(EXPERIMENTS))
        raise UnknownExperimentError(f"unknown experiment {name!r}; known experiments: {known}")
    return import_object(EXPERIMENTS[name])(quick)


def describe(name: str) -> str:
    """A one-line description: the spec's (or run-based experiment's) description, else the
    preset's docstring."""
    try:
        preset = import_object(EXPERIMENTS[name])
    except ImportError as error:
        return f"(unavailable: {error})"
    experiment = preset(False)
    spec = getattr(experiment, "spec", None)
    text = spec.description if spec is not None else getattr(experiment, "description", "")
    lines = (text or preset.__doc__ or "").strip().splitlines()
    return lines[0] if lines else ""
