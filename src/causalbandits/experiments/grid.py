"""Experiments that are not one bandit spec: a grid of settings times chunks of replicates.

A subclass (a frozen dataclass) declares its ``axes`` (e.g. graph size and sample size),
its replicate field (``replicates`` by default) and ``run_chunk(point, replicates)``, the
rows of one chunk of replicates at one grid point. The base derives everything else: the
tasks and their ids, the seeds (the one layout of :mod:`causalbandits.random`, the setting
being the point's index on the ``SEED_AXES``), the configuration, fingerprint and manifest, resume,
the progress bar, loky or Ray, and ``with_replicates``. The numbers depend on the
configuration only, never on the number of workers or the backend.

A grid may have a ``prerequisite`` (e.g. a tuning stage) that runs first into the same
directory and manifest; :meth:`TaskGrid.given` then sets the grid up from its results.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from causalbandits.experiments.runner import run_header, run_tasks
from causalbandits.experiments.spec import plain
from causalbandits.experiments.store import file_digest
from causalbandits.random import replicate_seeds


@dataclasses.dataclass(frozen=True)
class GridTask:
    """Replicates ``start..stop-1`` at grid point ``index`` (one index per axis)."""

    index: tuple[int, ...]
    setting: int
    chunk: int
    start: int
    stop: int
    prefix: str = ""

    @property
    def id(self) -> str:
        return self.prefix + "-".join([*(f"p{i:03d}" for i in self.index), f"c{self.chunk:05d}"])


class TaskGrid:
    """Base of grid experiments (see the module docstring).

    Subclasses are frozen dataclasses with at least the fields ``name``, ``seed``,
    ``chunk_size`` and the replicate field, and implement :meth:`axes` and
    :meth:`run_chunk`; they may override :meth:`task_cost` (tasks run cheapest-last, so
    the long ones start first), :meth:`write_tables`, :meth:`plot` and :meth:`report`.
    Fields named in ``UNFINGERPRINTED`` (default: ``description``) do not change numbers.
    """

    replicate_field: ClassVar[str] = "replicates"
    #: Prefix of the task ids (tells the stages of a grid with a prerequisite apart).
    task_prefix: ClassVar[str] = ""
    UNFINGERPRINTED: ClassVar[tuple[str, ...]] = ("description",)
    #: The field holding the path of the data file the experiment reads (``None``: no data).
    DATA_FIELD: ClassVar[str | None] = None
    #: The axes whose values change the seeds (``None``: all axes). Points that differ only
    #: on the other axes (e.g. the algorithm) draw the same numbers: common random numbers.
    SEED_AXES: ClassVar[tuple[str, ...] | None] = None

    # ------------------------------------------------------------ to implement

    def axes(self) -> Mapping[str, Sequence[Any]]:
        """The grid: axis name -> its values (settings are their product, first axis outermost)."""
        raise NotImplementedError

    def run_chunk(self, point: Mapping[str, Any], setting: int, replicates: range) -> pd.DataFrame:
        """The rows of ``replicates`` at grid ``point`` (the ``setting``-th point)."""
        raise NotImplementedError

    def task_cost(self, point: Mapping[str, Any]) -> float:
        """A relative cost: expensive tasks are started first (changes no number)."""
        return 0.0

    def prerequisite(self) -> TaskGrid | None:
        """A grid run first into the same directory and manifest (e.g. tuning), whose results
        :meth:`given` turns into this grid's set-up; ``None``: no such stage."""
        return None

    def given(self, results: pd.DataFrame) -> TaskGrid:
        """This grid set up from its prerequisite's results (every task finished so far)."""
        return self

    # ------------------------------------------------------------ derived

    @property
    def replicate_count(self) -> int:
        return int(getattr(self, self.replicate_field))

    def config(self) -> dict[str, Any]:
        """Everything that fixes the numbers (JSON-ready)."""
        data = dataclasses.asdict(self)  # type: ignore[call-overload]
        for name in self.UNFINGERPRINTED:
            data.pop(name, None)
        return plain(data)

    def with_replicates(self, replicates: int) -> TaskGrid:
        """The same experiment with ``replicates`` replicates (``reproduce --replicates``)."""
        if int(replicates) < 1:
            raise ValueError(f"replicates must be >= 1, got {replicates}")
        return dataclasses.replace(self, **{self.replicate_field: int(replicates)})  # type: ignore[type-var]

    def points(self) -> list[dict[str, Any]]:
        """Every grid point, first axis outermost."""
        axes = self.axes()
        return [
            dict(zip(axes, values, strict=True)) for values in itertools.product(*axes.values())
        ]

    def tasks(self) -> list[GridTask]:
        """Points outermost, then chunks of ``chunk_size`` replicates."""
        axes = self.axes()
        indices = list(itertools.product(*(range(len(v)) for v in axes.values())))
        size = int(self.chunk_size)  # type: ignore[attr-defined]
        count = self.replicate_count
        starts = range(0, count, size)
        return [
            GridTask(index, setting, chunk, start, min(start + size, count), self.task_prefix)
            for setting, index in enumerate(indices)
            for chunk, start in enumerate(starts)
        ]

    def seed_setting(self, setting: int) -> int:
        """The setting of the seed key of grid point ``setting``: its index on the
        ``SEED_AXES`` (first axis outermost)."""
        axes = self.axes()
        if self.SEED_AXES is None:
            return int(setting)
        unknown = set(self.SEED_AXES) - set(axes)
        if unknown:
            raise ValueError(f"SEED_AXES names axes the grid lacks: {sorted(unknown)}")
        index = dict(zip(axes, self.point_index(setting), strict=True))
        key = 0
        for name in self.SEED_AXES:
            key = key * len(axes[name]) + index[name]
        return key

    def point_index(self, setting: int) -> tuple[int, ...]:
        """The index on every axis of grid point ``setting``."""
        sizes = [len(values) for values in self.axes().values()]
        return tuple(int(i) for i in np.unravel_index(setting, sizes)) if sizes else ()

    def seeds(self, setting: int, replicates: Sequence[int], stream: int) -> list:
        """The seed sequences of ``replicates`` at grid point ``setting`` and ``stream``:
        ``(seed_setting(setting), replicate, stream)``."""
        key = self.seed_setting(setting)
        return replicate_seeds(self.seed, key, replicates, stream)  # type: ignore[attr-defined]

    def generator(self, setting: int, replicate: int, stream: int) -> np.random.Generator:
        """A generator of one replicate's stream."""
        return np.random.default_rng(self.seeds(setting, [replicate], stream)[0])

    def run_task(self, task: GridTask) -> pd.DataFrame:
        points = self.points()
        return self.run_chunk(points[task.setting], task.setting, range(task.start, task.stop))

    def records(self) -> list[dict[str, Any]]:
        """The manifest entries of the tasks."""
        points = self.points()
        return [
            {"id": t.id, **plain(points[t.setting]), "replicates": [t.start, t.stop]}
            for t in self.tasks()
        ]

    def data_files(self) -> dict[str, Path]:
        """The data files the experiment reads (name -> path); their SHA-256 is part of the
        fingerprint. ``--data`` sets the path through :meth:`with_data`."""
        return {}

    def load_data(self) -> None:
        """Read and check the data files in this process, so that bad data fail before any
        output exists (default: the experiment reads none)."""

    def with_data(self, path: str | Path) -> TaskGrid:
        """The same experiment reading its data from ``path`` (``DATA_FIELD``)."""
        if self.DATA_FIELD is None:
            raise ValueError(f"experiment {self.name!r} reads no data file")  # type: ignore[attr-defined]
        return dataclasses.replace(self, **{self.DATA_FIELD: str(path)})  # type: ignore[type-var]

    def run(self, out_dir: str | Path, **options: Any) -> pd.DataFrame:
        """Run the unfinished tasks into ``out_dir``, the prerequisite's first; return the
        whole long table. ``options`` go to :func:`~causalbandits.experiments.runner.
        run_tasks` (``jobs``, ``backend``, ``progress``, ``metadata``,
        ``allow_code_change``). The data are read and checked first (:meth:`load_data`)."""
        self.load_data()
        first = self.prerequisite()
        stages = [self] if first is None else [first, self]
        config = self.config()
        files = self.data_files()
        if files:  # a changed data file must not resume into results of the old one
            config["data_sha256"] = {name: file_digest(path) for name, path in files.items()}
        header = run_header(self.name, config)  # type: ignore[attr-defined]
        records = [record for grid in stages for record in grid.records()]
        grid: TaskGrid = self
        if first is not None:
            grid = self.given(first.run_stage(out_dir, header, records, options))
        return grid.run_stage(out_dir, header, records, options)

    def run_stage(
        self,
        out_dir: str | Path,
        header: dict[str, Any],
        records: list[dict[str, Any]],
        options: dict[str, Any],
    ) -> pd.DataFrame:
        """Run this grid's unfinished tasks under a manifest ``header`` listing ``records``."""
        points = self.points()
        return run_tasks(
            out_dir,
            header,
            self.tasks(),
            records,
            type(self).run_task,
            self,
            order=lambda t: (-self.task_cost(points[t.setting]), t.setting, t.chunk),
            **options,
        )

    def write_tables(self, df: pd.DataFrame, out_dir: Path) -> list[Path]:
        """The long table as ``results.parquet`` and ``results.csv``."""
        paths = [Path(out_dir) / "results.parquet", Path(out_dir) / "results.csv"]
        df.to_parquet(paths[0], index=False)
        df.to_csv(paths[1], index=False)
        return paths

    def plot(self, df: pd.DataFrame, out_dir: Path) -> list[Path]:
        return []

    def report(self, df: pd.DataFrame) -> str:
        return ""
