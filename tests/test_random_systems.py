import numpy as np
import pytest

from causalbandits.envs.random_systems import (
    random_csl_bandit,
    random_soft_intervention_sem,
    random_soft_intervention_weights,
)


def _bits(n_nodes: int) -> np.ndarray:
    """Masks decoded independently of ActionSet: arm k intervenes node b iff bit b of k is 1."""
    return np.array([[(k >> b) & 1 for b in range(n_nodes)] for k in range(2**n_nodes)], bool)


@pytest.mark.parametrize("preset", ["authors", "paper"])
def test_weights_are_strictly_upper_triangular_with_differing_columns(preset):
    rng = np.random.default_rng(1)
    for n in range(2, 11):
        for _ in range(20):
            weights, star = random_soft_intervention_weights(n, rng, preset)
            for matrix in (weights, star):
                assert np.all(np.tril(matrix) == 0)
                present = np.abs(matrix[matrix != 0])
                if preset == "authors":
                    assert np.all((present >= 0.5) & (present <= 2))
                else:
                    assert np.all(present <= 2)
            assert np.all(np.any(weights[:, 1:] != star[:, 1:], axis=0))


def test_both_signs_and_the_preset_ranges_occur():
    rng = np.random.default_rng(2)
    authors, paper = (
        np.concatenate([random_soft_intervention_weights(8, rng, preset)[0] for _ in range(50)])
        for preset in ("authors", "paper")
    )
    assert (authors < 0).any() and (authors > 0).any()
    assert np.abs(authors[authors != 0]).min() >= 0.5
    assert np.abs(paper[paper != 0]).min() < 0.5  # U(-2, 2) reaches small magnitudes


def test_mean_edge_count_matches_the_bernoulli_half_design():
    n, p, draws = 10, 0.5, 2000
    rng = np.random.default_rng(3)
    counts = np.array(
        [[(m != 0).sum() for m in random_soft_intervention_weights(n, rng)] for _ in range(draws)]
    )
    # Column j has j candidate parents; the rejection drops draws where both columns are empty,
    # so E[edges of column j | accepted] = j p / (1 - (1 - p)^(2 j)) (22.77 instead of 22.5).
    j = np.arange(1, n)
    expected = np.sum(j * p / (1 - (1 - p) ** (2 * j)))
    assert 0.5 * n * (n - 1) / 2 == 22.5
    assert expected == pytest.approx(22.77, abs=0.01)
    per_matrix = counts.mean(axis=0)
    standard_error = counts.std(axis=0) / np.sqrt(draws)
    assert np.all(np.abs(per_matrix - expected) < 4 * standard_error)


def test_same_seed_same_system():
    first = random_soft_intervention_weights(7, 11)
    second = random_soft_intervention_weights(7, 11)
    np.testing.assert_array_equal(first[0], second[0])
    np.testing.assert_array_equal(first[1], second[1])


def test_sem_graph_is_the_union_of_supports_with_unit_gaussian_noise():
    sem = random_soft_intervention_sem(8, 4)
    union = (sem.weights != 0) | (sem.intervention_weights != 0)
    np.testing.assert_array_equal(sem.dag.adjacency, union)
    np.testing.assert_array_equal(sem.noise.mean, np.ones(8))
    np.testing.assert_array_equal(sem.noise.variance, np.ones(8))


@pytest.mark.parametrize("preset", ["authors", "paper"])
def test_expected_rewards_match_a_solve_per_arm(preset):
    rng = np.random.default_rng(5)
    for n in range(2, 7):
        env = random_csl_bandit(n, 10, rng, preset)
        assert env.n_actions == 2**n and env.reward_node == n - 1
        masks = _bits(n)
        np.testing.assert_array_equal(env.actions.masks, masks)
        sem = env.sem
        brute = [
            np.linalg.solve(
                np.eye(n) - np.where(mask[None, :], sem.intervention_weights, sem.weights).T,
                np.ones(n),
            )[n - 1]
            for mask in masks
        ]
        np.testing.assert_allclose(env.expected_rewards, brute, rtol=1e-10, atol=1e-10)


def test_node_zero_never_matters_so_two_arms_are_optimal():
    rng = np.random.default_rng(6)
    for n in (3, 6, 10):
        for _ in range(5):
            env = random_csl_bandit(n, 10, rng)
            rewards = env.expected_rewards
            flipped = rewards[np.arange(env.n_actions) ^ 1]  # bit 0 = node 0
            np.testing.assert_allclose(rewards, flipped, rtol=1e-12, atol=1e-12)
            assert np.sum(rewards >= rewards.max() - 1e-2) >= 2


def test_monte_carlo_reward_mean_within_four_standard_errors():
    rounds, replicates = 500, 40
    env = random_csl_bandit(5, rounds, 7)
    for arm in (int(np.argmax(env.expected_rewards)), 13):
        env.reset(seed=arm, replicates=replicates)
        actions = np.full(replicates, arm)
        rewards = np.concatenate([env.step(actions)[:, env.reward_node] for _ in range(rounds)])
        error = abs(rewards.mean() - env.expected_rewards[arm])
        assert error < 4 * rewards.std(ddof=1) / np.sqrt(rewards.size)


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="n_nodes >= 2"):
        random_soft_intervention_weights(1)
    with pytest.raises(ValueError, match="unknown preset"):
        random_soft_intervention_weights(4, preset="golem")
    with pytest.raises(ValueError, match="edge_probability"):
        random_soft_intervention_weights(4, edge_probability=0.0)
    with pytest.raises(ValueError, match="edge_probability"):
        random_soft_intervention_weights(4, edge_probability=1.5)
