"""SSEM-UCB's moment helpers against the paper's equations, written out here independently of
the code they check (issue 32): the confidence radius of eq. 7, the radius multipliers of
Sec. III-B (main text) and eq. 20 (proof), and the moment box clipped to the range of the true
moments (decisions: ssem-ucb 5)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from causalbandits.estimators import jets, taylor_moments
from causalbandits.estimators.dictionary_lasso import (
    DictionaryLasso,
    DictionaryLassoOptions,
    soft_threshold_lasso,
)
from causalbandits.estimators.expansion import Expansion
from causalbandits.estimators.jets import Monomials, reward_jets
from causalbandits.estimators.taylor_moments import (
    PowerSums,
    confidence_radius,
    external_ucb,
    moment_box,
    radius_multipliers,
    vertex_maximum,
)
from causalbandits.scm.basis import Dictionary
from causalbandits.scm.separable import ConvergenceError


def test_confidence_radius_is_eq_7() -> None:
    """``C_t[i] = sqrt((s + 1) ln(t) / m_t[i])`` (eq. 7), numbers written out by hand."""
    counts = np.array([[4.0, 1.0, 25.0, 0.0]])
    got = confidence_radius(100, counts, 3)
    # (s + 1) ln t / m with s = 3, t = 100: 4 * 4.605170185988092 / m
    expected = [
        math.sqrt(4 * 4.605170185988092 / 4),  # 2.1459660262893472
        math.sqrt(4 * 4.605170185988092 / 1),
        math.sqrt(4 * 4.605170185988092 / 25),
    ]
    np.testing.assert_allclose(got[0, :3], expected, rtol=1e-14)
    assert got[0, 0] == pytest.approx(2.1459660262893472, rel=1e-14)
    assert got[0, 3] == math.inf  # an arm never played has an infinite radius
    # s = 0 still counts the + 1 (a radius of sqrt(ln t / m), not 0)
    assert confidence_radius(7, np.array([[7.0]]), 0)[0, 0] == pytest.approx(
        math.sqrt(math.log(7) / 7), rel=1e-14
    )
    # ln(1) = 0: no radius in round 1; rounds below 1 are treated as 1
    np.testing.assert_array_equal(confidence_radius(1, np.array([[3.0]]), 5), [[0.0]])
    np.testing.assert_array_equal(confidence_radius(0, np.array([[3.0]]), 5), [[0.0]])


def test_radius_multipliers_follow_the_main_text_and_the_proof() -> None:
    """Main text: ``2^(p mod 2)`` (2 for odd, 1 for even p); proof (eq. 20): ``2^(2 mod p)``;
    ``k_0 = 0`` (the zeroth moment is exactly 1)."""
    np.testing.assert_array_equal(radius_multipliers(4), [0.0, 2.0, 1.0, 2.0, 1.0])
    np.testing.assert_array_equal(radius_multipliers(4, "proof"), [0.0, 1.0, 1.0, 4.0, 4.0])
    np.testing.assert_array_equal(radius_multipliers(1, "main"), [0.0, 2.0])
    with pytest.raises(ValueError, match="rule must be one of"):
        radius_multipliers(2, "appendix")


# One replicate, moments p = 0..3 of two arms (columns).
MOMENTS = np.array([[[1.0, 1.0], [0.1, -0.2], [0.3, 0.05], [-0.02, 0.01]]])
MULTIPLIERS = np.array([0.0, 2.0, 1.0, 2.0])  # 2^(p mod 2), written out


def test_moment_box_without_clipping_is_moments_plus_minus_k_p_c() -> None:
    radius = np.array([[0.01, 0.02]])
    low, high = moment_box(MOMENTS, radius, MULTIPLIERS)
    spread = np.array([[0.0, 0.0], [0.02, 0.04], [0.01, 0.02], [0.02, 0.04]])
    np.testing.assert_allclose(low[0], MOMENTS[0] - spread, rtol=0, atol=1e-15)
    np.testing.assert_allclose(high[0], MOMENTS[0] + spread, rtol=0, atol=1e-15)
    assert low.shape == high.shape == (1, 4, 2)


def test_moment_box_clips_both_ends_to_the_range_of_the_true_moments() -> None:
    """A radius far beyond the range: odd ``p`` clips to ``[-w^p, w^p]``, even ``p`` to
    ``[0, w^p]``, both ends (decisions: ssem-ucb 5); ``p = 0`` stays exactly 1."""
    radius = np.array([[3.0, 5.0]])
    low, high = moment_box(MOMENTS, radius, MULTIPLIERS, width=1.0)
    np.testing.assert_array_equal(low[0], [[1, 1], [-1, -1], [0, 0], [-1, -1]])
    np.testing.assert_array_equal(high[0], [[1, 1], [1, 1], [1, 1], [1, 1]])
    low, high = moment_box(MOMENTS, radius, MULTIPLIERS, width=0.5)
    np.testing.assert_array_equal(low[0], [[1, 1], [-0.5, -0.5], [0, 0], [-0.125, -0.125]])
    np.testing.assert_array_equal(high[0], [[1, 1], [0.5, 0.5], [0.25, 0.25], [0.125, 0.125]])


def test_moment_box_clips_only_the_end_that_leaves_the_range() -> None:
    """A radius of 0.2: only arm 1's second moment leaves the range (0.05 - 0.2 < 0, clipped
    to 0); every other end stays where eq. 7 puts it; ``width=None`` clips nothing."""
    radius = np.array([[0.2, 0.2]])
    low, high = moment_box(MOMENTS, radius, MULTIPLIERS, width=1.0)
    np.testing.assert_allclose(low[0, 2], [0.1, 0.0], atol=1e-15)
    np.testing.assert_allclose(high[0, 2], [0.5, 0.25], atol=1e-15)
    np.testing.assert_allclose(low[0, 1], [-0.3, -0.6], atol=1e-15)
    np.testing.assert_allclose(high[0, 3], [0.38, 0.41], atol=1e-15)
    low, _ = moment_box(MOMENTS, radius, MULTIPLIERS, width=None)
    assert low[0, 2, 1] == pytest.approx(0.05 - 0.2)


def test_moment_box_clips_moments_that_lie_outside_the_range() -> None:
    """Estimates outside the range (a box for a narrower ``width`` than the data's) are clipped
    at both ends of both bounds: a too-large even moment to ``[w^p, w^p]``, a too-small odd
    one to ``[-w^p, -w^p]``."""
    moments = np.array([[[1.0], [-0.9], [0.8], [0.0]]])
    low, high = moment_box(moments, np.array([[0.01]]), MULTIPLIERS, width=0.5)
    np.testing.assert_array_equal(low[0, :, 0], [1.0, -0.5, 0.25, -0.02])
    np.testing.assert_array_equal(high[0, :, 0], [1.0, -0.5, 0.25, 0.02])


@pytest.mark.filterwarnings("ignore:invalid value encountered in divide")
def test_an_arm_never_played_has_an_infinite_radius_even_in_round_one() -> None:
    """``m = 0``: ``C = inf`` whatever ``ln t`` (also ``ln 1 = 0``, where ``0 / 0`` would be
    NaN)."""
    np.testing.assert_array_equal(confidence_radius(1, np.array([[0.0, 2.0]]), 3), [[np.inf, 0]])
    np.testing.assert_array_equal(confidence_radius(9, np.array([[0, 0]]), 1), [[np.inf] * 2])


def test_power_sums_means_and_moments_of_arms_played_once_or_never() -> None:
    """``beta_hat = S_1 / m`` (eq. 8) and eq. 6's ``phi_hat^(p)`` from one play of an arm
    (``m = 1``) and none (0): the sums, means and moments written out."""
    sums = PowerSums(1, 3, degree=2)
    sums.add(np.array([[0.4, 0.7, 0.2]]), np.array([[True, True, False]]))
    sums.add(np.array([[0.6, 0.9, 0.5]]), np.array([[True, False, False]]))
    np.testing.assert_allclose(sums.counts, [[2, 1, 0]])
    np.testing.assert_allclose(sums.sums[0, 1], [1.0, 0.7, 0.0])
    np.testing.assert_allclose(sums.sums[0, 2], [0.52, 0.49, 0.0])
    np.testing.assert_allclose(sums.means(), [[0.5, 0.7, 0.0]])
    moments = sums.central_moments(np.array([[0.5, 0.5, 0.5]]))
    np.testing.assert_allclose(moments[0, 0], [1.0, 1.0, 1.0])
    np.testing.assert_allclose(moments[0, 1], [0.0, 0.2, 0.0], atol=1e-15)
    np.testing.assert_allclose(moments[0, 2], [0.01, 0.04, 0.0], atol=1e-15)


def test_degree_one_is_allowed_and_zero_is_refused() -> None:
    assert PowerSums(2, 3, degree=1).sums.shape == (2, 2, 3)
    with pytest.raises(ValueError, match="the Taylor degree q must be >= 1, got 0"):
        PowerSums(2, 3, degree=0)


class Enumerating(Exception):
    """Raised instead of enumerating the vertices (the test only asks whether it would)."""


def test_vertex_enumeration_is_refused_beyond_two_to_the_22(monkeypatch) -> None:
    """The exact maximum enumerates ``2^(q k)`` vertices: up to ``q k = 22`` it does, from 23
    on it refuses with the count in the message (checked without enumerating)."""

    def refuse(*args, **kwargs):
        raise Enumerating

    monkeypatch.setattr(taylor_moments.itertools, "product", refuse)

    def attempt(degree: int, k: int) -> None:
        box = np.zeros((degree + 1, k))
        vertex_maximum(np.ones(1), np.zeros((1, k), dtype=int), box, box)

    with pytest.raises(Enumerating):
        attempt(2, 11)  # 2^22
    with pytest.raises(ValueError, match=r"2\^\(q k\) = 2\^23 vertices: too many"):
        attempt(1, 23)
    with pytest.raises(ValueError, match=r"2\^24 vertices"):
        attempt(2, 12)


def test_external_bonus_of_an_unplayed_arm_dominates_and_bad_forms_are_refused() -> None:
    members = np.array([[0, 1]])
    bonus = external_ucb(10, np.array([[0.0, 4.0]]), 2, members)
    assert bonus[0, 0] > 1e100  # 1 / sqrt(1e-300): an unplayed member is tried first
    with pytest.raises(ValueError, match="form must be 'max' or 'sum', got 'mean'"):
        external_ucb(10, np.array([[1.0, 4.0]]), 2, members, form="mean")


# ------------------------------------------------------------------------------ jets

MIXED = Dictionary.from_names(["linear", "sin", "quadratic", "tanh"])


def test_monomials_are_listed_by_degree_then_lexicographically() -> None:
    """Constant first, then by total degree, then lexicographically (``1 + v`` is
    ``delta_v``), with ``alpha!`` and ``|alpha|`` of every row; no variables or degree 0
    leave the constant alone; negative sizes are refused."""
    basis = Monomials(2, 2)
    np.testing.assert_array_equal(basis.exponents, [[0, 0], [1, 0], [0, 1], [2, 0], [1, 1], [0, 2]])
    np.testing.assert_array_equal(basis.factorials, [1, 1, 1, 2, 1, 2])
    np.testing.assert_array_equal(basis.total_degree, [0, 1, 1, 2, 2, 2])
    assert basis.index == {(0, 0): 0, (1, 0): 1, (0, 1): 2, (2, 0): 3, (1, 1): 4, (0, 2): 5}
    assert Monomials(3, 1).exponents.tolist() == [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]
    assert Monomials(0, 3).exponents.shape == (1, 0) and Monomials(3, 0).size == 1
    with pytest.raises(ValueError, match="need n_vars >= 0 and degree >= 0, got -1, 2"):
        Monomials(-1, 2)
    with pytest.raises(ValueError, match="got 2, -1"):
        Monomials(2, -1)


def test_powers_of_a_jet_are_the_truncated_polynomial_powers() -> None:
    """``h = 2 d0 + 3 d1`` (no constant): ``h^2 = 4 d0^2 + 12 d0 d1 + 9 d1^2``, ``h^3`` is
    beyond degree 2 (zero)."""
    basis = Monomials(2, 2)
    h = np.array([[0.0, 2.0, 3.0, 0.0, 0.0, 0.0]])
    first, second, third = basis.powers(h, 3)
    np.testing.assert_array_equal(first, h)
    np.testing.assert_array_equal(second, [[0, 0, 0, 4, 12, 9]])
    np.testing.assert_array_equal(third, np.zeros((1, 6)))


def test_reward_jets_do_not_depend_on_the_block_size(monkeypatch) -> None:
    """Super arms are processed in blocks of ``JET_CHUNK``: blocks of 2 give the same jets."""
    rng = np.random.default_rng(1)
    weights = np.zeros((2, 4, 4, MIXED.size))
    for i, j in [(0, 1), (0, 3), (1, 2), (2, 3)]:  # the paper's order: W[i, j], edge j -> i
        weights[:, i, j] = rng.uniform(-0.4, 0.4, (2, MIXED.size))
    centres = rng.uniform(0.2, 0.8, (2, 4))
    arms = np.array([[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]])
    whole = reward_jets(weights, Expansion(dictionary=MIXED), centres, arms, 2)
    monkeypatch.setattr(jets, "JET_CHUNK", 2)
    # The super arms reversed: a block left out would not find the same values in memory.
    np.testing.assert_array_equal(
        reward_jets(weights, Expansion(dictionary=MIXED), centres, arms[::-1], 2),
        whole[:, ::-1],
    )
    cyclic = reward_jets(
        weights, Expansion(dictionary=MIXED, upper_triangular=False), centres, arms, 2
    )
    np.testing.assert_allclose(cyclic, whole, atol=1e-12)


def test_cyclic_jets_of_replicates_together_equal_each_alone() -> None:
    linear = Dictionary.from_names("linear")
    cycle = np.zeros((2, 3, 3, 1))
    cycle[0, 0, 1], cycle[0, 1, 2], cycle[0, 2, 0] = 0.5, 0.4, 0.3
    cycle[1, 0, 2], cycle[1, 2, 1], cycle[1, 1, 0] = -0.2, 0.6, 0.1
    centres = np.array([[1.0, 0.5, 0.2], [0.3, 0.9, 0.4]])
    arms = np.array([[0, 1], [1, 2]])
    cyclic = Expansion(dictionary=linear, upper_triangular=False)
    together = reward_jets(cycle, cyclic, centres, arms, 2)
    for r in range(2):
        alone = reward_jets(cycle[r : r + 1], cyclic, centres[r : r + 1], arms, 2)
        np.testing.assert_allclose(together[r], alone[0], rtol=1e-12, atol=1e-14)


def test_cyclic_jets_pass_the_tolerance_and_iteration_cap_to_the_solver() -> None:
    """A nonlinear cycle that needs several sweeps: a cap of 3 sweeps refuses it, and a loose
    tolerance moves the constant term visibly away from the converged one."""
    sine = Dictionary.from_names(["linear", "sin"])
    cycle = np.zeros((1, 3, 3, 2))
    cycle[0, 0, 1] = cycle[0, 1, 2] = cycle[0, 2, 0] = [0.3, 0.2]
    centres, arms = np.full((1, 3), 0.7), np.array([[0, 1, 2]])
    cyclic = Expansion(dictionary=sine, upper_triangular=False)
    exact = reward_jets(cycle, cyclic, centres, arms, 1)
    with pytest.raises(ConvergenceError, match="did not converge in 3 iterations"):
        reward_jets(cycle, replace(cyclic, max_iter=3), centres, arms, 1)
    loose = reward_jets(cycle, replace(cyclic, tol=1e-1), centres, arms, 1)
    assert abs(loose[0, 0, 0] - exact[0, 0, 0]) > 1e-4


# ------------------------------------------------------------------ dictionary lasso


def test_soft_threshold_lasso_is_the_closed_form_on_an_orthogonal_design() -> None:
    """With a diagonal Gram matrix eq. 3's l1 problem ``w^T G w - 2 w^T c + p ||w||_1``
    separates: ``w_p = sign(c_p) max(|c_p| - p / 2, 0) / G_pp``."""
    gram = np.diag([2.0, 4.0, 1.0])[None]
    cross = np.array([[[3.0], [-1.0], [0.2]]])  # (R, P, N = 1)
    support = np.ones((1, 3), dtype=bool)
    w = soft_threshold_lasso(gram, cross, np.array([1.0]), support, np.zeros((1, 1, 3)))
    np.testing.assert_allclose(w[0, 0], [(3 - 0.5) / 2, -(1 - 0.5) / 4, 0.0], atol=1e-12)


def test_tuned_lasso_finds_the_graph_of_the_target_density_and_its_residual() -> None:
    """A noiseless linear chain ``2 -> 1 -> 0`` (``W[i, j]``: edge ``j -> i``): tuning ``lam``
    to 2 of the 3 possible edges recovers exactly the two true edges, the debiased weights are
    0.7 and 0.9, the penalty moved from its start, and a new round's residual
    ``||y - F(y) - z||^2`` is 0 (for the empty fit: ``||y - z||^2``)."""
    rng = np.random.default_rng(0)
    linear = Dictionary.from_names("linear")
    tuned = DictionaryLassoOptions(lam=1e-6, target_density=2 / 3)
    lasso = DictionaryLasso(1, 3, linear, options=tuned)
    empty = DictionaryLasso(1, 3, linear)

    def round_of(z: np.ndarray) -> np.ndarray:
        y = z.copy()
        y[:, 1] += 0.9 * y[:, 2]
        y[:, 0] += 0.7 * y[:, 1]
        return y

    for _ in range(60):
        z = rng.uniform(0, 1, (1, 3))
        lasso.add(z, round_of(z))
    weights = lasso.fit()[0, ..., 0]
    np.testing.assert_allclose(weights, [[0, 0.7, 0], [0, 0, 0.9], [0, 0, 0]], atol=1e-6)
    assert lasso.lam[0] != 1e-6
    z = rng.uniform(0, 1, (1, 3))
    y = round_of(z)
    assert lasso.residual(z, y)[0] == pytest.approx(0.0, abs=1e-10)
    assert empty.residual(z, y)[0] == pytest.approx(float(((y - z) ** 2).sum()), rel=1e-12)
