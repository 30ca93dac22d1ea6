"""The benchmark: declarations, families with common random numbers, the probe, a user's
policy from a file outside the package through the command line, and the report."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from causalbandits.bench import environments
from causalbandits.bench.capabilities import ACTION_KINDS, declared, incompatibility
from causalbandits.bench.families import FAMILIES, Size
from causalbandits.bench.report import read_outputs, write_outputs
from causalbandits.bench.suite import STATUSES, BenchResults, probe, run_family, slug
from causalbandits.cli import main
from causalbandits.experiments.bandit_grid import BanditRun
from causalbandits.experiments.protocol import SpecExperiment
from causalbandits.experiments.spec import AlgorithmSpec
from causalbandits.policies import POLICIES
from causalbandits.policies.random_policy import RandomSearch

DOC = Path(__file__).resolve().parents[1] / "docs" / "benchmark.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)
BROKEN = """

class Broken(EpsilonGreedy):
    def select(self):
        raise RuntimeError("out of ideas")


class RandomAsker:
    # an ask/tell optimiser: random points of the unit cube

    ACTS_ON = frozenset({"continuous"})

    def __init__(self, problem):
        self.n_actions = problem.n_actions

    def reset(self, seed):
        self.rng = np.random.default_rng(seed)

    def suggest(self):
        return self.rng.random(self.n_actions)

    def observe(self, action, node_values):
        assert action.shape == (self.n_actions,) and node_values.ndim == 1


class SlowerLater(EpsilonGreedy):
    def update(self, actions, feedback):
        super().update(actions, feedback)
        if self.counts.sum() > 60:  # 10 ms of CPU per round after round 60
            start = time.process_time()
            while time.process_time() - start < 0.01:
                pass
"""


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    """``my_policies``: the worked example of docs/benchmark.md (and a policy that fails), in
    a folder outside the package, importable as a user's module."""
    (example,) = BLOCK.findall(DOC.read_text(encoding="utf-8"))
    folder = tmp_path / "user"
    folder.mkdir()
    (folder / "my_policies.py").write_text(f"import time\n{example}{BROKEN}", encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.chdir(folder)
    return folder


def test_every_registry_policy_declares_what_it_acts_on_in_the_vocabulary():
    for name in POLICIES:
        acts_on = declared(POLICIES[name], "ACTS_ON")
        assert acts_on and acts_on <= set(ACTION_KINDS), name
        declared(POLICIES[name], "NEEDS")


def test_every_family_accepts_its_builtins_and_refuses_with_a_reason():
    for family in FAMILIES.values():
        for name in family.builtins:
            assert incompatibility(POLICIES[name], family.kind, family.offers) is None
    tree = FAMILIES["robust-lcb-tree"]
    assert "acts on" in incompatibility(POLICIES["cucb"], tree.kind, tree.offers)
    semi = FAMILIES["ndc-sem-delayed"]
    assert "needs graph" in incompatibility(POLICIES["linsem-ucb"], "interventions", semi.offers)
    assert incompatibility(object, tree.kind, tree.offers) is None  # undeclared: the probe decides

    class Misspelt:
        ACTS_ON = frozenset({"intervention"})

    with pytest.raises(ValueError, match="unknown words"):
        incompatibility(Misspelt, tree.kind, tree.offers)


@pytest.mark.parametrize("name", ["real-structures", "ssem-ucb-trials", "causal-bo-functions"])
def test_every_policy_of_a_family_meets_the_same_noise(name):
    family = FAMILIES[name]
    runs = []
    for policy in family.builtins[:2]:
        experiment = SpecExperiment(family.spec("quick", AlgorithmSpec(policy, policy)))
        run = BanditRun(experiment.points()[0], 0, [0, 1], policy)
        runs.append([(s.entropy, tuple(s.spawn_key)) for s in experiment.noise_seeds(run)])
    assert runs[0] == runs[1]


def test_the_environments_fix_one_instance_per_number():
    first, again = (environments.delayed_semibandit(200, 1, 5) for _ in range(2))
    np.testing.assert_array_equal(first.means, again.means)
    assert not np.array_equal(first.means, environments.delayed_semibandit(200, 2, 5).means)
    seeds = [np.random.SeedSequence(k) for k in range(3)]
    trial = environments.separable_trial(seeds, horizon=20, instance=4, mc_samples=200)
    payoffs = trial.expected_payoffs
    np.testing.assert_array_equal(payoffs[0], payoffs[2])  # replicates share the instance
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="non-negative integer"):
            environments.instance_seed(bad)
    with pytest.raises(ValueError, match="function must be one of"):
        environments.function_network(function="branin")
    with pytest.raises(ValueError, match="trial must be one of"):
        environments.separable_trial(seeds, trial=4)


