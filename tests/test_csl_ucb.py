from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from causalbandits.envs import LinearSEMBandit, random_csl_bandit, random_soft_intervention_sem
from causalbandits.envs.actions import ActionSet
from causalbandits.envs.csl_ucb import csl_system, make_environment
from causalbandits.estimators.csl import learn_subgraphs
from causalbandits.estimators.subgraph import SubgraphData
from causalbandits.experiments import simulate
from causalbandits.experiments.evidence import Verdict
from causalbandits.papers.csl_ucb.bandits import (
    E3_SEED,
    block_shares,
    build_report,
    e3,
    e4,
    ranking_claim,
)
from causalbandits.policies import CSLUCB
from causalbandits.policies.csl_ucb import default_settings
from causalbandits.random import Stream, replicate_seeds


def system_seeds(replicate: int) -> list[np.random.SeedSequence]:
    """The instance seed of E3's (and E4's) replicate ``replicate``."""
    return replicate_seeds(E3_SEED, 0, [replicate], Stream.INSTANCE)


def system(replicate: int, **options):
    """E3's (E4's with ``change_points``) system ``replicate`` alone."""
    return csl_system(system_seeds(replicate)[0], **options)


def run(env, policy, replicates=1, seed=0):
    env.reset(seed, replicates)
    policy.reset(np.random.SeedSequence(seed).spawn(replicates))
    actions = []
    for _ in range(env.horizon):
        a = policy.select()
        actions.append(a)
        policy.update(a, env.step(a))
    return np.array(actions)


def test_exploring_start_then_blocks_of_replayed_arms():
    env = random_csl_bandit(5, 400, rng=3)
    policy = CSLUCB(env.problem, preset="authors-code", min_samples=15, update_every=20)
    actions = run(env, policy)[:, 0]
    learner = policy.learners[0]
    assert learner.graphs is not None  # the exploring start ended
    counts_reached = learner.data.counts.min() >= 15
    assert counts_reached
    tail = actions[-100:].reshape(5, 20)  # decisions every 20 rounds, replayed in between
    assert np.all(tail == tail[:, :1])


def test_csl_ucb_beats_random_play_on_small_systems():
    regret = {"csl": [], "random": []}
    for system in range(3):
        env = random_csl_bandit(5, 600, rng=system)
        env.reset(system, 1)
        policy = CSLUCB(env.problem, preset="authors-code")
        policy.reset(np.random.SeedSequence(system).spawn(1))
        regret["csl"].append(simulate(env, policy, 1)["cum_regret"][-1, 0])
        regret["random"].append(600 * (env.optimal_value - env.expected_rewards.mean()))
    assert np.mean(regret["csl"]) < 0.5 * np.mean(regret["random"])


def test_change_detection_flags_changed_subgraphs():
    env = system(1, horizon=900, n_nodes=5, change_points=[450])
    policy = CSLUCB(env.problem, preset="authors-code", detector="windowed", warmup=100)
    run(env, policy)
    detected = {(node, mode) for t, node, mode in policy.subgraph_detections[0] if t >= 450}
    changed = {(c.node, c.mode) for c in env.changes}
    assert detected & changed


@pytest.mark.parametrize("replicate", [0, 3])
def test_a_detected_change_is_relearned_not_flagged_again(replicate):
    # Until the reset pair's weights are refitted on post-change data, its residuals use the
    # old weights; watching them would re-flag the same change every window.
    env = system(replicate, horizon=900, n_nodes=5, change_points=[450])
    policy = CSLUCB(env.problem, preset="authors-code", detector="windowed", warmup=100)
    run(env, policy)
    after = [(node, mode) for t, node, mode in policy.subgraph_detections[0] if t >= 450]
    assert after and set(after) <= {(c.node, c.mode) for c in env.changes}
    assert len(after) == len(set(after))


