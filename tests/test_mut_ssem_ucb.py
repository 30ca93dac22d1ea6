"""SSEM-UCB-JO's bookkeeping and options against their documented definitions (issue 32,
mutation testing): the vertex internal UCB against a brute-force maximum over the box
corners, the short-horizon external bonus against its formula, eq. 9's span per replicate,
the refit rule (residual test and ``refit_every``) on hand-set statistics, the refit counters,
the per-replicate fallback of a fit without a reward map, and the options' checks."""

from __future__ import annotations

import itertools
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest

from causalbandits.envs.base_arms import EmpiricalArms
from causalbandits.envs.separable_semibandit import SeparableBanditConfig, SeparableSemiBandit
from causalbandits.estimators.taylor_moments import confidence_radius, moment_box
from causalbandits.policies.ssem_ucb import (
    SSEMUCBJO,
    SSEMOptions,
    initial_blocks,
    selection_scores,
)
from causalbandits.random import replicate_seeds
from causalbandits.scm.basis import Dictionary
from causalbandits.scm.separable import SeparableSEM

QUADRATIC = Dictionary.from_names(["linear", "quadratic"])


def environment(replicates: int = 1) -> SeparableSemiBandit:
    """Four arms, super arms of at most two, edges 2 -> 0 (quadratic) and 3 -> 1 (linear)."""
    weights = np.zeros((4, 4, 2))
    weights[0, 2, 1], weights[1, 3, 0] = 0.7, 0.5
    values = [np.linspace(lo, lo + 0.4, 7) for lo in (0.1, 0.4, 0.2, 0.3)]
    sem = SeparableSEM(np.repeat(weights[None], replicates, axis=0), QUADRATIC)
    config = SeparableBanditConfig(super_arm_size=2, horizon=100, mc_samples=200)
    return SeparableSemiBandit(sem, EmpiricalArms(values), config)


def played(rounds: int, replicates: int = 1, **options) -> SSEMUCBJO:
    """SSEM-UCB-JO (q = 2, the quadratic dictionary) after ``rounds`` rounds."""
    env = environment(replicates)
    env.reset(0)
    policy = SSEMUCBJO(env.problem, degree=2, dictionary=QUADRATIC.names, **options)
    policy.reset(replicate_seeds(0, 0, list(range(replicates)), 1))
    for _ in range(rounds):
        actions = policy.select()
        policy.update(actions, env.step(actions))
    return policy


def test_vertex_internal_ucb_is_the_brute_force_maximum_over_the_box_corners() -> None:
    """``internal_ucb="vertex"``: ``I^max(x)`` is the largest ``sum_alpha c_alpha prod_j
    m_j^(alpha_j)`` over the corners of the moment box of the members (the sum is
    multilinear in the moments, so a corner is a maximum); enumerated here corner by corner.
    It is at most the per-addend bound."""
    policy = played(12, internal_ucb="vertex")
    policy.t += 1
    low, high = policy.moment_boxes()
    got = policy.internal_upper_bounds()[0]
    for group in policy.groups:
        for a, arms in enumerate(group.members):
            k, q = len(arms), policy.options.degree
            best = -np.inf
            for corner in itertools.product((0, 1), repeat=q * k):
                pick = np.array(corner).reshape(q, k)
                moments = np.ones((q + 1, k))
                moments[1:] = np.where(pick, high[0][1:, arms], low[0][1:, arms])
                value = sum(
                    c * np.prod([moments[e, j] for j, e in enumerate(alpha)])
                    for c, alpha in zip(group.coefficients[0, a], group.exponents, strict=True)
                )
                best = max(best, value)
            assert got[group.rows][a] == pytest.approx(best, rel=1e-12, abs=1e-12)
    per_addend = replace(policy.options, internal_ucb="per-addend")
    policy.options = per_addend
    assert np.all(got <= policy.internal_upper_bounds()[0] + 1e-12)


def test_sum_bonus_is_the_short_horizon_form() -> None:
    """``bonus_form="sum"`` with Alg. 2's joint factor: ``E(x) = 4 sqrt((s + 1) ln(t - 1))
    (t - 1)^(1/4) sum_{i in x} m_i^(-1/2) / s`` (App. -G2), written out here."""
    policy = played(9, bonus_form="sum")
    t, s, counts = policy.t, 2, policy.sums.counts[0]
    scale = 4 * np.sqrt((s + 1) * np.log(t - 1)) * (t - 1) ** 0.25
    expected = [scale * np.sum(1 / np.sqrt(counts[x])) / s for x in policy.super_arms]
    np.testing.assert_allclose(policy.external_bonus()[0], expected, rtol=1e-12)


