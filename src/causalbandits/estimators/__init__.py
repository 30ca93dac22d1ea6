"""Reusable statistics: weighted ridge with rank-one updates, optimistic SEM propagation."""

from causalbandits.estimators.propagation import (
    PropagationPlan,
    block_coordinate_ascent,
    propagate_means,
)
from causalbandits.estimators.ridge import WeightedRidge

__all__ = ["PropagationPlan", "WeightedRidge", "block_coordinate_ascent", "propagate_means"]
