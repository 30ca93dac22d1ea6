"""SEM-UCB (the SEMSemiBandit skeleton with SEM_UCB_INDEX and LassoGraph) on scripted rounds:
the initialisation matrix, the H phase and its last round, ties among unobserved arms broken
with the round's uniforms, what the graph learner receives (received rounds only, z or b),
the structure and delay read from the problem, and the values the options may take."""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import pytest

from causalbandits.envs.delay import DelayedFeedback
from causalbandits.envs.semibandit import SemiBanditProblem
from causalbandits.policies import NDCSEM, SEMUCB
from causalbandits.policies.ndc_sem import (
    SEM_UCB_INDEX,
    DiscountedIndex,
    LassoGraph,
    initialisation_matrix,
)


def test_initialisation_matrix_columns():
    """Columns 1..s hold ones in rows 1..i; later columns the diagonal and s - 1 distinct
    rows above it."""
    h = initialisation_matrix(6, 3, np.random.default_rng(0))
    assert h.dtype == bool
    np.testing.assert_array_equal(h[:, :3], np.triu(np.ones((6, 3), dtype=bool))[:, :3])
    np.testing.assert_array_equal(h[:3, :3], np.triu(np.ones((3, 3), dtype=bool)))
    np.testing.assert_array_equal(h.sum(axis=0), [1, 2, 3, 3, 3, 3])
    assert np.array_equal(np.triu(h), h) and h.diagonal().all()


def test_index_constants_are_floats_or_float_arrays():
    index = DiscountedIndex(1, [1, 2])
    assert isinstance(index.gamma, float) and index.gamma == 1.0
    assert isinstance(index.xi, np.ndarray) and index.xi.dtype == np.float64
    np.testing.assert_array_equal(index.xi, [1.0, 2.0])
    per_replicate_gamma = DiscountedIndex([0.5, 0.9, 1.0], 0.25)  # a scalar xi is shared
    assert isinstance(per_replicate_gamma.gamma, np.ndarray)
    assert isinstance(per_replicate_gamma.xi, float)
    assert per_replicate_gamma.statistics(3, 4, 2).gamma.shape == (3,)
    assert DiscountedIndex(1.0, 0.25) == SEM_UCB_INDEX
    # checked when the index is built: the larger size is the replicate count
    message = r"^gamma must be a scalar or one value per replicate \(3,\), got shape \(2,\)$"
    with pytest.raises(ValueError, match=message):
        DiscountedIndex([0.5, 0.9], [0.1, 0.2, 0.3])


def test_lasso_graph_options():
    assert LassoGraph(0.0, 1).sweeps == 1  # no penalty and a single sweep are allowed
    with pytest.raises(ValueError, match=r"^lam must be >= 0, got -0.1$"):
        LassoGraph(-0.1)
    with pytest.raises(ValueError, match=r"^lasso_sweeps must be >= 1, got 0$"):
        LassoGraph(0.1, 0)
    learner = LassoGraph(0.3, 2).learner(2, 4, "cyclic")
    assert learner.tol == 1e-8 and learner.max_sweeps == 2
    np.testing.assert_array_equal(learner.lam, [0.3, 0.3])
    np.testing.assert_array_equal(learner.support, ~np.eye(4, dtype=bool))


def test_sem_ucb_presets():
    problem = SemiBanditProblem(5, 2, 50, delay=7)
    policy = SEMUCB(problem, lam=0.2, lasso_sweeps=3)
    assert policy.graph == LassoGraph(0.2, 3) and policy.index == SEM_UCB_INDEX
    assert SEMUCB(problem).graph == LassoGraph(1e-2, 5)
    assert policy.initial_rounds == 5  # H once, then arms without feedback at random
    policy.reset(np.random.SeedSequence(0).spawn(2))
    assert policy.lasso.max_sweeps == 3 and policy.lasso.tol == 1e-8


def test_super_arm_size_and_graph_input_options():
    assert SEMUCB(SemiBanditProblem(4, 1, 10)).super_arm_size == 1
    assert SEMUCB(SemiBanditProblem(4, 4, 10)).super_arm_size == 4
    with pytest.raises(ValueError, match=r"^super-arm size s must lie in 1..4, got 0$"):
        SEMUCB(SimpleNamespace(n_arms=4, super_arm_size=0))
    with pytest.raises(ValueError, match=r"^graph_input must be 'z' or 'b', got 'y'$"):
        SEMUCB(SemiBanditProblem(4, 2, 10), graph_input="y")
    assert SEMUCB(SemiBanditProblem(4, 2, 10), graph_input="b").graph_input == "b"
    with pytest.raises(ValueError, match=r"^start_rule must be one of \('random', 'cycle'\)"):
        NDCSEM(SemiBanditProblem(4, 2, 10), start_rule="wait")
    assert SEMUCB(SemiBanditProblem(4, 2, 10)).start_rule == "random"


