"""Run an experiment spec as independent tasks over joblib (loky) or Ray, with resume.

A task is (setting, algorithm, chunk of ``spec.chunk_size`` replicates). Every random number
of a task is keyed by (setting, replicate, stream), and the split into tasks depends on the
spec only, so results are identical for any number of workers and either backend. The
environment's noise does not depend on the algorithm (common random numbers); each
algorithm's own randomness comes from a stream keyed by its label.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from threadpoolctl import threadpool_limits
from tqdm.auto import tqdm

from causalbandits import __version__
from causalbandits.experiments.change_metrics import detection_columns
from causalbandits.experiments.recorders import RECORDERS, default_recorders
from causalbandits.experiments.simulate import results_frame, simulate
from causalbandits.experiments.spec import ExperimentSpec, resolve_environment, resolve_policy
from causalbandits.experiments.store import (
    TASKS,
    ManifestError,
    file_digest,
    load_results,
    notice,
    read_manifest,
    task_fingerprint,
    task_path,
    write_manifest,
    write_task_frame,
)
from causalbandits.random import Stream, policy_stream, replicate_seeds

BACKENDS = ("loky", "ray")


@dataclass(frozen=True)
class Task:
    """One unit of work: replicates ``start..stop-1`` of one (setting, algorithm)."""

    setting: int
    algorithm: int
    chunk: int
    start: int
    stop: int

    @property
    def id(self) -> str:
        return f"s{self.setting:03d}-a{self.algorithm:03d}-c{self.chunk:05d}"


def make_tasks(spec: ExperimentSpec) -> list[Task]:
    """All tasks of a spec, settings outermost, then algorithms, then replicate chunks."""
    starts = range(0, spec.replicates, spec.chunk_size)
    return [
        Task(s, a, c, start, min(start + spec.chunk_size, spec.replicates))
        for s in range(len(spec.settings))
        for a in range(len(spec.algorithms))
        for c, start in enumerate(starts)
    ]


def build_environment(spec: ExperimentSpec, setting: int, replicates: Sequence[int]) -> Any:
    """The environment of ``replicates`` of one setting, reset with their noise streams.

    A factory with an ``instance_seeds`` parameter gets one instance seed per replicate
    (stream ``INSTANCE``), so that every replicate draws its own instance.
    """
    factory = resolve_environment(spec.environment)
    params = {**spec.env_params, **spec.settings[setting]}
    if "instance_seeds" in inspect.signature(factory).parameters:
        params["instance_seeds"] = replicate_seeds(spec.seed, setting, replicates, Stream.INSTANCE)
    env = factory(horizon=spec.horizon, **params)
    env.reset(replicate_seeds(spec.seed, setting, replicates, Stream.NOISE))
    return env


def build_policy(
    spec: ExperimentSpec, algorithm: int, setting: int, env: Any, replicates: Sequence[int]
) -> Any:
    """Algorithm ``algorithm`` of ``spec`` for ``env`` (see :class:`AlgorithmSpec`), reset
    with its own stream."""
    entry = spec.algorithms[algorithm]
    cls = resolve_policy(entry.policy)
    params = entry.params_for(spec.settings[setting])
    maker = getattr(cls, "from_environment", None)
    policy = maker(env, **params) if maker is not None else cls(env.problem, **params)
    policy.reset(replicate_seeds(spec.seed, setting, replicates, policy_stream(entry.label)))
    return policy


def validate(spec: ExperimentSpec) -> None:
    """Build one environment and one policy per (setting, algorithm) in this process, so that
    an unknown or mistyped parameter fails at once, before any output exists.

    Raises ``ValueError`` naming the setting or algorithm."""
    for setting in range(len(spec.settings)):
        try:
            env = build_environment(spec, setting, [0])
        except (TypeError, ValueError) as error:
            raise ValueError(f"{spec.name}: environment of setting {setting}: {error}") from error
        for algorithm, entry in enumerate(spec.algorithms):
            try:
                build_policy(spec, algorithm, setting, env, [0])
            except (TypeError, ValueError) as error:
                raise ValueError(
                    f"{spec.name}: algorithm {entry.label!r} in setting {setting}: {error}"
                ) from error


def run_task(spec: ExperimentSpec, task: Task) -> pd.DataFrame:
    """Simulate one task with one BLAS thread; return its rows of the long results table."""
    setting = spec.settings[task.setting]
    replicates = range(task.start, task.stop)
    with threadpool_limits(limits=1):
        env = build_environment(spec, task.setting, replicates)
        policy = build_policy(spec, task.algorithm, task.setting, env, replicates)
        recorders = [*default_recorders(), *(RECORDERS[name](env) for name in spec.recorders)]
        result = simulate(env, policy, np.asarray(spec.checkpoints), recorders)
    return results_frame(
        result,
        spec.algorithms[task.algorithm].label,
        replicates,
        detection_columns(env, policy),
        experiment=spec.name,
        setting=task.setting,
        **setting,
    )


def utc_now() -> str:
    """The current UTC time to the second, ISO 8601 (manifest timestamps)."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def config_fingerprint(config: Mapping[str, Any]) -> str:
    """A stable hash (16 hex digits) of everything that fixes an experiment's numbers: its
    configuration and the package version (a resume after an update never mixes versions)."""
    text = json.dumps({"config": config, "version": __version__}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def run_header(name: str, config: dict[str, Any]) -> dict[str, Any]:
    """The manifest header (:func:`open_manifest`) of the run-based experiment ``name``."""
    return {
        "experiment": name,
        "kind": "run",
        "fingerprint": config_fingerprint(config),
        "config": config,
    }


def open_manifest(
    out_dir: Path, header: dict[str, Any], records: list[dict[str, Any]]
) -> dict[str, Any]:
    """Create the manifest of ``out_dir``, or check and reconcile an existing one.

    ``header`` describes the experiment (at least ``experiment`` and ``fingerprint``);
    ``records`` has one dict per task with its ``id``. An existing manifest must carry the
    same fingerprint, unless no task has finished (then the folder is reused). A task is
    done when its file exists and matches the manifest's SHA-256; a corrupt file is removed
    and recomputed. A missing or unreadable manifest is rebuilt from the task files when
    they carry this run's fingerprint.
    """
    try:
        manifest = read_manifest(out_dir)
    except ManifestError as error:
        notice(f"{error}; rebuilding it from the task files")
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
    if manifest is None:
        files = sorted((out_dir / TASKS).glob("*.parquet"))
        foreign = [p.name for p in files if task_fingerprint(p) != fingerprint]
        if foreign:
            raise ValueError(
                f"{out_dir} holds task files of another configuration or unreadable ones "
                f"({foreign[0]}, ...) and no manifest for them; use an empty directory"
            )
        if files:
            notice(f"rebuilt the manifest of {out_dir} from {len(files)} task files")
        manifest = {
            **header,
            "version": __version__,
            "metadata": {},
            "created": utc_now(),
            "wall_time": 0.0,
            "runs": [],
            "tasks": records,
        }
        for record in records:
            path = task_path(out_dir, record["id"])
            record["sha256"] = file_digest(path) if path.exists() else None
    for record in manifest["tasks"]:
        path = task_path(out_dir, record["id"])
        intact = path.exists() and record.get("sha256") == file_digest(path)
        if path.exists() and not intact:
            notice(f"{path} does not match its checksum; recomputing it")
            path.unlink()
        elif record.get("status") == "done" and not intact:
            notice(f"{path} is missing; recomputing it")
        record["status"] = "done" if intact else "pending"
    return manifest


def _timed(run_one: Callable[[Any, Any], pd.DataFrame], context: Any, task: Any) -> tuple:
    begin = time.perf_counter()
    frame = run_one(context, task)
    return task, frame, time.perf_counter() - begin


def execute_tasks(
    run_one: Callable[[Any, Any], pd.DataFrame],
    context: Any,
    todo: Sequence[Any],
    jobs: int,
    backend: str = "loky",
) -> Iterator[tuple[Any, pd.DataFrame, float]]:
    """``(task, run_one(context, task), seconds)`` for every task, in order of completion.

    ``backend="loky"`` uses joblib processes; ``"ray"`` a Ray cluster (started locally with
    ``jobs`` CPUs when none is running), with ``context`` shipped once to the object store.
    """
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose from {BACKENDS}")
    if backend == "loky":
        parallel = Parallel(n_jobs=jobs, backend="loky", return_as="generator_unordered")
        yield from parallel(delayed(_timed)(run_one, context, task) for task in todo)
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
) -> pd.DataFrame:
    """Run the unfinished ``tasks`` (each with an ``id``) into ``out_dir``; return all results.

    ``run_one(context, task)`` gives a task's rows; each finished task is stored at once, so
    a killed run resumes where it stopped when called again with the same ``header``
    (see :func:`open_manifest`; ``records`` are the tasks' manifest entries). ``order`` sorts
    the unfinished tasks (e.g. longest first); it changes no number. ``metadata`` is stored
    in the manifest (e.g. the catalogue name of a paper preset).
    """
    start = time.perf_counter()
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose from {BACKENDS}")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or (jobs < 1 and jobs != -1):
        raise ValueError(f"jobs must be a positive number of workers or -1 (all cores), got {jobs}")
    out_dir = Path(out_dir)
    (out_dir / TASKS).mkdir(parents=True, exist_ok=True)
    for stale in (out_dir / TASKS).glob("*.tmp-*"):
        stale.unlink()
    manifest = open_manifest(out_dir, header, records)
    manifest["metadata"].update(metadata or {})
    by_id = {record["id"]: record for record in manifest["tasks"]}
    todo = [task for task in tasks if by_id[task.id]["status"] != "done"]
    if order is not None:
        todo.sort(key=order)
    run = {"started": utc_now(), "jobs": jobs, "backend": backend, "version": __version__}
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
    try:
        for task, frame, seconds in execute_tasks(run_one, context, todo, jobs, backend):
            digest = write_task_frame(out_dir, task.id, frame, header["fingerprint"])
            by_id[task.id].update(
                status="done", sha256=digest, seconds=round(seconds, 3), finished=utc_now()
            )
            finished += 1
            write_manifest(out_dir, manifest)
            bar.update()
    finally:
        bar.close()
        wall = time.perf_counter() - start
        run.update(finished=utc_now(), seconds=round(wall, 3), tasks_run=finished)
        run["complete"] = finished == len(todo)
        manifest["wall_time"] = round(manifest["wall_time"] + wall, 3)
        write_manifest(out_dir, manifest)
    return load_results(out_dir)


def run_experiment(
    spec: ExperimentSpec,
    out_dir: str | Path,
    *,
    jobs: int = 1,
    backend: str = "loky",
    progress: bool = True,
    metadata: dict[str, Any] | None = None,
) -> pd.DataFrame:
    """Run the unfinished tasks of ``spec`` into ``out_dir``; return all results.

    Each finished task is stored at once, so a killed run resumes where it stopped when
    called again with the same spec. ``jobs`` counts worker processes (-1: all cores);
    ``metadata`` is stored in the manifest (e.g. the catalogue name of a paper preset).
    """
    with threadpool_limits(limits=1):
        validate(spec)
    tasks = make_tasks(spec)
    header = {
        "experiment": spec.name,
        "fingerprint": config_fingerprint({"spec": spec.fingerprint()}),
        "spec": spec.to_dict(),
    }
    records = [
        {
            "id": t.id,
            "setting": t.setting,
            "algorithm": spec.algorithms[t.algorithm].label,
            "replicates": [t.start, t.stop],
        }
        for t in tasks
    ]
    return run_tasks(
        out_dir,
        header,
        tasks,
        records,
        run_task,
        spec,
        jobs=jobs,
        backend=backend,
        progress=progress,
        metadata=metadata,
    )
