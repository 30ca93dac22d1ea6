"""The one executor of every experiment: independent tasks over joblib (loky) or Ray, with
resume (:meth:`~causalbandits.experiments.grid.TaskGrid.run` builds the tasks).

A task draws its random numbers from seeds keyed by (setting, replicate, stream)
(:mod:`causalbandits.random`), and the split into tasks depends on the configuration only,
so results are identical for any number of workers and either backend.

Nothing wrong lands silently: a resume never mixes task files of other code (each file
carries the digest of the package's source, :func:`code_digest`) unless told to, a run that
fails before its first task finishes leaves nothing on disk, and Ctrl-C stops the workers
quietly (they ignore SIGINT; the parent stops them).
"""

from __future__ import annotations

import functools
import hashlib
import json
import platform
import signal
import threading
import time
import warnings
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from datetime import datetime, timezone
from multiprocessing import resource_tracker
from pathlib import Path
from typing import Any

import pandas as pd
from joblib import Parallel, delayed, parallel_config
from tqdm.auto import tqdm

import causalbandits
from causalbandits import __version__
from causalbandits.experiments.store import (
    CODE_KEY,
    FINGERPRINT_KEY,
    MANIFEST,
    TASKS,
    ManifestError,
    file_digest,
    load_results,
    read_manifest,
    task_path,
    task_problem,
    task_tag,
    write_manifest,
    write_task_frame,
)
from causalbandits.notices import notice

BACKENDS = ("loky", "ray")


def utc_now() -> str:
    """The current UTC time to the second, ISO 8601 (manifest timestamps)."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def config_fingerprint(config: Mapping[str, Any]) -> str:
    """A stable hash (16 hex digits) of everything that fixes an experiment's numbers: its
    configuration and the package version (a resume after an update never mixes versions)."""
    text = json.dumps({"config": config, "version": __version__}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@functools.cache
def code_digest() -> str:
    """The SHA-256 (16 hex digits) of the code that computes the results: every ``*.py`` of
    the installed ``causalbandits`` package, by sorted relative path and bytes (once per
    process). Kept out of :func:`config_fingerprint`, so that a saved configuration stays
    comparable across versions; each task file carries it instead."""
    root = Path(causalbandits.__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py"), key=lambda p: p.relative_to(root).as_posix()):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:16]


#: Where Linux describes the processor (:func:`processor`).
CPUINFO = Path("/proc/cpuinfo")
#: Vector instruction sets by which NumPy's and PyTorch's kernels are chosen, widest first
#: (x86 ``flags``, Arm ``Features``).
VECTOR_SETS = ("avx512f", "avx2", "avx", "sve2", "sve", "asimd")


def describe_processor(cpuinfo: str, machine: str) -> str:
    """``"model, machine, widest vector set"`` from the text of ``/proc/cpuinfo`` (its first
    processor; parts it lacks are left out), e.g. ``"Intel(R) Xeon(R) Processor, x86_64,
    avx512f"``."""
    fields: dict[str, str] = {}
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    sets = set((fields.get("flags") or fields.get("Features") or "").split())
    widest = next((name for name in VECTOR_SETS if name in sets), "")
    model = fields.get("model name") or fields.get("Model") or ""
    return ", ".join(part for part in (model, machine, widest) if part)


@functools.cache
def processor() -> str:
    """The kind of processor this process computes on, recorded with every finished task:
    kernels chosen by instruction set add in different orders, so the same seed can give
    other floats on another kind (docs/reliability.md). Outside Linux, the platform's
    machine and processor names."""
    try:
        return describe_processor(CPUINFO.read_text(), platform.machine())
    except OSError:
        return ", ".join(filter(None, (platform.processor(), platform.machine()))) or "unknown"


class CodeChangedError(ValueError):
    """A resume whose finished tasks were computed by other code (see :func:`check_code`)."""


