"""Reusable statistics: weighted ridge with rank-one updates, optimistic SEM propagation."""

from causalbandits.estimators.propagation import PropagationPlan, propagate_means
from causalbandits.estimators.ridge import WeightedRidge

__all__ = ["PropagationPlan", "WeightedRidge", "propagate_means"]
