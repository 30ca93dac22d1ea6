"""Combinatorial semi-bandit with causally related rewards (NDC-SEM, Sec. II), over replicates.

Round ``t``: the agent plays a super arm ``x_t`` in ``{0,1}^N`` with ``||x_t||_0 <= s``; the
environment draws the base-arm rewards ``b_t`` (means ``beta_t``, piecewise constant), forms
``z_t = diag(b_t) x_t`` (eq. 1) and ``y_t = A y_t + z_t``, i.e. ``y_t = (I - A)^{-1} z_t``
(eqs. 3-4), and reveals ``(z_t, y_t)``. The payoff is ``1^T y_t`` (eq. 5).

``A`` follows the paper: ``A[i, j]`` is the effect of node ``j`` on node ``i``. The library's
convention ``W[i, j]`` = weight of edge ``i -> j`` is ``A = W^T``
(:func:`adjacency_from_weights`).

The noise of replicate ``r`` is one uniform per arm and round from its own stream, drawn
whatever the action (common random numbers), and mapped to ``b_t`` by the quantile function
of the reward distribution.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from causalbandits.envs.base import ReplicatedEnvironment
from causalbandits.envs.super_arms import check_sizes
from causalbandits.estimators.topk import top_s_mask, total_effects
from causalbandits.random import RNGLike, as_generator, uniform_stream
from causalbandits.scm.linear import transfer_matrix
from causalbandits.validation import horizon as check_horizon


def adjacency_from_weights(weights: np.ndarray) -> np.ndarray:
    """The paper's ``A`` (``A[i, j]``: effect of ``j`` on ``i``) from ``W[i, j]`` of ``i -> j``."""
    return np.array(weights, dtype=float).T


def weights_from_adjacency(adjacency: np.ndarray) -> np.ndarray:
    """The library's ``W`` (edge ``i -> j``) from the paper's ``A``: ``W = A^T``."""
    return np.array(adjacency, dtype=float).T


def check_adjacency(adjacency: np.ndarray) -> np.ndarray:
    """Validate ``A``: square, finite, zero diagonal, spectral radius < 1 (so eq. 4 holds).

    Returns a read-only float copy.
    """
    matrix = np.array(adjacency, dtype=float)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or matrix.shape[0] < 1:
        raise ValueError(f"the adjacency matrix A must be square, got shape {matrix.shape}")
    if not np.all(np.isfinite(matrix)):
        raise ValueError("the adjacency matrix A must be finite")
    if np.any(np.diag(matrix) != 0):
        raise ValueError("the adjacency matrix A must have a zero diagonal (A[i, i] = 0)")
    radius = float(np.max(np.abs(np.linalg.eigvals(matrix))))
    if radius >= 1 - 1e-12:
        raise ValueError(
            f"the spectral radius of A is {radius:.6g} >= 1: y = A y + z has no stable "
            "solution (I - A)^{-1} z"
        )
    matrix.setflags(write=False)
    return matrix


def check_super_arms(
    actions: np.ndarray, n_arms: int, super_arm_size: int, replicates: int
) -> np.ndarray:
    """Validate one super arm per replicate: a 0/1 mask ``(R, N)`` with at most ``s`` ones."""
    x = np.asarray(actions)
    if x.shape != (replicates, n_arms):
        raise ValueError(
            f"actions must be 0/1 masks of shape (R, N) = ({replicates}, {n_arms}), got {x.shape}"
        )
    if x.dtype != bool:
        if not np.all((x == 0) | (x == 1)):
            raise ValueError("actions must be boolean (0/1) masks")
        x = x.astype(bool)
    sizes = x.sum(axis=1)
    if np.any(sizes > super_arm_size):
        bad = np.flatnonzero(sizes > super_arm_size)
        raise ValueError(
            f"super arms may hold at most s = {super_arm_size} base arms; replicate(s) "
            f"{bad.tolist()[:5]} hold {sizes[bad].tolist()[:5]}"
        )
    return x