def open_manifest(
    out_dir: Path,
    header: dict[str, Any],
    records: list[dict[str, Any]],
    allow_code_change: bool = False,
) -> dict[str, Any]:
    """Create the manifest of ``out_dir``, or check and reconcile an existing one.

    ``header`` describes the experiment (at least ``experiment`` and ``fingerprint``);
    ``records`` has one dict per task with its ``id``. An existing manifest must carry the
    same fingerprint, unless no task has finished (then the folder is reused). A task is
    done when its file exists and matches the manifest's SHA-256; a corrupt file is removed
    and recomputed. A missing or unreadable manifest is rebuilt from the task files
    (:func:`rebuilt_manifest`). Finished tasks of other code are refused
    (:func:`check_code`) before anything is said or removed: a refusal is one line.
    """
    said = []
    try:
        manifest = read_manifest(out_dir)
    except ManifestError as error:
        said.append(f"{error}; rebuilding it from the task files")
        manifest = None
    fingerprint = header["fingerprint"]
    if manifest is not None and manifest.get("fingerprint") != fingerprint:
        if any(t.get("status") == "done" for t in manifest["tasks"]):
            raise ValueError(
                f"{out_dir} holds results of another configuration (fingerprint "
                f"{manifest.get('fingerprint')}, this one {fingerprint}); choose another "
                "output directory or delete it"
            )
        manifest = None
    failing: dict[Path, str] = {}
    if manifest is None:
        manifest, failing = rebuilt_manifest(out_dir, header, records)
        if any(r["sha256"] for r in records) or failing:
            said.append(f"rebuilt the manifest of {out_dir} from its task files")
    for record in manifest["tasks"]:
        path = task_path(out_dir, record["id"])
        intact = path.exists() and record.get("sha256") == file_digest(path)
        if path.exists() and not intact:
            failing.setdefault(path, f"{path} does not match its checksum")
        elif record.get("status") == "done" and not intact:
            failing[path] = f"{path} is missing"
        record["status"] = "done" if intact else "pending"
    check_code(out_dir, manifest, allow_code_change)
    for path, problem in failing.items():
        said.append(f"{problem}; recomputing it")
        path.unlink(missing_ok=True)
    for message in said:
        notice(message)
    return manifest


def rebuilt_manifest(
    out_dir: Path, header: dict[str, Any], records: list[dict[str, Any]]
) -> tuple[dict[str, Any], dict[Path, str]]:
    """A new manifest listing ``records``, and the task files of ``out_dir`` that fail their
    own content digest (path -> why: they are recomputed, never blessed). The files must carry
    this run's fingerprint: a file of another configuration, or whose footer cannot be read,
    is refused, as without a manifest nothing tells whose it is."""
    files = sorted((out_dir / TASKS).glob("*.parquet"))
    foreign = [p.name for p in files if task_tag(p, FINGERPRINT_KEY) != header["fingerprint"]]
    if foreign:
        raise ValueError(
            f"{out_dir} holds task files of another configuration or unreadable ones "
            f"({foreign[0]}, ...) and no manifest for them; use an empty directory"
        )
    failing = {path: problem for path in files if (problem := task_problem(path)) is not None}
    for record in records:
        path = task_path(out_dir, record["id"])
        usable = path.exists() and path not in failing
        record["sha256"] = file_digest(path) if usable else None
    manifest = {
        **header,
        "version": __version__,
        "metadata": {},
        "created": utc_now(),
        "wall_time": 0.0,
        "runs": [],
        "tasks": records,
    }
    return manifest, failing


def check_code(out_dir: Path, manifest: dict[str, Any], allow_code_change: bool) -> None:
    """Refuse, in one line, finished tasks of ``out_dir`` computed by other code than this
    process's (:func:`code_digest`; a file without a digest counts as ``"unknown"``), unless
    ``allow_code_change``: then the mix is accepted, and the manifest's ``code`` lists every
    digest its tasks were computed by."""
    ours = code_digest()
    done = [r["id"] for r in manifest["tasks"] if r["status"] == "done"]
    codes = [task_tag(task_path(out_dir, i), CODE_KEY) or "unknown" for i in done]
    others = sorted({c for c in codes if c != ours})
    if others and not allow_code_change:
        raise CodeChangedError(
            f"the code changed since {sum(c != ours for c in codes)} of the {len(done)} "
            f"finished tasks in {out_dir} were computed (code {', '.join(others)}, now "
            f"{ours}): start afresh with another --out folder, or pass --allow-code-change "
            "(allow_code_change=True) to mix them, recorded in the manifest"
        )
    used = manifest.get("code", [])
    manifest["code"] = used + [c for c in [*others, ours] if c not in used]


