"""NDC-SEM and SEM-UCB with the lasso penalty of eq. 9 tuned online (Covid experiment, Sec. V-B).

Both policies are :class:`~causalbandits.policies.ndc_sem.NDCSEM` /
:class:`~causalbandits.policies.ndc_sem.SEMUCB` with one change: the graph learner is a
:class:`~causalbandits.estimators.validated_lasso.ValidatedSEMLasso`, which fits eq. 9 on the
training days for every ``lam`` of a grid and uses the ``lam`` with the lowest validation
error ``eps(t)``. The learner sees the full ``(y_tau, b_tau)`` of the received days
(``graph_input="b"``, spec §5.2 step 8) or ``z_tau = diag(b_tau) x_tau`` (``"z"``); the
validation days come from the problem (``problem.validation``, as
:class:`~causalbandits.envs.italy_covid.CovidProblem` provides) or the ``validation``
argument. With ``graph_input="b"`` the learner ignores the decisions, so both policies learn
the same graphs from the same data.

That also makes a grid of NDC-SEM's ``(gamma, xi)`` cheap (App. VII-D5): pass one value per
replicate and ``shared_graph=True``, reset every replicate with the same seeds and the
environment with one reward sample, and eq. 9 is fitted once per day for all of them
(:class:`~causalbandits.estimators.validated_lasso.SharedValidatedSEMLasso`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from causalbandits.estimators.discounted import DiscountedArmStatistics
from causalbandits.estimators.validated_lasso import (
    DECADE_GRID,
    SharedValidatedSEMLasso,
    ValidatedSEMLasso,
    check_lambda_grid,
)
from causalbandits.policies.ndc_sem import NDCSEM, SEMUCB


class _ValidatedGraph:
    """Mixin: replaces the fixed-``lam`` lasso of NDC-SEM by a :class:`ValidatedSEMLasso`.

    The fixed ``lam`` of the parent class is left at its default and never used. With
    ``shared_graph`` one single-replicate learner serves all replicates (their arrivals must
    be equal, which needs ``graph_input="b"``).
    """

    lam_grid: np.ndarray
    validation: np.ndarray
    initial_lam: float | None
    lasso_tol: float
    lasso_max_sweeps: int
    shared_graph: bool

    def _configure(
        self,
        problem: object,
        lam_grid: Sequence[float] | np.ndarray,
        validation: Sequence[bool] | np.ndarray | None,
        initial_lam: float | None,
        lasso_tol: float,
        lasso_max_sweeps: int,
        graph_input: str,
        shared_graph: bool,
    ) -> None:
        mask = getattr(problem, "validation", None) if validation is None else validation
        if mask is None:
            raise ValueError(
                "online lambda tuning needs validation days: pass validation= or a problem "
                "with a validation mask"
            )
        if shared_graph and graph_input != "b":
            raise ValueError(
                "shared_graph needs graph_input='b' (with 'z' the graph data depend on the "
                "decisions, so replicates do not share them)"
            )
        self.validation = np.asarray(mask, dtype=bool).reshape(-1)
        self.lam_grid = check_lambda_grid(lam_grid)
        self.initial_lam = initial_lam
        self.lasso_tol, self.lasso_max_sweeps = float(lasso_tol), int(lasso_max_sweeps)
        self.shared_graph = bool(shared_graph)
        # fail at construction, not at reset, on a bad validation mask or initial lambda
        ValidatedSEMLasso(1, 1, self.lam_grid, self.validation, initial=initial_lam)

    def reset(self, seeds: Sequence[np.random.SeedSequence]) -> None:
        super().reset(seeds)
        learner = ValidatedSEMLasso(
            1 if self.shared_graph else len(seeds),
            self.n_arms,
            self.lam_grid,
            self.validation,
            self.structure,
            self.initial_lam,
            self.lasso_tol,
            self.lasso_max_sweeps,
        )
        self.lasso = SharedValidatedSEMLasso(len(seeds), learner) if self.shared_graph else learner

    def _learn_graph(
        self, rounds: np.ndarray, received: np.ndarray, y: np.ndarray, exogenous: np.ndarray
    ) -> None:
        """The validated learner also needs the arrival rounds (training or validation day)."""
        self.lasso.add(np.where(received, rounds, 0), y, exogenous)


class ValidatedNDCSEM(_ValidatedGraph, NDCSEM):
    """NDC-SEM (Algorithm 1) with ``lam`` tuned online on validation days (Sec. V-B).

    ``gamma``, ``xi`` default to Table I's Covid values (0.85, 0.1); each may also be one
    value per replicate (``(R,)``: eq. 10-11 per replicate, e.g. the grid of App. VII-D5).
    ``lam_grid`` defaults to the decades 1e-5 ... 1e6. See :class:`~causalbandits.estimators.
    validated_lasso.ValidatedSEMLasso` for ``initial_lam``, ``lasso_tol`` and
    ``lasso_max_sweeps``; ``shared_graph``: one graph learner for all replicates (see the
    module docstring).
    """

    def __init__(
        self,
        problem: object,
        gamma: float | Sequence[float] | np.ndarray = 0.85,
        xi: float | Sequence[float] | np.ndarray | None = 0.1,
        lam_grid: Sequence[float] | np.ndarray = DECADE_GRID,
        validation: Sequence[bool] | np.ndarray | None = None,
        graph_input: str = "b",
        initial_lam: float | None = None,
        wait_for_initial_feedback: bool = True,
        lasso_tol: float = 1e-8,
        lasso_max_sweeps: int = 1000,
        shared_graph: bool = False,
    ) -> None:
        self._configure(
            problem,
            lam_grid,
            validation,
            initial_lam,
            lasso_tol,
            lasso_max_sweeps,
            graph_input,
            shared_graph,
        )
        NDCSEM.__init__(
            self,
            problem,
            gamma=gamma,
            xi=xi,
            graph_input=graph_input,
            wait_for_initial_feedback=wait_for_initial_feedback,
        )
        # fail at construction, not at reset, on bad constants (reset checks R = len(seeds))
        sizes = [np.size(v) for v in (self.gamma, self.xi) if np.ndim(v)]
        DiscountedArmStatistics(max(sizes, default=1), 1, self.gamma, self.xi, self.budget)


class ValidatedSEMUCB(_ValidatedGraph, SEMUCB):
    """SEM-UCB (spec §4) with the same online ``lam`` tuning as :class:`ValidatedNDCSEM`."""

    def __init__(
        self,
        problem: object,
        lam_grid: Sequence[float] | np.ndarray = DECADE_GRID,
        validation: Sequence[bool] | np.ndarray | None = None,
        graph_input: str = "b",
        initial_lam: float | None = None,
        lasso_tol: float = 1e-8,
        lasso_max_sweeps: int = 1000,
        shared_graph: bool = False,
    ) -> None:
        self._configure(
            problem,
            lam_grid,
            validation,
            initial_lam,
            lasso_tol,
            lasso_max_sweeps,
            graph_input,
            shared_graph,
        )
        SEMUCB.__init__(self, problem, graph_input=graph_input)
