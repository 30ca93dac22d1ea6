"""NDC-SEM and SEM-UCB with the lasso penalty of eq. 9 tuned online (Covid experiment, Sec. V-B).

Both policies are :class:`~causalbandits.policies.ndc_sem.NDCSEM` /
:class:`~causalbandits.policies.ndc_sem.SEMUCB` with one change: the graph learner is a
:class:`~causalbandits.estimators.validated_lasso.ValidatedSEMLasso`, which fits eq. 9 on the
training days for every ``lam`` of a grid and uses the ``lam`` with the lowest validation
error ``eps(t)``. The learner sees the full ``(y_tau, b_tau)`` of the received days
(``graph_input="b"``, spec §5.2 step 8) or ``z_tau = diag(b_tau) x_tau`` (``"z"``); the
validation days come from the problem (``problem.validation``, as
:class:`~causalbandits.data.italy_covid.CovidProblem` provides) or the ``validation``
argument. With ``graph_input="b"`` the learner ignores the decisions, so both policies learn
the same graphs from the same data.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from causalbandits.estimators.validated_lasso import (
    DECADE_GRID,
    ValidatedSEMLasso,
    check_lambda_grid,
)
from causalbandits.policies.ndc_sem import NDCSEM, SEMUCB
from causalbandits.policies.semibandit import collect_arrivals


class _ValidatedGraph:
    """Mixin: replaces the fixed-``lam`` lasso of NDC-SEM by a :class:`ValidatedSEMLasso`.

    The fixed ``lam`` of the parent class is left at its default and never used.
    """

    lam_grid: np.ndarray
    validation: np.ndarray
    initial_lam: float | None
    lasso_tol: float
    lasso_max_sweeps: int

    def _configure(
        self,
        problem: object,
        lam_grid: Sequence[float] | np.ndarray,
        validation: Sequence[bool] | np.ndarray | None,
        initial_lam: float | None,
        lasso_tol: float,
        lasso_max_sweeps: int,
    ) -> None:
        mask = getattr(problem, "validation", None) if validation is None else validation
        if mask is None:
            raise ValueError(
                "online lambda tuning needs validation days: pass validation= or a problem "
                "with a validation mask"
            )
        self.validation = np.asarray(mask, dtype=bool).reshape(-1)
        self.lam_grid = check_lambda_grid(lam_grid)
        self.initial_lam = initial_lam
        self.lasso_tol, self.lasso_max_sweeps = float(lasso_tol), int(lasso_max_sweeps)
        # fail at construction, not at reset, on a bad validation mask or initial lambda
        ValidatedSEMLasso(1, 1, self.lam_grid, self.validation, initial=initial_lam)

    def reset(self, seeds: Sequence[np.random.SeedSequence]) -> None:
        super().reset(seeds)
        self.lasso = ValidatedSEMLasso(
            len(seeds),
            self.n_arms,
            self.lam_grid,
            self.validation,
            self.structure,
            self.initial_lam,
            self.lasso_tol,
            self.lasso_max_sweeps,
        )

    def update(self, actions: np.ndarray, feedback: object) -> None:
        """Eq. 10 statistics as in NDC-SEM; the graph learner also gets the arrival rounds."""
        arrived = collect_arrivals(actions, feedback, self.t, len(self.h))
        self.arms.advance()
        received = arrived.received
        self.arms.receive(np.where(received, arrived.rounds, 0), arrived.actions, arrived.z)
        exogenous = arrived.z if self.graph_input == "z" else arrived.b
        if exogenous is None:
            raise ValueError("graph_input='b' needs feedback that reveals b")
        self.lasso.add(np.where(received, arrived.rounds, 0), arrived.y, exogenous)


class ValidatedNDCSEM(_ValidatedGraph, NDCSEM):
    """NDC-SEM (Algorithm 1) with ``lam`` tuned online on validation days (Sec. V-B).

    ``gamma``, ``xi`` default to Table I's Covid values (0.85, 0.1); ``lam_grid`` to the
    decades 1e-5 ... 1e6. See :class:`~causalbandits.estimators.validated_lasso.
    ValidatedSEMLasso` for ``initial_lam``, ``lasso_tol`` and ``lasso_max_sweeps``.
    """

    def __init__(
        self,
        problem: object,
        gamma: float = 0.85,
        xi: float | None = 0.1,
        lam_grid: Sequence[float] | np.ndarray = DECADE_GRID,
        validation: Sequence[bool] | np.ndarray | None = None,
        graph_input: str = "b",
        initial_lam: float | None = None,
        wait_for_initial_feedback: bool = True,
        lasso_tol: float = 1e-8,
        lasso_max_sweeps: int = 1000,
    ) -> None:
        self._configure(problem, lam_grid, validation, initial_lam, lasso_tol, lasso_max_sweeps)
        NDCSEM.__init__(
            self,
            problem,
            gamma=gamma,
            xi=xi,
            graph_input=graph_input,
            wait_for_initial_feedback=wait_for_initial_feedback,
        )


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
    ) -> None:
        self._configure(problem, lam_grid, validation, initial_lam, lasso_tol, lasso_max_sweeps)
        SEMUCB.__init__(self, problem, graph_input=graph_input)
