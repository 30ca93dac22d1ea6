"""The ``causalbandits`` command: reproduce paper experiments, run specs, plot, list."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from causalbandits.experiments.plots import standard_plots
from causalbandits.experiments.protocol import Experiment, SpecExperiment
from causalbandits.experiments.runner import BACKENDS
from causalbandits.experiments.spec import ExperimentSpec
from causalbandits.experiments.store import load_results, read_manifest
from causalbandits.papers.catalogue import (
    EXPERIMENTS,
    UnknownExperimentError,
    describe,
    load_experiment,
)


def _print_paths(paths: Sequence[Path]) -> None:
    for path in paths:
        print(f"wrote {path}")


def _reproduce(args: argparse.Namespace) -> int:
    experiment = load_experiment(args.experiment, args.quick)
    name = args.experiment + ("-quick" if args.quick else "")
    if args.replicates is not None:
        experiment = experiment.with_replicates(args.replicates)
        name += f"-r{args.replicates}"
    if args.data is not None:
        with_data = getattr(experiment, "with_data", None)
        if getattr(experiment, "DATA_FIELD", None) is None or with_data is None:
            raise ValueError(f"experiment {args.experiment!r} reads no data file; drop --data")
        experiment = with_data(args.data)
    out_dir = Path(args.out or Path("results") / name)
    metadata = {"catalogue": args.experiment, "quick": args.quick}
    if args.replicates is not None:
        metadata["replicates"] = args.replicates
    df = _execute(experiment, out_dir, args, metadata)
    report = experiment.report(df)
    paths = [*experiment.write_tables(df, out_dir), *experiment.plot(df, out_dir)]
    if report:
        report_path = out_dir / "report.md"
        report_path.write_text(report.rstrip("\n") + "\n", encoding="utf-8")
        paths.append(report_path)
        print(report)
    _print_paths(paths)
    return 0


def _execute(
    experiment: Experiment, out_dir: Path, args: argparse.Namespace, metadata: dict | None = None
) -> pd.DataFrame:
    return experiment.run(
        out_dir,
        jobs=args.jobs,
        backend=args.backend,
        progress=not args.no_progress,
        metadata=metadata,
    )


def _run(args: argparse.Namespace) -> int:
    experiment = SpecExperiment(ExperimentSpec.from_yaml(args.spec))
    out_dir = Path(args.out or Path("results") / experiment.name)
    df = _execute(experiment, out_dir, args)
    _print_paths([*experiment.write_tables(df, out_dir), *experiment.plot(df, out_dir)])
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
        if "replicates" in metadata:
            experiment = experiment.with_replicates(metadata["replicates"])
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
    parser.add_argument("--debug", action="store_true", help="show tracebacks of errors")
    commands = parser.add_subparsers(dest="command", required=True)

    reproduce = commands.add_parser("reproduce", help="run a paper experiment and report")
    reproduce.add_argument("experiment", help="a name shown by 'causalbandits list'")
    reproduce.add_argument("--quick", action="store_true", help="a small version (smoke run)")
    reproduce.add_argument(
        "--replicates", type=int, help="independent replicates (instance and noise)"
    )
    reproduce.add_argument(
        "--data", help="the data file of an experiment that reads one (see 'causalbandits list')"
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
    """Entry point; returns the exit code (2: unknown experiment or bad usage, 130:
    interrupted, 1: any other error). Errors are one line on standard error; ``--debug``
    shows the traceback instead."""
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except KeyboardInterrupt:
        print(
            "causalbandits: interrupted; finished tasks are saved: run the same command "
            "again to resume",
            file=sys.stderr,
        )
        return 130
    except Exception as error:
        if args.debug:
            raise
        message = " ".join(str(error).split()) or type(error).__name__
        if not isinstance(error, UnknownExperimentError | ValueError | FileNotFoundError):
            message = f"{type(error).__name__}: {message} (--debug shows the traceback)"
        print(f"causalbandits: error: {message}", file=sys.stderr)
        return 2 if isinstance(error, UnknownExperimentError) else 1


if __name__ == "__main__":
    sys.exit(main())
