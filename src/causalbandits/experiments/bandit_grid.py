"""Grid experiments that run the round loop: a :class:`~causalbandits.experiments.grid.
TaskGrid` whose task body is assembled from hooks.

A task of a :class:`BanditGrid` is one chunk of replicates at one grid point. The base builds
the environment (:meth:`~BanditGrid.make_environment`) and resets it with the replicates'
noise streams, builds the policy (:meth:`~BanditGrid.make_policy`) and resets it with its own
streams (:meth:`~BanditGrid.policy_seeds`: by default :func:`~causalbandits.random.
policy_stream` of the row label, so that every algorithm meets the same noise), runs
:func:`~causalbandits.experiments.simulate.simulate` with the grid's recorders
(:meth:`~BanditGrid.make_recorders`) at its rounds (:meth:`~BanditGrid.recorded_rounds`), and
turns the result into rows (:meth:`~BanditGrid.table`: the long table of
:func:`~causalbandits.experiments.simulate.results_frame` plus :meth:`~BanditGrid.columns`);
:meth:`~BanditGrid.finish` post-processes a chunk's rows (derived columns, column order).
``PER_REPLICATE = True`` runs each replicate on its own (optimisers that carry no replicate
axis, learners whose cost depends on the replicate's data). A subclass writes what differs
and no loop over rounds or replicates.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from causalbandits.experiments.grid import TaskGrid
from causalbandits.experiments.recorders import Recorder, default_recorders
from causalbandits.experiments.simulate import results_frame, simulate
from causalbandits.random import Stream, policy_stream


def regular_rounds(horizon: int, every: int, *extra: Sequence[int]) -> np.ndarray:
    """Every ``every``-th round, the rounds of ``extra`` and ``horizon``: increasing, unique
    1-based rounds (e.g. a grid's recorded rounds with the last round of each period)."""
    regular = np.arange(every, horizon + 1, every)
    rounds = np.concatenate([regular, *(np.asarray(r, dtype=np.int64) for r in extra), [horizon]])
    return np.unique(rounds).astype(np.int64)


@dataclasses.dataclass
class BanditRun:
    """One run of the round loop inside a task: what the hooks read, filled as it goes."""

    #: The grid point (axis name -> value) and its index.
    point: Mapping[str, Any]
    setting: int
    #: The replicates run at once (one of them with ``PER_REPLICATE``).
    replicates: Sequence[int]
    #: The row label of the algorithm run (:meth:`BanditGrid.point_algorithms`).
    algorithm: str = ""
    #: What a grid's hooks share within the run (e.g. a replicate's data instance).
    context: dict[str, Any] = dataclasses.field(default_factory=dict)
    env: Any = None
    policy: Any = None
    recorders: list[Recorder] = dataclasses.field(default_factory=list)
    #: :func:`~causalbandits.experiments.simulate.simulate`'s result.
    result: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True, kw_only=True)
