"""The catalogue of paper experiments, by name, for ``causalbandits reproduce``.

Each paper package lists its experiments in its own ``EXPERIMENTS``: name -> preset, a
function ``(quick: bool) -> Experiment`` (:class:`~causalbandits.experiments.protocol.
Experiment`). This module only merges them.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

from causalbandits.bench import mixed_sign
from causalbandits.experiments.extras import MissingExtraError
from causalbandits.experiments.protocol import Experiment
from causalbandits.papers import csl_ucb, excbo, ndc_sem, robust_lcb, ssem_ucb

Preset = Callable[[bool], Experiment]

#: The paper packages in the papers' order (000-004), then the library's own benchmark.
PAPERS = (robust_lcb, csl_ucb, excbo, ndc_sem, ssem_ucb, mixed_sign)

EXPERIMENTS: dict[str, Preset] = {
    name: preset for package in PAPERS for name, preset in package.EXPERIMENTS.items()
}


def paper_title(package: ModuleType) -> str:
    """A paper package's title: its docstring's first line up to the first ``": "``."""
    return (package.__doc__ or package.__name__).strip().splitlines()[0].split(": ")[0]


#: The titles of :data:`PAPERS`, in order.
PAPER_TITLES = tuple(paper_title(package) for package in PAPERS)


def paper_of(name: str) -> str:
    """The title of the paper whose package lists experiment ``name``; for an experiment a
    user registered in :data:`EXPERIMENTS` directly, the module of its preset."""
    for package in PAPERS:
        if name in package.EXPERIMENTS:
            return paper_title(package)
    if name in EXPERIMENTS:
        return getattr(EXPERIMENTS[name], "__module__", None) or "registered by the user"
    raise UnknownExperimentError(f"unknown experiment {name!r}")


class UnknownExperimentError(KeyError):
    """Raised for a name that is not in ``EXPERIMENTS``."""

    #: The command line's exit code for it (bad usage).
    exit_code = 2

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
    if getattr(experiment, "reads_data", False):
        line += " [reads a data file: --data PATH]"
    return line
