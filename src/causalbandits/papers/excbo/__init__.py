"""EXCBO (Ren & Qian, arXiv 2402.02277): causal Bayesian optimisation with exogenous
distribution learning: the exogenous-recovery study (decisions: excbo 19), the synthetic
comparisons (Figs 3, 9, 10) and the EXCBO-only noise studies (Figs 12, 14).

These experiments need PyTorch and BoTorch (the ``gp`` extra). The catalogue lists them on
every install; their modules are imported when one is built, and without the extra building
one fails with :class:`~causalbandits.experiments.extras.MissingExtraError`, which names
the install command.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from causalbandits.experiments.extras import needs_extra

#: The packages of the ``gp`` extra.
GP_PACKAGES = ("torch", "botorch", "gpytorch", "sklearn")


def needs_gp(module: str, function: str, *args: Any) -> Callable[[bool], Any]:
    """The preset ``causalbandits.papers.excbo.<module>.<function>(*args, quick)`` of the
    ``gp`` extra (:func:`~causalbandits.experiments.extras.needs_extra`)."""
    return needs_extra("gp", GP_PACKAGES, f"{__name__}.{module}:{function}", *args)


EXPERIMENTS = {
    "excbo-recovery": needs_gp("recovery", "recovery"),
    **{
        name: needs_gp("comparison", "preset", name)
        for name in (
            "excbo-dropwave",
            "excbo-alpine2",
            "excbo-rosenbrock",
            "excbo-epidemic",
            "excbo-covid",
            "excbo-dropwave-beta",
            "excbo-alpine2-beta",
            "excbo-dropwave-design",
            "excbo-dropwave-surrogate",
            "excbo-dropwave-low-noise",
            "excbo-dropwave-noise",
            "excbo-rosenbrock-noise",
        )
    },
}