def test_moment_boxes_clip_to_the_signal_width_asked() -> None:
    """The boxes are eq. 7's about the centres, clipped to ``signal_width`` (here 0.3, not
    the default 1) or not clipped at all (``None``)."""
    for width in (0.3, None):
        policy = played(9, signal_width=width, radius_scale=0.5)
        t = policy.t
        moments = policy.sums.central_moments(policy.centres)
        radius = 0.5 * confidence_radius(t - 1, policy.sums.counts, 2)
        expected = moment_box(moments, radius, policy.multipliers, width)
        for got, want in zip(policy.moment_boxes(), expected, strict=True):
            np.testing.assert_array_equal(got, want)


def test_the_span_of_eq_9_is_taken_per_replicate() -> None:
    """``I + scale (max_x I - min_x I) E`` with the span of each replicate's own finite
    internal UCBs."""
    internal = np.array([[0.0, 1.0, 3.0], [10.0, 10.5, np.nan]])
    bonus = np.array([[0.0, 1.0, 2.0], [0.0, 2.0, 4.0]])
    scores = selection_scores(internal, bonus, 0.5)
    np.testing.assert_allclose(scores[0], [0.0, 1.0 + 0.5 * 3 * 1, 3.0 + 0.5 * 3 * 2])
    np.testing.assert_allclose(scores[1], [10.0, 10.5 + 0.5 * 0.5 * 2, -np.inf])


def test_initial_blocks_are_boolean_masks() -> None:
    blocks = initial_blocks(5, 2)
    assert blocks.dtype == bool and blocks.tolist() == [
        [True, True, False, False, False],
        [False, False, True, True, False],
        [False, False, False, False, True],
    ]


def plant(policy: SSEMUCBJO, weights: np.ndarray) -> None:
    """Make every refit return ``weights`` ``(R, N, N, K)``."""
    policy.graph.fit = lambda which: weights.copy()


def test_refits_are_counted_with_their_shrinks_and_divergences_per_replicate() -> None:
    """Two replicates on cycles: replicate 0's planted 2-cycle of gain 2 has no reward map
    (counted as divergent, no super arm scores) while replicate 1's small fit is fine; each
    refit adds exactly 1 to ``refits`` and resets the residual statistics. With
    ``max_contraction`` the same cycle is shrunk (counted) and a contracting fit is not."""
    policy = played(8, replicates=2, upper_triangular=False)
    weights = np.zeros((2, 4, 4, 2))
    weights[0, 0, 1, 0] = weights[0, 1, 0, 0] = 2.0
    weights[1, 0, 2, 0] = 0.1
    plant(policy, weights)
    before = policy.refits.copy()
    policy.divergent_refits[:] = 0
    for n in (1, 2):
        policy.residual_sum[:], policy.residual_count[:] = 0.7, 4
        policy._refit(np.array([True, True]))
        np.testing.assert_array_equal(policy.refits, before + n)
        np.testing.assert_array_equal(policy.divergent_refits, [n, 0])
        np.testing.assert_array_equal(policy.residual_sum, [0.0, 0.0])
        np.testing.assert_array_equal(policy.residual_count, [0, 0])
        assert not policy.stale.any()
    scores = policy.scores()
    assert np.isneginf(scores[0]).all() and np.isfinite(scores[1]).all()
    assert np.isnan(policy.reconstruction_error()[0])
    assert np.isfinite(policy.reconstruction_error()[1])  # computed after a failing replicate

    shrinking = played(8, replicates=2, upper_triangular=False, max_contraction=0.9)
    plant(shrinking, weights)
    shrinking.shrunk_refits[:] = 0
    for n in (1, 2):
        shrinking._refit(np.array([True, True]))
        np.testing.assert_array_equal(shrinking.shrunk_refits, [n, 0])
    np.testing.assert_allclose(shrinking.fitted[0, [0, 1], [1, 0], 0], [0.9, 0.9])