def test_random_search_plays_uniform_points_reproducibly():
    env = environments.function_network(horizon=5, function="alpine2")
    policy = RandomSearch(env.problem)
    policy.reset([np.random.SeedSequence(3), np.random.SeedSequence(4)])
    actions = np.stack([policy.select() for _ in range(200)])
    assert actions.shape == (200, 2, env.problem.n_actions)
    assert actions.min() >= 0 and actions.max() < 1 and abs(actions.mean() - 0.5) < 0.03
    policy.reset([np.random.SeedSequence(3), np.random.SeedSequence(4)])
    np.testing.assert_array_equal(policy.select(), actions[0])


def test_the_probe_reports_errors_and_projected_costs_over_budget(user_module):
    tree = FAMILIES["robust-lcb-tree"]
    status, reason, _ = probe(tree, "quick", "my_policies:Broken")
    assert (status, reason) == ("error", "RuntimeError: out of ideas")
    tiny = dataclasses.replace(tree, sizes={"quick": Size(100, 1, 1, budget=1e-9)})
    status, reason, cost = probe(tiny, "quick", "linsem-ucb")
    assert status == "too slow" and "projected > budget" in reason and cost > 0
    frames, outcomes = run_family(tiny, "quick", ["my_policies:Missing", "cucb"], user_module)
    assert frames == [] and [o.status for o in outcomes] == ["error", "incompatible"]
    assert "has no attribute 'Missing'" in outcomes[0].reason
    assert slug("my_policies:Broken") == "my_policies_Broken"


def test_an_ask_tell_optimiser_plays_the_causal_bo_family(user_module):
    family = FAMILIES["causal-bo-functions"]
    frames, (outcome,) = run_family(family, "quick", ["my_policies:RandomAsker"], user_module)
    assert outcome.status == "ran", outcome.reason
    (frame,) = frames
    assert len(frame) == 4 and (frame["regret"] > 0).all()  # 2 functions x 2 replicates
    again, _ = run_family(family, "quick", ["my_policies:RandomAsker"], user_module / "again")
    pd.testing.assert_frame_equal(frame, again[0])  # seeded through reset


def test_a_run_whose_cost_grows_after_the_probe_is_stopped_at_its_budget(user_module):
    tiny = dataclasses.replace(
        FAMILIES["robust-lcb-tree"], sizes={"quick": Size(200, 1, 1, budget=0.5)}
    )
    assert probe(tiny, "quick", "my_policies:SlowerLater")[0] == "ran"  # 50 cheap rounds
    frames, (outcome,) = run_family(tiny, "quick", ["my_policies:SlowerLater"], user_module)
    assert frames == [] and outcome.status == "too slow"
    assert "over its share 0.5 of the budget" in outcome.reason and outcome.cost > 0.001


