"""Bandit environments over SCMs, with their regret oracles, and environment wrappers."""

from causalbandits.envs.actions import ActionSet, InvalidActionError
from causalbandits.envs.deviations import (
    DEVIATION_DESIGNS,
    DeviatedModel,
    DeviationSchedule,
    check_budget,
    deviation_budget,
    negated_interventions,
    node_deviation_totals,
    swapped_mechanisms,
)
from causalbandits.envs.linear_bandit import LinearSEMBandit, LinearSEMProblem

__all__ = [
    "DEVIATION_DESIGNS",
    "ActionSet",
    "DeviatedModel",
    "DeviationSchedule",
    "InvalidActionError",
    "LinearSEMBandit",
    "LinearSEMProblem",
    "check_budget",
    "deviation_budget",
    "negated_interventions",
    "node_deviation_totals",
    "swapped_mechanisms",
]