def test_the_residual_test_and_refit_every_mark_a_replicate_stale() -> None:
    """``update`` (empty fit: the residual is ``||y - z||^2``): after at least 5 residuals
    since the last refit, one above ``residual_factor`` (3) times their mean (0.01) marks
    the replicate stale, one below does not, and fewer than 5 never; ``refit_every`` (4)
    rounds after the last refit it is stale anyway. The statistics grow by the round."""
    policy = played(8, refit_every=4)
    policy.graph.coefficients[:] = 0.0
    z = np.array([[0.2, 0.0, 0.3, 0.0]])
    played_arms = z != 0

    def round_with(residual: float, count: int, since: int) -> bool:
        policy.stale[:] = False
        policy.residual_sum[:], policy.residual_count[:] = 0.01 * count, count
        policy.last_fit[:] = policy.t - since
        y = z.copy()
        y[0, 1] = np.sqrt(residual)
        policy.update(played_arms, SimpleNamespace(z=z, y=y))
        assert policy.residual_count[0] == count + 1
        assert policy.residual_sum[0] == pytest.approx(0.01 * count + residual)
        return bool(policy.stale[0])

    assert round_with(0.04, 5, since=0)  # 0.04 > 3 * 0.01
    assert not round_with(0.02, 5, since=0)
    assert not round_with(0.04, 4, since=0)  # only 4 residuals so far
    assert not round_with(0.0, 5, since=2)  # t + 1 - last_fit = 3 < 4
    assert round_with(0.0, 5, since=3)  # = 4: due


def test_options_are_checked_naming_them_and_converted() -> None:
    """Every knob is checked on construction, refused with its name, and numbers are kept
    as ``int`` or ``float``; the rule of the radii and the bounds of ``max_contraction``
    (open at 0 and 1) are checked too."""
    options = SSEMOptions(
        degree=2.0,
        lam=1,
        edge_threshold=0,
        radius_scale=2,
        bonus_scale=0,
        refit_every=5.0,
        residual_factor=2,
        fd_step=1,
    )
    for name, kind in [
        ("degree", int),
        ("lam", float),
        ("edge_threshold", float),
        ("radius_scale", float),
        ("bonus_scale", float),
        ("refit_every", int),
        ("residual_factor", float),
        ("fd_step", float),
    ]:
        assert type(getattr(options, name)) is kind, name
    assert SSEMOptions(max_contraction=0.5).max_contraction == 0.5
    for bad, message in [
        ({"degree": 0}, r"^degree q must be an integer >= 1, got 0$"),
        ({"radius_rule": "appendix"}, "rule must be one of"),
        ({"radius_scale": 0}, r"^radius_scale must be > 0 and finite, got 0$"),
        ({"bonus_scale": -1}, r"^bonus_scale must be >= 0 and finite, got -1$"),
        ({"signal_width": 0}, r"^signal_width must be > 0 and finite, got 0$"),
        ({"refit_every": 0}, r"^refit_every must be an integer >= 1, got 0$"),
        ({"residual_factor": 0}, r"^residual_factor must be > 0 and finite, got 0$"),
        ({"max_contraction": 0}, r"^max_contraction must lie in \(0, 1\), got 0$"),
        ({"max_contraction": 1}, r"^max_contraction must lie in \(0, 1\), got 1$"),
        ({"max_contraction": 1.5}, r"^max_contraction must lie in \(0, 1\), got 1\.5$"),
    ]:
        with pytest.raises(ValueError, match=message):
            SSEMOptions(**bad)


def test_the_policy_reads_its_options_object_and_the_problem() -> None:
    """An options object is used (changes by name on top of it), the radius rule reaches the
    multipliers (the proof's ``2^(2 mod p)``: 1, 1 for q = 2), a problem without
    ``upper_triangular`` is a cyclic one, and the graph fit gets the order and the lasso
    options."""
    problem = SimpleNamespace(n_arms=4, super_arm_size=2, horizon=10)
    options = SSEMOptions(degree=2, radius_rule="proof", lam=0.5, target_density=0.5)
    policy = SSEMUCBJO(problem, options=options, bonus_scale=0.25)
    assert policy.options.degree == 2 and policy.options.bonus_scale == 0.25
    assert policy.options.upper_triangular is False
    np.testing.assert_array_equal(policy.multipliers, [0.0, 1.0, 1.0])
    policy.reset(replicate_seeds(0, 0, [0], 1))
    assert policy.graph.upper_triangular is False and policy.graph.possible_edges == 12
    assert policy.graph.lam[0] == 0.5 and policy.graph.target_density == 0.5
    known = SSEMUCBJO(SimpleNamespace(**vars(problem), upper_triangular=True), degree=2)
    assert known.options.upper_triangular is True