class RewardDistribution(Protocol):
    """Base-arm reward distributions given by their means: a check and a quantile function."""

    def check(self, means: np.ndarray) -> None:
        """Raise ``ValueError`` if some mean is impossible for this family."""

    def quantile(self, uniforms: np.ndarray, means: np.ndarray) -> np.ndarray:
        """Rewards ``b`` with mean ``means`` from uniforms of the same shape (inverse CDF)."""


@dataclass(frozen=True)
class Bernoulli:
    """``b[i] ~ Bernoulli(beta[i])`` (the paper's synthetic rewards, Sec. V-A)."""

    def check(self, means: np.ndarray) -> None:
        if np.any((means < 0) | (means > 1)):
            raise ValueError("Bernoulli means beta must lie in [0, 1]")

    def quantile(self, uniforms: np.ndarray, means: np.ndarray) -> np.ndarray:
        return (uniforms < means).astype(float)


@dataclass(frozen=True)
class Uniform:
    """``b[i] ~ U[beta[i] - h, beta[i] + h]`` (e.g. the strictly positive rewards of Sec. II)."""

    half_width: float

    def __post_init__(self) -> None:
        if not 0 <= self.half_width <= 0.5:
            raise ValueError(f"the half width must lie in [0, 0.5], got {self.half_width}")

    def check(self, means: np.ndarray) -> None:
        h = self.half_width
        if np.any((means < h) | (means > 1 - h)):
            raise ValueError(f"uniform means must lie in [{h}, {1 - h}] so that b is in [0, 1]")

    def quantile(self, uniforms: np.ndarray, means: np.ndarray) -> np.ndarray:
        return means + self.half_width * (2 * uniforms - 1)


@dataclass(frozen=True)
class SemiBanditProblem:
    """What a learner is told: ``N``, the super-arm size ``s``, ``T``, whether ``A`` is known to be
    strictly upper triangular (the known vertex order of Sec. II; ``False`` allows cycles) and
    the feedback delay bound (``D``, or ``D_max``; set by :class:`~causalbandits.envs.delay.
    FeedbackDelay`)."""

    n_arms: int
    super_arm_size: int
    horizon: int
    upper_triangular: bool = True
    delay: int = 0


@dataclass(frozen=True)
class SemiBanditFeedback:
    """Semi-bandit feedback of one round: ``z = diag(b) x`` (eq. 1) and ``y`` (eq. 4), (R, N)."""

    z: np.ndarray
    y: np.ndarray


def check_horizon_and_super_arm_size(horizon: int, super_arm_size: int, n_arms: int) -> None:
    """Raise unless ``T >= 1`` and ``1 <= s <= N`` are integers."""
    check_horizon(horizon)
    check_sizes(n_arms, super_arm_size)


def check_change_points(change_points: Sequence[int], horizon: int) -> np.ndarray:
    """Validate 1-based rounds where a new period starts: strictly increasing, in ``2..T``."""
    raw = np.asarray(change_points).reshape(-1)
    points = raw.astype(int)
    if not np.array_equal(points, raw):
        raise ValueError(f"change points must be integers, got {change_points}")
    if points.size and (points.min() < 2 or points.max() > horizon):
        raise ValueError(f"change points must lie in 2..T = {horizon}, got {points.tolist()}")
    if np.any(np.diff(points) <= 0):
        raise ValueError(f"change points must be strictly increasing, got {points.tolist()}")
    return points


class PiecewiseRounds(ReplicatedEnvironment):
    """What the semi-bandit environments share (:class:`SemiBanditEnv`, its
    per-replicate-instance sibling and the Covid replay): super arms of at most ``super_arm_size``
    of the ``n_arms`` base arms, one uniform per arm, round and replicate as noise, periods
    split by ``change_points`` (1-based), and :meth:`is_optimal` comparing the environment's
    ``pseudo_regret`` (eq. 7) with ``optimal_tolerance``."""

    change_points: np.ndarray
    n_arms: int
    super_arm_size: int
    optimal_tolerance: float

    def period_of(self, rounds: np.ndarray | int) -> np.ndarray:
        """Period index of 1-based ``rounds``."""
        return np.searchsorted(self.change_points, rounds, side="right")

    @property
    def period(self) -> int:
        """Period of the round about to be played (the last one once the horizon is over)."""
        return int(self.period_of(min(self.t + 1, self.horizon)))

    def start(self, seeds: list[np.random.SeedSequence]) -> None:
        self._noise = uniform_stream(seeds, (self.n_arms,))

    def check_actions(self, actions: np.ndarray) -> np.ndarray:
        """One super arm per replicate: 0/1 masks ``(R, N)`` with at most ``s`` ones."""
        return check_super_arms(actions, self.n_arms, self.super_arm_size, self.replicates)

    @abstractmethod
    def pseudo_regret(self, actions: np.ndarray) -> np.ndarray:
        """``mu_t(x*_t) - mu_t(x_t)`` of each replicate (eq. 7) for the round about to be
        played."""

    def is_optimal(self, actions: np.ndarray) -> np.ndarray:
        """Whether each replicate's super arm is within ``optimal_tolerance`` of ``mu_t(x*_t)``."""
        return self.pseudo_regret(actions) <= self.optimal_tolerance