def _timed(run_one: Callable[[Any, Any], pd.DataFrame], context: Any, task: Any) -> tuple:
    """``(task, rows, seconds, processor)`` of one task, in the worker that ran it."""
    begin = time.perf_counter()
    frame = run_one(context, task)
    return task, frame, time.perf_counter() - begin, processor()


def ignore_interrupts() -> None:
    """The loky workers' initializer: SIGINT ignored (and unblocked, see
    :func:`interrupts_deferred`), so that Ctrl-C is the parent's alone to handle and no
    worker prints a traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Ctrl-C held back while the body starts worker processes, then raised: SIGINT is
    blocked in this thread, so that the workers inherit the block until
    :func:`ignore_interrupts` runs, and a SIGINT that another thread catches meanwhile is
    only recorded. The standard library's resource tracker is started first, as starting
    it unblocks SIGINT (Python 3.11). Outside the main thread nothing changes."""
    handler = signal.getsignal(signal.SIGINT)
    main = threading.current_thread() is threading.main_thread()
    if not hasattr(signal, "pthread_sigmask") or handler is None or not main:
        yield
        return
    caught: list[int] = []
    resource_tracker.ensure_running()
    signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        signal.signal(signal.SIGINT, handler)
    if caught:
        raise KeyboardInterrupt


def execute_tasks(
    run_one: Callable[[Any, Any], pd.DataFrame],
    context: Any,
    todo: Sequence[Any],
    jobs: int,
    backend: str = "loky",
) -> Iterator[tuple[Any, pd.DataFrame, float, str]]:
    """``(task, run_one(context, task), seconds, processor)`` for every task, in order of
    completion (the :func:`processor` of the worker that ran it).

    ``backend="loky"`` uses joblib processes (:func:`loky_results`); ``"ray"`` a Ray cluster
    (started locally with ``jobs`` CPUs when none is running), with ``context`` shipped once
    to the object store.
    """
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose from {BACKENDS}")
    if backend == "loky":
        yield from loky_results(run_one, context, todo, jobs)
        return
    try:
        import ray
    except ImportError as error:
        raise ImportError("the Ray backend needs Ray: pip install causalbandits[ray]") from error
    if not ray.is_initialized():
        ray.init(num_cpus=jobs if jobs > 0 else None, include_dashboard=False)
    remote = ray.remote(num_cpus=1)(_timed)
    reference = ray.put(context)
    pending = [remote.remote(run_one, reference, task) for task in todo]
    try:
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            yield ray.get(done[0])
    finally:
        for ref in pending:
            ray.cancel(ref)


def loky_results(
    run_one: Callable[[Any, Any], pd.DataFrame], context: Any, todo: Sequence[Any], jobs: int
) -> Iterator[tuple[Any, pd.DataFrame, float, str]]:
    """:func:`execute_tasks` on joblib's loky processes, which ignore SIGINT: a Ctrl-C in the
    parent, or closing this generator, stops them without a word (``jobs=1`` runs the tasks
    in this process)."""
    with parallel_config(backend="loky", initializer=ignore_interrupts):
        parallel = Parallel(n_jobs=jobs, return_as="generator_unordered")
    results = None
    try:
        with interrupts_deferred() if jobs != 1 else nullcontext():
            results = parallel(delayed(_timed)(run_one, context, task) for task in todo)
        yield from results
    finally:
        if results is not None:
            close_quietly(results)


