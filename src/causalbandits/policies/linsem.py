"""Causal UCB and Thompson sampling on a linear SEM with a known graph.

* :class:`RobustLCB` — Robust-LCB (Yan et al., Algorithm 1): weighted OLS with weights
  ``min(1/C, 1/(C ||x||_{Vt^{-1}}))`` (eq. 17; decisions: robust-lcb A1), ellipsoids in the
  ``V Vt^{-1} V`` norm (eq. 14-16) with radius from Lemma 1, UCB eq. 18, argmax eq. 19.
* :class:`LinSEMUCB` — Varici et al.'s LinSEM-UCB: the same machinery with unit weights and
  the OFUL-type radius ``1 + sqrt(2 log(1/delta) + d log(1 + m^2 t / d))``.
* :class:`LinSEMTS` — LinSEM-TS: columns drawn from ``N(theta_hat, var V^{-1})``, then the
  action with the largest mean under the drawn model.

All three keep one :class:`~causalbandits.estimators.ridge.WeightedRidge` over the slots
(replicate, non-root node, mode) and act on all replicates at once. When the replicates are
different systems (``problem.replicate_dags``), the slots follow the union of the graphs and
each replicate masks the parents outside its own graph (their features and their parent
means read 0), which gives each replicate the estimates, bounds and, for LinSEM-TS, the
posterior draws it would have alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from causalbandits.envs.linear_bandit import LinearSEMProblem
from causalbandits.estimators.interval_bounds import propagate_bounds
from causalbandits.estimators.propagation import (
    PropagationPlan,
    block_coordinate_ascent,
    propagate_means,
)
from causalbandits.estimators.ridge import WeightedRidge
from causalbandits.random import SubStream, derive, normal_stream, random_argmax, uniform_stream


class _LinearSEMLearner:
    """Shared state: the per-(node, mode) regressions and the action masks."""

    #: Bench declarations (causalbandits.bench.capabilities).
    ACTS_ON = frozenset({"interventions"})
    NEEDS = frozenset({"graph"})

    #: Maps the weighted exploration bonus to sample weights; ``None``: unit weights.
    weight_rule = None

    def __init__(self, problem: LinearSEMProblem, mode_parents: bool = False) -> None:
        self.problem = problem
        self.masks = problem.actions.masks
        self.plan = PropagationPlan.build(problem.dag, self.masks, problem.reward_node)
        self.node_modes = self.masks[:, self.plan.nodes].astype(np.intp)  # (A, n)
        self.noise_mean = problem.noise_mean
        self.reward_node = problem.reward_node
        self.horizon = problem.horizon
        graphs = problem.replicate_dags
        #: ``(R or 1, n, 2, width)``: the parent slots each replicate, node and mode uses
        #: (its own graph's, or with ``mode_parents`` each mode's); ``None``: all of them.
        self.parent_mask = None
        self.d: int | np.ndarray = problem.dag.max_in_degree
        if graphs is not None:
            union = np.stack([self.plan.parent_mask(g.adjacency) for g in graphs])
            self.parent_mask = np.repeat(union[:, :, None, :], 2, axis=2)
            self.d = np.maximum([g.max_in_degree for g in graphs], 1)
        if mode_parents:
            if problem.mode_parents is None:
                raise ValueError("the problem does not tell each mode's parents")
            per_mode = self.plan.parent_mask(problem.mode_parents)  # (..., 2, n, width)
            self.parent_mask = np.swapaxes(per_mode.reshape(-1, *per_mode.shape[-3:]), 1, 2)

    def reset(self, seeds: Sequence[np.random.SeedSequence]) -> None:
        replicates, n = len(seeds), self.plan.nodes.size
        graphs = self.problem.replicate_dags
        if graphs is not None and replicates != len(graphs):
            raise ValueError(f"got {len(seeds)} seeds for {len(graphs)} systems")
        self.ridge = WeightedRidge(
            (replicates, n, 2), self.plan.width, unit_weights=self.weight_rule is None
        )
        self._slot_base = self.ridge.slot_ids(
            (np.arange(replicates)[:, None], np.arange(n)[None, :], np.zeros((1, n), int))
        )
        self._ties = uniform_stream(seeds, (self.masks.shape[0],))
        self.t = 0

    def update(self, actions: np.ndarray, feedback: np.ndarray) -> None:
        """Add ``X_pa(i)``, ``X_i - nu_i`` of every non-root node to its played mode (eq. 7-12)."""
        slots = (self._slot_base + self.node_modes[actions]).ravel()
        x = self.plan.parent_values(feedback)
        if self.parent_mask is not None:  # only the played mode's parents are features
            modes = self.node_modes[actions]  # (R, n)
            mask = np.broadcast_to(self.parent_mask, (len(actions), *self.parent_mask.shape[1:]))
            x = x * np.take_along_axis(mask, modes[:, :, None, None], axis=2)[:, :, 0]
        x = x.reshape(slots.size, -1)
        y = (feedback[:, self.plan.nodes] - self.noise_mean[self.plan.nodes]).ravel()
        self.ridge.update(slots, x, y, self.weight_rule)
        self.t += 1


class LinSEMUCB(_LinearSEMLearner):
    """LinSEM-UCB (Varici et al. 2023): ridge OLS per node and mode, optimistic propagation.

    Parameters
    ----------
    beta_scale: multiplier on the theoretical radius.
    delta: confidence level (default ``1/(2 N T)``).
    ball: cap each column's support by the unit ball ``||theta|| <= 1`` (eq. 14-15).
    solver: ``"auto"`` (default): ``"greedy"`` when the problem states the paper's
        non-negative model (``problem.nonnegative``), else ``"interval"``; ``"greedy"``
        forward propagation (exact when the path effects are non-negative); ``"interval"``: an
        upper bound of eq. 18 valid for any signs, equal to greedy's once every column's sign
        is certain (:func:`~causalbandits.estimators.interval_bounds.propagate_bounds`); or
        ``"bca"``: block-coordinate ascent started from greedy (``sweeps`` passes; slower, can
        only raise the value of eq. 18, not an upper bound).
    mode_parents: regress each mode of a node on that mode's own parents
        (``problem.mode_parents``) instead of the parents in either mode.
    radius: ``"auto"`` (default): ``"theory"`` on the paper's non-negative model (the
        reproductions), else ``"self-normalised"``; ``"theory"``: the paper's radius
        (:meth:`beta`), one for every slot, with unit noise scale; ``"self-normalised"``:
        one radius per (node, mode) from its own data and noise scale
        (:meth:`slot_radii`), valid with the same probability and never wider than the
        paper's at unit noise scale (issue 33).
    """

    SOLVERS = ("greedy", "interval", "bca")
    RADII = ("theory", "self-normalised")

    def __init__(
        self,
        problem: LinearSEMProblem,
        beta_scale: float = 1.0,
        delta: float | None = None,
        ball: bool = False,
        solver: str = "auto",
        sweeps: int = 2,
        mode_parents: bool = False,
        radius: str = "auto",
    ) -> None:
        super().__init__(problem, mode_parents)
        if radius not in (*self.RADII, "auto"):
            raise ValueError(f"unknown radius {radius!r}; choose from {('auto', *self.RADII)}")
        self.radius = self.default_radius(problem) if radius == "auto" else radius
        if solver not in (*self.SOLVERS, "auto"):
            raise ValueError(f"unknown solver {solver!r}; choose from {('auto', *self.SOLVERS)}")
        if solver == "auto":
            solver = "greedy" if problem.nonnegative else "interval"
        if solver == "bca" and ball:
            raise ValueError(
                "the unit-ball cap is available with the greedy and interval solvers only"
            )
        self.solver, self.sweeps = solver, sweeps
        if not beta_scale >= 0 or not np.isfinite(beta_scale):
            raise ValueError(f"beta_scale must be finite and >= 0, got {beta_scale}")
        self.beta_scale = beta_scale
        self.delta = delta if delta is not None else 1.0 / (2 * problem.dag.n_nodes * self.horizon)
        if not 0 < self.delta < 1:
            raise ValueError(f"delta must lie in (0, 1), got {self.delta}")
        self.ball = ball
        self.m = problem.x_norm_bound

    def beta(self, t: int) -> float | np.ndarray:
        """OFUL-type radius ``1 + sqrt(2 log(1/delta) + d log(1 + m^2 t / d))``
        (decisions: robust-lcb A9)."""
        d, m = self.d, self.m
        return 1.0 + np.sqrt(2 * np.log(1 / self.delta) + d * np.log(1 + m * m * t / d))

    @staticmethod
    def default_radius(problem: LinearSEMProblem) -> str:
        """``radius="auto"``: the paper's on the paper's non-negative model, else the
        self-normalised one."""
        return "theory" if problem.nonnegative else "self-normalised"

    def slot_radii(self) -> np.ndarray:
        """Abbasi-Yadkori et al. (2011, Thm 2) per (replicate, node, mode), ``(R, n, 2)``:
        ``1 + sigma_i sqrt(2 log(1/delta) + log det V)`` for ridge ``lambda = 1`` and
        ``||theta|| <= 1`` (the paper's assumptions), ``sigma_i`` node ``i``'s noise standard
        deviation when the problem states it (Gaussian noise is ``sigma_i``-sub-Gaussian),
        else 1. ``log det V <= d log(1 + m^2 t / d)``: never wider than :meth:`beta` when
        ``sigma_i <= 1``, and much narrower where the features are far below ``m``."""
        variance = self.problem.noise_variance
        nodes = self.plan.nodes
        scale = np.ones(nodes.size) if variance is None else np.sqrt(variance[nodes])
        bits = 2 * np.log(1 / self.delta) + self.ridge.log_det_gram
        return 1.0 + scale[:, None] * np.sqrt(bits)

    def upper_confidence_bounds(self) -> np.ndarray:
        """``UCB_a(t)`` of every replicate and action, shape ``(R, A)`` (eq. 18)."""
        theta, ellipsoid_inv = self.ridge.theta, self.ridge.ellipsoid_inv
        if self.radius == "self-normalised":
            # ||theta - theta_hat||_V <= r_s is ||theta - theta_hat||_{V / r_s^2} <= 1
            ellipsoid_inv = ellipsoid_inv * (self.slot_radii() ** 2)[..., None, None]
            beta = self.beta_scale
        else:
            beta = self.beta_scale * self.beta(self.t + 1)
        if self.solver == "bca":
            if self.parent_mask is not None:
                raise ValueError(
                    "the bca solver needs one graph shared by all replicates and modes"
                )
            return block_coordinate_ascent(
                self.plan,
                self.masks,
                self.noise_mean,
                theta,
                ellipsoid_inv,
                beta,
                self.reward_node,
                self.sweeps,
            )
        args = (self.plan, self.noise_mean, theta, self.reward_node, ellipsoid_inv, beta)
        if self.solver == "interval":
            return propagate_bounds(*args, self.ball, self.parent_mask)[1]
        return propagate_means(*args, self.ball, self.parent_mask)

    def select(self) -> np.ndarray:
        return random_argmax(self.upper_confidence_bounds(), self._ties.next())


class RobustLCB(LinSEMUCB):
    """Robust-LCB (Yan et al., Algorithm 1) for a known deviation budget ``C``.

    ``deviation_budget`` defaults to the ``C`` the problem announces; ``C_alg = max(C, 1)``.
    The other options are those of :class:`LinSEMUCB`; the radius is Lemma 1's
    (``radius="theory"``), which accounts for the deviations.
    """

    RADII = ("theory",)

    def __init__(
        self, problem: LinearSEMProblem, deviation_budget: float | None = None, **options: Any
    ) -> None:
        super().__init__(problem, **options)
        budget = problem.deviation_budget if deviation_budget is None else deviation_budget
        if not budget >= 0 or not np.isfinite(budget):
            raise ValueError(f"the deviation budget C must be finite and >= 0, got {budget}")
        self.deviation_budget = max(float(budget), 1.0)

    @staticmethod
    def default_radius(problem: LinearSEMProblem) -> str:
        return "theory"

    def beta(self, t: int) -> float | np.ndarray:
        """Lemma 1: ``sqrt(2 log(1/delta) + d log(1 + m^2 t/(d C^2))) + 1 + m``."""
        d, m, c = self.d, self.m, self.deviation_budget
        return np.sqrt(2 * np.log(1 / self.delta) + d * np.log(1 + m * m * t / (d * c * c))) + 1 + m

    def weight_rule(self, bonus: np.ndarray) -> np.ndarray:
        """Eq. 17 with ``Vt`` before the sample (decisions: robust-lcb A1):
        ``min(1/C, 1/(C ||x||_{Vt^{-1}}))``."""
        return np.minimum(1.0, 1.0 / np.maximum(bonus, 1e-300)) / self.deviation_budget


class LinSEMTS(_LinearSEMLearner):
    """LinSEM-TS (Varici et al. 2023): posterior sampling of every column, greedy action.

    ``variance`` scales the posterior covariance ``V^{-1}`` (1 in the authors' code);
    ``mode_parents`` regresses each mode on its own parents, as LinSEM-TS in the CSL-UCB
    authors' code, which is told the parents of every (node, mode); by default (``None``)
    whenever the problem tells them (``problem.mode_parents``), which a user should not have
    to know to ask for (issue 33: the union of both modes' parents regresses each mode on
    parents it does not have).
    """

    def __init__(
        self, problem: LinearSEMProblem, variance: float = 1.0, mode_parents: bool | None = None
    ) -> None:
        if mode_parents is None:
            mode_parents = problem.mode_parents is not None
        super().__init__(problem, mode_parents)
        if not variance > 0 or not np.isfinite(variance):
            raise ValueError(f"variance must be finite and positive, got {variance}")
        self.variance = variance

    def reset(self, seeds: Sequence[np.random.SeedSequence]) -> None:
        super().reset(seeds)
        seeds = derive(seeds, SubStream.POSTERIOR)
        # Each replicate draws in the layout of its own graph's full plan (every non-root
        # node), placed into this plan's: the draws do not depend on the other replicates'
        # graphs nor on which nodes the plan skips.
        graphs = self.problem.replicate_dags
        if graphs is None:
            shape, own, here = self.plan.embedding(self.problem.dag)
            self._normals = [(normal_stream(seeds, (shape[0], 2, shape[1])), own, here)]
            return
        self._normals = []
        for seed, graph in zip(seeds, graphs, strict=True):
            shape, own, here = self.plan.embedding(graph)
            self._normals.append((normal_stream([seed], (shape[0], 2, shape[1])), own, here))

    def standard_normals(self) -> np.ndarray:
        """This round's ``(R, n, 2, width)`` standard normals of the posterior draw."""
        replicates = self.ridge.theta.shape[0]
        z = np.zeros((replicates, self.plan.nodes.size, 2, self.plan.width))
        if self.problem.replicate_dags is None:
            stream, own, here = self._normals[0]
            z[:, here[0], :, here[1]] = stream.next()[:, own[0], :, own[1]]
            return z
        for r, (stream, own, here) in enumerate(self._normals):
            z[r, here[0], :, here[1]] = stream.next()[0][own[0], :, own[1]]
        return z

    def select(self) -> np.ndarray:
        gram_inv = self.ridge.gram_inv
        factor = np.linalg.cholesky(
            self.variance * 0.5 * (gram_inv + np.swapaxes(gram_inv, -1, -2))
        )
        draw = self.ridge.theta + np.einsum("...ij,...j->...i", factor, self.standard_normals())
        means = propagate_means(
            self.plan, self.noise_mean, draw, self.reward_node, parent_mask=self.parent_mask
        )
        return random_argmax(means, self._ties.next())
