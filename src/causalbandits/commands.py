"""The commands of ``causalbandits`` (:mod:`causalbandits.cli`): reproduce paper experiments,
run specs, plot, list, re-render a report, print the claims scoreboard, run the benchmark,
and the ``study`` commands of :mod:`causalbandits.studies.cli`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from causalbandits.bench.families import SUITES
from causalbandits.experiments.plots import standard_plots
from causalbandits.experiments.protocol import Experiment, SpecExperiment
from causalbandits.experiments.report import collecting_claims
from causalbandits.experiments.runner import BACKENDS
from causalbandits.experiments.scoreboard import save_claims, scoreboard
from causalbandits.experiments.spec import ExperimentSpec
from causalbandits.experiments.store import (
    file_digest,
    load_results,
    read_manifest,
    saved_long_table,
    saved_results,
)
from causalbandits.papers.catalogue import (
    EXPERIMENTS,
    PAPER_TITLES,
    describe,
    load_experiment,
    paper_of,
)
from causalbandits.studies.cli import add_study_commands

#: The scoreboard's file name in the results folder.
SCOREBOARD_FILE = "CLAIMS.md"


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
        if not experiment.reads_data:  # type: ignore[attr-defined]
            raise ValueError(f"experiment {args.experiment!r} reads no data file; drop --data")
        experiment = experiment.with_data(args.data)  # type: ignore[attr-defined]
    out_dir = Path(args.out or Path("results") / name)
    metadata = {"catalogue": args.experiment, "quick": args.quick}
    if args.replicates is not None:
        metadata["replicates"] = args.replicates
    df = _execute(experiment, out_dir, args, metadata)
    paths = [*experiment.write_tables(df, out_dir), *experiment.plot(df, out_dir)]
    _print_paths([*paths, *_write_report(experiment, args.experiment, df, out_dir)])
    return 0


def _write_report(experiment: Experiment, name: str, df: pd.DataFrame, out_dir: Path) -> list:
    """Write ``report.md`` (printed too) and its claims (``claims.json``, for the scoreboard)
    of catalogue experiment ``name``; return the paths written."""
    with collecting_claims() as claims:
        report = experiment.report(df)
    if not report:
        return []
    report_path = out_dir / "report.md"
    report_path.write_text(report.rstrip("\n") + "\n", encoding="utf-8")
    print(report)
    description = (experiment.description or "").strip().splitlines()
    claims_path = save_claims(
        out_dir, claims, paper_of(name), description[0] if description else ""
    )
    return [report_path, claims_path]


def _catalogue_experiment(out_dir: Path, data: str | None = None) -> tuple[str, Experiment]:
    """The catalogue name and experiment that wrote the results directory ``out_dir``."""
    manifest = read_manifest(out_dir)
    if manifest is None:
        raise FileNotFoundError(f"{out_dir} has no manifest.json: not a results directory")
    metadata = manifest["metadata"]
    if "catalogue" not in metadata:
        raise ValueError(f"{out_dir} was not written by 'causalbandits reproduce': no report")
    experiment = load_experiment(metadata["catalogue"], metadata["quick"])
    if "replicates" in metadata:
        experiment = experiment.with_replicates(metadata["replicates"])
    if data is not None:
        if not experiment.reads_data:  # type: ignore[attr-defined]
            raise ValueError(f"{metadata['catalogue']} reads no data file; drop --data")
        experiment = experiment.with_data(data)  # type: ignore[attr-defined]
    _check_configuration(experiment, manifest, out_dir)
    _check_data(experiment, manifest, out_dir)
    return metadata["catalogue"], experiment


def _check_data(experiment: Experiment, manifest: dict, out_dir: Path) -> None:
    """Refuse data files other than those the results of ``out_dir`` were computed from (the
    SHA-256 its manifest records): figures and reports must describe the recorded data."""
    recorded = manifest.get("config", {}).get("data_sha256") or {}
    files = experiment.data_files() if recorded else {}  # type: ignore[attr-defined]
    for name, path in files.items():
        digest = file_digest(path)
        if digest != recorded.get(name):
            raise ValueError(
                f"{path} is not the data {out_dir} was computed from (SHA-256 {digest[:16]}..., "
                f"the manifest records {str(recorded.get(name))[:16]}...); pass --data with "
                "the data of that run"
            )


def _check_configuration(experiment: Experiment, manifest: dict, out_dir: Path) -> None:
    """Refuse a results directory written by another configuration than the catalogue's
    ``experiment`` (the data file's path and digest, and the description, aside): its report
    would not describe those results."""
    config = getattr(experiment, "config", None)
    if config is not None and "config" in manifest:
        ours, theirs = config(), manifest["config"]
        ignored = {"data_sha256", "data_path"}  # a grid's config never holds its data path
    elif isinstance(experiment, SpecExperiment) and "spec" in manifest:
        ours, theirs, ignored = experiment.spec.to_dict(), manifest["spec"], {"description"}
    else:
        return
    keys = (ours.keys() | theirs.keys()) - ignored
    differing = sorted(k for k in keys if ours.get(k) != theirs.get(k))
    if differing:
        raise ValueError(
            f"{out_dir} was written by another configuration of "
            f"{manifest['experiment']!r} than the catalogue's (differing: "
            f"{', '.join(differing)}); its report would not describe these results"
        )


def _report(args: argparse.Namespace) -> int:
    out_dir = Path(args.directory)
    if args.experiment is None:
        name, experiment = _catalogue_experiment(out_dir, args.data)
        df = saved_results(out_dir)
    else:  # a saved long table without a manifest (e.g. a variant kept beside its parent)
        name, experiment = args.experiment, load_experiment(args.experiment)
        if args.data is not None:
            experiment = experiment.with_data(args.data)  # type: ignore[attr-defined]
        df = saved_long_table(out_dir)
    _print_paths(_write_report(experiment, name, df, out_dir))
    return 0


def _claims(args: argparse.Namespace) -> int:
    root = Path(args.results)
    if not root.is_dir():
        raise FileNotFoundError(f"{root} is not a folder")
    page = scoreboard(root, PAPER_TITLES)
    if args.write:
        path = root / SCOREBOARD_FILE
        path.write_text(page, encoding="utf-8")
        _print_paths([path])
    else:
        print(page, end="")
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
        allow_code_change=args.allow_code_change,
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
    if "catalogue" in manifest["metadata"]:
        experiment = _catalogue_experiment(out_dir, args.data)[1]
        paths = experiment.plot(saved_results(out_dir), out_dir)
    elif args.data is not None:
        raise ValueError(f"{out_dir} holds a spec run, which reads no data file; drop --data")
    else:
        paths = standard_plots(load_results(out_dir), out_dir, manifest["spec"].get("sweep"))
    _print_paths(paths)
    return 0


def _bench(args: argparse.Namespace) -> int:
    from causalbandits.bench.report import write_outputs
    from causalbandits.bench.suite import run_bench

    sys.path.insert(0, str(Path.cwd()))  # a user's "module:Class" from the current folder
    out_dir = Path(args.out or Path("bench-results") / args.suite)
    families = args.families.split(",") if args.families else None
    bench = run_bench(
        args.policies,
        args.suite,
        out_dir,
        families,
        jobs=args.jobs,
        backend=args.backend,
        progress=not args.no_progress,
        allow_code_change=args.allow_code_change,
    )
    paths = write_outputs(bench, out_dir)
    print((out_dir / "leaderboard.md").read_text(encoding="utf-8"))
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
    parser.add_argument(
        "--allow-code-change",
        action="store_true",
        help="resume even though finished tasks were computed by other code (recorded)",
    )


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
    plot.add_argument(
        "--data", help="the data the results were computed from (checked against the manifest)"
    )
    plot.set_defaults(handler=_plot)

    bench = commands.add_parser(
        "bench", help="run policies on every compatible benchmark family, with a leaderboard"
    )
    bench.add_argument(
        "policies", nargs="*", help="registry names or 'module:Class' (none: the built-ins)"
    )
    bench.add_argument("--suite", choices=SUITES, default="standard")
    bench.add_argument("--families", help="comma-separated family names (default: all)")
    _add_run_options(bench)
    bench.set_defaults(handler=_bench)

    listing = commands.add_parser("list", help="list the paper experiments")
    listing.set_defaults(handler=_list)

    report = commands.add_parser(
        "report", help="re-render the report and claims of a results directory (no re-run)"
    )
    report.add_argument("directory")
    report.add_argument("--data", help="the data file, for an experiment that reads one")
    report.add_argument(
        "--experiment", help="the catalogue experiment of a folder that has no manifest"
    )
    report.set_defaults(handler=_report)

    claims = commands.add_parser("claims", help="the scoreboard of every saved report's claims")
    claims.add_argument(
        "--results", default="docs/results", help="the saved results (default: docs/results)"
    )
    claims.add_argument(
        "--write", action="store_true", help=f"write RESULTS/{SCOREBOARD_FILE} instead of printing"
    )
    claims.set_defaults(handler=_claims)

    add_study_commands(commands)
    return parser
