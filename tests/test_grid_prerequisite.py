"""TaskGrid with a prerequisite stage: one directory and manifest, the first stage's results
set up the second, resume."""

import dataclasses
import json
from typing import Any

import pandas as pd

from causalbandits.experiments.grid import TaskGrid


@dataclasses.dataclass(frozen=True)
class TwoStage(TaskGrid):
    """Stage 1 draws a number per replicate; stage 2 adds the stage-1 mean to its own draws."""

    replicates: int = 3
    chunk_size: int = 2
    seed: int = 5
    name: str = "two-stage"
    first: bool = False
    offset: float = 0.0

    UNFINGERPRINTED = ("first", "offset")

    @property
    def task_prefix(self) -> str:
        return "first-" if self.first else ""

    def axes(self) -> dict[str, Any]:
        return {"scale": (1.0, 10.0)}

    def prerequisite(self) -> TaskGrid | None:
        return None if self.first else dataclasses.replace(self, first=True)

    def given(self, results: pd.DataFrame) -> TaskGrid:
        return dataclasses.replace(self, offset=float(results["value"].mean()))

    def run_chunk(self, point: dict[str, Any], setting: int, replicates: range) -> pd.DataFrame:
        values = [
            point["scale"] * self.generator(setting, r, 0).random() + self.offset
            for r in replicates
        ]
        stage = "first" if self.first else "second"
        return pd.DataFrame({"stage": stage, "replicate": list(replicates), "value": values})


def test_the_prerequisite_runs_first_and_sets_up_the_grid(tmp_path):
    grid = TwoStage()
    df = grid.run(tmp_path, progress=False)
    first = df[df["stage"] == "first"]
    second = df[df["stage"] == "second"]
    assert len(first) == len(second) == 2 * 3
    offset = first["value"].mean()
    plain = dataclasses.replace(grid, first=True).run(tmp_path / "alone", progress=False)
    expected = plain["value"].to_numpy() + offset  # same seeds, shifted by stage 1's mean
    assert list(second["value"]) == list(expected)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    ids = [task["id"] for task in manifest["tasks"]]
    assert ids[:4] == [f"first-p00{p}-c0000{c}" for p in (0, 1) for c in (0, 1)]
    assert len(set(ids)) == 8 and all(task["status"] == "done" for task in manifest["tasks"])
    pd.testing.assert_frame_equal(grid.run(tmp_path, progress=False), df)  # resumes
