import numpy as np
import pytest

from causalbandits.envs import ActionSet
from causalbandits.envs.robust_lcb import robust_lcb_sem
from causalbandits.graphs import CausalDAG, robust_lcb_graph
from causalbandits.scm import LinearSEM, UniformNoise

from .conftest import random_sem


def power_series_reward(b_a: np.ndarray, nu: np.ndarray, depth: int) -> float:
    """``<f(B_a), nu>`` with ``f(Theta) = sum_{l=0}^{L} [Theta^l]_N`` (paper, Section II)."""
    total = np.zeros_like(b_a)
    power = np.eye(b_a.shape[0])
    for _ in range(depth + 1):
        total += power
        power = power @ b_a
    return float(total[:, -1] @ nu)


def test_paper_expected_rewards_match_the_spec_table():
    sem = robust_lcb_sem()
    actions = ActionSet.non_root(sem.dag)
    rewards = sem.mean_values(actions.masks)[:, -1]
    assert rewards.min() == pytest.approx(1 + np.sqrt(3) / 2 * (1 + np.sqrt(3) / 2))
    assert rewards.max() == pytest.approx(4 + np.sqrt(3))
    assert rewards[actions.index_of([12])] == pytest.approx(4.2321, abs=1e-4)
    assert rewards[actions.index_of([9, 10, 11])] == pytest.approx(3.3660, abs=1e-4)
    assert sem.x_norm_bound(actions.masks) == pytest.approx(16.03, abs=0.01)


def test_closed_form_equals_power_series(rng):
    for _ in range(10):
        sem = random_sem(6, rng)
        actions = ActionSet.all_subsets(6)
        closed = sem.mean_values(actions.masks)[:, -1]
        b_a = sem.weights_under(actions.masks)
        series = [power_series_reward(b, sem.noise.mean, sem.dag.longest_path) for b in b_a]
        np.testing.assert_allclose(closed, series, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("which", ["paper", "random"])
def test_closed_form_agrees_with_monte_carlo(which, rng):
    sem = robust_lcb_sem() if which == "paper" else random_sem(5, rng)
    masks = ActionSet.non_root(sem.dag).masks
    n = 20000
    for mask in masks[:: max(1, len(masks) // 6)]:
        draws = sem.sample(np.broadcast_to(mask, (n, sem.n_nodes)), rng)
        se = draws.std(axis=0, ddof=1) / np.sqrt(n)
        gap = np.abs(draws.mean(axis=0) - sem.mean_values(mask))
        assert np.all(gap <= 4 * se + 1e-12), (gap / se).max()


def test_weights_on_non_edges_and_wrong_shapes_are_rejected():
    dag = CausalDAG.from_edges(3, [(0, 1), (1, 2)])
    noise = UniformNoise.iid(3)
    good = np.zeros((3, 3))
    bad = np.zeros((3, 3))
    bad[0, 2] = 0.4
    with pytest.raises(ValueError, match="non-edge 0 -> 2"):
        LinearSEM(dag, bad, good, noise)
    with pytest.raises(ValueError, match="shape"):
        LinearSEM(dag, np.zeros((2, 2)), good, noise)
    with pytest.raises(ValueError, match="noise has 2 nodes"):
        LinearSEM(dag, good, good, UniformNoise.iid(2))
    with pytest.raises(ValueError, match="low < high"):
        UniformNoise.iid(3, 1.0, 1.0)


def test_action_sets():
    dag = robust_lcb_graph()
    assert ActionSet.non_root(dag).n_actions == 16
    assert ActionSet.non_root(dag, include_reward=False).n_actions == 8
    assert ActionSet.all_subsets(13).n_actions == 2**13
    actions = ActionSet.subsets(13, [9, 10])
    assert [list(np.flatnonzero(m)) for m in actions.masks] == [[], [9], [10], [9, 10]]
