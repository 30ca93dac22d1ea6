"""Experiments: spec -> runner (seeds, backends, resume) -> results store -> metrics -> plots."""

from causalbandits.experiments.catalogue import EXPERIMENTS, PaperExperiment, load_experiment
from causalbandits.experiments.metrics import final, summarise
from causalbandits.experiments.plots import (
    plot_final_vs_parameter,
    plot_regret_curves,
    standard_plots,
)
from causalbandits.experiments.runner import Task, make_tasks, run_experiment, run_task
from causalbandits.experiments.simulate import checkpoint_rounds, compare, results_frame, simulate
from causalbandits.experiments.spec import ENVIRONMENTS, AlgorithmSpec, ExperimentSpec
from causalbandits.experiments.store import load_results, read_manifest

__all__ = [
    "ENVIRONMENTS",
    "EXPERIMENTS",
    "AlgorithmSpec",
    "ExperimentSpec",
    "PaperExperiment",
    "Task",
    "checkpoint_rounds",
    "compare",
    "final",
    "load_experiment",
    "load_results",
    "make_tasks",
    "plot_final_vs_parameter",
    "plot_regret_curves",
    "read_manifest",
    "results_frame",
    "run_experiment",
    "run_task",
    "simulate",
    "standard_plots",
    "summarise",
]
