"""A worker process for tests/test_study_reliability.py: opens a stored study by name and
asks or tells, as a user's process on another machine would.

    python study_worker.py URL NAME OUT COMMAND [ARGS...]

Every result is appended to the file ``OUT`` as one JSON line (written whole and flushed, so
the parent can poll it while the worker runs). Commands:

- ``loop N SEED GO [HOLD]``: write ``{"ready": pid}``, wait for the file ``GO``, then ``N``
  times: ask (write ``{"asked": number, "action": ...}``), wait for the file ``HOLD`` if
  given, play the action in the study's own environment (seeded ``SEED``) and tell the
  feedback (write ``{"told": number, "observation": ..., "objective": ...}``).
- ``join SPEC_JSON N SEED GO``: as ``loop``, but the study is created (or, if another worker
  was first, loaded) only once ``GO`` exists: workers starting at once on a fresh database.
- ``ask [hold]``: ask once and write ``{"asked": number, "action": ...}``; with ``hold``,
  then sleep until killed (a process that dies between ask and tell).
- ``tell NUMBER OBSERVATION_JSON``: tell and write ``{"told": number, "objective": ...}``.

With the environment variable ``CAUSALBANDITS_TEST_SLOW_BUMP=PATH`` the version bump inside
every locked transaction (after the transaction's writes) creates the file ``PATH`` and
sleeps, so the parent can kill the process in the middle of a transaction.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import causalbandits.studies.study as study_module
from causalbandits.lookup import resolve_environment
from causalbandits.studies import Study, StudySpec

#: Waits for the parent's files give up after this many seconds (a guard, never reached).
GUARD = 120.0


def write(out: Path, record: dict[str, Any]) -> None:
    """Append ``record`` to ``out`` as one JSON line in a single write."""
    with out.open("a") as handle:
        handle.write(json.dumps(record) + "\n")
        handle.flush()


def wait_for(path: Path) -> None:
    """Block until the file ``path`` exists."""
    deadline = time.monotonic() + GUARD
    while not path.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} never appeared")
        time.sleep(0.01)


def install_slow_bump(marker: Path) -> None:
    """Make every version bump signal ``marker`` and then hang inside its transaction.

    ``study.py`` imported ``bump`` by name, so its reference is the one replaced."""
    original = study_module.bump

    def slow_bump(connection: Any, study_id: int, version: int) -> int:
        result = original(connection, study_id, version)
        marker.write_text("inside the locked transaction\n")
        time.sleep(GUARD)
        return result

    study_module.bump = slow_bump


def start_when_told(out: Path, go: Path) -> None:
    """Report ready, then wait for the parent's ``go`` file (so that workers start at once)."""
    write(out, {"ready": os.getpid()})
    wait_for(go)


def loop(study: Study, out: Path, count: int, seed: int, hold: Path | None = None) -> None:
    """Ask, (wait for ``hold``,) play in the study's environment and tell, ``count`` times."""
    environment = resolve_environment(study.spec.problem)(**study.spec.params)
    environment.reset(seed=seed, replicates=1)
    for _ in range(count):
        number, action = study.ask()
        write(out, {"asked": number, "action": action})
        if hold is not None:
            wait_for(hold)
        feedback = np.asarray(environment.step(np.asarray(action)[None]))[0].tolist()
        objective = study.tell(number, feedback)
        write(out, {"told": number, "observation": feedback, "objective": objective})


def main(argv: list[str]) -> None:
    url, name, out_name, command, *args = argv
    out = Path(out_name)
    marker = os.environ.get("CAUSALBANDITS_TEST_SLOW_BUMP")
    if marker:
        install_slow_bump(Path(marker))
    if command == "join":
        spec = StudySpec.from_dict(json.loads(args[0]))
        start_when_told(out, Path(args[3]))
        study = Study.create(name, spec, url, load_if_exists=True)
        loop(study, out, int(args[1]), int(args[2]))
        return
    study = Study.load(name, url)
    if command == "loop":
        start_when_told(out, Path(args[2]))
        loop(study, out, int(args[0]), int(args[1]), Path(args[3]) if len(args) > 3 else None)
    elif command == "ask":
        number, action = study.ask()
        write(out, {"asked": number, "action": action})
        if args == ["hold"]:
            time.sleep(GUARD)
    elif command == "tell":
        number = int(args[0])
        objective = study.tell(number, json.loads(args[1]))
        write(out, {"told": number, "objective": objective})
    else:
        raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
