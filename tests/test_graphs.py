import networkx as nx
import numpy as np
import pytest

from causalbandits.graphs import (
    CausalDAG,
    CyclicGraphError,
    chain,
    erdos_renyi_dag,
    hierarchical_tree,
    layered,
    robust_lcb_graph,
)


def test_paper_graph_has_the_stated_shape():
    dag = robust_lcb_graph()
    assert dag.n_nodes == 13
    assert dag.max_in_degree == 3
    assert dag.longest_path == 2
    assert list(dag.roots) == list(range(9))
    assert list(dag.sinks) == [12]
    # middle nodes have disjoint groups of three root parents
    groups = [set(dag.parents(v)) for v in (9, 10, 11)]
    assert set().union(*groups) == set(range(9))
    assert sum(len(g) for g in groups) == 9
    assert list(dag.parents(12)) == [9, 10, 11]


def test_longest_path_and_depths_against_networkx(rng):
    for _ in range(20):
        dag = erdos_renyi_dag(8, 0.4, rng)
        graph = dag.to_networkx()
        assert dag.longest_path == nx.dag_longest_path_length(graph)
        assert dag.max_in_degree == max((d for _, d in graph.in_degree()), default=0)
        order = list(dag.topological_order)
        assert all(order.index(i) < order.index(j) for i, j in graph.edges)


def test_networkx_round_trip(rng):
    dag = erdos_renyi_dag(7, 0.5, rng)
    back = CausalDAG.from_networkx(dag.to_networkx())
    np.testing.assert_array_equal(back.adjacency, dag.adjacency)


def test_families():
    assert chain(5).longest_path == 4
    assert hierarchical_tree(2, 3).n_nodes == 8 + 4 + 2 + 1
    full = layered([3, 3, 1])
    assert full.max_in_degree == 3 and full.longest_path == 2
    sparse = layered([4, 4, 4], edge_probability=0.1, rng=0)
    assert (sparse.adjacency[:, 4:].sum(axis=0) >= 1).all()


def test_cyclic_graph_is_rejected():
    with pytest.raises(CyclicGraphError, match="cycle"):
        CausalDAG.from_edges(3, [(0, 1), (1, 2), (2, 0)])
    with pytest.raises(CyclicGraphError):
        CausalDAG(np.eye(2))


def test_bad_adjacency_shapes():
    with pytest.raises(ValueError, match="square"):
        CausalDAG(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="outside"):
        CausalDAG.from_edges(2, [(0, 5)])
