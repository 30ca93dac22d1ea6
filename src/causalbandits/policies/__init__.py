"""Bandit policies, vectorised over replicates, and their registry by short name."""

from causalbandits.policies.base import Policy
from causalbandits.policies.random_policy import RandomPolicy

POLICIES: dict[str, type] = {
    "random": RandomPolicy,
}

__all__ = ["POLICIES", "Policy", "RandomPolicy"]
