"""``causalbandits study create|ask|tell|fail|show|export``: a study driven from any language.

Every command prints one JSON document on standard output (``show`` prints text unless
``--json``), so a lab script reads ``id`` and ``action`` from ``ask`` and passes the
observation back to ``tell`` as JSON (a list of node values in node order, or an object by
node name; ``-`` reads it from standard input). The database is ``--storage`` (default: the
environment variable ``CAUSALBANDITS_STORAGE``, else ``sqlite:///study.db``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from causalbandits.studies.spec import StudySpec
from causalbandits.studies.study import Study

STORAGE_VARIABLE = "CAUSALBANDITS_STORAGE"


def _json_argument(text: str, what: str) -> Any:
    if text == "-":
        text = sys.stdin.read()
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{what} is not JSON ({error.msg}): {text[:80]!r}") from None


def _open(args: argparse.Namespace) -> Any:
    return Study.load(args.name, args.storage)


def _print(document: Any) -> int:
    print(json.dumps(document))
    return 0


def _create(args: argparse.Namespace) -> int:
    spec = StudySpec(
        problem=args.problem,
        policy=args.policy,
        params=_json_argument(args.params, "--params"),
        options=_json_argument(args.options, "--options"),
        seed=args.seed,
        expire_after=args.expire_after,
    )
    study = Study.create(args.name, spec, args.storage, args.load_if_exists)
    return _print({"study": study.name, "fingerprint": spec.fingerprint(), **spec.to_dict()})


def _ask(args: argparse.Namespace) -> int:
    number, action = _open(args).ask()
    return _print({"id": number, "action": action})


def _tell(args: argparse.Namespace) -> int:
    observation = _json_argument(args.observation, "the observation")
    objective = _open(args).tell(args.id, observation)
    return _print({"id": args.id, "state": "complete", "objective": objective})


def _fail(args: argparse.Namespace) -> int:
    _open(args).fail(args.id, args.reason)
    return _print({"id": args.id, "state": "failed", "reason": args.reason})


def _show(args: argparse.Namespace) -> int:
    study = _open(args)
    summary = study.summary()
    if args.plot:
        from causalbandits.studies.plots import plot_progress

        summary["plot"] = str(plot_progress(study, Path(args.plot)))
    if args.json:
        return _print(summary)
    print(
        f"study {summary['study']}: {summary['policy']} on {summary['problem']}; "
        f"{summary['evaluations']} evaluations ({summary['complete']} told, "
        f"{summary['pending']} pending, {summary['failed']} failed, "
        f"{summary['expired']} expired)"
    )
    best = summary["best"]
    if best is None:
        print("nothing told yet")
    else:
        print(f"best: evaluation {best['id']}, objective {best['objective']:.6g}")
        print(f"best action: {json.dumps(best['action'])}")
    if args.plot:
        print(f"plot: {summary['plot']}")
    return 0


def _export(args: argparse.Namespace) -> int:
    rows = [vars(evaluation) for evaluation in _open(args).evaluations()]
    if args.format == "csv":
        import pandas as pd

        table = pd.DataFrame(rows)
        for column in ("action", "observation", "memory"):
            table[column] = [json.dumps(value) for value in table[column]]
        text = table.drop(columns="memory").to_csv(index=False)
    else:
        text = json.dumps(rows) + "\n"
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
        return _print({"study": args.name, "evaluations": len(rows), "out": args.out})
    sys.stdout.write(text)
    return 0


def build_study_parser() -> argparse.ArgumentParser:
    """A parser of ``causalbandits [--debug] study ...`` alone (:mod:`causalbandits.cli`)."""
    parser = argparse.ArgumentParser(prog="causalbandits", description=__doc__)
    parser.add_argument("--debug", action="store_true", help="show tracebacks of errors")
    add_study_commands(parser.add_subparsers(dest="command", required=True))
    return parser


def add_study_commands(commands: Any) -> None:
    """The ``study`` command and its sub-commands, on the main parser's ``commands``."""
    study = commands.add_parser("study", help="persistent ask/tell studies in a database")
    actions = study.add_subparsers(dest="study_command", required=True)

    def command(name: str, handler: Any, help: str) -> argparse.ArgumentParser:
        parser = actions.add_parser(name, help=help)
        parser.add_argument("name", help="the study's name")
        parser.add_argument(
            "--storage",
            default=os.environ.get(STORAGE_VARIABLE, "sqlite:///study.db"),
            help=f"SQLAlchemy URL (default: ${STORAGE_VARIABLE} or sqlite:///study.db)",
        )
        parser.set_defaults(handler=handler)
        return parser

    create = command("create", _create, "create a study (or open it: --load-if-exists)")
    create.add_argument("--problem", required=True, help="a problem factory: short name or m:f")
    create.add_argument("--policy", required=True, help="a registry name or 'module:Class'")
    create.add_argument("--params", default="{}", help="the factory's parameters (JSON)")
    create.add_argument("--options", default="{}", help="the policy's options (JSON)")
    create.add_argument("--seed", type=int, default=0)
    create.add_argument("--expire-after", type=float, help="seconds a pending evaluation counts")
    create.add_argument("--load-if-exists", action="store_true")

    command("ask", _ask, "the next action to evaluate: {id, action}")
    tell = command("tell", _tell, "record an evaluation's observed node values")
    tell.add_argument("id", type=int)
    tell.add_argument("observation", help="JSON list (node order) or object by node name; '-'")
    fail = command("fail", _fail, "mark an evaluation failed")
    fail.add_argument("id", type=int)
    fail.add_argument("--reason", default="failed")
    show = command("show", _show, "progress and the best action found")
    show.add_argument("--plot", help="draw the objective per evaluation into this PNG")
    show.add_argument("--json", action="store_true")
    export = command("export", _export, "every evaluation as JSON or CSV")
    export.add_argument("--format", choices=("json", "csv"), default="json")
    export.add_argument("--out", help="write to this file instead of standard output")
