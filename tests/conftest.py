"""Shared fixtures: the Robust-LCB paper environment and small random SEMs."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from causalbandits.graphs import erdos_renyi_dag
from causalbandits.scm import GaussianNoise, LinearSEM

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
#: Test modules that need the ``gp`` extra (PyTorch, BoTorch, GPyTorch, scikit-learn).
GP_TEST_MODULES = {
    "test_bo_policies_formulas.py",
    "test_causal_bo.py",
    "test_epidemic.py",
    "test_excbo_recovery.py",
    "test_excbo_surrogate.py",
    "test_exogenous.py",
    "test_gp_network.py",
    "test_nmcbo.py",
}
GP_MISSING = [
    name
    for name in ("torch", "botorch", "gpytorch", "sklearn")
    if not importlib.util.find_spec(name)
]


def pytest_ignore_collect(collection_path: Path) -> bool | None:
    """Without the ``gp`` extra the causal-BO modules are not collected (see the header)."""
    return True if GP_MISSING and collection_path.name in GP_TEST_MODULES else None


def pytest_report_header() -> str | None:
    if GP_MISSING:
        return (
            f"causal-BO tests not collected: {', '.join(GP_MISSING)} missing "
            "(install the gp extra: pip install -e '.[test,gp]')"
        )
    return None


def random_sem(n_nodes: int, rng: np.random.Generator, p: float = 0.6) -> LinearSEM:
    """A random linear SEM with weights of either sign on an Erdos-Renyi DAG."""
    dag = erdos_renyi_dag(n_nodes, p, rng)
    weights = dag.adjacency * rng.uniform(-1, 1, (n_nodes, n_nodes))
    star = dag.adjacency * rng.uniform(-1, 1, (n_nodes, n_nodes))
    return LinearSEM(dag, weights, star, GaussianNoise.iid(n_nodes, 1.0, 1.0))


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261122)
