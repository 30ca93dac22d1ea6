"""Shared fixtures: the Robust-LCB paper environment and small random SEMs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from causalbandits.graphs import erdos_renyi_dag
from causalbandits.scm import GaussianNoise, LinearSEM

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def random_sem(n_nodes: int, rng: np.random.Generator, p: float = 0.6) -> LinearSEM:
    """A random linear SEM with weights of either sign on an Erdos-Renyi DAG."""
    dag = erdos_renyi_dag(n_nodes, p, rng)
    weights = dag.adjacency * rng.uniform(-1, 1, (n_nodes, n_nodes))
    star = dag.adjacency * rng.uniform(-1, 1, (n_nodes, n_nodes))
    return LinearSEM(dag, weights, star, GaussianNoise.iid(n_nodes, 1.0, 1.0))


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261122)
