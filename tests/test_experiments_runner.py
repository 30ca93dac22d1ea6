"""Runner: identical results for any workers, chunking and backend; resume; spec changes."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from causalbandits.experiments import (
    AlgorithmSpec,
    ExperimentSpec,
    SpecExperiment,
    load_results,
    read_manifest,
    run_experiment,
    runner,
)
from causalbandits.experiments.store import task_path

ROOT = Path(__file__).resolve().parents[1]
FAIL_VARIABLE = "CAUSALBANDITS_TEST_FAIL"


class CyclePolicy:
    """Deterministic and blind: every replicate plays ``t mod n_actions`` in round ``t``."""

    def __init__(self, problem: object) -> None:
        self.n_actions = problem.actions.n_actions
        self.problem = problem

    def reset(self, seeds: Sequence[np.random.SeedSequence]) -> None:
        self.replicates, self.t = len(seeds), 0

    def select(self) -> np.ndarray:
        return np.full(self.replicates, self.t % self.n_actions, dtype=np.intp)

    def update(self, actions: np.ndarray, feedback: np.ndarray) -> None:
        self.t += 1


class GreedyPolicy:
    """Deterministic given the feedback: each action once, then the best empirical mean."""

    def __init__(self, problem: object) -> None:
        self.n_actions = problem.actions.n_actions
        self.reward_node = problem.reward_node

    def reset(self, seeds: Sequence[np.random.SeedSequence]) -> None:
        self.sums = np.zeros((len(seeds), self.n_actions))
        self.counts = np.zeros((len(seeds), self.n_actions))
        self.t = 0

    def select(self) -> np.ndarray:
        if self.t < self.n_actions:
            return np.full(len(self.sums), self.t, dtype=np.intp)
        return np.argmax(self.sums / self.counts, axis=1)

    def update(self, actions: np.ndarray, feedback: np.ndarray) -> None:
        rows = np.arange(len(actions))
        self.sums[rows, actions] += feedback[:, self.reward_node]
        self.counts[rows, actions] += 1
        self.t += 1


class FailingPolicy(CyclePolicy):
    """Raises in the setting with deviation budget 20 while the fail variable is set."""

    def select(self) -> np.ndarray:
        if os.environ.get(FAIL_VARIABLE) and self.problem.deviation_budget == 20:
            raise RuntimeError("simulated crash")
        return super().select()


def tiny_spec(**changes: object) -> ExperimentSpec:
    spec = ExperimentSpec(
        name="tiny",
        environment="robust-lcb",
        env_params={"design": "negate"},
        settings=[{"deviation_budget": 5}, {"deviation_budget": 20}],
        algorithms=[
            AlgorithmSpec("random", "random"),
            AlgorithmSpec("greedy", "tests.test_experiments_runner:GreedyPolicy"),
        ],
        horizon=200,
        replicates=5,
        seed=7,
        chunk_size=2,
        checkpoints=20,
        sweep="deviation_budget",
    )
    return spec.replace(**changes)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    return run_experiment(tiny_spec(), tmp_path_factory.mktemp("reference"), progress=False)


def test_table_layout(reference: pd.DataFrame) -> None:
    assert list(reference.columns) == [
        "experiment",
        "setting",
        "deviation_budget",
        "algorithm",
        "replicate",
        "t",
        "cum_regret",
        "optimal_share",
    ]
    assert len(reference) == 2 * 2 * 5 * 20
    counts = reference.groupby(["setting", "algorithm"]).replicate.nunique()
    assert (counts == 5).all()
    assert reference.t.max() == 200
    assert reference.optimal_share.between(0, 1).all()
    assert (
        reference.groupby(["setting", "algorithm", "replicate"]).cum_regret.diff().dropna() >= 0
    ).all()


def test_two_loky_workers_give_identical_results(reference: pd.DataFrame, tmp_path: Path) -> None:
    parallel = run_experiment(tiny_spec(), tmp_path, jobs=2, progress=False)
    pd.testing.assert_frame_equal(parallel, reference)


def test_every_finished_task_records_the_processor_it_ran_on(tmp_path: Path) -> None:
    run_experiment(tiny_spec(), tmp_path, jobs=2, progress=False)
    records = read_manifest(tmp_path)["tasks"]
    assert {record["processor"] for record in records} == {runner.processor()}


def test_the_processor_is_model_machine_and_widest_vector_set() -> None:
    x86 = (
        "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Processor\nflags\t: fpu sse avx avx2 fma\n"
    )
    second = "\nprocessor\t: 1\nmodel name\t: Other\nflags\t: avx512f\n"
    assert runner.describe_processor(x86 + second, "x86_64") == (
        "Intel(R) Xeon(R) Processor, x86_64, avx2"  # the first processor's, widest set
    )
    arm = "processor\t: 0\nFeatures\t: fp asimd sve\nCPU part\t: 0xd40\n"
    assert runner.describe_processor(arm, "aarch64") == "aarch64, sve"
    assert runner.describe_processor("", "riscv64") == "riscv64"


def test_results_do_not_depend_on_chunk_size(reference: pd.DataFrame, tmp_path: Path) -> None:
    for chunk_size in (1, 5):
        other = run_experiment(
            tiny_spec(chunk_size=chunk_size), tmp_path / str(chunk_size), progress=False
        )
        pd.testing.assert_frame_equal(other, reference)


def test_policy_streams_are_per_label_and_noise_is_common(tmp_path: Path) -> None:
    spec = tiny_spec(
        settings=[{"deviation_budget": 5}],
        algorithms=[
            AlgorithmSpec("random-a", "random"),
            AlgorithmSpec("random-b", "random"),
            AlgorithmSpec("greedy-a", "tests.test_experiments_runner:GreedyPolicy"),
            AlgorithmSpec("greedy-b", "tests.test_experiments_runner:GreedyPolicy"),
        ],
    )
    df = run_experiment(spec, tmp_path, progress=False).set_index(["replicate", "t"])
    by = {label: rows.cum_regret for label, rows in df.groupby("algorithm")}
    assert not np.allclose(by["random-a"], by["random-b"])
    # a deterministic policy sees only the noise, which is the same for every algorithm
    pd.testing.assert_series_equal(by["greedy-a"], by["greedy-b"])
    assert by["greedy-a"].groupby("replicate").last().nunique() > 1


def test_ray_backend_gives_identical_results(reference: pd.DataFrame, tmp_path: Path) -> None:
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install causalbandits[ray])")
    if ray.is_initialized():
        pytest.skip("a Ray session is already running in this process")
    pythonpath = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": pythonpath}},
    )
    try:
        on_ray = run_experiment(tiny_spec(), tmp_path, jobs=2, backend="ray", progress=False)
    finally:
        ray.shutdown()
    pd.testing.assert_frame_equal(on_ray, reference)


def test_resume_reruns_only_the_missing_task(reference: pd.DataFrame, tmp_path: Path) -> None:
    spec = tiny_spec()
    run_experiment(spec, tmp_path, progress=False)
    victim = SpecExperiment(spec).tasks()[5].id
    task_path(tmp_path, victim).unlink()
    manifest = read_manifest(tmp_path)
    for record in manifest["tasks"]:
        if record["id"] == victim:
            record["status"] = "pending"
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    before = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "tasks").glob("*.parquet")}

    resumed = run_experiment(spec, tmp_path, progress=False)

    after = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "tasks").glob("*.parquet")}
    assert set(after) - set(before) == {f"{victim}.parquet"}
    assert all(after[name] == stamp for name, stamp in before.items())
    manifest = read_manifest(tmp_path)
    assert manifest["runs"][-1]["tasks_run"] == 1
    assert all(record["status"] == "done" for record in manifest["tasks"])
    pd.testing.assert_frame_equal(resumed, reference)


def test_resume_after_a_crash(
    reference: pd.DataFrame, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = tiny_spec(
        algorithms=[
            *tiny_spec().algorithms,
            AlgorithmSpec("fails", "tests.test_experiments_runner:FailingPolicy"),
        ]
    )
    monkeypatch.setenv(FAIL_VARIABLE, "1")
    with pytest.raises(RuntimeError, match="simulated crash"):
        run_experiment(spec, tmp_path, progress=False)
    manifest = read_manifest(tmp_path)
    done = [r["id"] for r in manifest["tasks"] if r["status"] == "done"]
    assert manifest["runs"][-1]["complete"] is False
    assert len(done) == manifest["runs"][-1]["tasks_run"] > 0
    crashed = [r for r in manifest["tasks"] if r["setting"] == 1 and r["algorithm"] == "fails"]
    assert crashed and all(r["status"] == "pending" for r in crashed)

    monkeypatch.delenv(FAIL_VARIABLE)
    resumed = run_experiment(spec, tmp_path, progress=False)
    manifest = read_manifest(tmp_path)
    assert manifest["runs"][-1]["tasks_run"] == len(manifest["tasks"]) - len(done)
    assert manifest["runs"][-1]["complete"] is True
    kept = resumed[resumed.algorithm != "fails"].reset_index(drop=True)
    pd.testing.assert_frame_equal(kept, reference)
    pd.testing.assert_frame_equal(load_results(tmp_path), resumed)


def test_a_changed_spec_in_the_same_directory_raises(tmp_path: Path) -> None:
    spec = tiny_spec(settings=[{"deviation_budget": 5}], replicates=2)
    run_experiment(spec, tmp_path, progress=False)
    with pytest.raises(ValueError, match="another configuration"):
        run_experiment(spec.replace(seed=8), tmp_path, progress=False)
    # the description is not part of the fingerprint: this resumes (nothing to do)
    run_experiment(spec.replace(description="same numbers"), tmp_path, progress=False)
    assert read_manifest(tmp_path)["runs"][-1]["tasks_run"] == 0


def test_task_files_without_manifest_raise(tmp_path: Path) -> None:
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "s000-a000-c00000.parquet").write_bytes(b"")
    with pytest.raises(ValueError, match="no manifest"):
        run_experiment(tiny_spec(), tmp_path, progress=False)


def test_unknown_backend_and_bad_policy_path_fail_before_running(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown backend"):
        run_experiment(tiny_spec(), tmp_path, backend="dask")
    spec = tiny_spec(algorithms=[AlgorithmSpec("x", "tests.test_experiments_runner:NoSuchPolicy")])
    with pytest.raises(ImportError, match="NoSuchPolicy"):
        run_experiment(spec, tmp_path)
    assert not (tmp_path / "manifest.json").exists()


def instance_env(horizon: int, instance_seeds: list, **options: object):
    """The robust-lcb bandit, tagged with one draw from each replicate's instance seed."""
    from causalbandits.envs.robust_lcb import make_environment

    env = make_environment(horizon=horizon, **options)
    env.instance_draws = [np.random.default_rng(s).random() for s in instance_seeds]
    return env