class SemiBanditEnv(PiecewiseRounds):
    """The non-stationary combinatorial semi-bandit with causally related rewards (Sec. II).

    Parameters
    ----------
    adjacency:
        ``A`` in the paper's convention (``A[i, j]``: effect of ``j`` on ``i``); a DAG or a
        cyclic graph with spectral radius < 1.
    means:
        ``beta`` per period, shape ``(n_periods, N)``.
    super_arm_size:
        The sparsity ``s``: super arms hold at most ``s`` base arms.
    horizon:
        Number of rounds ``T``.
    change_points:
        1-based rounds where a new period starts (``n_periods - 1`` of them, in ``2..T``).
    distribution:
        The base-arm reward family (default :class:`Bernoulli`).
    optimal_tolerance:
        A super arm is optimal when its expected payoff is within this of the best.
    """

    def __init__(
        self,
        adjacency: np.ndarray,
        means: np.ndarray,
        super_arm_size: int,
        horizon: int,
        change_points: Sequence[int] = (),
        distribution: RewardDistribution | None = None,
        optimal_tolerance: float = 1e-9,
    ) -> None:
        self.adjacency = check_adjacency(adjacency)
        n = self.adjacency.shape[0]
        check_horizon_and_super_arm_size(horizon, super_arm_size, n)
        self.horizon, self.super_arm_size = int(horizon), int(super_arm_size)
        self.change_points = check_change_points(change_points, self.horizon)
        beta = np.array(means, dtype=float)
        if beta.shape != (self.change_points.size + 1, n):
            raise ValueError(
                f"means must have shape (n_periods, N) = ({self.change_points.size + 1}, {n}) "
                f"for {self.change_points.size} change point(s), got {beta.shape}"
            )
        self.distribution = distribution if distribution is not None else Bernoulli()
        self.distribution.check(beta)
        if optimal_tolerance < 0:
            raise ValueError(f"optimal_tolerance must be >= 0, got {optimal_tolerance}")
        self.optimal_tolerance = float(optimal_tolerance)
        beta.setflags(write=False)
        self.means = beta
        self.transfer = transfer_matrix(weights_from_adjacency(self.adjacency))
        self.total_effects = total_effects(self.adjacency)
        self.scores = self.total_effects * beta
        self.optimal_actions = top_s_mask(self.scores, self.super_arm_size)
        self.optimal_values = np.sum(self.scores * self.optimal_actions, axis=1)
        self.problem = SemiBanditProblem(
            n_arms=n,
            super_arm_size=self.super_arm_size,
            horizon=self.horizon,
            upper_triangular=bool(np.all(np.tril(self.adjacency) == 0)),
        )

    @classmethod
    def from_weights(cls, weights: np.ndarray, *args, **kwargs) -> SemiBanditEnv:
        """Build from the library's ``W[i, j]`` (edge ``i -> j``), i.e. ``A = W^T``."""
        return cls(adjacency_from_weights(weights), *args, **kwargs)

    @property
    def n_arms(self) -> int:
        return self.adjacency.shape[0]

    @property
    def optimal_action(self) -> np.ndarray:
        """``x*_t``: the top-``s`` of ``w* beta_t`` for the round about to be played, (N,)."""
        return self.optimal_actions[self.period]

    @property
    def optimal_value(self) -> float:
        """``mu_t(x*_t)`` for the round about to be played."""
        return float(self.optimal_values[self.period])

    def expected_payoff(self, actions: np.ndarray) -> np.ndarray:
        """``mu_t(x) = sum_i w*[i] beta_t[i] x[i]`` (eq. 6) of masks ``(..., N)``."""
        return np.asarray(actions, dtype=float) @ self.scores[self.period]

    def play(self, actions: np.ndarray) -> SemiBanditFeedback:
        """``z = diag(b) x`` and ``y = (I - A)^{-1} z`` (eqs. 1, 4) of masks ``(R, N)``."""
        z = self.distribution.quantile(self._noise.next(), self.means[self.period]) * actions
        return SemiBanditFeedback(z=z, y=z @ self.transfer.T)

    def pseudo_regret(self, actions: np.ndarray) -> np.ndarray:
        """``mu_t(x*_t) - mu_t(x_t)`` of each replicate (eq. 7) for the round about to be played."""
        x = check_super_arms(actions, self.n_arms, self.super_arm_size, len(actions))
        return self.optimal_value - self.expected_payoff(x)