def test_bad_settings_are_rejected():
    problem = random_csl_bandit(10, 100, rng=0).problem
    with pytest.raises(ValueError, match="below the 10 samples"):
        CSLUCB(problem, n_max=8, min_samples=5)
    with pytest.raises(ValueError, match="below min_samples"):
        CSLUCB(problem, n_max=10, min_samples=20)
    with pytest.raises(ValueError, match="unknown preset"):
        CSLUCB(problem, preset="nope")
    with pytest.raises(ValueError, match="detector"):
        CSLUCB(problem, detector="cusum")
    with pytest.raises(ValueError, match="change points must lie"):
        system(0, horizon=100, change_points=[100])


def test_block_shares_and_report_against_hand_numbers():
    rows = []
    for algorithm, picks in {"CSL-UCB": [50, 80], "UCB": [10, 60]}.items():
        for t, total in zip((100, 200), picks, strict=True):
            rows.append(
                {
                    "setting": 0,
                    "algorithm": algorithm,
                    "replicate": 0,
                    "t": t,
                    "cum_regret": {"CSL-UCB": 10.0, "UCB": 100.0}[algorithm] * t / 200,
                    "optimal_share": total / t,
                }
            )
    df = pd.DataFrame(rows)
    shares = block_shares(df).set_index(["algorithm", "t"])["block_share"]
    assert shares["CSL-UCB", 100] == pytest.approx(0.5)
    assert shares["CSL-UCB", 200] == pytest.approx(0.3)
    assert shares["UCB", 200] == pytest.approx(0.5)
    report = build_report("E3", df.assign(algorithm=df["algorithm"]))
    within = "within 10 percentage points of the paper's"
    claim = "| CSL-UCB's regret 91.6% lower than UCB's | 91.6% lower | 90.0% lower | holds |"
    assert f"{claim} {within} |" in report
    # one system: the ranking cannot be decided by a paired difference
    assert "| ranking CSL-UCB < UCB | - | CSL-UCB < UCB; weakest pair CSL-UCB - UCB: " in report
    assert (
        "difference -90 ± nan | n/a | each adjacent pair; weakest: paired difference over 1"
        in report
    )


def per_system(regret: dict[str, list[float]]) -> pd.DataFrame:
    """Regret at T per system (rows) and algorithm (columns)."""
    frame = pd.DataFrame(regret)
    frame.index = pd.MultiIndex.from_product([[0], frame.index], names=["setting", "replicate"])
    return frame


def test_the_ranking_is_as_strong_as_its_weakest_adjacent_pair():
    expected = ["a", "b", "c"]
    ordered = per_system({"a": [1, 2, 3], "b": [5, 5, 6], "c": [9, 10, 8]})
    claim = ranking_claim(expected, expected, ordered)
    assert claim.verdict is Verdict.HOLDS and claim.holds
    assert claim.text == "ranking a < b < c"
    # a and b swapped within 2 se (paired differences 1, -2, 3): not significant
    tie = per_system({"a": [6, 3, 9], "b": [5, 5, 6], "c": [9, 10, 8]})
    claim = ranking_claim(expected, ["b", "a", "c"], tie)
    assert claim.verdict is Verdict.NOT_SIGNIFICANT
    assert claim.label == "opposite direction, not significant"
    assert claim.ours == "b < a < c; weakest pair a - b: difference 1 ± 1"
    assert claim.test.startswith("each adjacent pair; weakest: paired difference over 3")
    # b above c beyond 2 se: contradicted, even though a < b holds
    swapped = per_system({"a": [1, 2, 3], "b": [12, 11, 12], "c": [9, 10, 8]})
    assert ranking_claim(expected, ["a", "c", "b"], swapped).verdict is Verdict.CONTRADICTED


