"""Linear-SEM bandits on the DAGs of five classic Bayesian networks ("real structures").

The structure is that of network ``name`` in :mod:`causalbandits.graphs.zoo` (asia, sachs,
child, insurance, alarm: 8 to 37 nodes); the mechanisms are linear-Gaussian and drawn by
this rule, so that every ``(name, instance)`` is one fixed instance:

- all randomness comes from ``default_rng(SeedSequence([instance, k]))``, ``k`` the index of
  ``name`` in :data:`~causalbandits.graphs.zoo.NAMES`;
- the weights are drawn edge by edge (children in the BIF file's order, each child's parents
  in the file's order), of magnitude U(0.4, 1) and negative with probability
  ``negative_share``;
- the reward node is the node with the most ancestors (ties: the later one in the file);
- then, as in :mod:`causalbandits.envs.mixed_sign`
  (:func:`~causalbandits.envs.mixed_sign.draw_interventions_and_noise`):
  ``k = min(n_intervenable, number of non-root ancestors)`` random non-root ancestors of
  the reward are intervenable (a root has no incoming weight for a soft intervention to
  change: its arms would duplicate others), the edges into them get interventional weights
  drawn like the weights, and every node gets Gaussian noise with mean U(-2, 2) and
  standard deviation U(0.5, 1.5).

The arms are the ``2^k`` subsets of the ``k`` intervenable nodes: 16 on asia and sachs,
whose rewards have four non-root ancestors, 32 on the others at the defaults.
"""

from __future__ import annotations

import networkx as nx
import numpy as np

from causalbandits.envs.linear_bandit import LinearSEMBandit
from causalbandits.envs.mixed_sign import (
    draw_interventions_and_noise,
    drawn_network_bandit,
    signed_weight,
)
from causalbandits.graphs.zoo import NAMES, structure


def reward_node(graph: nx.DiGraph) -> str:
    """The node with the most ancestors; of several, the later one in the graph's order."""
    return max(reversed(list(graph)), key=lambda v: len(nx.ancestors(graph, v)))


def real_structure_bandit(
    horizon: int = 5000,
    name: str = "asia",
    instance: int = 0,
    negative_share: float = 1 / 3,
    n_intervenable: int = 5,
    optimal_tolerance: float = 1e-2,
) -> LinearSEMBandit:
    """The bandit of instance ``instance`` on the structure of network ``name`` (module rule)."""
    graph = structure(name)
    generator = np.random.default_rng(np.random.SeedSequence([int(instance), NAMES.index(name)]))
    for child in graph:
        for parent in graph.predecessors(child):
            graph.edges[parent, child]["weight"] = signed_weight(generator, negative_share)
    reward = reward_node(graph)
    ancestors = nx.ancestors(graph, reward)
    n_chosen = min(n_intervenable, sum(graph.in_degree(v) > 0 for v in ancestors))
    intervenable, noise = draw_interventions_and_noise(
        graph, reward, generator, negative_share, n_chosen
    )
    return drawn_network_bandit(graph, noise, intervenable, reward, horizon, optimal_tolerance)
