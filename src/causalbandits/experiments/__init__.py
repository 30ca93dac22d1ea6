"""Experiments: task grid (a bandit spec is one) -> round loop with recorders -> runner
(seeds, backends, resume) -> results store -> metrics -> report kit -> plots; one protocol
for every experiment."""

from causalbandits.experiments.evidence import PairedComparison, Verdict
from causalbandits.experiments.grid import GridTask, TaskGrid
from causalbandits.experiments.metrics import final, summarise
from causalbandits.experiments.plots import (
    plot_final_vs_parameter,
    plot_regret_curves,
    save_figure,
    standard_plots,
)
from causalbandits.experiments.protocol import Experiment, SpecExperiment, run_experiment
from causalbandits.experiments.recorders import RECORDERS, Recorder
from causalbandits.experiments.report import Claim, claims_table, markdown_table, mean_pm
from causalbandits.experiments.simulate import checkpoint_rounds, compare, results_frame, simulate
from causalbandits.experiments.spec import ENVIRONMENTS, AlgorithmSpec, ExperimentSpec
from causalbandits.experiments.store import load_results, read_manifest

__all__ = [
    "ENVIRONMENTS",
    "RECORDERS",
    "AlgorithmSpec",
    "Claim",
    "Experiment",
    "ExperimentSpec",
    "GridTask",
    "PairedComparison",
    "Recorder",
    "SpecExperiment",
    "TaskGrid",
    "Verdict",
    "checkpoint_rounds",
    "claims_table",
    "compare",
    "final",
    "load_results",
    "markdown_table",
    "mean_pm",
    "plot_final_vs_parameter",
    "plot_regret_curves",
    "read_manifest",
    "results_frame",
    "run_experiment",
    "save_figure",
    "simulate",
    "standard_plots",
    "summarise",
]