def random_upper_triangular(
    n_arms: int,
    n_edges: int,
    weight_range: tuple[float, float],
    rng: RNGLike = None,
) -> np.ndarray:
    """``A`` with ``n_edges`` weights ``U(weight_range)`` placed uniformly among the strictly
    upper-triangular slots (decisions: ndc-sem 13)."""
    rows, cols = np.triu_indices(n_arms, k=1)
    if not 0 <= n_edges <= rows.size:
        raise ValueError(f"n_edges must lie in 0..{rows.size}, got {n_edges}")
    generator = as_generator(rng)
    slots = generator.choice(rows.size, size=n_edges, replace=False)
    adjacency = np.zeros((n_arms, n_arms))
    adjacency[rows[slots], cols[slots]] = generator.uniform(*weight_range, size=n_edges)
    return adjacency


def _separated(scores: np.ndarray, super_arm_size: int, min_gap: float) -> bool:
    ranked = np.sort(scores)[::-1]
    return (
        super_arm_size == scores.size
        or ranked[super_arm_size - 1] - ranked[super_arm_size] >= min_gap
    )


#: The range of the synthetic means (decisions: ndc-sem 14).
MEAN_RANGE = (0.05, 0.95)
#: How the means change at a change point (:func:`synthetic_means`).
CHANGES = ("redraw", "incumbent-drop")
#: ``change="incumbent-drop"``: the incumbents' new means lie in this lowest fraction of
#: ``mean_range``.
DROP_FRACTION = 0.25


@dataclass(frozen=True, kw_only=True)
class SyntheticDesign:
    """The synthetic instances of NDC-SEM's Sec. V-A (decisions: ndc-sem 13, 14), the paper's
    setup by default; checked on construction (the sizes by :class:`SemiBanditEnv`)."""

    #: ``N`` base arms (Sec. V-A: 10).
    n_arms: int = 10
    #: ``s``, the sparsity of a super arm (Sec. V-A: 4).
    super_arm_size: int = 4
    #: ``T`` (Sec. V-A: 5000).
    horizon: int = 5000
    #: 1-based rounds where the means change (Sec. V-A: 1000, 2500, 4000).
    change_points: tuple[int, ...] = (1000, 2500, 4000)
    #: Edges of the random upper-triangular DAG (decisions: ndc-sem 13: 9).
    n_edges: int = 9
    #: The edge weights' range (Sec. V-A: U[0.4, 0.7]).
    weight_range: tuple[float, float] = (0.4, 0.7)
    #: The means' range (decisions: ndc-sem 14).
    mean_range: tuple[float, float] = MEAN_RANGE
    #: The smallest gap between the ``s``-th and ``(s+1)``-th score ``w* beta`` of a period.
    min_gap: float = 0.05
    #: ``change="redraw"``: arms with new means at each change point (``None``: ``N // 2``).
    n_redraw: int | None = None
    #: How the means change at a change point: ``"redraw"`` or ``"incumbent-drop"``
    #: (:func:`synthetic_means`).
    change: str = "redraw"

    def __post_init__(self) -> None:
        object.__setattr__(self, "change_points", tuple(self.change_points))
        if self.change not in CHANGES:
            raise ValueError(f"change must be one of {CHANGES}, got {self.change!r}")
        if self.change != "redraw" and self.n_redraw is not None:
            raise ValueError("n_redraw applies to change='redraw' only")
        redraw = self.n_arms // 2 if self.n_redraw is None else int(self.n_redraw)
        if not 1 <= redraw <= self.n_arms:
            raise ValueError(f"n_redraw must lie in 1..{self.n_arms}, got {redraw}")

    @property
    def n_periods(self) -> int:
        return len(self.change_points) + 1