class BanditGrid(TaskGrid):
    """A task grid whose tasks run the one round loop (module docstring).

    To implement: :meth:`axes`, :meth:`make_environment`, :meth:`make_policy` and
    :meth:`recorded_rounds`; optional: :meth:`label`, :meth:`point_algorithms`,
    :meth:`noise_seeds`, :meth:`policy_seeds`, :meth:`make_recorders`, :meth:`columns`,
    :meth:`table`, :meth:`finish`. Models: ``papers/ndc_sem/synthetic.py`` (a vectorised
    grid), ``papers/excbo/comparison.py`` (optimisers, one seed at a time),
    ``papers/ndc_sem/covid.py`` (data, two policies per replicate, a tuning stage), and
    :class:`~causalbandits.experiments.protocol.SpecExperiment` (the grid a spec declares).
    """

    #: Run each replicate of a chunk on its own (no replicate axis in the policy).
    PER_REPLICATE: ClassVar[bool] = False
    #: The hooks, which no field may shadow.
    HOOKS: ClassVar[tuple[str, ...]] = (
        *("make_environment", "noise_seeds", "make_policy", "label", "point_algorithms"),
        *("policy_seeds", "recorded_rounds", "make_recorders", "columns", "table", "finish"),
    )

    def __post_init__(self) -> None:
        shadowing = sorted({f.name for f in dataclasses.fields(self)} & set(self.HOOKS))
        if shadowing:
            raise TypeError(f"{type(self).__name__}: fields shadow BanditGrid hooks: {shadowing}")
        super().__post_init__()

    # ------------------------------------------------------------ hooks

    def make_environment(self, run: BanditRun) -> Any:
        """The environment of ``run.replicates`` at ``run.point`` (reset by the base with
        :meth:`noise_seeds`)."""
        raise NotImplementedError

    def noise_seeds(self, run: BanditRun) -> Any:
        """What the environment is reset with: the replicates' ``NOISE`` streams."""
        return self.seeds(run.setting, run.replicates, Stream.NOISE)

    def make_policy(self, run: BanditRun) -> Any:
        """A fresh policy for ``run.env`` (reset by the base with :meth:`policy_seeds`)."""
        raise NotImplementedError

    def label(self, point: Mapping[str, Any]) -> str:
        """The ``algorithm`` of the rows (default: the point's ``algorithm``)."""
        return str(point["algorithm"])

    def point_algorithms(self, point: Mapping[str, Any]) -> Sequence[str]:
        """The algorithms a task at ``point`` runs, one loop each, on the same replicates
        (default: the one of :meth:`label`; several share what a task reads, e.g. data)."""
        return [self.label(point)]

    def policy_seeds(self, run: BanditRun) -> Any:
        """What the policy is reset with: the replicates' streams of the row label."""
        return self.seeds(run.setting, run.replicates, policy_stream(run.algorithm))

    def recorded_rounds(self, run: BanditRun) -> int | np.ndarray:
        """The recorded rounds (1-based, increasing) or their count."""
        raise NotImplementedError

    def make_recorders(self, run: BanditRun) -> list[Recorder]:
        """What the loop records (default: cumulative regret and optimal share)."""
        return default_recorders()

    def columns(self, run: BanditRun) -> dict[str, Any]:
        """Columns written before ``algorithm`` in every row (default: ``experiment`` and
        ``setting``, the index of the grid point, which is all ``setting`` ever means)."""
        return {"experiment": self.name, "setting": run.setting}

    def table(self, run: BanditRun) -> pd.DataFrame:
        """The rows of a finished run: one per (replicate, checkpoint)."""
        return results_frame(run.result, run.algorithm, run.replicates, **self.columns(run))

    def finish(self, frame: pd.DataFrame, point: Mapping[str, Any]) -> pd.DataFrame:
        """A chunk's rows, all its runs together (derived columns, column order)."""
        return frame

    # ------------------------------------------------------------ the task body

    def run_chunk(self, point: Mapping[str, Any], setting: int, replicates: range) -> pd.DataFrame:
        """The rows of ``replicates`` at ``point``: one run of the loop per algorithm
        (:meth:`point_algorithms`) for all of them, or for each replicate (``PER_REPLICATE``)."""
        groups = [[r] for r in replicates] if self.PER_REPLICATE else [replicates]
        frames = [
            self.run_loop(BanditRun(point, setting, group, algorithm))
            for group in groups
            for algorithm in self.point_algorithms(point)
        ]
        return self.finish(pd.concat(frames, ignore_index=True), point)

    def prepare(self, run: BanditRun) -> BanditRun:
        """``run`` set up, not run: its environment and policy built and reset with their
        streams, its recorders made (what a task runs; tests and notebooks start here).
        ``run.algorithm`` defaults to the point's :meth:`label`."""
        run.algorithm = run.algorithm or self.label(run.point)
        run.env = self.reset_environment(run)
        run.policy = self.make_policy(run)
        run.policy.reset(self.policy_seeds(run))
        run.recorders = self.make_recorders(run)
        return run

    def reset_environment(self, run: BanditRun) -> Any:
        """``run``'s environment (:meth:`make_environment`) reset with :meth:`noise_seeds`."""
        env = self.make_environment(run)
        env.reset(self.noise_seeds(run))
        return env

    def run_loop(self, run: BanditRun) -> pd.DataFrame:
        """:meth:`prepare`, the round loop, the rows (:meth:`table`)."""
        self.prepare(run)
        run.result = simulate(run.env, run.policy, self.recorded_rounds(run), run.recorders)
        return self.table(run)
