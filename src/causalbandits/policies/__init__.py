"""Bandit policies, vectorised over replicates, and their registry by short name."""

from causalbandits.policies.base import Policy
from causalbandits.policies.linsem import LinSEMTS, LinSEMUCB, RobustLCB
from causalbandits.policies.random_policy import RandomPolicy
from causalbandits.policies.ucb import UCB1

POLICIES: dict[str, type] = {
    "robust-lcb": RobustLCB,
    "linsem-ucb": LinSEMUCB,
    "linsem-ts": LinSEMTS,
    "ucb": UCB1,
    "random": RandomPolicy,
}

__all__ = ["POLICIES", "LinSEMTS", "LinSEMUCB", "Policy", "RandomPolicy", "RobustLCB", "UCB1"]
