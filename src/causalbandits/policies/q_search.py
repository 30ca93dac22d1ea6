"""q-search (Bauschmann & Maghsudi, arXiv 2606.14650, App. -B2, Alg. 4): an adaptive Taylor
degree for SSEM-UCB, and SSEM-UCB-JO that re-chooses it at every refit.

Alg. 4 at time ``t``::

    q <- -1; Gamma <- 0; Delta_min <- 0
    while Gamma >= Delta_min / 4 and q < t:
        q <- q + 1
        S(x) <- the selection score of SSEM-UCB with degree q;  S_max <- max_x S(x)
        Delta_min <- min_{x: S_max - S(x) > 0} S_max - S(x)
        Gamma <- a q-remainder bound of r_hat
    return q

So the loop always evaluates ``q = 0`` and stops at the first degree whose remainder bound is
below a quarter of the smallest score gap (or at ``q = t``, here also at ``max_degree``).

- Scores. The Taylor coefficients ``c_alpha = D^alpha r_hat_x(a) / alpha!`` do not depend on
  the truncation degree, so the jets at ``max_degree`` (the policy's own, computed once per
  refit) truncated to ``|alpha| <= q`` are the jets at degree ``q``; with the per-addend
  internal UCB (App. -G1) ``I^max_q`` is a partial sum of the same addends, so every degree's
  ``S = I^max_q + Delta^I_q E`` comes from one pass (:func:`degree_scores`).
- Remainder. ``Gamma_q = s^(q+1) / (q+1)! max_{|gamma| = q+1} max_c |D^gamma r_hat(c)|``
  (the multinomial theorem sums the ``1/alpha!`` of the Sec. III-B bound), the
  inner maximum estimated over random points (:func:`remainder_bounds`): ``remainder_arms``
  random super arms of size ``s`` with ``remainder_points`` random signal vectors each in the
  box of observed signals, ``|D^gamma r_hat_x(c)| = gamma! |c_gamma|`` from jets of degree
  ``max_degree + 1`` there. The random design comes from a fixed ``remainder_seed``
  (:class:`QSearchOptions`), the same in every replicate and refit (so
  replicates run together equal replicates run alone, and the choice of ``q`` changes only
  when the fit or the data do).
- Ties: gaps within ``1e-12`` (relative) of 0 are ties, as in the policies' argmax; with no
  positive gap ``Delta_min = inf`` (no suboptimal super arm to separate), which stops the loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from math import factorial
from typing import Any

import numpy as np

from causalbandits.estimators.finite_differences import taylor_coefficients
from causalbandits.estimators.jets import monomials
from causalbandits.estimators.taylor_moments import addend_intervals
from causalbandits.policies.ssem_ucb import SSEMUCBJO, SizeGroup, SSEMOptions, selection_scores
from causalbandits.validation import count

#: Score gaps at most this (relative to ``max(|S_max|, 1)``) are ties.
TIE_TOLERANCE = 1e-12


@dataclass(frozen=True)
class DegreeSearch:
    """The result of Alg. 4 per replicate: the chosen ``degrees`` ``(R,)``, and the remainder
    bounds ``Gamma_q`` and smallest score gaps ``Delta_min`` of every degree ``q =
    0..max_degree``, ``(R, max_degree + 1)`` each."""

    degrees: np.ndarray
    remainders: np.ndarray
    gaps: np.ndarray


@dataclass(frozen=True, kw_only=True)
class QSearchOptions(SSEMOptions):
    """The knobs of SSEM-UCB-JO with q-search (Alg. 4): those of :class:`~causalbandits.
    policies.ssem_ucb.SSEMOptions` (``internal_ucb`` must be ``"per-addend"``), with
    ``degree`` set to ``max_degree`` (jets and moments are kept to it), plus the remainder
    bound's random design. ``derivatives`` and ``fd_step`` apply to the Taylor coefficients
    and to the remainder bound alike."""

    degree: int = field(default=4, init=False)
    #: The largest degree q-search may choose (Alg. 4's loop also stops at ``q = t``).
    max_degree: int = 4
    #: Random super arms of size ``s`` on which ``Gamma_q`` is bounded (:func:`remainder_bounds`).
    remainder_arms: int = 4
    #: Random signal vectors per super arm, in the box of the observed signals.
    remainder_points: int = 8
    #: The seed of that design, the same in every replicate and refit (module docstring).
    remainder_seed: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "max_degree", count("max_degree", self.max_degree))
        object.__setattr__(self, "remainder_arms", count("remainder_arms", self.remainder_arms))
        points = count("remainder_points", self.remainder_points)
        object.__setattr__(self, "remainder_points", points)
        seed = count("remainder_seed", self.remainder_seed, minimum=0)
        object.__setattr__(self, "remainder_seed", seed)
        object.__setattr__(self, "degree", self.max_degree)
        super().__post_init__()
        if self.internal_ucb != "per-addend":
            raise ValueError(
                "q-search scores every degree from the per-addend internal UCB: internal_ucb "
                f"must be 'per-addend', got {self.internal_ucb!r}"
            )


def remainder_bounds(
    weights: np.ndarray,
    box_low: np.ndarray,
    box_high: np.ndarray,
    super_arm_size: int,
    options: QSearchOptions,
) -> np.ndarray:
    """``Gamma_q = s^(q+1) / (q+1)! max_{|gamma| = q+1} max_c |D^gamma r_hat_x(c)|`` for ``q =
    0..max_degree``, ``(R, max_degree + 1)``, with the maximum over ``remainder_arms`` random
    super arms ``x`` of size ``s`` times ``remainder_points`` random ``c`` in ``[box_low,
    box_high]`` ``(R, N)`` (the same design, from ``remainder_seed``, in every replicate).
    ``weights`` ``(R, N, N, K)`` on ``options.dictionary``; the derivatives exact or by central
    differences (``options.expansion``: :func:`~causalbandits.estimators.finite_differences.
    taylor_coefficients`)."""
    box_low, box_high = np.asarray(box_low, dtype=float), np.asarray(box_high, dtype=float)
    replicates, n = box_low.shape
    if not (np.all(np.isfinite(box_low)) and np.all(np.isfinite(box_high))) or np.any(
        box_low > box_high
    ):
        raise ValueError("the signal box must be finite with box_low <= box_high")
    arms, points, max_degree = options.remainder_arms, options.remainder_points, options.max_degree
    expansion = options.expansion
    rng = np.random.default_rng(options.remainder_seed)
    chosen = np.sort(rng.random((arms, n)).argsort(axis=1)[:, :super_arm_size], axis=1)
    unit = rng.random((arms, points, n))
    basis = monomials(super_arm_size, max_degree + 1)
    largest = np.zeros((replicates, max_degree + 1))
    repeated = np.repeat(np.asarray(weights, dtype=float), points, axis=0)
    for members, design in zip(chosen, unit, strict=True):
        centres = box_low[:, None] + design[None] * (box_high - box_low)[:, None]
        jets = taylor_coefficients(
            repeated,
            expansion,
            centres.reshape(replicates * points, n),
            members[None],
            max_degree + 1,
        )
        magnitudes = (np.abs(jets[:, 0]) * basis.factorials).reshape(replicates, points, -1)
        for q in range(max_degree + 1):
            block = magnitudes[..., basis.total_degree == q + 1].max(axis=(1, 2))
            largest[:, q] = np.maximum(largest[:, q], block)
    orders = np.arange(1, max_degree + 2)
    factorials = np.array([factorial(int(p)) for p in orders], dtype=float)
    return float(super_arm_size) ** orders / factorials * largest


def degree_scores(
    groups: Sequence[SizeGroup],
    low: np.ndarray,
    high: np.ndarray,
    bonus: np.ndarray,
    options: QSearchOptions,
) -> np.ndarray:
    """The selection scores ``S = I^max_q + bonus_scale Delta^I_q E`` of every degree ``q =
    0..max_degree`` and super arm, ``(R, max_degree + 1, |X|)``, with the per-addend internal
    UCB (App. -G1) of the moment boxes ``low``/``high`` ``(R, >= max_degree + 1, N)``.
    ``groups`` hold the Taylor coefficients of degree ``>= max_degree`` (truncated here),
    ``bonus`` ``(R, |X|)`` the external UCB (with any Alg. 2 factor); super arms whose
    coefficients are not finite score ``-inf``
    (:func:`~causalbandits.policies.ssem_ucb.selection_scores`). ``max_degree`` and
    ``bonus_scale`` are ``options``'."""
    max_degree = options.max_degree
    if low.shape[1] <= max_degree:
        raise ValueError(f"the moment boxes stop at order {low.shape[1] - 1} < {max_degree}")
    internal = np.zeros((low.shape[0], max_degree + 1, bonus.shape[1]))
    for group in groups:
        total = group.exponents.sum(axis=1)
        lo, hi = addend_intervals(group.exponents, group.members, low, high)
        c = group.coefficients
        addends = np.where(c >= 0, c * hi, c * lo)
        for q in range(max_degree + 1):
            internal[:, q, group.rows] = addends[..., total <= q].sum(axis=-1)
    return np.stack(
        [
            selection_scores(internal[:, q], bonus, options.bonus_scale)
            for q in range(max_degree + 1)
        ],
        axis=1,
    )