def close_quietly(results: Generator[Any, None, None]) -> None:
    """Close an unfinished results generator, which stops its workers, without joblib's
    warning that tasks were cancelled (a failed or interrupted run means to)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results.close()


@contextmanager
def removed_unless_a_task_finishes(out_dir: Path) -> Iterator[None]:
    """Create ``out_dir/tasks`` for the body; when the body fails while no task file exists,
    remove what it created (the manifest, and the folders when empty), so that a run that
    fails before its first task leaves nothing misleading on disk."""
    created = [p for p in (out_dir, out_dir / TASKS, out_dir / MANIFEST) if not p.exists()]
    (out_dir / TASKS).mkdir(parents=True, exist_ok=True)
    try:
        yield
    except BaseException:
        if not any((out_dir / TASKS).glob("*.parquet")):
            for path in reversed(created):
                if path.is_file():
                    path.unlink()
                elif path.is_dir() and not any(path.iterdir()):
                    path.rmdir()
        raise


def run_tasks(
    out_dir: str | Path,
    header: dict[str, Any],
    tasks: Sequence[Any],
    records: list[dict[str, Any]],
    run_one: Callable[[Any, Any], pd.DataFrame],
    context: Any,
    *,
    jobs: int = 1,
    backend: str = "loky",
    progress: bool = True,
    metadata: dict[str, Any] | None = None,
    order: Callable[[Any], Any] | None = None,
    allow_code_change: bool = False,
) -> pd.DataFrame:
    """Run the unfinished ``tasks`` (each with an ``id``) into ``out_dir``; return all results.

    ``run_one(context, task)`` gives a task's rows; each finished task is stored at once, so
    a killed run resumes where it stopped when called again with the same ``header``
    (see :func:`open_manifest`; ``records`` are the tasks' manifest entries). ``order`` sorts
    the unfinished tasks (e.g. longest first); it changes no number. ``metadata`` is stored
    in the manifest (e.g. the catalogue name of a paper preset). ``allow_code_change``
    accepts finished tasks of other code (:func:`check_code`). A run that fails before its
    first task finishes leaves nothing behind (:func:`removed_unless_a_task_finishes`).
    """
    start = time.perf_counter()
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose from {BACKENDS}")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or (jobs < 1 and jobs != -1):
        raise ValueError(f"jobs must be a positive number of workers or -1 (all cores), got {jobs}")
    out_dir = Path(out_dir)
    with removed_unless_a_task_finishes(out_dir):
        for stale in (out_dir / TASKS).glob("*.tmp-*"):
            stale.unlink()
        manifest = open_manifest(out_dir, header, records, allow_code_change)
        manifest["metadata"].update(metadata or {})
        by_id = {record["id"]: record for record in manifest["tasks"]}
        todo = [task for task in tasks if by_id[task.id]["status"] != "done"]
        if order is not None:
            todo.sort(key=order)
        run = {"started": utc_now(), "jobs": jobs, "backend": backend, "version": __version__}
        run["code"] = code_digest()
        if allow_code_change:
            run["allow_code_change"] = True
        manifest["runs"].append(run)
        write_manifest(out_dir, manifest)
        finished = 0
        bar = tqdm(
            total=len(tasks),
            initial=len(tasks) - len(todo),
            desc=header["experiment"],
            unit="task",
            disable=None if progress else True,
        )
        results = execute_tasks(run_one, context, todo, jobs, backend)
        try:
            for task, frame, seconds, computed_on in results:
                digest = write_task_frame(
                    out_dir, task.id, frame, header["fingerprint"], run["code"]
                )
                by_id[task.id].update(
                    status="done",
                    sha256=digest,
                    seconds=round(seconds, 3),
                    finished=utc_now(),
                    processor=computed_on,
                )
                finished += 1
                write_manifest(out_dir, manifest)
                bar.update()
        finally:
            close_quietly(results)
            bar.close()
            wall = time.perf_counter() - start
            run.update(finished=utc_now(), seconds=round(wall, 3), tasks_run=finished)
            run["complete"] = finished == len(todo)
            manifest["wall_time"] = round(manifest["wall_time"] + wall, 3)
            write_manifest(out_dir, manifest)
    return load_results(out_dir, [task.id for task in tasks])
