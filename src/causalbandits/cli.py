"""The ``causalbandits`` command: reproduce paper experiments, run specs, plot, list."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from causalbandits.experiments.catalogue import (
    EXPERIMENTS,
    PaperExperiment,
    RunPaperExperiment,
    UnknownExperimentError,
    describe,
    load_experiment,
)
from causalbandits.experiments.metrics import final, summarise
from causalbandits.experiments.plots import standard_plots
from causalbandits.experiments.runner import BACKENDS, run_experiment
from causalbandits.experiments.spec import ExperimentSpec
from causalbandits.experiments.store import load_results, read_manifest, write_manifest


def _write_table(df: pd.DataFrame, out_dir: Path) -> Path:
    path = out_dir / "results.csv"
    summarise(final(df)).to_csv(path, index=False)
    return path


def _print_paths(paths: Sequence[Path]) -> None:
    for path in paths:
        print(f"wrote {path}")


def _reproduce(args: argparse.Namespace) -> int:
    experiment = load_experiment(args.experiment, args.quick)
    if hasattr(experiment, "run"):
        return _reproduce_run(args, experiment)
    spec = experiment.spec
    name = args.experiment + ("-quick" if args.quick else "")
    if args.replicates is not None:
        spec = spec.replace(replicates=args.replicates)
        name += f"-r{args.replicates}"
    out_dir = Path(args.out or Path("results") / name)
    metadata = {"catalogue": args.experiment, "quick": args.quick}
    df = run_experiment(spec, out_dir, args.jobs, args.backend, not args.no_progress, metadata)
    return _finish_reproduce(experiment, df, out_dir, [_write_table(df, out_dir)])


def _reproduce_run(args: argparse.Namespace, experiment: RunPaperExperiment) -> int:
    """A run-based experiment (no bandit spec): it computes its own long results table."""
    name = args.experiment + ("-quick" if args.quick else "")
    if args.replicates is not None:
        with_replicates = getattr(experiment, "with_replicates", None)
        if with_replicates is None:
            raise ValueError(f"experiment {args.experiment!r} does not support --replicates")
        experiment = with_replicates(args.replicates)
        name += f"-r{args.replicates}"
    out_dir = Path(args.out or Path("results") / name)
    df = experiment.run(out_dir, args.jobs, args.backend, not args.no_progress)
    manifest = read_manifest(out_dir)
    if manifest is not None:  # lets ``causalbandits plot`` find the experiment again
        manifest.setdefault("metadata", {}).update(
            {"catalogue": args.experiment, "quick": args.quick}
        )
        write_manifest(out_dir, manifest)
    tables = [out_dir / "results.parquet", out_dir / "results.csv"]
    df.to_parquet(tables[0], index=False)
    df.to_csv(tables[1], index=False)
    return _finish_reproduce(experiment, df, out_dir, tables)


def _finish_reproduce(
    experiment: PaperExperiment | RunPaperExperiment,
    df: pd.DataFrame,
    out_dir: Path,
    tables: Sequence[Path],
) -> int:
    paths = [*tables, *experiment.plot(df, out_dir)]
    report = experiment.report(df)
    report_path = out_dir / "report.md"
    report_path.write_text(report.rstrip("\n") + "\n", encoding="utf-8")
    print(report)
    _print_paths([*paths, report_path])
    return 0


def _run(args: argparse.Namespace) -> int:
    spec = ExperimentSpec.from_yaml(args.spec)
    out_dir = Path(args.out or Path("results") / spec.name)
    df = run_experiment(spec, out_dir, args.jobs, args.backend, not args.no_progress)
    _print_paths([_write_table(df, out_dir), *standard_plots(df, out_dir, spec.sweep)])
    return 0


def _plot(args: argparse.Namespace) -> int:
    out_dir = Path(args.directory)
    manifest = read_manifest(out_dir)
    if manifest is None:
        raise FileNotFoundError(f"{out_dir} has no manifest.json: not a results directory")
    df = load_results(out_dir)
    metadata = manifest["metadata"]
    if "catalogue" in metadata:
        experiment = load_experiment(metadata["catalogue"], metadata["quick"])
        paths = experiment.plot(df, out_dir)
    else:
        paths = standard_plots(df, out_dir, manifest["spec"].get("sweep"))
    _print_paths(paths)
    return 0


def _list(args: argparse.Namespace) -> int:
    width = max(map(len, EXPERIMENTS), default=0)
    for name in sorted(EXPERIMENTS):
        print(f"{name:<{width}}  {describe(name)}")
    return 0


def _add_run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (-1: all cores)")
    parser.add_argument("--backend", choices=BACKENDS, default="loky")
    parser.add_argument("--out", help="results directory (default: results/<name>)")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="causalbandits", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    reproduce = commands.add_parser("reproduce", help="run a paper experiment and report")
    reproduce.add_argument("experiment", help="a name shown by 'causalbandits list'")
    reproduce.add_argument("--quick", action="store_true", help="a small version (smoke run)")
    reproduce.add_argument(
        "--replicates", type=int, help="override the number of replicates (runs, for E1)"
    )
    _add_run_options(reproduce)
    reproduce.set_defaults(handler=_reproduce)

    run = commands.add_parser("run", help="run an experiment spec (YAML)")
    run.add_argument("spec", help="path of an ExperimentSpec YAML file")
    _add_run_options(run)
    run.set_defaults(handler=_run)

    plot = commands.add_parser("plot", help="re-draw the figures of a results directory")
    plot.add_argument("directory")
    plot.set_defaults(handler=_plot)

    listing = commands.add_parser("list", help="list the paper experiments")
    listing.set_defaults(handler=_list)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (2: unknown experiment or bad usage)."""
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except UnknownExperimentError as error:
        print(f"causalbandits: error: {error}", file=sys.stderr)
        return 2
    except (ValueError, ImportError, FileNotFoundError) as error:
        print(f"causalbandits: error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
