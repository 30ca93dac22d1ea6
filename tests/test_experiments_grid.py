"""Task-grid experiments: tasks, seeds, resume, replicates and worker-count independence."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from causalbandits.experiments import TaskGrid
from causalbandits.experiments.store import task_path
from causalbandits.random import Stream, replicate_seeds


@dataclass(frozen=True)
class MeanOfDraws(TaskGrid):
    """Per replicate: the mean of ``n`` standard normal draws (expected 0, variance 1/n)."""

    sizes: tuple[int, ...] = (1, 4, 16)
    offsets: tuple[float, ...] = (0.0, 10.0)
    replicates: int = 5
    chunk_size: int = 2
    seed: int = 3
    name: str = "mean-of-draws"
    description: str = "a tiny grid"

    def axes(self) -> dict[str, tuple]:
        return {"n": self.sizes, "offset": self.offsets}

    def run_chunk(self, point: dict, setting: int, replicates: range) -> pd.DataFrame:
        values = [
            point["offset"]
            + self.generator(setting, r, Stream.SAMPLE).standard_normal(point["n"]).mean()
            for r in replicates
        ]
        return pd.DataFrame({**point, "replicate": list(replicates), "value": values})


def test_tasks_cover_every_point_and_replicate_once() -> None:
    grid = MeanOfDraws()
    tasks = grid.tasks()
    assert len(tasks) == 3 * 2 * 3  # points x chunks of (2, 2, 1)
    covered = {(t.setting, r) for t in tasks for r in range(t.start, t.stop)}
    assert covered == {(s, r) for s in range(6) for r in range(5)}
    assert len({t.id for t in tasks}) == len(tasks)
    assert grid.points()[1] == {"n": 1, "offset": 10.0}


def test_seeds_follow_the_one_layout() -> None:
    grid = MeanOfDraws()
    expected = np.random.default_rng(replicate_seeds(3, 4, [2], Stream.SAMPLE)[0]).random()
    assert grid.generator(4, 2, Stream.SAMPLE).random() == expected


@dataclass(frozen=True)
class CommonOffsets(MeanOfDraws):
    """The same draws at every offset: only the size changes the seeds."""

    SEED_AXES = ("n",)


def test_seed_axes_give_common_random_numbers_across_the_other_axes() -> None:
    grid = CommonOffsets()
    points = grid.points()  # (n, offset): (1, 0), (1, 10), (4, 0), (4, 10), (16, 0), (16, 10)
    assert [grid.seed_setting(s) for s in range(len(points))] == [0, 0, 1, 1, 2, 2]
    same_n = [grid.generator(s, 1, Stream.SAMPLE).random() for s in (2, 3)]
    assert same_n[0] == same_n[1]
    assert grid.generator(0, 1, Stream.SAMPLE).random() != same_n[0]
    expected = np.random.default_rng(replicate_seeds(3, 2, [1], Stream.SAMPLE)[0]).random()
    assert grid.generator(5, 1, Stream.SAMPLE).random() == expected


def test_seed_axes_must_name_grid_axes() -> None:
    @dataclass(frozen=True)
    class Misnamed(MeanOfDraws):
        SEED_AXES = ("size",)

    with pytest.raises(ValueError, match="size"):
        Misnamed().seeds(0, [0], Stream.SAMPLE)


def test_results_and_resume(tmp_path: Path) -> None:
    grid = MeanOfDraws()
    serial = grid.run(tmp_path / "one", progress=False)
    parallel = grid.run(tmp_path / "two", jobs=2, progress=False)
    pd.testing.assert_frame_equal(serial, parallel)
    assert len(serial) == 30
    means = serial.groupby(["n", "offset"])["value"].mean()
    assert np.all(np.abs(means.xs(10.0, level="offset") - 10.0) < 3.0)

    victim = task_path(tmp_path / "one", grid.tasks()[3].id)
    victim.unlink()
    resumed = grid.run(tmp_path / "one", progress=False)
    pd.testing.assert_frame_equal(serial, resumed)


def test_with_replicates_and_fingerprint(tmp_path: Path) -> None:
    grid = MeanOfDraws()
    more = grid.with_replicates(7)
    assert more.replicates == 7 and len(more.tasks()) == 3 * 2 * 4
    assert "description" not in grid.config()
    with pytest.raises(ValueError, match="replicates must be >= 1"):
        grid.with_replicates(0)
    grid.run(tmp_path, progress=False)
    with pytest.raises(ValueError, match="another configuration"):
        more.run(tmp_path, progress=False)
    # the first chunks of replicates are the same numbers whatever the total
    first = grid.run(tmp_path, progress=False)
    other = more.run(tmp_path / "more", progress=False)
    shared = other[other.replicate < 5].reset_index(drop=True)
    ordered = first.sort_values(["n", "offset", "replicate"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(
        shared.sort_values(["n", "offset", "replicate"]).reset_index(drop=True), ordered
    )


@dataclass(frozen=True)
class ScaledData(TaskGrid):
    """Reads one number from a data file and scales it per replicate."""

    replicates: int = 3
    chunk_size: int = 1
    seed: int = 0
    name: str = "scaled-data"
    description: str = ""
    DATA = staticmethod(Path)

    def axes(self) -> dict[str, tuple]:
        return {"factor": (1.0, 2.0)}

    def data_files(self) -> dict[str, Path]:
        return {"number": Path(self.data_path)}

    def run_chunk(self, point: dict, setting: int, replicates: range) -> pd.DataFrame:
        value = float(Path(self.data_path).read_text())
        return pd.DataFrame({"replicate": list(replicates), "value": point["factor"] * value})


def test_a_swapped_data_file_is_refused_not_mixed(tmp_path: Path) -> None:
    data = tmp_path / "number.txt"
    data.write_text("3.0")
    grid = ScaledData().with_data(data)
    first = grid.run(tmp_path / "out", progress=False)
    task_path(tmp_path / "out", grid.tasks()[0].id).unlink()
    data.write_text("4.0")  # the same path, other content
    with pytest.raises(ValueError, match="another configuration"):
        grid.run(tmp_path / "out", progress=False)
    data.write_text("3.0")
    pd.testing.assert_frame_equal(grid.run(tmp_path / "out", progress=False), first)
    with pytest.raises(ValueError, match="reads no data file"):
        MeanOfDraws().with_data(data)


def test_bad_worker_counts_are_rejected(tmp_path: Path) -> None:
    for jobs in (0, -2):
        with pytest.raises(ValueError, match="jobs must be"):
            MeanOfDraws().run(tmp_path, jobs=jobs, progress=False)


def test_distinct_fields_and_named_variants() -> None:
    grid = MeanOfDraws()
    object.__setattr__(grid, "sizes", [4, 1])
    grid.distinct("sizes")
    assert grid.sizes == (4, 1)
    object.__setattr__(grid, "sizes", (4, 4))
    with pytest.raises(ValueError, match=r"sizes must be distinct and non-empty"):
        grid.distinct("sizes")
    with pytest.raises(ValueError, match=r"offsets must be distinct names from \(0.0,\)"):
        grid.distinct("offsets", (0.0,))
    variant = MeanOfDraws().variant("big", "bigger draws", CommonOffsets, sizes=(64,))
    assert isinstance(variant, CommonOffsets) and variant.name == "mean-of-draws-big"
    assert (variant.description, variant.sizes, variant.seed) == ("bigger draws", (64,), 3)


@dataclass(frozen=True)
class Reported(MeanOfDraws):
    """A grid whose report and figures a module function writes."""

    FIGURES = staticmethod(lambda df, out_dir, grid: [out_dir / f"{grid.name}.png"])
    REPORT = staticmethod(lambda df, grid: f"# {grid.name}: {len(df)} rows")


def test_figures_and_report_hooks(tmp_path: Path) -> None:
    df = pd.DataFrame({"value": [1.0, 2.0]})
    assert MeanOfDraws().plot(df, tmp_path) == [] and MeanOfDraws().report(df) == ""
    assert Reported().plot(df, str(tmp_path)) == [tmp_path / "mean-of-draws.png"]
    assert Reported().report(df) == "# mean-of-draws: 2 rows"