def test_e4_report_has_the_detection_claims():
    rows = []
    for algorithm, regret in {"CSL-UCB-CD": 10.0, "UCB": 100.0}.items():
        for replicate in (0, 1):
            detection = {
                "detection_changes": 4.0,
                "detection_hits": 3.0 + replicate,
                "detection_delay_sum": 30.0,
                "detection_false_alarms": 1.0 + replicate,
            }
            rows.append(
                {
                    "setting": 0,
                    "algorithm": algorithm,
                    "replicate": replicate,
                    "t": 3000,
                    "cum_regret": regret + replicate,
                    "optimal_share": 0.5,
                    **(detection if algorithm == "CSL-UCB-CD" else dict.fromkeys(detection)),
                }
            )
    report = build_report("E4", pd.DataFrame(rows))
    assert (
        "| CSL-UCB-CD has the lowest regret | - | lowest: CSL-UCB-CD; CSL-UCB-CD - UCB: "
        "difference -90 ± 0 | holds | paired difference over 2 replicates"
    ) in report
    assert "changes detected 89.3% (need >= 80%) | 89.3% | 87.5% of 8 | holds |" in report
    assert (
        "delay 13.1 slots (need <= 30) | 13.1 slots | 8.6 slots; 1.50 false alarms per run | "
        "holds |"
    ) in report
    assert "UCB: sub-graph" not in report


def test_a_system_and_its_changes_depend_on_the_instance_seed_only():
    def build(replicate):
        return system(replicate, horizon=900, change_points=[300, 600])

    first, again, other = build(2), build(2), build(3)
    assert first.changes == again.changes
    assert np.array_equal(first.segment_rewards, again.segment_rewards)  # system and changes
    assert not np.array_equal(first.env.sem.weights, other.env.sem.weights)
    seeds = system_seeds(2)  # the same seed objects twice: nothing is consumed
    twice = [csl_system(seeds[0], 900, change_points=[300]) for _ in range(2)]
    assert np.array_equal(twice[0].segment_rewards, twice[1].segment_rewards)


def test_the_environment_stacks_one_system_per_seed():
    seeds = replicate_seeds(E3_SEED, 0, [0, 1], Stream.INSTANCE)
    stack = make_environment(seeds, horizon=900, change_points=[300])
    for replicate, seed in enumerate(seeds):
        alone = csl_system(seed, 900, change_points=[300])
        assert np.array_equal(stack.segment_rewards[replicate], alone.segment_rewards)
        assert stack.changes_per_replicate[replicate] == tuple(alone.changes)
    with pytest.raises(ValueError, match="at least one instance seed"):
        make_environment([], horizon=100)


@pytest.mark.parametrize("preset", [e3, e4])
def test_the_systems_are_the_replicates_of_one_setting(preset):
    spec = preset(True).spec
    assert spec.settings == [{}] and spec.replicates == 10 and spec.chunk_size == 10
    assert preset(False).spec.replicates == 100
    assert len(preset(True).tasks()) == len(spec.algorithms)  # ten systems per task
    assert preset(True).with_replicates(3).spec.replicates == 3
    env = preset(True).setup(0, spec.algorithms[0].label, [0, 1]).env
    assert not np.array_equal(env.segment_rewards[0], env.segment_rewards[1])
    direct = make_environment(system_seeds(1), horizon=spec.horizon, **spec.env_params)
    assert np.array_equal(direct.segment_rewards[0], env.segment_rewards[1])


def partial_bandit(n_nodes: int, seed: int, horizon: int):
    """A random system whose arms intervene on 4 nodes and the reward node only (32 arms)."""
    rng = np.random.default_rng(seed)
    sem = random_soft_intervention_sem(n_nodes, rng)
    intervenable = sorted(rng.choice(n_nodes - 1, 4, replace=False).tolist()) + [n_nodes - 1]
    actions = ActionSet.subsets(n_nodes, intervenable)
    return LinearSEMBandit(sem, horizon, actions, reward_node=n_nodes - 1), intervenable


