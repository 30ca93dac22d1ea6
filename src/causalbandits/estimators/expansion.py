"""How the Taylor coefficients ``D^alpha r_x(a) / alpha!`` of a separable SEM's reward map
``r_x(b) = 1^T (I - F)^{-1}(x * b)`` are computed (SSEM-UCB paper, Sec. III-B): the settings
shared by :func:`~causalbandits.estimators.jets.reward_jets`,
:func:`~causalbandits.estimators.finite_differences.finite_difference_jets` and
:func:`~causalbandits.estimators.finite_differences.taylor_coefficients`."""

from __future__ import annotations

from dataclasses import dataclass

from causalbandits.scm.basis import Dictionary
from causalbandits.validation import count, positive

#: The derivative modes: exact jets or central finite differences.
DERIVATIVE_MODES = ("exact", "finite-difference")
#: The default finite-difference step ``h`` (its trade-off: :mod:`~causalbandits.estimators.
#: finite_differences`).
FD_STEP = 1e-3


@dataclass(frozen=True, kw_only=True)
class Expansion:
    """The form of ``F`` (weights ``W[i, j, k]`` on ``dictionary``, eq. 2) and how its reward
    map is expanded.

    Parameters
    ----------
    dictionary: the ``K`` basis functions of ``F``'s edges (eqs. 3-4).
    upper_triangular: ``F`` is a DAG in the paper's node order (Sec. III-A): one backward
        sweep is exact; otherwise ``F`` may have cycles and ``y = F(y) + u`` is solved by the
        cyclic fixed point (Prop. IV.4).
    derivatives: ``"exact"`` (jets, default) or ``"finite-difference"`` (central differences
        of step ``fd_step``, the paper's numerical derivatives, App. -G1).
    fd_step: the finite-difference step ``h`` (unused with exact derivatives).
    tol, max_iter: the cyclic solve's tolerance and iterations
        (:class:`~causalbandits.scm.separable.ChordSEM`; unused for a DAG).
    """

    dictionary: Dictionary
    upper_triangular: bool = True
    derivatives: str = "exact"
    fd_step: float = FD_STEP
    tol: float = 1e-12
    max_iter: int = 100

    def __post_init__(self) -> None:
        if self.derivatives not in DERIVATIVE_MODES:
            raise ValueError(
                f"derivatives must be one of {DERIVATIVE_MODES}, got {self.derivatives!r}"
            )
        object.__setattr__(self, "fd_step", positive("fd_step", self.fd_step))
        positive("tol", self.tol)
        count("max_iter", self.max_iter)