def test_structure_and_delay_come_from_the_problem():
    bare = SimpleNamespace(n_arms=4, super_arm_size=2)  # no order, no delay announced
    assert SEMUCB(bare).structure == "dag"
    assert NDCSEM(bare, start_rule="cycle").initial_rounds == 4
    cyclic = SemiBanditProblem(4, 2, 10, upper_triangular=False, delay=3)
    policy = SEMUCB(cyclic)
    assert policy.structure == "cyclic"
    policy.reset(np.random.SeedSequence(0).spawn(1))
    np.testing.assert_array_equal(policy.lasso.support, ~np.eye(4, dtype=bool))
    assert NDCSEM(cyclic, start_rule="cycle").initial_rounds == 4 + 3
    assert NDCSEM(cyclic).initial_rounds == 4  # the default start rule plays H once


@dataclass(frozen=True)
class Feedback:
    z: np.ndarray
    y: np.ndarray
    b: np.ndarray | None = None


def nothing_arrives(n: int) -> DelayedFeedback:
    empty = Feedback(np.zeros((0, n)), np.zeros((0, n)))
    return DelayedFeedback(np.zeros(0, int), np.zeros(0, int), np.zeros((0, n), bool), empty)


def test_h_phase_then_ties_among_unobserved_arms_go_to_the_rounds_uniforms():
    """Rounds 1..N play the columns of H in order; with no feedback yet every index is +inf
    (w_hat = 1 on the empty graph), so round N + 1 takes the top s of its uniforms."""
    n, s = 5, 2
    policy = SEMUCB(SemiBanditProblem(n, s, 50, delay=20))
    seeds = np.random.SeedSequence(4).spawn(3)
    policy.reset(seeds)
    for t in range(1, n + 1):
        np.testing.assert_array_equal(policy.select(), policy.h[:, :, t - 1])
        policy.update(policy.h[:, :, t - 1], nothing_arrives(n))
    chosen = policy.select()
    for r, seed in enumerate(seeds):
        u = np.random.default_rng(seed).random((256, n))[n]  # the uniforms of round N + 1
        np.testing.assert_array_equal(np.flatnonzero(chosen[r]), np.sort(np.argsort(u)[-s:]))
    # H of replicate r from the first child of its seed (fresh copies: spawning advances
    # a SeedSequence)
    fresh = np.random.SeedSequence(4).spawn(3)
    h = np.stack(
        [initialisation_matrix(n, s, np.random.default_rng(seed.spawn(1)[0])) for seed in fresh]
    )
    np.testing.assert_array_equal(policy.h, h)


def test_the_graph_learner_gets_the_received_rounds_only():
    """Round 1's feedback arrives for replicate 0 only: replicate 1's empty slot adds no
    round to its lasso statistics."""
    policy = SEMUCB(SemiBanditProblem(3, 1, 10, delay=1))
    policy.reset(np.random.SeedSequence(1).spawn(2))
    played = policy.select()
    policy.update(played, nothing_arrives(3))
    second = policy.select()
    y = np.array([[1.0, 2.0, 3.0]])
    item = DelayedFeedback(np.array([1]), np.array([0]), played[:1], Feedback(y * 0.5, y))
    policy.update(second, item)
    np.testing.assert_array_equal(policy.lasso.statistics.counts, [1, 0])
    np.testing.assert_allclose(policy.lasso.statistics.gram[0], y.T @ y)
    np.testing.assert_array_equal(policy.lasso.statistics.gram[1], 0.0)


def test_graph_input_b_regresses_on_the_revealed_rewards():
    z, y, b = np.array([[0.0, 1.0, 0.0]]), np.array([[2.0, 3.0, 4.0]]), np.array([[0.5, 1.0, 1.5]])
    for graph_input, exogenous in (("z", z), ("b", b)):
        policy = SEMUCB(SemiBanditProblem(3, 1, 10), graph_input=graph_input)
        policy.reset(np.random.SeedSequence(2).spawn(1))
        played = policy.select()
        policy.update(played, Feedback(z, y, b))
        np.testing.assert_allclose(policy.lasso.statistics.cross[0], y.T @ (y - exogenous))
    policy = SEMUCB(SemiBanditProblem(3, 1, 10), graph_input="b")
    policy.reset(np.random.SeedSequence(2).spawn(1))
    played = policy.select()
    with pytest.raises(ValueError, match=r"^graph_input='b' needs feedback that reveals b$"):
        policy.update(played, Feedback(z, y))
