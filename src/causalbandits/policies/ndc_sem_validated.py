"""Online tuning of the lasso penalty of eq. 9 (Covid experiment, Sec. V-B): a graph learner
of :class:`~causalbandits.policies.ndc_sem.SEMSemiBandit`.

:class:`LambdaValidation` is the option of :class:`~causalbandits.policies.ndc_sem.NDCSEM` and
:class:`~causalbandits.policies.ndc_sem.SEMUCB` that replaces their fixed ``lam`` by
:class:`ValidatedGraph`: a :class:`~causalbandits.estimators.validated_lasso.ValidatedSEMLasso`,
which fits eq. 9 on the training days for every ``lam`` of a grid and uses the ``lam`` with the
lowest validation error ``eps(t)``. The learner sees the full ``(y_tau, b_tau)`` of the
received days (``graph_input="b"``, decisions: ndc-sem 22) or ``z_tau = diag(b_tau) x_tau``
(``"z"``); the validation days come from the problem (``problem.validation``, as
:class:`~causalbandits.envs.italy_covid.CovidProblem` provides) or the ``validation`` field.
With ``graph_input="b"`` the learner ignores the decisions, so both policies learn the same
graphs from the same data.

That also makes a grid of NDC-SEM's ``(gamma, xi)`` cheap (App. VII-D5): pass one value per
replicate and ``shared_graph=True``, reset every replicate with the same seeds and the
environment with one reward sample, and eq. 9 is fitted once per day for all of them
(:class:`~causalbandits.estimators.validated_lasso.SharedValidatedSEMLasso`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from causalbandits.estimators.validated_lasso import (
    DECADE_GRID,
    SharedValidatedSEMLasso,
    ValidatedSEMLasso,
    check_lambda_grid,
)


@dataclass(frozen=True)
class ValidatedGraph:
    """Eq. 9 with ``lam`` chosen online on the ``validation`` days among ``lam_grid`` (see
    :class:`~causalbandits.estimators.validated_lasso.ValidatedSEMLasso` for
    ``initial_lam``, ``tol`` and ``max_sweeps``). With ``shared`` one single-replicate
    learner serves all replicates (their arrivals must be equal: ``graph_input="b"``)."""

    lam_grid: np.ndarray
    validation: np.ndarray
    initial_lam: float | None = None
    tol: float = 1e-8
    max_sweeps: int = 1000
    shared: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "lam_grid", check_lambda_grid(self.lam_grid))
        object.__setattr__(self, "validation", np.asarray(self.validation, bool).reshape(-1))
        # fail at construction, not at reset, on a bad validation mask or initial lambda
        ValidatedSEMLasso(1, 1, self.lam_grid, self.validation, initial=self.initial_lam)

    @classmethod
    def for_problem(
        cls,
        problem: object,
        validation: Sequence[bool] | np.ndarray | None,
        graph_input: str,
        shared: bool,
        **options: object,
    ) -> ValidatedGraph:
        """The learner with the problem's validation days unless ``validation`` is given."""
        mask = getattr(problem, "validation", None) if validation is None else validation
        if mask is None:
            raise ValueError(
                "online lambda tuning needs validation days: pass validation= or a problem "
                "with a validation mask"
            )
        if shared and graph_input != "b":
            raise ValueError(
                "shared_graph needs graph_input='b' (with 'z' the graph data depend on the "
                "decisions, so replicates do not share them)"
            )
        return cls(validation=mask, shared=shared, **options)

    def learner(
        self, replicates: int, n_arms: int, structure: str
    ) -> ValidatedSEMLasso | SharedValidatedSEMLasso:
        learner = ValidatedSEMLasso(
            1 if self.shared else replicates,
            n_arms,
            self.lam_grid,
            self.validation,
            structure,
            self.initial_lam,
            float(self.tol),
            int(self.max_sweeps),
        )
        return SharedValidatedSEMLasso(replicates, learner) if self.shared else learner

    def feed(
        self,
        learner: ValidatedSEMLasso | SharedValidatedSEMLasso,
        rounds: np.ndarray,
        received: np.ndarray,
        y: np.ndarray,
        exogenous: np.ndarray,
    ) -> None:
        """The validated learner also needs the arrival rounds (training or validation day)."""
        learner.add(np.where(received, rounds, 0), y, exogenous)


@dataclass(frozen=True, kw_only=True, eq=False)
class LambdaValidation:
    """The online ``lam`` tuning of Sec. V-B (:class:`ValidatedGraph`), an option of NDC-SEM
    and SEM-UCB in place of a fixed ``lam``; the validation days are checked when the policy
    is built for a problem."""

    #: The ``lam`` values tried (default the decades 1e-5 ... 1e6, the paper's grid).
    lam_grid: Sequence[float] | np.ndarray = DECADE_GRID
    #: The validation days ``(T,)``; ``None``: the problem's (``problem.validation``).
    validation: Sequence[bool] | np.ndarray | None = None
    #: ``lam`` before any validation day has arrived (``None``: the largest grid value).
    initial_lam: float | None = None
    #: The stopping rule of each lasso fit (:func:`~causalbandits.estimators.lasso.
    #: nonnegative_lasso`).
    lasso_tol: float = 1e-8
    lasso_max_sweeps: int = 1000
    #: One graph learner for all replicates (their arrivals must be equal: ``graph_input``
    #: ``"b"``; App. VII-D5's grid).
    shared_graph: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "lam_grid", check_lambda_grid(self.lam_grid))

    def graph(self, problem: object, graph_input: str) -> ValidatedGraph:
        """The learner, with the problem's validation days unless :attr:`validation` is
        given."""
        return ValidatedGraph.for_problem(
            problem,
            self.validation,
            graph_input,
            self.shared_graph,
            lam_grid=self.lam_grid,
            initial_lam=self.initial_lam,
            tol=self.lasso_tol,
            max_sweeps=self.lasso_max_sweeps,
        )
