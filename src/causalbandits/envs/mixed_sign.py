"""Random mixed-sign networks: linear-Gaussian SEMs with about a third negative weights.

The benchmark of the linear-SEM bandits on real-structure networks (issue 14): ``N`` nodes
in topological order, each with 0-3 parents among the 8 nodes before it (local structure
gives long directed paths, as in expert-built networks); weights of magnitude U(0.4, 1)
negative with probability ``negative_share``; Gaussian noise with means U(-2, 2) and
standard deviations U(0.5, 1.5); the last node is the reward sink, with 3 parents among
the 8 nodes before it; ``n_intervenable`` random ancestors of the reward carry soft
interventions (new weights on their incoming edges, drawn the same way), so there are
``2^n_intervenable`` arms. :func:`draw_interventions_and_noise` (the interventions and the
noise of a given weighted graph) is shared with ``envs.real_structures``.
"""

from __future__ import annotations

import networkx as nx
import numpy as np

from causalbandits.envs.linear_bandit import LinearSEMBandit
from causalbandits.envs.networks import network_bandit
from causalbandits.random import RNGLike, as_generator

WINDOW = 8  # parents are drawn among the WINDOW nodes before a node
IN_DEGREES, IN_DEGREE_PROBABILITIES = (0, 1, 2, 3), (0.15, 0.4, 0.3, 0.15)


def signed_weight(generator: np.random.Generator, negative_share: float) -> float:
    """A weight of magnitude U(0.4, 1), negative with probability ``negative_share``."""
    sign = -1.0 if generator.random() < negative_share else 1.0
    return sign * generator.uniform(0.4, 1.0)


def draw_interventions_and_noise(
    graph: nx.DiGraph,
    reward: str,
    generator: np.random.Generator,
    negative_share: float = 1 / 3,
    n_intervenable: int = 5,
) -> tuple[list[str], dict[str, dict[str, float]]]:
    """Draw, in this order, the intervenable nodes, their interventional weights and the noise.

    The intervenable nodes are ``n_intervenable`` random ancestors of ``reward``, non-root ones
    if there are enough; every edge into them gets an ``intervention_weight`` (set on
    ``graph``) drawn like :func:`signed_weight`; then every node gets a noise mean U(-2, 2) and
    standard deviation U(0.5, 1.5) (``{"mean": ..., "std": ...}``). Nodes go in ``graph``'s
    order. Returns the intervenable nodes and the noise.
    """
    if not 0 <= negative_share <= 1:
        raise ValueError(f"negative_share must lie in [0, 1], got {negative_share}")
    names = list(graph)
    ancestors = sorted(nx.ancestors(graph, reward), key=names.index)
    roots = {v for v in ancestors if graph.in_degree(v) == 0}
    candidates = [v for v in ancestors if v not in roots] or ancestors
    if len(candidates) < n_intervenable:
        candidates = ancestors
    if len(candidates) < n_intervenable:
        raise ValueError(f"the reward has {len(candidates)} ancestors, fewer than {n_intervenable}")
    chosen = generator.choice(len(candidates), size=n_intervenable, replace=False)
    intervenable = sorted((candidates[k] for k in chosen), key=names.index)
    for node in intervenable:
        for parent in graph.predecessors(node):
            graph.edges[parent, node]["intervention_weight"] = signed_weight(
                generator, negative_share
            )
    noise = {
        v: {"mean": generator.uniform(-2.0, 2.0), "std": generator.uniform(0.5, 1.5)} for v in names
    }
    return intervenable, noise


def random_mixed_sign_network(
    n_nodes: int,
    rng: RNGLike = None,
    negative_share: float = 1 / 3,
    n_intervenable: int = 5,
) -> tuple[nx.DiGraph, dict[str, dict[str, float]], list[str], str]:
    """A random network: the weighted graph, the noise means and standard deviations per
    node (``{"mean": ..., "std": ...}``), the intervenable nodes and the reward node."""
    if n_nodes < n_intervenable + 2:
        raise ValueError(f"n_nodes = {n_nodes} leaves too few ancestors for the interventions")
    generator = as_generator(rng)
    names = [f"V{i}" for i in range(n_nodes)]
    graph = nx.DiGraph()
    graph.add_nodes_from(names)
    reward = names[-1]
    for j in range(1, n_nodes):
        earlier = np.arange(max(0, j - WINDOW), j)
        degree = 3 if j == n_nodes - 1 else generator.choice(IN_DEGREES, p=IN_DEGREE_PROBABILITIES)
        for i in generator.choice(earlier, size=min(degree, earlier.size), replace=False):
            graph.add_edge(names[i], names[j], weight=signed_weight(generator, negative_share))
    intervenable, noise = draw_interventions_and_noise(
        graph, reward, generator, negative_share, n_intervenable
    )
    return graph, noise, intervenable, reward


def mixed_sign_bandit(
    horizon: int = 5000,
    instance: int = 0,
    n_nodes: int = 50,
    negative_share: float = 1 / 3,
    n_intervenable: int = 5,
    optimal_tolerance: float = 1e-2,
) -> LinearSEMBandit:
    """The bandit of network number ``instance`` (drawn from ``SeedSequence(instance)``, so
    every algorithm and replicate of a setting meets the same network)."""
    rng = np.random.default_rng(np.random.SeedSequence(int(instance)))
    graph, noise, intervenable, reward = random_mixed_sign_network(
        n_nodes, rng, negative_share, n_intervenable
    )
    return drawn_network_bandit(graph, noise, intervenable, reward, horizon, optimal_tolerance)


def drawn_network_bandit(
    graph: nx.DiGraph,
    noise: dict[str, dict[str, float]],
    intervenable: list[str],
    reward: str,
    horizon: int,
    optimal_tolerance: float,
) -> LinearSEMBandit:
    """:func:`~causalbandits.envs.networks.network_bandit` of a drawn network: the weighted
    graph, each node's noise ``{"mean": ..., "std": ...}``, the intervenable nodes and the
    reward node."""
    return network_bandit(
        graph,
        reward=reward,
        intervenable=intervenable,
        horizon=horizon,
        noise_mean={v: value["mean"] for v, value in noise.items()},
        noise_std={v: value["std"] for v, value in noise.items()},
        optimal_tolerance=optimal_tolerance,
    )