def search_degree(scores: np.ndarray, remainders: np.ndarray, t: int) -> DegreeSearch:
    """The loop of Alg. 4 on precomputed ``scores`` ``(R, Q + 1, |X|)`` and remainder bounds
    ``(R, Q + 1)`` of the degrees ``0..Q``: the first ``q`` with ``Gamma_q < Delta_min,q / 4``,
    or ``min(t, Q)`` when there is none."""
    if int(t) != t or t < 1:
        raise ValueError(f"the time step t must be an integer >= 1, got {t}")
    if scores.shape[:2] != remainders.shape:
        raise ValueError(f"scores {scores.shape} and remainders {remainders.shape} disagree")
    best = scores.max(axis=-1, keepdims=True)
    gap = best - scores
    positive = gap > TIE_TOLERANCE * np.maximum(np.abs(best), 1.0)
    gaps = np.where(positive, gap, np.inf).min(axis=-1)
    stop = remainders < gaps / 4
    stop[:, min(int(t), remainders.shape[1] - 1)] = True
    return DegreeSearch(np.argmax(stop, axis=1), remainders, gaps)


class SSEMUCBQSearch(SSEMUCBJO):
    """SSEM-UCB-JO (Alg. 2) whose Taylor degree is chosen by q-search (Alg. 4) at every refit,
    per replicate, with :class:`QSearchOptions` (no ``degree``: ``max_degree``).

    :attr:`degrees` ``(R,)`` holds the degree chosen at each replicate's last refit (-1 before
    the first); :attr:`search` the last :class:`DegreeSearch` of the replicates refitted then.
    """

    Options = QSearchOptions

    def __init__(
        self, problem: object, options: QSearchOptions | None = None, **changes: Any
    ) -> None:
        if "degree" in changes:
            raise ValueError("q-search chooses the Taylor degree: pass max_degree, not degree")
        super().__init__(problem, options, **changes)

    def reset(self, seeds: Sequence[np.random.SeedSequence]) -> None:
        super().reset(seeds)
        replicates = len(seeds)
        self.degrees = np.full(replicates, -1)
        self.search: DegreeSearch | None = None
        #: The observed range of every arm's signal (the box of the remainder's points).
        self.signal_low = np.full((replicates, self.n_arms), np.inf)
        self.signal_high = np.full((replicates, self.n_arms), -np.inf)

    def _refit(self, which: np.ndarray) -> None:
        """The base refit (graph, centres, jets at ``max_degree``), then Alg. 4 and the
        truncation of the jets to the chosen degrees."""
        which = which.copy()  # the base refit clears ``self.stale``, which the caller passes
        super()._refit(which)
        low, high = self.moment_boxes()
        chosen = [replace(g, coefficients=g.coefficients[which]) for g in self.groups]
        bonus = self.external_bonus()[which]
        scores = degree_scores(chosen, low[which], high[which], bonus, self.options)
        remainders = remainder_bounds(
            self.graph.weights[which],
            self.signal_low[which],
            self.signal_high[which],
            self.super_arm_size,
            self.options,
        )
        self.search = search_degree(scores, remainders, self.t)
        self.degrees[which] = self.search.degrees
        for group in self.groups:
            kept = group.exponents.sum(axis=1)[None, None, :] <= self.search.degrees[:, None, None]
            group.coefficients[which] = np.where(kept, group.coefficients[which], 0.0)

    def update(self, actions: np.ndarray, feedback: object) -> None:
        super().update(actions, feedback)
        played = np.asarray(actions, dtype=bool)
        z = np.asarray(feedback.z, dtype=float)
        self.signal_low = np.where(played, np.minimum(self.signal_low, z), self.signal_low)
        self.signal_high = np.where(played, np.maximum(self.signal_high, z), self.signal_high)
