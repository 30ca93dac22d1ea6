"""A causal DAG over nodes ``0..N-1`` with the queries every layer above needs."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cached_property

import networkx as nx
import numpy as np


class CyclicGraphError(ValueError):
    """Raised when a graph that must be acyclic contains a directed cycle."""


class CausalDAG:
    """A directed acyclic graph with ``adjacency[i, j] = True`` iff there is an edge ``i -> j``.

    Parameters
    ----------
    adjacency:
        Square boolean (or 0/1) matrix. The diagonal must be zero and the graph acyclic.
    names:
        Optional node names (default ``"X0".."X{N-1}"``).
    """

    def __init__(self, adjacency: np.ndarray, names: Sequence[str] | None = None) -> None:
        matrix = np.asarray(adjacency)
        if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
            raise ValueError(f"adjacency must be a square matrix, got shape {matrix.shape}")
        if not np.all((matrix == 0) | (matrix == 1)):
            raise ValueError("adjacency must contain only 0/1 or booleans")
        self.adjacency = matrix.astype(bool)
        self.adjacency.setflags(write=False)
        n = self.adjacency.shape[0]
        self.names = list(names) if names is not None else [f"X{i}" for i in range(n)]
        if len(self.names) != n:
            raise ValueError(f"got {len(self.names)} names for {n} nodes")
        self._check_acyclic()

    def _check_acyclic(self) -> None:
        graph = nx.from_numpy_array(self.adjacency.astype(int), create_using=nx.DiGraph)
        if not nx.is_directed_acyclic_graph(graph):
            cycle = nx.find_cycle(graph)
            raise CyclicGraphError(f"graph has a directed cycle: {cycle}")

    @classmethod
    def from_edges(
        cls, n_nodes: int, edges: Iterable[tuple[int, int]], names: Sequence[str] | None = None
    ) -> CausalDAG:
        """Build from an edge list ``[(i, j), ...]`` meaning ``i -> j``, with optional names."""
        matrix = np.zeros((n_nodes, n_nodes), dtype=bool)
        for i, j in edges:
            if not (0 <= i < n_nodes and 0 <= j < n_nodes):
                raise ValueError(f"edge ({i}, {j}) has a node outside 0..{n_nodes - 1}")
            matrix[i, j] = True
        return cls(matrix, names)

    @classmethod
    def from_networkx(cls, graph: nx.DiGraph) -> CausalDAG:
        """Build from a ``networkx.DiGraph``; nodes are indexed in ``graph.nodes`` order."""
        nodes = list(graph.nodes)
        matrix = nx.to_numpy_array(graph, nodelist=nodes, weight=None) != 0
        return cls(matrix, names=[str(v) for v in nodes])

    def to_networkx(self) -> nx.DiGraph:
        """A ``networkx.DiGraph`` with integer nodes and a ``name`` attribute."""
        graph = nx.DiGraph()
        graph.add_nodes_from((i, {"name": name}) for i, name in enumerate(self.names))
        graph.add_edges_from(zip(*np.nonzero(self.adjacency), strict=True))
        return graph

    @property
    def n_nodes(self) -> int:
        return self.adjacency.shape[0]

    def parents(self, node: int) -> np.ndarray:
        """Sorted parent indices of ``node``."""
        return np.flatnonzero(self.adjacency[:, node])

    def children(self, node: int) -> np.ndarray:
        """Sorted child indices of ``node``."""
        return np.flatnonzero(self.adjacency[node])

    @cached_property
    def topological_order(self) -> np.ndarray:
        """A topological order (the identity when the nodes are already ordered)."""
        order = list(nx.lexicographical_topological_sort(self.to_networkx()))
        return np.asarray(order, dtype=int)

    @cached_property
    def roots(self) -> np.ndarray:
        """Nodes without parents."""
        return np.flatnonzero(~self.adjacency.any(axis=0))

    @cached_property
    def sinks(self) -> np.ndarray:
        """Nodes without children."""
        return np.flatnonzero(~self.adjacency.any(axis=1))

    @cached_property
    def max_in_degree(self) -> int:
        """``d``: the largest number of parents of any node."""
        return int(self.adjacency.sum(axis=0).max(initial=0))

    @cached_property
    def depths(self) -> np.ndarray:
        """``L_i``: number of edges on the longest directed path ending at each node."""
        depth = np.zeros(self.n_nodes, dtype=int)
        for node in self.topological_order:
            parents = self.parents(node)
            if parents.size:
                depth[node] = depth[parents].max() + 1
        return depth

    @cached_property
    def longest_path(self) -> int:
        """``L``: number of edges on the longest directed path."""
        return int(self.depths.max(initial=0))

    def __repr__(self) -> str:
        return (
            f"CausalDAG(n_nodes={self.n_nodes}, edges={int(self.adjacency.sum())}, "
            f"d={self.max_in_degree}, L={self.longest_path})"
        )
