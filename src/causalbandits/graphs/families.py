"""Graph families used by the papers: hierarchical trees, layered graphs, random DAGs, chains.

Every generator returns nodes in topological order (``i -> j`` only if ``i < j``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from causalbandits.graphs.dag import CausalDAG
from causalbandits.random import RNGLike, as_generator


def hierarchical_tree(branching: int, depth: int) -> CausalDAG:
    """A tree of ``depth`` edge-layers where every non-root node has ``branching`` own parents.

    ``hierarchical_tree(3, 2)`` is the Robust-LCB paper's graph: 9 roots, 3 middle nodes with
    3 disjoint parents each, and the reward node (N = 13, d = 3, L = 2).
    """
    if branching < 1 or depth < 1:
        raise ValueError("branching and depth must be >= 1")
    sizes = [branching ** (depth - level) for level in range(depth + 1)]
    starts = np.concatenate([[0], np.cumsum(sizes)])
    edges = []
    for level in range(1, depth + 1):
        for k in range(sizes[level]):
            child = starts[level] + k
            for p in range(branching):
                edges.append((starts[level - 1] + k * branching + p, child))
    names = [f"L{level + 1}_{k}" for level, size in enumerate(sizes) for k in range(size)]
    names[-1] = "reward"
    dag = CausalDAG.from_edges(int(starts[-1]), edges)
    return CausalDAG(dag.adjacency, names=names)


def robust_lcb_graph() -> CausalDAG:
    """The hierarchical graph of the Robust-LCB experiments (9 -> 3 -> 1, d = 3, L = 2)."""
    return hierarchical_tree(branching=3, depth=2)


def layered(
    layer_sizes: Sequence[int], edge_probability: float = 1.0, rng: RNGLike = None
) -> CausalDAG:
    """Layers connected only between consecutive layers, each edge kept with a probability.

    ``edge_probability = 1`` gives fully connected consecutive layers (Varici et al.'s
    hierarchical family). Every node outside the first layer keeps at least one parent.
    """
    if not 0.0 < edge_probability <= 1.0:
        raise ValueError(f"edge_probability must lie in (0, 1], got {edge_probability}")
    if any(size < 1 for size in layer_sizes):
        raise ValueError("every layer needs at least one node")
    generator = as_generator(rng)
    starts = np.concatenate([[0], np.cumsum(layer_sizes)])
    n = int(starts[-1])
    matrix = np.zeros((n, n), dtype=bool)
    for level in range(1, len(layer_sizes)):
        previous = np.arange(starts[level - 1], starts[level])
        for child in range(starts[level], starts[level + 1]):
            keep = generator.random(previous.size) < edge_probability
            if not keep.any():
                keep[generator.integers(previous.size)] = True
            matrix[previous[keep], child] = True
    return CausalDAG(matrix)


def erdos_renyi_dag(n_nodes: int, edge_probability: float, rng: RNGLike = None) -> CausalDAG:
    """Random DAG: each pair ``i < j`` gets the edge ``i -> j`` with ``edge_probability``."""
    if n_nodes < 1:
        raise ValueError("n_nodes must be >= 1")
    if not 0.0 <= edge_probability <= 1.0:
        raise ValueError(f"edge_probability must lie in [0, 1], got {edge_probability}")
    generator = as_generator(rng)
    upper = np.triu(generator.random((n_nodes, n_nodes)) < edge_probability, k=1)
    return CausalDAG(upper)


def chain(n_nodes: int) -> CausalDAG:
    """The chain ``0 -> 1 -> ... -> N-1``."""
    return CausalDAG.from_edges(n_nodes, [(i, i + 1) for i in range(n_nodes - 1)])
