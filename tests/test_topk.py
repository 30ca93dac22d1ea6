from itertools import combinations

import numpy as np
import pytest

from causalbandits.estimators.topk import top_s_mask, total_effects


def brute_force_value(scores, super_arm_size):
    """Max of ``sum_i scores_i x_i`` over all ``x`` with ``||x||_0 <= super_arm_size`` (eq. 12)."""
    n = scores.size
    return max(
        scores[list(subset)].sum()
        for k in range(super_arm_size + 1)
        for subset in combinations(range(n), k)
    )


def brute_force_argmax(scores, super_arm_size):
    """The maximising super arm with fewest arms (unique for continuous scores)."""
    n = scores.size
    best, arg = -np.inf, None
    for k in range(super_arm_size + 1):
        for subset in combinations(range(n), k):
            value = scores[list(subset)].sum()
            if value > best + 1e-12:
                best, arg = value, subset
    mask = np.zeros(n, dtype=bool)
    mask[list(arg)] = True
    return mask


@pytest.mark.parametrize("n", [1, 4, 7, 10])
def test_top_s_equals_brute_force_on_sem_scores(n, rng):
    """Spec §6.5.3: random A_hat >= 0 upper triangular, E >= 0, scores w * E."""
    replicates = 20 if n < 10 else 4
    a = np.triu(rng.uniform(0, 0.7, (replicates, n, n)) * (rng.random((replicates, n, n)) < 0.4), 1)
    w = np.linalg.solve(np.transpose(np.eye(n) - a, (0, 2, 1)), np.ones((replicates, n, 1)))[..., 0]
    assert np.all(w >= 1 - 1e-12)
    scores = w * rng.uniform(0, 1, (replicates, n))
    for super_arm_size in range(n + 1):
        mask = top_s_mask(scores, super_arm_size)
        assert np.all(mask.sum(axis=1) == super_arm_size)
        for r in range(replicates):
            np.testing.assert_array_equal(mask[r], brute_force_argmax(scores[r], super_arm_size))


@pytest.mark.parametrize("n", [3, 6, 10])
def test_signed_scores_keep_only_positive_ones(n, rng):
    scores = rng.normal(size=(12, n))
    for super_arm_size in range(1, n + 1):
        mask = top_s_mask(scores, super_arm_size)
        assert np.all(mask.sum(axis=1) == np.minimum(super_arm_size, (scores > 0).sum(axis=1)))
        for r in range(scores.shape[0]):
            np.testing.assert_array_equal(mask[r], brute_force_argmax(scores[r], super_arm_size))
            assert scores[r][mask[r]].sum() == pytest.approx(
                brute_force_value(scores[r], super_arm_size)
            )
        filled = top_s_mask(scores, super_arm_size, positive_only=False)
        assert np.all(filled.sum(axis=1) == super_arm_size)
        assert np.all(filled >= mask)


def test_ties_deterministic_and_random():
    scores = np.array([[1.0, np.inf, 2.0, np.inf, 2.0, 2.0, 0.0]])
    np.testing.assert_array_equal(top_s_mask(scores, 3), [[0, 1, 1, 1, 0, 0, 0]])
    uniforms = np.array([[0.1, 0.2, 0.3, 0.5, 0.4, 0.9, 0.0]])
    np.testing.assert_array_equal(top_s_mask(scores, 3, uniforms), [[0, 1, 0, 1, 0, 1, 0]])
    np.testing.assert_array_equal(top_s_mask(scores, 4, uniforms), [[0, 1, 0, 1, 1, 1, 0]])
    # a zero score is never needed, but fills the super arm when asked to
    assert top_s_mask(scores, 7).sum() == 6
    assert top_s_mask(scores, 7, positive_only=False).sum() == 7


def test_random_ties_are_uniform(rng):
    scores = np.ones((20_000, 4))
    mask = top_s_mask(scores, 2, rng.random(scores.shape))
    assert np.all(mask.sum(axis=1) == 2)
    share = mask.mean(axis=0)
    assert np.all(np.abs(share - 0.5) < 4 * np.sqrt(0.25 / scores.shape[0]))


def test_invalid_arguments():
    with pytest.raises(ValueError):
        top_s_mask(np.zeros((1, 3)), 4)
    with pytest.raises(ValueError):
        top_s_mask(np.array([[np.nan, 1.0]]), 1)


def test_top_s_breaks_ties_to_the_lower_index_and_skips_non_positive_scores():
    scores = np.array([[1.0, 2.0, 2.0, 2.0, 0.5], [3.0, -1.0, 0.0, -2.0, 1.0]])
    expected = [[False, True, True, False, False], [True, False, False, False, True]]
    np.testing.assert_array_equal(top_s_mask(scores, 2), expected)
    np.testing.assert_array_equal(top_s_mask(scores[1], 3), [True, False, False, False, True])
    stacked = top_s_mask(np.stack([scores, scores[::-1]]), 2)  # (R, P, N), as per instance
    np.testing.assert_array_equal(stacked[0], expected)
    np.testing.assert_array_equal(stacked[1], np.array(expected)[::-1])


def test_total_effects_solve_the_transposed_system_per_batch_entry() -> None:
    a = np.triu(np.random.default_rng(2).uniform(0, 0.7, (3, 6, 6)), 1)
    w = total_effects(a)
    for r in range(3):
        np.testing.assert_allclose(np.linalg.inv(np.eye(6) - a[r]).T @ np.ones(6), w[r])
        np.testing.assert_array_equal(total_effects(a[r]), w[r])  # batching changes no bit
    np.testing.assert_allclose(total_effects(a, least_squares=True), w, rtol=1e-12)
    np.testing.assert_allclose(total_effects(a[None]), w[None])


def test_total_effects_fall_back_to_least_squares_for_a_singular_system() -> None:
    a = np.array([[0.0, 1.0], [1.0, 0.0]])  # I - A singular: the 2-cycle of gain 1
    regular = np.array([[0.0, 0.5], [0.0, 0.0]])
    w = total_effects(np.stack([regular, a]))
    np.testing.assert_allclose(w[0], [1.0, 1.5])
    np.testing.assert_allclose(w[1], np.linalg.lstsq(np.eye(2) - a.T, np.ones(2), rcond=None)[0])
    np.testing.assert_allclose(total_effects(a), w[1])
