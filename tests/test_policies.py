import numpy as np
import pytest

from causalbandits.envs.robust_lcb import make_environment
from causalbandits.policies import POLICIES, UCB1, LinSEMTS, LinSEMUCB, RobustLCB


def run(env, policy, rounds, replicates, seed=0, each_round=None):
    env.reset(seed, replicates)
    policy.reset(np.random.SeedSequence(seed + 1).spawn(replicates))
    regret = np.zeros(replicates)
    for _ in range(rounds):
        if each_round is not None:
            each_round(policy)
        actions = policy.select()
        regret += env.pseudo_regret(actions)
        policy.update(actions, env.step(actions))
    return regret


class RecordingRobustLCB(RobustLCB):
    """Robust-LCB that keeps every weight it computes."""

    def reset(self, seeds):
        super().reset(seeds)
        self.seen = []

    def weight_rule(self, bonus):
        weights = super().weight_rule(bonus)
        self.seen.append(weights)
        return weights


@pytest.mark.parametrize("budget", [1, 15, 200])
def test_robust_lcb_weights_lie_in_the_stated_interval(budget):
    env = make_environment(horizon=300, deviation_budget=budget, by_depth=True)
    policy = RecordingRobustLCB(env.problem)
    run(env, policy, 300, 8)
    weights = np.concatenate([w.ravel() for w in policy.seen])
    m = env.problem.x_norm_bound
    c = max(budget, 1)
    assert weights.max() <= 1 / c + 1e-15
    assert weights.min() >= 1 / (c * m) - 1e-15
    assert weights.min() < 0.99 / c  # the bonus really does lower some weights


class UnitWeightRobustLCB(RobustLCB):
    """Robust-LCB with w = 1 and LinSEM-UCB's radius: must act exactly like LinSEM-UCB."""

    def weight_rule(self, bonus):
        return np.ones(bonus.shape)

    beta = LinSEMUCB.beta


def test_unit_weights_reduce_robust_lcb_to_linsem_ucb():
    env = make_environment(horizon=400, deviation_budget=15)
    a = run(env, UnitWeightRobustLCB(env.problem), 400, 6, seed=3)
    b = run(env, LinSEMUCB(env.problem), 400, 6, seed=3)
    np.testing.assert_allclose(a, b)


def _covered(policy, truth_theta, beta):
    diff = policy.ridge.theta - truth_theta
    gram = np.linalg.inv(policy.ridge.ellipsoid_inv)
    norms = np.sqrt(np.einsum("...i,...ij,...j->...", diff, gram, diff))
    return np.all(norms <= beta, axis=(1, 2))


def _true_theta(env, policy):
    plan = policy.plan
    theta = np.zeros((plan.nodes.size, 2, plan.width))
    for k, node in enumerate(plan.nodes):
        parents = env.sem.dag.parents(node)
        theta[k, 0, : parents.size] = env.sem.weights[parents, node]
        theta[k, 1, : parents.size] = env.sem.intervention_weights[parents, node]
    return theta


@pytest.mark.parametrize("policy_class", [RobustLCB, LinSEMUCB])
def test_ucb_is_optimistic_whenever_the_truth_is_covered(policy_class):
    env = make_environment(horizon=600, deviation_budget=0)
    policy = policy_class(env.problem, beta_scale=0.3)
    truth = None
    checked = []

    def check(p):
        nonlocal truth
        truth = _true_theta(env, p) if truth is None else truth
        beta = p.beta_scale * p.beta(p.t + 1)
        covered = _covered(p, truth, beta)
        ucb = p.upper_confidence_bounds()
        optimistic = np.all(ucb >= env.expected_rewards - 1e-9, axis=1)
        assert np.all(optimistic[covered])
        checked.append(covered.mean())

    run(env, policy, 600, 10, each_round=check)
    assert np.mean(checked) > 0.3  # the check was exercised on covered rounds