class TunedPolicy(CyclePolicy):
    """Cycles; remembers its ``step`` parameter and whether it was given the environment."""

    def __init__(self, problem: object, step: int = 1, env: object = None) -> None:
        super().__init__(problem)
        self.step, self.env = step, env

    @classmethod
    def from_environment(cls, env: object, step: int = 1) -> TunedPolicy:
        return cls(env.problem, step, env)

    def select(self) -> np.ndarray:
        return np.full(self.replicates, (self.step * self.t) % self.n_actions, dtype=np.intp)


def test_spec_extensions_reach_environment_and_policy() -> None:
    values = {"by": "deviation_budget", "values": {5: 3, 20: 7}}
    spec = tiny_spec(
        environment="tests.test_experiments_runner:instance_env",
        algorithms=[
            AlgorithmSpec("tuned", "tests.test_experiments_runner:TunedPolicy", {"step": values})
        ],
        checkpoints=[1, 50, 200],
    )
    experiment = SpecExperiment(spec)
    run = experiment.setup(1, "tuned", range(2, 4))
    other = experiment.setup(1, "tuned", range(3, 5)).env
    assert run.env.instance_draws[1] == other.instance_draws[0]  # keyed by replicate
    assert run.env.instance_draws[0] != run.env.instance_draws[1]
    assert run.policy.step == 7 and run.policy.env is run.env
    assert experiment.setup(0, "tuned", range(2, 4)).policy.step == 3
    with pytest.raises(ValueError, match="no value for deviation_budget"):
        spec.replace(settings=[{"deviation_budget": 9}])


def test_checkpoint_lists_and_named_recorders_are_validated(tmp_path: Path) -> None:
    df = run_experiment(tiny_spec(checkpoints=[3, 100, 200]), tmp_path, progress=False)
    assert sorted(df.t.unique()) == [3, 100, 200]
    with pytest.raises(ValueError, match="past the horizon"):
        tiny_spec(checkpoints=[3, 300])
    with pytest.raises(ValueError, match="increase strictly"):
        tiny_spec(checkpoints=[5, 5])
    with pytest.raises(ValueError, match="unknown recorders"):
        tiny_spec(recorders=["nonsense"])
    assert "recorders" not in tiny_spec().to_dict()  # old fingerprints stay valid
