"""The benchmark's scores on constructed results with known answers."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from causalbandits.bench.leaderboard import (
    Leaderboard,
    bootstrap_means,
    normalised_regret,
    performance_profile,
    rank_shares,
)


def results(scores: dict[str, np.ndarray], family: str = "f", random_regret: float = 50.0):
    """Rows of a benchmark whose normalised regret is ``scores[policy][instance, replicate]``."""
    rows = []
    for policy, cube in scores.items():
        for i, r in itertools.product(range(cube.shape[0]), range(cube.shape[1])):
            rows.append(
                {
                    "family": family,
                    "instance": i,
                    "replicate": r,
                    "policy": policy,
                    "regret": cube[i, r] * random_regret,
                    "random_regret": random_regret,
                }
            )
    return pd.DataFrame(rows)


def test_normalised_regret_is_zero_for_the_oracle_and_one_for_random_play() -> None:
    df = pd.DataFrame(
        {
            "family": "f",
            "instance": [0, 0, 1],
            "replicate": 0,
            "policy": ["oracle", "random", "p"],
            "regret": [0.0, 120.0, 30.0],
            "random_regret": [120.0, 120.0, 60.0],
        }
    )
    np.testing.assert_allclose(normalised_regret(df), [0.0, 1.0, 0.5])
    with pytest.raises(ValueError, match="positive"):
        normalised_regret(df.assign(random_regret=0.0))
    with pytest.raises(ValueError, match="columns"):
        normalised_regret(df.drop(columns="random_regret"))


def test_bootstrap_interval_of_a_constant_is_the_constant() -> None:
    board = Leaderboard.of(results({"a": np.full((3, 4), 0.3), "b": np.full((3, 4), 0.7)}))
    np.testing.assert_allclose(board.means[["mean", "low", "high"]].loc[("f", "a")], 0.3)
    np.testing.assert_allclose(board.overall.loc["b", ["mean", "low", "high"]], 0.7)
    assert board.ranks.loc["a", 1] == 1.0 and board.ranks.loc["b", 2] == 1.0


@pytest.mark.parametrize("shape", [(400, 1), (1, 400)])
def test_bootstrap_width_matches_the_standard_error_of_a_mean(shape: tuple[int, int]) -> None:
    """Independent values on one level (instances, or replicates of one instance): the 95%
    interval is the mean +- 1.96 sd / sqrt(n), within the bootstrap's own error."""
    cube = np.random.default_rng(1).normal(size=(*shape, 1))
    boot = bootstrap_means(cube, 4000, np.random.default_rng(2))[:, 0]
    se = cube.std(ddof=1) / np.sqrt(cube.size)
    low, high = np.percentile(boot, [2.5, 97.5])
    assert high - low == pytest.approx(2 * 1.96 * se, rel=0.08)
    assert boot.mean() == pytest.approx(cube.mean(), abs=0.1 * se)


def test_two_level_bootstrap_sees_the_spread_between_instances() -> None:
    """Instance effects of sd 1 and replicate noise of sd 0.1 (10 instances x 10 replicates):
    the mean's spread is dominated by the instances, sd ~ 1 / sqrt(10)."""
    generator = np.random.default_rng(3)
    cube = generator.normal(size=(10, 1, 1)) + 0.1 * generator.normal(size=(10, 10, 1))
    boot = bootstrap_means(cube, 4000, np.random.default_rng(4))[:, 0]
    between = cube.mean(axis=(1, 2)).std(ddof=0) / np.sqrt(10)
    assert boot.std() == pytest.approx(between, rel=0.15)


def test_ranks_of_separated_and_of_identical_policies() -> None:
    boots = np.column_stack([np.full(50, 0.1), np.full(50, 0.5), np.full(50, 0.1)])
    shares = rank_shares(boots, ["a", "b", "c"])
    assert shares.loc["a", 1] == shares.loc["c", 1] == 1.0  # a tie shares the better rank
    assert shares.loc["b", 3] == 1.0
    np.testing.assert_allclose(shares.sum(axis=1), 1.0)


def test_overall_score_averages_the_families_and_ranks_reflect_overlap() -> None:
    generator = np.random.default_rng(5)
    close = {p: 0.5 + 0.2 * generator.normal(size=(6, 5)) for p in ("a", "b")}
    far = {"a": np.full((4, 3), 0.2), "b": np.full((4, 3), 0.6)}
    df = pd.concat([results(close, "close"), results(far, "far")], ignore_index=True)
    board = Leaderboard.of(df, draws=500)
    family_means = board.means["mean"].unstack("family")
    np.testing.assert_allclose(board.overall["mean"], family_means.mean(axis=1))
    assert 0 < board.ranks.loc["a", 1] <= 1 and board.ranks.loc["a", 1] > board.ranks.loc["b", 1]
    assert Leaderboard.of(df, draws=500).means.equals(board.means)  # seeded


def test_performance_profile_of_known_ratios() -> None:
    # Three instances, one replicate: a is best on 0 and 1, b on 2; b = 2a on 0, 1.5a on 1;
    # on 2, a = 4b; instance 3: both 0.
    scores = {
        "a": np.array([[0.1], [0.2], [0.4], [0.0]]),
        "b": np.array([[0.2], [0.3], [0.1], [0.0]]),
    }
    profile = performance_profile(results(scores), [1.0, 1.5, 2.0, 4.0])
    np.testing.assert_allclose(profile.loc["a"], [0.75, 0.75, 0.75, 1.0])
    np.testing.assert_allclose(profile.loc["b"], [0.5, 0.75, 1.0, 1.0])
    with pytest.raises(ValueError, match=">= 1"):
        performance_profile(results(scores), [0.5])


def test_profile_counts_only_the_instances_a_policy_ran_and_failures_never() -> None:
    # c ran only on instances 0 and 1 (not compatible with 2, 3); d failed on every instance.
    scores = {
        "a": np.array([[0.1], [0.2], [0.4], [0.0]]),
        "b": np.array([[0.2], [0.3], [0.1], [0.0]]),
    }
    df = results(scores)
    partial = results({"c": np.array([[0.05], [0.4]])})
    failed = results({"d": np.full((4, 1), np.inf)})
    profile = performance_profile(pd.concat([df, partial, failed]), [1.0, 2.0, 8.0])
    # best per instance: 0.05 (c), 0.2 (a), 0.1 (b), 0 (a, b)
    np.testing.assert_allclose(profile.loc["c"], [0.5, 1.0, 1.0])  # of its 2; 0.4 = 2 x 0.2
    np.testing.assert_allclose(profile.loc["a"], [0.5, 0.75, 1.0])  # 0.1 = 2 x 0.05; 0.4 = 4 x 0.1
    np.testing.assert_allclose(profile.loc["d"], [0.0, 0.0, 0.0])


def test_unbalanced_or_incomplete_results_are_refused() -> None:
    df = results({"a": np.full((2, 2), 0.3), "b": np.full((2, 2), 0.4)})
    with pytest.raises(ValueError, match="every instance and replicate"):
        Leaderboard.of(df.iloc[1:])
    other = results({"a": np.full((2, 2), 0.3)}, family="g")
    with pytest.raises(ValueError, match="lacks policies"):
        Leaderboard.of(pd.concat([df, other], ignore_index=True))
    with pytest.raises(ValueError, match="level"):
        Leaderboard.of(df, level=1.0)