def test_a_users_policy_runs_through_the_quick_suite_from_the_command_line(user_module, capsys):
    out = user_module / "bench"
    argv = ["bench", "my_policies:EpsilonGreedy", "--suite", "quick", "--jobs", "2"]
    assert main([*argv, "--out", str(out), "--no-progress"]) == 0
    outcomes = pd.read_csv(out / "outcomes.csv").set_index(["family", "policy"])
    assert set(outcomes["status"]) <= set(STATUSES)  # which built-ins are too slow: the CPU's
    for name, family in FAMILIES.items():
        assert {*family.builtins, "my_policies:EpsilonGreedy"} == set(outcomes.loc[name].index)
        mine = outcomes.loc[(name, "my_policies:EpsilonGreedy")]
        if family.kind == "interventions":
            assert mine["status"] == "ran"
        else:
            assert mine["status"] == "incompatible" and family.kind in mine["reason"]
    results = pd.read_parquet(out / "results.parquet")
    mine = results[results["policy"] == "my_policies:EpsilonGreedy"]
    assert len(mine) == 22 and mine["score"].between(0, 2).all()  # 11 instances x 2 replicates
    baselines = results[results["policy"].isin(["random", "random-super-arm", "random-search"])]
    assert len(baselines) == 34 and np.allclose(baselines["score"], 1.0)
    report = (out / "leaderboard.md").read_text(encoding="utf-8")
    assert "| real-structures | my_policies:EpsilonGreedy |" in report
    assert "acts on interventions; the family's actions are delayed-super-arms" in report
    assert (out / "heat_map.png").stat().st_size > 0 and (out / "profiles.png").exists()
    manifest = out / "robust-lcb-tree" / "random" / "manifest.json"
    before = json.loads(manifest.read_text())["tasks"]
    families = ["--families", "robust-lcb-tree,ndc-sem-delayed"]
    assert main([*argv, *families, "--out", str(out), "--no-progress"]) == 0  # resumes
    assert json.loads(manifest.read_text())["tasks"] == before  # nothing re-run
    assert "Causal-bandit benchmark (quick suite)" in capsys.readouterr().out


def constructed_bench() -> BenchResults:
    """Two policies and the random baseline on robust-lcb-tree, 2 instances x 3 replicates:
    a at 0.2 and b at 0.6 of random play; c errored."""
    rows = [
        {"family": "robust-lcb-tree", "instance": i, "replicate": r, "policy": p,
         "regret": 100.0 * share, "random_regret": 100.0}
        for p, share in (("a", 0.2), ("b", 0.6), ("random", 1.0))
        for i in range(2)
        for r in range(3)
    ]  # fmt: skip
    outcomes = pd.DataFrame(
        [
            {"family": "robust-lcb-tree", "policy": p, "status": "ran", "reason": "", "cost": 1e-4}
            for p in ("a", "b", "random")
        ]
        + [{"family": "robust-lcb-tree", "policy": "c", "status": "error", "reason": "boom",
            "cost": np.nan}]
    )  # fmt: skip
    return BenchResults(pd.DataFrame(rows), outcomes, "quick")


def test_the_saved_standard_suite_re_renders_identically(tmp_path):
    saved = DOC.parent / "results" / "bench-standard"
    write_outputs(read_outputs(saved), tmp_path)
    for name in ("leaderboard.md", "outcomes.csv"):
        assert (tmp_path / name).read_text() == (saved / name).read_text(), name
    pd.testing.assert_frame_equal(
        pd.read_parquet(tmp_path / "results.parquet"), pd.read_parquet(saved / "results.parquet")
    )


def test_the_report_of_constructed_results_states_what_they_show(tmp_path):
    paths = write_outputs(constructed_bench(), tmp_path)
    assert {p.name for p in paths} >= {"leaderboard.md", "results.parquet", "heat_map.png"}
    report = (tmp_path / "leaderboard.md").read_text(encoding="utf-8")
    assert "- robust-lcb-tree: a lowest (0.20 [0.20, 0.20], first in 100% of draws)." in report
    assert "| robust-lcb-tree | b | 0.600 [0.600, 0.600] | 0% | 6 | 0.1 |" in report
    assert "| robust-lcb-tree | c | error | boom | - |" in report
    assert "| c | 0.00 | 0.00 | 0.00 | 0.00 |" in report  # failed: never within tau
    assert "| b | 0.00 | 0.00 | 0.00 | 1.00 |" in report  # 0.6 = 3 x 0.2