def test_csl_learns_only_the_columns_the_arms_can_identify():
    env, intervenable = partial_bandit(8, 0, 200)
    env.reset(0, 1)
    data = SubgraphData(8, env.problem.noise_mean)
    arms = np.random.default_rng(1).integers(env.n_actions, size=200)
    for arm in arms:
        data.add(env.step(arm[None])[0], env.actions.masks[arm])
    result = learn_subgraphs(data, 1, rng=0, nodes=intervenable)
    learned = result.adjacency.any(axis=0)
    assert set(np.flatnonzero(learned)) <= set(intervenable)
    never = min(set(range(8)) - set(intervenable))
    with pytest.raises(ValueError, match=f"node {never} has 0"):
        learn_subgraphs(data, 1, rng=0)  # a node that no arm intervenes on


def test_csl_ucb_learns_on_a_partial_action_set():
    env, _ = partial_bandit(8, 0, 1200)
    env.reset(0, 1)
    policy = CSLUCB(env.problem, preset="authors-code")
    policy.reset(np.random.SeedSequence(0).spawn(1))
    regret = simulate(env, policy, 1)["cum_regret"][-1, 0]
    learner = policy.learners[0]
    assert learner.graphs is not None  # it left the exploring start
    assert not learner.graphs[1][:, ~learner.pairs[:, 1]].any()  # no column without data
    random_regret = 1200 * (env.optimal_value - env.expected_rewards.mean())
    assert regret < 0.1 * random_regret


def test_csl_ucb_explores_until_csl_can_fit_every_used_pair():
    env, _ = partial_bandit(25, 2, 60)  # CSL's first fit needs N = 25 > min_samples samples
    env.reset(2, 1)
    policy = CSLUCB(env.problem, preset="authors-code")
    policy.reset(np.random.SeedSequence(2).spawn(1))
    learner = policy.learners[0]
    assert learner.needed == 25
    for _ in range(60):
        arms = policy.select()
        policy.update(arms, env.step(arms))
        assert learner.graphs is None or learner.data.counts[learner.pairs].min() >= 25


def test_known_graph_replaces_csl_with_each_modes_true_parents(monkeypatch):
    env, _ = partial_bandit(8, 0, 300)
    env.reset(0, 1)
    policy = CSLUCB(env.problem, preset="authors-code", known_graph=True)
    policy.reset(np.random.SeedSequence(0).spawn(1))

    def no_csl(*args, **kwargs):
        raise AssertionError("CSL ran although the graph is known")

    monkeypatch.setattr("causalbandits.policies.csl_ucb.learn_joint_subgraphs", no_csl)
    simulate(env, policy, 1)
    learner = policy.learners[0]
    truth = env.problem.mode_parents
    assert np.array_equal(learner.graphs[0], truth[0] & learner.pairs[:, 0])
    assert np.array_equal(learner.graphs[1], truth[1] & learner.pairs[:, 1])
    assert learner.graphs[1][:, learner.pairs[:, 1]].any()  # intervenable columns kept


def test_known_graph_takes_each_stacked_systems_own_graphs():
    env = make_environment(system_seeds(0) + system_seeds(1))
    policy = CSLUCB(env.problem, preset="authors-code", known_graph=True)
    policy.reset(np.random.SeedSequence(0).spawn(2))
    for replicate, learner in enumerate(policy.learners):
        assert np.array_equal(learner.known[0], env.problem.mode_parents[replicate, 0])


def test_the_default_preset_is_the_authors_schedule_and_cap_with_the_known_variances():
    """``CSLUCB(problem)``: on an E3 system (unit noise variances, N = 10) it plays exactly as
    ``preset="authors-code"``; the cap grows to ``N`` where 100 samples are too few for CSL's
    first fit, and the problem's variances replace the unit ones."""
    env = system(0)
    env.horizon = 300
    default, authors = CSLUCB(env.problem), CSLUCB(env.problem, preset="authors-code")
    np.testing.assert_array_equal(run(env, default), run(env, authors))
    assert (default.settings.graph_every, default.settings.n_max) == (50, 100)
    big = SimpleNamespace(dag=SimpleNamespace(n_nodes=120), noise_variance=None)
    assert default_settings(big).n_max == 120 and default_settings(big).noise_variance == 1.0
    assert default_settings(env.problem).noise_variance == "known"
