"""A soft-intervention bandit from a user's own weighted network.

:func:`network_bandit` turns a weighted ``networkx.DiGraph`` into a
:class:`~causalbandits.envs.linear_bandit.LinearSEMBandit`: the linear SEM
``X_j = sum_i B[i, j] X_i + eps_j`` (observational weights on the edges), whose intervenable
nodes switch their incoming weights to ``B*`` (soft interventions, Robust-LCB eq. 2), with
independent Gaussian noise. The arms are all subsets of the intervenable nodes: arm ``k``
intervenes on ``intervenable[b]`` for every set bit ``b`` of ``k``.

It warns (:class:`~causalbandits.assumptions.AssumptionWarning`) when intervening on a node
changes nothing (no parents, or every ``intervention_weight`` equal to its ``weight``),
which makes the arms come in identical groups; the noise and ``m`` checks are
:class:`~causalbandits.envs.linear_bandit.LinearSEMBandit`'s.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

import networkx as nx
import numpy as np

from causalbandits.assumptions import warn_assumption
from causalbandits.envs.actions import ActionSet
from causalbandits.envs.linear_bandit import LinearSEMBandit
from causalbandits.graphs.dag import CausalDAG
from causalbandits.scm.linear import LinearSEM
from causalbandits.scm.noise import GaussianNoise


def _per_node(values: Mapping[Hashable, float], nodes: list[Hashable], label: str) -> np.ndarray:
    if not isinstance(values, Mapping):
        raise ValueError(
            f"{label} must be a dict keyed by node name, e.g. {{{nodes[0]!r}: 1.0, ...}}, got a "
            f"{type(values).__name__}: the node order of a sequence would be ambiguous"
        )
    missing = [v for v in nodes if v not in values]
    if missing:
        raise ValueError(f"{label} is missing for nodes {missing[:5]}")
    array = np.array([float(values[v]) for v in nodes])
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{label} must be finite")
    return array


def gaussian_noise(
    mean: np.ndarray, *, std: np.ndarray | None = None, variance: np.ndarray | None = None
) -> GaussianNoise:
    """Independent Gaussian noise from its means and exactly one of ``std`` or ``variance``."""
    if (std is None) == (variance is None):
        raise ValueError("give the noise's spread as exactly one of std= or variance=")
    spread = np.asarray(std if variance is None else variance, dtype=float)
    if np.any(spread <= 0) or not np.all(np.isfinite(spread)):
        raise ValueError("noise standard deviations and variances must be finite and positive")
    return GaussianNoise(
        np.asarray(mean, dtype=float), spread if variance is None else np.sqrt(spread)
    )


def _warn_idle_interventions(
    intervenable: Sequence[Hashable], columns: list[int], weights: np.ndarray, star: np.ndarray
) -> None:
    """Warn about intervenable nodes whose intervention changes no weight (duplicate arms)."""
    idle = []
    for node, column in zip(intervenable, columns, strict=True):
        if np.array_equal(weights[:, column], star[:, column]):
            why = "every intervention_weight equals its weight"
            idle.append(f"{node!r} ({why if weights[:, column].any() else 'no parents'})")
    if idle:
        warn_assumption(
            f"intervening on {', '.join(idle)} changes no weight, so the "
            f"{2 ** len(intervenable)} arms come in groups of {2 ** len(idle)} identical arms: "
            "drop these nodes from intervenable or give their incoming edges an "
            "intervention_weight that differs from the weight"
        )


def network_bandit(
    graph: nx.DiGraph,
    *,
    reward: Hashable,
    intervenable: Sequence[Hashable],
    horizon: int,
    noise_mean: Mapping[Hashable, float],
    noise_std: Mapping[Hashable, float] | None = None,
    noise_variance: Mapping[Hashable, float] | None = None,
    weight: str = "weight",
    intervention_weight: str = "intervention_weight",
    optimal_tolerance: float = 1e-9,
) -> LinearSEMBandit:
    """The soft-intervention bandit of a weighted DAG.

    Parameters
    ----------
    graph: a DAG; every edge carries its observational weight in the attribute ``weight``,
        and every edge into an intervenable node its interventional weight in
        ``intervention_weight``. Nodes keep their names (``CausalDAG.names``, arm labels) and
        are indexed in a topological order.
    reward: the reward node (any node; it need not be a sink).
    intervenable: the nodes the arms may intervene on.
    horizon: ``T``.
    noise_mean, noise_std, noise_variance: dicts keyed by node (sequences are refused: their
        order would be ambiguous); exactly one of ``noise_std`` and ``noise_variance``.
    optimal_tolerance: an arm within this of the best expected reward counts as optimal.
    """
    if not nx.is_directed_acyclic_graph(graph):
        raise ValueError(f"the graph has a directed cycle: {nx.find_cycle(graph)}")
    nodes = list(nx.topological_sort(graph))
    index = {v: i for i, v in enumerate(nodes)}
    unknown = [v for v in [reward, *intervenable] if v not in index]
    if unknown:
        raise ValueError(f"nodes {unknown} are not in the graph")
    if len(set(intervenable)) != len(intervenable) or not intervenable:
        raise ValueError("intervenable must list at least one node, each once")
    moved = set(nx.ancestors(graph, reward)) | {reward}
    if not moved & set(intervenable):
        raise ValueError(
            f"no intervenable node is the reward node {reward!r} or one of its ancestors: "
            "every arm would have the same expected reward"
        )
    n = len(nodes)
    weights, star = np.zeros((n, n)), np.zeros((n, n))
    targets = set(intervenable)
    for source, target, attributes in graph.edges(data=True):
        if weight not in attributes:
            raise ValueError(f"edge {source!r} -> {target!r} has no {weight!r} attribute")
        weights[index[source], index[target]] = attributes[weight]
        if target in targets:
            if intervention_weight not in attributes:
                raise ValueError(
                    f"edge {source!r} -> {target!r} into an intervenable node has no "
                    f"{intervention_weight!r} attribute"
                )
            star[index[source], index[target]] = attributes[intervention_weight]
        else:
            star[index[source], index[target]] = attributes[weight]
    noise = gaussian_noise(
        _per_node(noise_mean, nodes, "noise_mean"),
        std=None if noise_std is None else _per_node(noise_std, nodes, "noise_std"),
        variance=None
        if noise_variance is None
        else _per_node(noise_variance, nodes, "noise_variance"),
    )
    names = [str(v) for v in nodes]
    dag = CausalDAG((weights != 0) | (star != 0), names=names)
    actions = ActionSet.subsets(n, [index[v] for v in intervenable], names=names)
    _warn_idle_interventions(intervenable, [index[v] for v in intervenable], weights, star)
    sem = LinearSEM(dag, weights, star, noise)
    return LinearSEMBandit(
        sem, horizon, actions, reward_node=index[reward], optimal_tolerance=optimal_tolerance
    )