def test_robust_lcb_ellipsoids_cover_the_truth_under_deviations():
    """Lemma 1 / check 3 of the spec: coverage >= 1 - 2 delta with the theoretical radius."""
    budget = 15
    env = make_environment(horizon=2000, deviation_budget=budget, by_depth=True, max_rounds=16)
    policy = RobustLCB(env.problem)
    truth = None
    coverage = []

    def check(p):
        nonlocal truth
        truth = _true_theta(env, p) if truth is None else truth
        coverage.append(_covered(p, truth, p.beta(max(p.t, 1))).mean())

    run(env, policy, 2000, 10, each_round=check)
    assert np.mean(coverage) >= 1 - 2 * policy.delta


def test_policies_learn_on_the_undeviated_paper_environment():
    env = make_environment(horizon=3000, deviation_budget=0)
    worst = 3000 * (env.optimal_value - env.expected_rewards.min())
    results = {}
    for name in ("robust-lcb", "linsem-ucb", "linsem-ts", "ucb", "random"):
        results[name] = run(env, POLICIES[name](env.problem), 3000, 10).mean()
    assert results["linsem-ucb"] < 0.05 * worst
    assert results["linsem-ts"] < 0.05 * worst
    assert results["ucb"] < 0.1 * worst
    assert results["robust-lcb"] < 0.5 * worst
    assert max(v for k, v in results.items() if k != "random") < results["random"]


def test_thompson_sampling_estimates_converge():
    env = make_environment(horizon=2000, deviation_budget=0)
    policy = LinSEMTS(env.problem)
    run(env, policy, 2000, 4)
    truth = _true_theta(env, policy)
    played = policy.ridge.counts > 200
    error = np.abs(policy.ridge.theta - truth)[played]
    assert error.max() < 0.1


def test_bad_hyper_parameters_are_rejected():
    problem = make_environment(horizon=10, deviation_budget=0).problem
    with pytest.raises(ValueError, match="C must be"):
        RobustLCB(problem, deviation_budget=-1)
    with pytest.raises(ValueError, match="delta"):
        LinSEMUCB(problem, delta=2.0)
    with pytest.raises(ValueError, match="beta_scale"):
        LinSEMUCB(problem, beta_scale=-1)
    with pytest.raises(ValueError, match="variance"):
        LinSEMTS(problem, variance=0)
    with pytest.raises(ValueError, match="delta"):
        UCB1(problem, delta=0)
    with pytest.raises(ValueError, match="unknown solver"):
        RobustLCB(problem, solver="exhaustive")
    with pytest.raises(ValueError, match="greedy and interval solvers only"):
        LinSEMUCB(problem, solver="bca", ball=True)


def test_block_coordinate_solver_never_lowers_the_greedy_ucb():
    """The ascent starts at greedy's columns, so it never returns a lower value of eq. 18
    (that it finds higher ones where signs are mixed is pinned in test_pinned_linsem.py)."""
    env = make_environment(horizon=80, deviation_budget=0)
    policy = RobustLCB(env.problem)

    def compare_solvers(p):
        greedy = p.upper_confidence_bounds()
        p.solver = "bca"
        bca = p.upper_confidence_bounds()
        p.solver = "greedy"
        assert np.all(bca >= greedy - 1e-9 * np.abs(greedy))

    run(env, policy, 80, 3, each_round=compare_solvers)


def test_sliding_window_ucb_matches_a_direct_recomputation(rng):
    env = make_environment(horizon=400, deviation_budget=0)
    policy = UCB1(env.problem, exploration=1.0, window=3)
    env.reset(0, 2)
    policy.reset(np.random.SeedSequence(5).spawn(2))
    history = [[[] for _ in range(env.n_actions)] for _ in range(2)]
    for _ in range(400):
        actions = policy.select()
        feedback = env.step(actions)
        policy.update(actions, feedback)
        for r, a in enumerate(actions):
            history[r][a].append(feedback[r, -1])
    for r in range(2):
        for a in range(env.n_actions):
            recent = history[r][a][-3:]
            assert policy.counts[r, a] == len(recent)
            assert policy.sums[r, a] == pytest.approx(sum(recent), abs=1e-9)
    with pytest.raises(ValueError, match="window"):
        UCB1(env.problem, window=0)
