"""Every experiment: a grid of settings times chunks of replicates.

A subclass (a keyword-only frozen dataclass) declares its ``axes`` (e.g. graph size and
sample size) and ``run_chunk(point, setting, replicates)``, the rows of one chunk of
replicates at one grid point (:class:`~causalbandits.experiments.bandit_grid.BanditGrid`
assembles it from hooks for grids that run the round loop; a bandit spec declares one,
:class:`~causalbandits.experiments.protocol.SpecExperiment`). The base owns the fields
every grid has (name, seed, replicates, chunk size, description, data path) and derives
everything else: the tasks and their ids, the seeds (the one layout of
:mod:`causalbandits.random`, the seed key being the point's index on the ``SEED_AXES``), the
configuration, fingerprint and manifest, resume, the progress bar, loky or Ray, and
``with_replicates``. The numbers depend on the configuration only, never on the number of
workers or the backend.

A grid may have a ``prerequisite`` (e.g. a tuning stage) that runs first into the same
directory and manifest; :meth:`TaskGrid.given` then sets the grid up from its results.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from causalbandits.experiments.runner import config_fingerprint, run_tasks
from causalbandits.experiments.spec import plain
from causalbandits.experiments.store import file_digest
from causalbandits.random import replicate_seeds
from causalbandits.validation import count, shown

Grid = TypeVar("Grid", bound="TaskGrid")


@dataclasses.dataclass(frozen=True)
class GridTask:
    """Replicates ``start..stop-1`` at grid point ``index`` (one index per axis)."""

    index: tuple[int, ...]
    setting: int
    chunk: int
    start: int
    stop: int
    prefix: str = ""
    #: One letter per axis before its index in the id (default: ``p`` for every axis).
    letters: str = ""

    @property
    def id(self) -> str:
        letters = self.letters or "p" * len(self.index)
        cells = [f"{letter}{i:03d}" for letter, i in zip(letters, self.index, strict=True)]
        return self.prefix + "-".join([*cells, f"c{self.chunk:05d}"])


@dataclasses.dataclass(frozen=True, kw_only=True)
class TaskGrid:
    """Base of grid experiments (see the module docstring): a keyword-only frozen dataclass.

    The base owns the fields every grid has, their validation, the one BLAS thread per task
    and the data file's resolution:

    name: the catalogue name (the ``experiment`` column of most grids).
    seed: the root seed (:func:`~causalbandits.random.replicate_seeds`).
    replicates: independent replicates per grid point (:attr:`replicate_count` may read
        another field, e.g. a tuning stage's).
    chunk_size: replicates per task (fixes the task split, so no number depends on workers).
    description: one line for listings; not fingerprinted.
    data_path: the data file or folder of a grid that reads data (:attr:`DATA`); ``None``:
        the default location. The path is never fingerprinted, the files' SHA-256 are.

    Subclasses are ``@dataclass(frozen=True, kw_only=True)`` and implement :meth:`axes` and
    :meth:`run_chunk`, and put their own checks in :meth:`check` (called after the shared
    ones); they may override :meth:`task_cost` (tasks run cheapest-last, so the long ones
    start first), :meth:`write_tables`, :meth:`plot` and :meth:`report`. Fields named in
    ``UNFINGERPRINTED`` (default: ``description``) do not change numbers.
    """

    name: str
    seed: int = 0
    replicates: int = 1
    chunk_size: int = 1
    description: str = ""
    data_path: str | None = None

    UNFINGERPRINTED: ClassVar[tuple[str, ...]] = ("description",)
    #: How a grid that reads data finds them: ``staticmethod(resolve)`` with ``resolve(path
    #: or None) -> Path`` (the default location, an environment variable); ``None``: the
    #: grid reads no data (``--data`` is refused).
    DATA: ClassVar[Callable[[str | None], Path] | None] = None
    #: The grid's figures and report when a module draws them (like :attr:`DATA`:
    #: ``staticmethod(draw)``): ``FIGURES(df, out_dir, grid) -> paths`` and ``REPORT(df, grid)
    #: -> markdown``; ``None``: none (:meth:`plot`, :meth:`report`).
    FIGURES: ClassVar[Callable[[pd.DataFrame, Path, Any], list[Path]] | None] = None
    REPORT: ClassVar[Callable[[pd.DataFrame, Any], str] | None] = None
    #: The axes whose values change the seeds (``None``: all axes). Points that differ only
    #: on the other axes (e.g. the algorithm) draw the same numbers: common random numbers.
    SEED_AXES: ClassVar[tuple[str, ...] | None] = None
    #: BLAS / OpenMP threads of a task (:func:`threadpoolctl.threadpool_limits`; ``None``:
    #: unlimited). One per task: the workers are the parallelism.
    THREADS: ClassVar[int | None] = 1
    #: One letter per axis in the task ids (``""``: ``p`` for every axis).
    ID_LETTERS: ClassVar[str] = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"name must be a non-empty string, got {shown(self.name)}")
        count("seed", self.seed, minimum=0)
        count("replicates", self.replicates)
        count("chunk_size", self.chunk_size)
        if not isinstance(self.description, str):
            raise ValueError(f"description must be a string, got {shown(self.description)}")
        if self.data_path is not None and not self.reads_data:
            raise ValueError(f"experiment {self.name!r} reads no data file; data_path must be None")
        self.check()

    def check(self) -> None:
        """A subclass's own validation and normalisation of its fields (after the shared
        checks of name, seed, replicates and chunk size); ``object.__setattr__`` normalises."""

    def distinct(self, name: str, allowed: Sequence[Any] | None = None) -> None:
        """Store field ``name`` (e.g. the algorithms) as a tuple; raise unless its values are
        distinct, at least one and, given ``allowed``, among ``allowed``."""
        values = tuple(getattr(self, name))
        unknown = allowed is not None and not set(values) <= set(allowed)
        if not values or len(set(values)) != len(values) or unknown:
            among = "and non-empty" if allowed is None else f"names from {tuple(allowed)}"
            raise ValueError(f"{name} must be distinct {among}, got {values}")
        object.__setattr__(self, name, values)

    def variant(
        self, suffix: str, description: str, kind: type[Grid] | None = None, **changes: Any
    ) -> Grid:
        """A named variant of this grid (e.g. a sensitivity of a preset): its fields with
        ``changes``, named ``<name>-<suffix>``, as a ``kind`` (a subclass; default: its own)."""
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.init}
        changes = {"name": f"{self.name}-{suffix}", "description": description, **changes}
        return (kind or type(self))(**{**fields, **changes})

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
        """Replicates per grid point (``replicates``; a stage may count another field)."""
        return int(self.replicates)

    @property
    def task_prefix(self) -> str:
        """Prefix of the task ids (tells the stages of a grid with a prerequisite apart)."""
        return ""

    @property
    def reads_data(self) -> bool:
        """Whether the grid reads a data file (:attr:`DATA`)."""
        return type(self).DATA is not None

    def config(self) -> dict[str, Any]:
        """Everything that fixes the numbers (JSON-ready): the fields but ``UNFINGERPRINTED``
        and ``data_path`` (the data's SHA-256 are fingerprinted instead, by :meth:`run`)."""
        data = dataclasses.asdict(self)
        for name in (*self.UNFINGERPRINTED, "data_path"):
            data.pop(name, None)
        return plain(data)

    def with_replicates(self, replicates: int) -> TaskGrid:
        """The same experiment with ``replicates`` replicates (``reproduce --replicates``)."""
        if int(replicates) < 1:
            raise ValueError(f"replicates must be >= 1, got {replicates}")
        return dataclasses.replace(self, replicates=int(replicates))

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
        size = int(self.chunk_size)
        count = self.replicate_count
        starts = range(0, count, size)
        naming = (self.task_prefix, self.ID_LETTERS)
        return [
            GridTask(index, setting, chunk, start, min(start + size, count), *naming)
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
        return replicate_seeds(self.seed, key, replicates, stream)

    def generator(self, setting: int, replicate: int, stream: int) -> np.random.Generator:
        """A generator of one replicate's stream."""
        return np.random.default_rng(self.seeds(setting, [replicate], stream)[0])

    def run_task(self, task: GridTask) -> pd.DataFrame:
        """The rows of ``task`` (with :attr:`THREADS` BLAS threads)."""
        point = self.points()[task.setting]
        replicates = range(task.start, task.stop)
        if self.THREADS is None:
            return self.run_chunk(point, task.setting, replicates)
        with threadpool_limits(limits=self.THREADS):
            return self.run_chunk(point, task.setting, replicates)

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

    def data_location(self) -> Path | None:
        """The absolute path of the data (``data_path`` resolved by :attr:`DATA`); ``None``
        for a grid that reads none."""
        resolve = type(self).DATA
        return None if resolve is None else Path(resolve(self.data_path)).resolve()

    def with_data(self, path: str | Path) -> TaskGrid:
        """The same experiment reading its data from ``path``."""
        if not self.reads_data:
            raise ValueError(f"experiment {self.name!r} reads no data file")
        return dataclasses.replace(self, data_path=str(path))

    def run(self, out_dir: str | Path, **options: Any) -> pd.DataFrame:
        """Run the unfinished tasks into ``out_dir``, the prerequisite's first; return the
        whole long table. ``options`` go to :func:`~causalbandits.experiments.runner.
        run_tasks` (``jobs``, ``backend``, ``progress``, ``metadata``,
        ``allow_code_change``). The data path is resolved first (absolute, for every
        worker; its name joins the manifest's metadata as ``data_file``), then the data are
        read and checked (:meth:`load_data`), before any output exists."""
        location = self.data_location()
        if location is not None and self.data_path != str(location):
            options["metadata"] = {**(options.get("metadata") or {}), "data_file": location.name}
            resolved = dataclasses.replace(self, data_path=str(location))
            return TaskGrid.run(resolved, out_dir, **options)
        self.load_data()
        first = self.prerequisite()
        stages = [self] if first is None else [first, self]
        header = self.header()
        records = [record for grid in stages for record in grid.records()]
        grid: TaskGrid = self
        if first is not None:
            grid = self.given(first.run_stage(out_dir, header, records, options))
        return grid.run_stage(out_dir, header, records, options)

    def header(self) -> dict[str, Any]:
        """The manifest header: the experiment's name, the configuration (:meth:`config`,
        with the data files' SHA-256: a changed data file must not resume into results of
        the old one) and its fingerprint, which a resume must match."""
        config = self.config()
        files = self.data_files()
        if files:
            config["data_sha256"] = {name: file_digest(path) for name, path in files.items()}
        fingerprint = config_fingerprint(config)
        return {
            "experiment": self.name,
            "kind": "run",
            "fingerprint": fingerprint,
            "config": config,
        }

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
        """The figures of :attr:`FIGURES` drawn into ``out_dir``; their paths."""
        draw = type(self).FIGURES
        return [] if draw is None else draw(df, Path(out_dir), self)

    def report(self, df: pd.DataFrame) -> str:
        """The markdown report of :attr:`REPORT` (none: empty)."""
        write = type(self).REPORT
        return "" if write is None else write(df, self)
