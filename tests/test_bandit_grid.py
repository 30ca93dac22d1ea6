"""The one task model (issue 28): TaskGrid's shared fields and checks, BanditGrid's task body
from hooks, the one policy registry, and the plot kit's panels."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from causalbandits.envs.robust_lcb import make_environment
from causalbandits.experiments import plot_regret_curves
from causalbandits.experiments.bandit_grid import BanditGrid, BanditRun, regular_rounds
from causalbandits.experiments.grid import TaskGrid
from causalbandits.experiments.simulate import results_frame, simulate
from causalbandits.policies import POLICIES, Oracle
from causalbandits.random import Stream, policy_stream, replicate_seeds

HORIZON = 60


@dataclass(frozen=True, kw_only=True)
class Budgets(BanditGrid):
    """Two policies of the registry over two deviation budgets (a toy paper's grid)."""

    budgets: tuple[float, ...] = (0.0, 20.0)
    algorithms_run: tuple[str, ...] = ("ucb", "linsem-ucb")
    name: str = "toy-budgets"
    replicates: int = 3
    chunk_size: int = 2
    seed: int = 11

    #: Every algorithm meets the same noise at a budget.
    SEED_AXES = ("budget",)

    def axes(self) -> Mapping[str, Any]:
        return {"budget": self.budgets, "algorithm": self.algorithms_run}

    def make_environment(self, run: BanditRun) -> Any:
        return make_environment(horizon=HORIZON, deviation_budget=run.point["budget"])

    def make_policy(self, run: BanditRun) -> Any:
        return POLICIES.build(run.algorithm, run.env)

    def recorded_rounds(self, run: BanditRun) -> int:
        return 6

    def columns(self, run: BanditRun) -> dict[str, Any]:
        return {**super().columns(run), "budget": run.point["budget"]}


@dataclass(frozen=True, kw_only=True)
class OneAtATime(Budgets):
    PER_REPLICATE = True


def by_hand(grid: Budgets, setting: int, replicates: list[int]) -> pd.DataFrame:
    """What a hand-written run_chunk did: the environment and policy of the point, reset
    with their streams, the round loop, the long table."""
    point = grid.points()[setting]
    key = grid.seed_setting(setting)
    env = make_environment(horizon=HORIZON, deviation_budget=point["budget"])
    env.reset(replicate_seeds(grid.seed, key, replicates, Stream.NOISE))
    policy = POLICIES[point["algorithm"]](env.problem)
    policy.reset(replicate_seeds(grid.seed, key, replicates, policy_stream(point["algorithm"])))
    result = simulate(env, policy, 6)
    columns = {"experiment": grid.name, "setting": setting, "budget": point["budget"]}
    return results_frame(result, point["algorithm"], replicates, **columns)


def test_a_task_is_the_round_loop_of_its_point_from_the_hooks() -> None:
    grid = Budgets()
    for setting in range(len(grid.points())):
        pd.testing.assert_frame_equal(
            grid.run_chunk(grid.points()[setting], setting, range(0, 2)),
            by_hand(grid, setting, [0, 1]),
        )


def test_one_replicate_at_a_time_gives_the_numbers_of_the_vectorised_run() -> None:
    vectorised, single = Budgets(), OneAtATime()
    for setting in range(len(vectorised.points())):
        point = vectorised.points()[setting]
        pd.testing.assert_frame_equal(
            single.run_chunk(point, setting, range(3)),
            vectorised.run_chunk(point, setting, range(3)),
        )


def test_the_grid_runs_resumes_and_writes_setting_as_the_grid_point(tmp_path: Path) -> None:
    df = Budgets().run(tmp_path, progress=False)
    assert len(df) == 2 * 2 * 3 * 6
    settings = df.groupby(["budget", "algorithm"], sort=False)["setting"].unique()
    assert [list(s) for s in settings] == [[0], [1], [2], [3]]
    pd.testing.assert_frame_equal(Budgets().run(tmp_path, progress=False), df)


def test_the_base_owns_the_shared_fields_and_their_checks() -> None:
    with pytest.raises(ValueError, match="replicates must be an integer >= 1"):
        Budgets(replicates=0)
    with pytest.raises(ValueError, match="chunk_size must be an integer >= 1"):
        Budgets(chunk_size=0)
    with pytest.raises(ValueError, match="seed must be an integer >= 0"):
        Budgets(seed=-1)
    with pytest.raises(ValueError, match="name must be a non-empty string"):
        Budgets(name="")
    with pytest.raises(ValueError, match="reads no data file"):
        Budgets(data_path="somewhere.csv")
    with pytest.raises(TypeError):
        Budgets((1.0,))  # keyword-only
    assert "data_path" not in Budgets().config() and "description" not in Budgets().config()


@dataclass(frozen=True, kw_only=True)
class Reads(TaskGrid):
    name: str = "reads"
    DATA = staticmethod(lambda path: Path(path or "default.txt"))

    def axes(self) -> Mapping[str, Any]:
        return {}


def test_the_data_path_is_resolved_by_the_grid_class() -> None:
    assert Reads().reads_data and not Budgets().reads_data
    assert Reads().data_location() == Path("default.txt").resolve()
    assert Reads().with_data("x.txt").data_location() == Path("x.txt").resolve()
    with pytest.raises(ValueError, match="reads no data file"):
        Budgets().with_data("x.txt")


def test_the_registry_builds_told_policies_from_the_environment_and_is_lazy() -> None:
    env = make_environment(horizon=10, deviation_budget=0.0)
    assert isinstance(POLICIES.build("ucb", env), POLICIES["ucb"])
    with pytest.raises(ValueError, match="unknown policy 'nope'"):
        POLICIES.build("nope", env)
    assert POLICIES["oracle"] is Oracle
    code = (
        "import sys; from causalbandits.policies import POLICIES; "
        "assert 'excbo' in POLICIES and 'nmcbo' in POLICIES; print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"  # listing the registry imports no torch


def test_the_plot_kit_draws_one_panel_per_value_of_panel_by(tmp_path: Path) -> None:
    rows = pd.DataFrame(
        {
            "algorithm": np.repeat(["a", "b"], 8),
            "delay": np.tile(np.repeat([10, 40], 4), 2),
            "replicate": np.tile([0, 1], 8),
            "t": np.tile([1, 1, 2, 2], 4),
            "cum_regret": np.arange(16.0),
        }
    )
    for panel_by in ("delay", None, ["delay", "algorithm"]):
        path = plot_regret_curves(rows, tmp_path / f"{panel_by}.png", panel_by=panel_by)
        assert path.exists()


PAPERS = Path(__file__).resolve().parents[1] / "src" / "causalbandits" / "papers"


def test_no_paper_runs_the_round_loop_itself() -> None:
    """Every catalogue entry that runs bandit rounds goes through the one task model: no
    module of papers/ imports the round loop, and a hand-written ``run_chunk`` is left only
    in the grids that run no rounds (graph identification, exogenous recovery)."""
    sources = {
        path.relative_to(PAPERS).as_posix(): path.read_text() for path in PAPERS.rglob("*.py")
    }
    loops = [name for name, text in sources.items() if "experiments.simulate import" in text]
    assert loops == []
    chunks = sorted(name for name, text in sources.items() if "def run_chunk" in text)
    assert chunks == ["csl_ucb/graphs.py", "excbo/recovery.py"]


def test_regular_rounds_add_the_extra_rounds_and_the_horizon() -> None:
    rounds = regular_rounds(10, 4, [1], [9, 4])
    assert rounds.tolist() == [1, 4, 8, 9, 10] and rounds.dtype == np.int64