#: Draws per period before :func:`synthetic_means` gives up.
MEANS_ATTEMPTS = 10_000


def synthetic_means(
    weights: np.ndarray, design: SyntheticDesign, rng: RNGLike = None
) -> np.ndarray:
    """Piecewise-constant ``beta`` (n_periods, N) for total effects ``weights`` ``(N,)``
    (decisions: ndc-sem 14) under ``design``.

    The first period is drawn ``U(mean_range)``. At each change point, ``change="redraw"``
    gives ``n_redraw`` random arms (default ``N // 2``) new means ``U(mean_range)``;
    ``change="incumbent-drop"`` (a sensitivity: the paper's Fig. 5 schedule is not given in
    numbers) drops the means of the arms of the incumbent optimal super arm into the lowest
    :data:`DROP_FRACTION` of ``mean_range`` and draws every other arm anew from
    ``U(mean_range)``.
    Every period is redrawn (at most :data:`MEANS_ATTEMPTS` times) until the gap between the
    ``s``-th and ``(s+1)``-th score ``w* beta`` is at least ``min_gap`` and (after the first)
    the optimal super arm differs from the previous one.
    """
    generator = as_generator(rng)
    n = weights.size
    redraw = n // 2 if design.n_redraw is None else int(design.n_redraw)
    if not 1 <= redraw <= n:
        raise ValueError(f"n_redraw must lie in 1..{n}, got {redraw}")
    mean_range, super_arm_size = design.mean_range, design.super_arm_size
    low, high = mean_range
    periods: list[np.ndarray] = []
    for _ in range(design.n_periods):
        incumbent = top_s_mask(weights * periods[-1], super_arm_size) if periods else None
        for _ in range(MEANS_ATTEMPTS):
            if incumbent is None:
                beta = generator.uniform(*mean_range, size=n)
            elif design.change == "redraw":
                beta = periods[-1].copy()
                arms = generator.choice(n, size=redraw, replace=False)
                beta[arms] = generator.uniform(*mean_range, size=redraw)
            else:
                beta = generator.uniform(*mean_range, size=n)
                drop = (low, low + DROP_FRACTION * (high - low))
                beta[incumbent] = generator.uniform(*drop, size=int(incumbent.sum()))
            scores = weights * beta
            changed = incumbent is None or np.any(top_s_mask(scores, super_arm_size) != incumbent)
            if changed and _separated(scores, super_arm_size, design.min_gap):
                periods.append(beta)
                break
        else:
            raise RuntimeError(f"no admissible means for period {len(periods)} in {MEANS_ATTEMPTS}")
    return np.stack(periods)


def ndc_synthetic_env(rng: RNGLike = None, design: SyntheticDesign | None = None) -> SemiBanditEnv:
    """One instance of the synthetic experiment of Sec. V-A (``design``, default the paper's:
    N = 10, s = 4, T = 5000, Bernoulli rewards with changes at rounds 1000/2500/4000, a 9-edge
    upper-triangular DAG, U[0.4, 0.7]; the means as :func:`synthetic_means` draws them)."""
    design = SyntheticDesign() if design is None else design
    generator = as_generator(rng)
    adjacency = random_upper_triangular(
        design.n_arms, design.n_edges, design.weight_range, generator
    )
    means = synthetic_means(total_effects(adjacency), design, generator)
    return SemiBanditEnv(
        adjacency, means, design.super_arm_size, design.horizon, design.change_points
    )
