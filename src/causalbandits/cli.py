"""The ``causalbandits`` command line. ``causalbandits study ...`` loads only the study
commands (:mod:`causalbandits.studies.cli`), so that a lab's ask/tell loop does not pay for
the experiment machinery; everything else is :mod:`causalbandits.commands`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def build_parser(arguments: Sequence[str]) -> argparse.ArgumentParser:
    """The study commands' parser when the first word of ``arguments`` is ``study``, else
    the whole command line's."""
    words = [argument for argument in arguments if not argument.startswith("-")]
    if words[:1] == ["study"]:
        from causalbandits.studies.cli import build_study_parser

        return build_study_parser()
    from causalbandits.commands import build_parser as build_commands_parser

    return build_commands_parser()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (2: unknown experiment or bad usage, 130:
    interrupted, 1: any other error). Errors are one line on standard error; ``--debug``
    shows the traceback instead."""
    arguments = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(arguments).parse_args(arguments)
    try:
        return args.handler(args)
    except KeyboardInterrupt:
        print(
            "causalbandits: interrupted; any finished tasks are saved: run the same command "
            "again to resume",
            file=sys.stderr,
        )
        return 130
    except Exception as error:
        if args.debug:
            raise
        code = getattr(error, "exit_code", 1)
        message = " ".join(str(error).split()) or type(error).__name__
        if code == 1 and not isinstance(error, ValueError | FileNotFoundError):
            message = f"{type(error).__name__}: {message} (--debug shows the traceback)"
        print(f"causalbandits: error: {message}", file=sys.stderr)
        return code


if __name__ == "__main__":
    sys.exit(main())
