"""The catalogue of paper experiments, by name, for ``causalbandits reproduce``.

Each paper package lists its experiments in its own ``EXPERIMENTS``: name -> preset, a
function ``(quick: bool) -> Experiment`` (:class:`~causalbandits.experiments.protocol.
Experiment`). This module only merges them.
"""

from __future__ import annotations

from collections.abc import Callable

from causalbandits.experiments.protocol import Experiment
from causalbandits.papers import csl_ucb, excbo, mixed_sign, ndc_sem, robust_lcb, ssem_ucb
from causalbandits.papers.excbo import MissingExtraError

Preset = Callable[[bool], Experiment]

EXPERIMENTS: dict[str, Preset] = {
    **robust_lcb.EXPERIMENTS,
    **csl_ucb.EXPERIMENTS,
    **ndc_sem.EXPERIMENTS,
    **excbo.EXPERIMENTS,
    **ssem_ucb.EXPERIMENTS,
    **mixed_sign.EXPERIMENTS,
}


class UnknownExperimentError(KeyError):
    """Raised for a name that is not in ``EXPERIMENTS``."""

    def __str__(self) -> str:
        return str(self.args[0])


def load_experiment(name: str, quick: bool = False) -> Experiment:
    """Build the catalogue experiment ``name`` (``quick``: a small version for smoke runs)."""
    if name not in EXPERIMENTS:
        known = ", ".join(sorted(EXPERIMENTS))
        raise UnknownExperimentError(f"unknown experiment {name!r}; known experiments: {known}")
    return EXPERIMENTS[name](quick)


def describe(name: str) -> str:
    """The first line of the experiment's description, else of its preset's docstring; a
    note when it reads a data file (``--data``)."""
    preset = EXPERIMENTS[name]
    try:
        experiment = preset(False)
    except MissingExtraError as error:
        return f"{name}: {error}"
    text = experiment.description or preset.__doc__ or ""
    lines = text.strip().splitlines()
    line = lines[0] if lines else ""
    if getattr(experiment, "DATA_FIELD", None) is not None:
        line += " [reads a data file: --data PATH]"
    return line
