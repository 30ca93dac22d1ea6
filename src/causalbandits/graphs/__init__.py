"""Causal DAGs: the graph object and random families."""

from causalbandits.graphs.dag import CausalDAG, CyclicGraphError
from causalbandits.graphs.families import (
    chain,
    erdos_renyi_dag,
    hierarchical_tree,
    layered,
    robust_lcb_graph,
)

__all__ = [
    "CausalDAG",
    "CyclicGraphError",
    "chain",
    "erdos_renyi_dag",
    "hierarchical_tree",
    "layered",
    "robust_lcb_graph",
]
