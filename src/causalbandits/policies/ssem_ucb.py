"""SSEM-UCB-JO (Bauschmann & Maghsudi, arXiv 2606.14650, Alg. 2) for ``R`` replicates.

Each round after the initial blocks (Sec. III-C: ``x_t[i] = 1`` iff ``(t-1)s < i <= ts``, ``t
<= ceil(N/s)``), the policy plays

    x_t in argmax_x  I^max_t(x) + Delta^I_t E_t(x) sqrt(sqrt(t-1) / ln(t-1))      (eq. 9, Alg. 2)

where ``I^max`` is the internal UCB, the Taylor-moment payoff of the fitted SEM with every
moment moved within its confidence radius (eqs. 6-7; :mod:`~causalbandits.estimators.
taylor_moments`), ``Delta^I = max_x I^max - min_x I^max`` over every super arm (the empty one
included) and ``E`` the external (graph-learning) bonus. The Taylor coefficients
``D^alpha r_x(a)/alpha!`` come from jets of the fitted SEM (:func:`~causalbandits.estimators.
jets.reward_jets`; ``derivatives="finite-difference"``: central differences of step
``fd_step``, the paper's numerical derivatives, :func:`~causalbandits.estimators.
finite_differences.finite_difference_jets`), one joint dictionary-lasso fit of eqs. 3-4
(:class:`~causalbandits.estimators.dictionary_lasso.DictionaryLasso`).

Refits happen when the newest round's residual (out of sample: ``F_hat`` has not seen the round)
exceeds ``residual_factor`` times the mean of those residuals since the last refit (after at
least :data:`MIN_RESIDUALS` of them), or ``refit_every`` rounds after the last refit
(decisions: ssem-ucb 4; the paper refits "only if it inadequately described new sampling
data"). The centres ``a`` are the
empirical means at the last refit and stay frozen until the next one, so the jets are reused
between refits; the moments about them come from power sums every round.

With ``degree = 1`` and the linear dictionary this is the SEM-UCB baseline (the paper: "for
its lowest value 1 and linear function estimates, the method corresponds to a slightly
modified version of the SEM-UCB algorithm").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, ClassVar

import numpy as np

from causalbandits.envs.super_arms import all_super_arms, check_sizes, members
from causalbandits.estimators.dictionary_lasso import DictionaryLasso, DictionaryLassoOptions
from causalbandits.estimators.expansion import FD_STEP, Expansion
from causalbandits.estimators.finite_differences import taylor_coefficients
from causalbandits.estimators.jets import monomials
from causalbandits.estimators.taylor_moments import (
    MonomialTable,
    PowerSums,
    confidence_radius,
    external_ucb,
    moment_box,
    per_addend_maximum,
    radius_multipliers,
    vertex_maximum,
)
from causalbandits.policies.base import options_of
from causalbandits.random import random_argmax, uniform_stream
from causalbandits.scm.basis import Dictionary
from causalbandits.scm.separable import ChordSEM, ConvergenceError
from causalbandits.validation import count, in_range, non_negative, optional, positive

INTERNAL_UCBS = ("per-addend", "vertex")
#: Rounds of residuals since the last refit before the residual test may trigger a refit.
MIN_RESIDUALS = 5
BONUS_FORMS = ("max", "sum")
#: Sweeps of the cyclic solve of :meth:`SSEMUCBJO.reconstruction_error` (a contraction of
#: rate 0.8 needs about 20 with the chord iteration).
REBUILD_SWEEPS = 100
#: Values of each node's observed range on which :func:`contracted` bounds the slopes.
SLOPE_POINTS = 33


@dataclass
class SizeGroup:
    """The super arms of one size ``k``: their rows in the enumeration, ``members`` ``(A, k)``,
    the monomials' ``exponents`` ``(M, k)``, their rows ``(A, M)`` in the
    :class:`~causalbandits.estimators.taylor_moments.MonomialTable` and the Taylor
    coefficients ``(R, A, M)``."""

    rows: slice
    members: np.ndarray
    exponents: np.ndarray
    addends: np.ndarray
    coefficients: np.ndarray


def initial_blocks(n_arms: int, super_arm_size: int) -> np.ndarray:
    """The ``ceil(N/s)`` initial super arms: consecutive blocks of ``s`` arms covering ``[N]``."""
    count = -(-n_arms // super_arm_size)
    blocks = np.zeros((count, n_arms), dtype=bool)
    for t in range(count):
        blocks[t, t * super_arm_size : (t + 1) * super_arm_size] = True
    return blocks


def selection_scores(
    internal: np.ndarray, bonus: np.ndarray, bonus_scale: float, span_weighted: bool = True
) -> np.ndarray:
    """``I^max + bonus_scale Delta^I E`` (eq. 9; ``Delta^I`` replaced by 1 unless
    ``span_weighted``), ``(R, |X|)``; ``-inf`` for a super arm whose internal UCB is not finite
    (the fitted SEM diverges about its centre, :meth:`SSEMUCBJO._refit`), which is then not
    played until the next refit, and ``Delta^I`` is taken over the finite ones."""
    finite = np.isfinite(internal)
    weight = 1.0
    if span_weighted:
        low = np.where(finite, internal, np.inf).min(axis=1, keepdims=True)
        high = np.where(finite, internal, -np.inf).max(axis=1, keepdims=True)
        weight = np.where(high >= low, high - low, 0.0)
    return np.where(finite, internal + bonus_scale * weight * bonus, -np.inf)


def contracted(
    weights: np.ndarray,
    dictionary: Dictionary,
    low: np.ndarray,
    high: np.ndarray,
    max_contraction: float,
) -> tuple[np.ndarray, float]:
    """``F`` (weights ``(N, N, K)``) shrunk onto a contraction: ``M[i, j]``, the largest
    ``|f_ij'|`` over :data:`SLOPE_POINTS` values of ``y_j`` in ``[low_j, high_j]``, bounds
    ``F``'s slopes there, and ``rho(M) < 1`` makes the fixed point contract (Prop. IV.4, in
    the max norm weighted by ``M``'s Perron vector). If ``rho(M) >= max_contraction`` every
    weight is multiplied by ``max_contraction / rho(M)``; returns the weights and that factor
    (1: kept).
    The bound takes the edge function as a whole, which signed, mixed bases need: the
    train-delay simulator's looser ``sum_k |W_ijk| max |phi_k'|`` (its amplitudes are
    non-negative) over-shrinks a learner's fits (on the replay: in-sample error at T 0.2155
    against 0.0081).
    """
    grid = low + np.linspace(0.0, 1.0, SLOPE_POINTS)[:, None] * (high - low)  # (G, N)
    slopes = dictionary.derivatives(grid, 1)[:, 1]  # (K, G, N)
    bound = np.abs(np.einsum("ijk,kgj->gij", weights, slopes)).max(axis=0)
    rho = float(np.abs(np.linalg.eigvals(bound)).max(initial=0.0))
    if rho < max_contraction:
        return weights, 1.0
    factor = max_contraction / rho
    return weights * factor, factor


@dataclass(frozen=True, kw_only=True)
class SSEMOptions:
    """The knobs of SSEM-UCB-JO (Alg. 2), shared by every SSEM-UCB variant; a variant with
    knobs of its own extends it (e.g. :class:`~causalbandits.policies.q_search.QSearchOptions`).
    Checked on construction; ``dictionary`` is kept as a :class:`~causalbandits.scm.basis.
    Dictionary`."""

    #: The Taylor degree ``q`` of the payoff (Sec. III-B; the paper's best is 4).
    degree: int = 4
    #: The basis of the graph fit, eqs. 3-4: names (e.g. ``("linear", "sin")``) or a
    #: :class:`~causalbandits.scm.basis.Dictionary`.
    dictionary: Sequence[str] | Dictionary = ("linear", "sin")
    #: The graph fit's lasso penalty (eq. 3 with the l1 surrogate of App. -G1).
    lam: float = 1e-3
    #: Tune ``lam`` at each fit to this share of the possible edges (decisions: ssem-ucb 2;
    #: ``None``: keep ``lam``).
    target_density: float | None = None
    #: Edges whose fitted function is smaller on the data are removed (App. -G1's
    #: "edge-recognition thresholds").
    edge_threshold: float = 0.05
    #: Refit the selected edges by least squares (decisions: ssem-ucb 3).
    debias: bool = True
    #: The moment radii of eq. 7: ``"main"`` (``2^(p mod 2) C``) or ``"proof"``
    #: (``2^(2 mod p) C``).
    radius_rule: str = "main"
    #: Multiplies ``C_t`` (App. -G1: "scaling down C_t ... often led to faster convergence").
    radius_scale: float = 1.0
    #: Multiplies the external UCB of eq. 9 (the paper's tuning hyper-parameter).
    bonus_scale: float = 1.0
    #: The external UCB: ``"max"`` (Sec. III-C) or ``"sum"`` (App. -G2).
    bonus_form: str = "max"
    #: The internal UCB: ``"per-addend"`` (App. -G1) or ``"vertex"`` (the exact maximum of
    #: Sec. III-B; small ``q |I(x)|`` only).
    internal_ucb: str = "per-addend"
    #: The moments are clipped to the range they have when signals and centres lie in an
    #: interval of this width (decisions: ssem-ucb 5; ``None``: no clipping).
    signal_width: float | None = 1.0
    #: Refit at the latest this many rounds after the last refit (decisions: ssem-ucb 4).
    refit_every: int = 25
    #: Refit when the newest residual exceeds this times the mean since the last refit
    #: (decisions: ssem-ucb 4).
    residual_factor: float = 3.0
    #: Fit a DAG in the paper's order (Sec. III-A); ``None``: the problem's
    #: ``upper_triangular`` (the policies resolve it).
    upper_triangular: bool | None = None
    #: With cycles, shrink each fit whose slope bound has a spectral radius of at least this
    #: onto it (Prop. IV.4 assumes a contraction; :func:`contracted`); ``None``: keep the fit.
    max_contraction: float | None = None
    #: The Taylor coefficients ``D^alpha r_x(a)/alpha!`` (Sec. III-B): ``"exact"`` (jets) or
    #: ``"finite-difference"`` (central differences, the paper's numerical derivatives,
    #: App. -G1; error ``O(fd_step^2)`` plus rounding ``~ eps / fd_step^|alpha|``).
    derivatives: str = "exact"
    #: The finite-difference step ``h`` (unused with exact derivatives).
    fd_step: float = FD_STEP

    def __post_init__(self) -> None:
        object.__setattr__(self, "degree", count("degree q", self.degree))
        if self.internal_ucb not in INTERNAL_UCBS:
            raise ValueError(
                f"internal_ucb must be one of {INTERNAL_UCBS}, got {self.internal_ucb!r}"
            )
        if self.bonus_form not in BONUS_FORMS:
            raise ValueError(f"bonus_form must be one of {BONUS_FORMS}, got {self.bonus_form!r}")
        fit = self.graph_fit  # checks lam, target_density and edge_threshold
        object.__setattr__(self, "lam", fit.lam)
        object.__setattr__(self, "edge_threshold", fit.edge_threshold)
        if not isinstance(self.dictionary, Dictionary):
            object.__setattr__(self, "dictionary", Dictionary.from_names(self.dictionary))
        radius_multipliers(self.degree, self.radius_rule)  # checks the rule
        object.__setattr__(self, "radius_scale", positive("radius_scale", self.radius_scale))
        object.__setattr__(self, "bonus_scale", non_negative("bonus_scale", self.bonus_scale))
        optional(positive, "signal_width", self.signal_width)
        object.__setattr__(self, "refit_every", count("refit_every", self.refit_every))
        factor = positive("residual_factor", self.residual_factor)
        object.__setattr__(self, "residual_factor", factor)
        optional(
            in_range, "max_contraction", self.max_contraction, 0, 1, low_open=True, high_open=True
        )
        checked = Expansion(
            dictionary=self.dictionary, derivatives=self.derivatives, fd_step=self.fd_step
        )
        object.__setattr__(self, "fd_step", checked.fd_step)

    @property
    def graph_fit(self) -> DictionaryLassoOptions:
        """The options of the graph fit (:class:`DictionaryLasso`)."""
        return DictionaryLassoOptions(
            lam=self.lam,
            target_density=self.target_density,
            edge_threshold=self.edge_threshold,
            debias=self.debias,
        )

    @property
    def expansion(self) -> Expansion:
        """How the fitted SEM's Taylor coefficients are computed; needs ``upper_triangular``
        resolved (``True`` or ``False``)."""
        if self.upper_triangular is None:
            raise ValueError("upper_triangular is unresolved: pass True or False")
        return Expansion(
            dictionary=self.dictionary,
            upper_triangular=self.upper_triangular,
            derivatives=self.derivatives,
            fd_step=self.fd_step,
        )


class SSEMUCBJO:
    """SSEM-UCB-JO (Alg. 2) on ``R`` replicates; the base of the other SSEM-UCB variants, which
    override :meth:`fit_graph` (how ``F_hat`` is learned), :meth:`moment_boxes` (the boxes of the
    per-arm factors of the internal UCB),
    :attr:`joint` (Alg. 2's bonus factor), :attr:`initial_passes` (how often the initial
    blocks are played) and :attr:`Options` (their knobs).

    Parameters
    ----------
    problem: ``n_arms`` (N), ``super_arm_size`` (s) and, optionally, ``upper_triangular``
        (a known DAG order).
    options: the knobs (:attr:`Options`, default its defaults).
    changes: knobs by name, applied on top of ``options`` (the registry's and the presets'
        keyword options), e.g. ``SSEMUCBJO(problem, degree=2, bonus_scale=1e-3)``.

    :attr:`options` holds the knobs used, ``upper_triangular`` resolved from the problem.
    """

    #: Bench declarations (causalbandits.bench.capabilities).
    ACTS_ON = frozenset({"separable-super-arms"})

    #: Alg. 2 multiplies the external UCB by ``sqrt(sqrt(t-1) / ln(t-1))``.
    joint: ClassVar[bool] = True
    #: How often the initial blocks are played (Alg. 3 plays them twice).
    initial_passes: ClassVar[int] = 1
    #: The options class of the variant.
    Options: ClassVar[type[SSEMOptions]] = SSEMOptions

    def __init__(self, problem: object, options: SSEMOptions | None = None, **changes: Any) -> None:
        self.n_arms, self.super_arm_size = int(problem.n_arms), int(problem.super_arm_size)
        check_sizes(self.n_arms, self.super_arm_size)
        options = options_of(self.Options, options, changes)
        if options.upper_triangular is None:
            known = bool(getattr(problem, "upper_triangular", False))
            options = replace(options, upper_triangular=known)
        self.options = options
        self.multipliers = radius_multipliers(options.degree, options.radius_rule)
        self.super_arms = all_super_arms(self.n_arms, self.super_arm_size)
        self.monomials = MonomialTable(self.n_arms, options.degree)
        self.blocks = np.tile(
            initial_blocks(self.n_arms, self.super_arm_size), (self.initial_passes, 1)
        )

    def reset(self, seeds: Sequence[np.random.SeedSequence]) -> None:
        replicates = len(seeds)
        self.t = 0
        self.sums = PowerSums(replicates, self.n_arms, self.options.degree)
        self.graph = DictionaryLasso(
            replicates,
            self.n_arms,
            self.options.dictionary,
            self.options.upper_triangular,
            self.options.graph_fit,
        )
        self.centres = np.zeros((replicates, self.n_arms))
        self.groups = self._size_groups(replicates)
        self.stale = np.ones(replicates, dtype=bool)
        self.last_fit = np.zeros(replicates, dtype=np.int64)
        self.residual_sum = np.zeros(replicates)
        self.residual_count = np.zeros(replicates, dtype=np.int64)
        self.refits = np.zeros(replicates, dtype=np.int64)
        #: Refits whose fitted SEM diverged about some super arm's centre (per replicate).
        self.divergent_refits = np.zeros(replicates, dtype=np.int64)
        #: Refits shrunk onto a contraction (``max_contraction``), per replicate.
        self.shrunk_refits = np.zeros(replicates, dtype=np.int64)
        #: ``F_hat`` as used (after any shrink), ``(R, N, N, K)``.
        self.fitted = np.zeros_like(self.graph.weights)
        self.uniforms = uniform_stream(seeds, (len(self.super_arms),))
        #: Every round's observed ``z`` and ``y``, ``(R, N)`` each (for diagnostics).
        self.observations: list[tuple[np.ndarray, np.ndarray]] = []

    def _size_groups(self, replicates: int) -> list[SizeGroup]:
        sizes = self.super_arms.sum(axis=1)
        groups = []
        for k in range(self.super_arm_size + 1):
            rows = np.flatnonzero(sizes == k)
            exponents = monomials(k, self.options.degree).exponents
            arms = members(self.super_arms[rows])
            groups.append(
                SizeGroup(
                    slice(int(rows[0]), int(rows[-1]) + 1),
                    arms,
                    exponents,
                    self.monomials.index(exponents, arms),
                    np.zeros((replicates, rows.size, len(exponents))),
                )
            )
        return groups

    # ------------------------------------------------------------------ acting

    def select(self) -> np.ndarray:
        self.t += 1
        replicates = len(self.centres)
        if self.t <= len(self.blocks):
            return np.repeat(self.blocks[self.t - 1][None], replicates, axis=0)
        if self.stale.any():
            self._refit(self.stale)
        scores = self.scores()
        return self.super_arms[random_argmax(scores, self.uniforms.next())]

    def moment_boxes(self) -> tuple[np.ndarray, np.ndarray]:
        """The box of every arm's factor ``phi_hat^(p) + W^(p)``, ``p = 0..q``: ``(R, q + 1, N)``
        lower and upper ends (eqs. 6-7)."""
        moments = self.sums.central_moments(self.centres)
        radius = self.options.radius_scale * confidence_radius(
            self.t - 1, self.sums.counts, self.super_arm_size
        )
        return moment_box(moments, radius, self.multipliers, self.options.signal_width)

    def internal_upper_bounds(self) -> np.ndarray:
        """``I^max_t(x)`` of every super arm, ``(R, |X|)`` (Sec. III-B), over the boxes of
        :meth:`moment_boxes`."""
        low, high = self.moment_boxes()
        out = np.empty((len(self.centres), len(self.super_arms)))
        if self.options.internal_ucb == "per-addend":
            lows, highs = self.monomials.intervals(low, high)
        for group in self.groups:
            if self.options.internal_ucb == "vertex":
                out[:, group.rows] = self._vertex(group, low, high)
            else:
                lo, hi = lows[:, group.addends], highs[:, group.addends]
                out[:, group.rows] = per_addend_maximum(group.coefficients, lo, hi)
        return out

    def _vertex(self, group: SizeGroup, low: np.ndarray, high: np.ndarray) -> np.ndarray:
        out = np.empty(group.coefficients.shape[:2])
        for r in range(out.shape[0]):
            for a, arms in enumerate(group.members):
                out[r, a] = vertex_maximum(
                    group.coefficients[r, a], group.exponents, low[r][:, arms], high[r][:, arms]
                )
        return out

    def external_bonus(self) -> np.ndarray:
        """``E_t(x)`` of every super arm (times ``sqrt(sqrt(t-1)/ln(t-1))`` when
        :attr:`joint`), ``(R, |X|)``."""
        out = np.empty((len(self.centres), len(self.super_arms)))
        for group in self.groups:
            out[:, group.rows] = external_ucb(
                self.t,
                self.sums.counts,
                self.super_arm_size,
                group.members,
                form=self.options.bonus_form,
                joint=self.joint,
            )
        return out

    def scores(self) -> np.ndarray:
        """The selection scores of eq. 9 (Alg. 2), ``(R, |X|)``."""
        return selection_scores(
            self.internal_upper_bounds(), self.external_bonus(), self.options.bonus_scale
        )

    # ---------------------------------------------------------------- learning

    def fit_graph(self, which: np.ndarray) -> np.ndarray:
        """``F_hat`` of the replicates ``which`` (booleans ``(R,)``): one joint fit of eqs. 3-4
        on all rounds (Alg. 2), weights ``(count, N, N, K)``."""
        return self.graph.fit(which)[which]

    def _refit(self, which: np.ndarray) -> None:
        """Refit the graph of the replicates ``which``, re-centre and recompute their jets."""
        which = np.array(which, dtype=bool)  # not a view of ``stale``, which is cleared below
        weights = self.fit_graph(which)
        shrink = self.options.max_contraction
        if shrink is not None and not self.options.upper_triangular:
            ranges = self._observed_ranges()[which]
            for row, (low, high) in enumerate(ranges):
                weights[row], factor = contracted(
                    weights[row], self.graph.dictionary, low, high, shrink
                )
                self.shrunk_refits[np.flatnonzero(which)[row]] += factor < 1
        self.fitted[which] = weights
        self.centres[which] = self.sums.means()[which]
        expanded = [self._jets(weights, self.centres[which], g.members) for g in self.groups]
        failed = np.any([fails for _, fails in expanded], axis=0)  # no map: no super arm
        diverged = failed.copy()
        for group, (jets, _) in zip(self.groups, expanded, strict=True):
            jets[failed] = np.nan
            group.coefficients[which] = jets
            diverged |= ~np.isfinite(jets).all(axis=(1, 2))
        self.divergent_refits[np.flatnonzero(which)[diverged]] += 1
        self.last_fit[which] = self.t
        self.residual_sum[which] = 0.0
        self.residual_count[which] = 0
        self.refits[which] += 1
        self.stale[which] = False

    def _jets(
        self, weights: np.ndarray, centres: np.ndarray, arms: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The Taylor coefficients of the super arms ``arms`` for fitted ``weights`` about
        ``centres`` (:func:`~causalbandits.estimators.finite_differences.taylor_coefficients`:
        jets or finite differences, :attr:`options`' ``derivatives``), ``(count, A, M)``, and which
        replicates failed.

        A fitted SEM can blow up away from the data (e.g. collinear quadratic and tanh fits
        extrapolated to super arms never played), and a cyclic fit that is no contraction
        about the centres has no reward map to expand (``ConvergenceError``, then tried per
        replicate): such jets are NaN, and those super arms are not played until the next
        refit (:func:`selection_scores`). A replicate whose map fails for one size of super
        arm fails for all (:meth:`_refit`): no super arm scores, and the argmax plays one
        uniformly at random until the next refit."""
        expand = partial(
            taylor_coefficients,
            expansion=self.options.expansion,
            members=arms,
            degree=self.options.degree,
        )
        with np.errstate(over="ignore", invalid="ignore"):
            try:
                return expand(weights, centres=centres), np.zeros(len(weights), dtype=bool)
            except ConvergenceError:
                size = monomials(arms.shape[1], self.options.degree).size
                out = np.empty((len(weights), len(arms), size))
                failed = np.zeros(len(weights), dtype=bool)
                for r in range(len(weights)):
                    try:
                        out[r] = expand(weights[r : r + 1], centres=centres[r : r + 1])[0]
                    except ConvergenceError:
                        out[r], failed[r] = np.nan, True
                return out, failed

    def update(self, actions: np.ndarray, feedback: object) -> None:
        played = np.asarray(actions, dtype=bool)
        z, y = np.asarray(feedback.z, dtype=float), np.asarray(feedback.y, dtype=float)
        self.observations.append((z.copy(), y.copy()))
        self.sums.add(z, played)
        if self.t >= len(self.blocks):
            residual = self.graph.residual(z, y)  # out of sample: before the round is added
            count = np.maximum(self.residual_count, 1)
            settled = self.residual_count >= MIN_RESIDUALS
            surprise = settled & (
                residual > self.options.residual_factor * self.residual_sum / count
            )
            self.residual_sum += residual
            self.residual_count += 1
            due = self.t + 1 - self.last_fit >= self.options.refit_every
            self.stale |= surprise | due
        self.graph.add(z, y)

    def _observed_ranges(self) -> np.ndarray:
        """The smallest and largest observed ``y`` of every node, ``(R, 2, N)``."""
        y = np.stack([pair[1] for pair in self.observations], axis=1)  # (R, t, N)
        return np.stack([y.min(axis=1), y.max(axis=1)], axis=1)

    def reconstruction_error(
        self, z: np.ndarray | None = None, y: np.ndarray | None = None
    ) -> np.ndarray:
        """The error of rebuilding ``y`` from ``z`` through the current fit (Fig. 3): the mean
        over rounds and nodes of ``(y - y_hat)^2``, ``y_hat`` solving
        ``y_hat = F_hat(y_hat) + z`` (the overall delay rebuilt from the immediate one),
        ``(R,)``. On the rounds so far (in sample) unless ``z`` and ``y`` ``(R, S, N)`` are
        given (e.g. held-out rounds); NaN before any round or where that solve does not
        converge (a fit that is no contraction)."""
        out = np.full(len(self.centres), np.nan)
        if z is None or y is None:
            if not self.observations:
                return out
            z = np.stack([pair[0] for pair in self.observations], axis=1)  # (R, t, N)
            y = np.stack([pair[1] for pair in self.observations], axis=1)
        for r, weights in enumerate(self.fitted):
            try:
                sem = ChordSEM(weights, self.graph.dictionary, max_iter=REBUILD_SWEEPS)
                rebuilt = sem.solve(z[r][None])[0]
            except ConvergenceError:
                continue
            out[r] = float(np.mean((y[r] - rebuilt) ** 2))
        return out
