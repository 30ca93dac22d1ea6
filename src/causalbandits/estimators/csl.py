"""Causal Sub-graph Learning, CSL (CSL-UCB Algorithm 1).

For one mode ``m``: start from the complete directed graph (no self-loops), fit every
node's least squares on all candidates, score each edge ``j -> i`` by the edge-weighted
mutual information (eq. 25)

    I_w[j, i] = I(r_i; x_j) - w log|B_hat[j, i]|        (+inf where B_hat[j, i] = 0),

and delete the highest-scoring edge until the graph is a DAG. Only the target node of a
deleted edge is refitted and rescored (the fit of node ``i`` depends only on column ``i``,
so this equals the paper's full refit). Pruning stops at the first DAG, so the output has
few false negatives and some false positives by design. ``w = 0`` is CSL-nw.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.sparse.csgraph import connected_components
from scipy.spatial import cKDTree
from scipy.special import digamma

from causalbandits.estimators.mutual_information import _constants, _standardise, tree_terms
from causalbandits.estimators.subgraph import SubgraphData
from causalbandits.random import RNGLike, as_generator
from causalbandits.scm.linear import transfer_matrix


@dataclass(frozen=True)
class CSLResult:
    """A learned sub-graph set for one mode.

    Attributes
    ----------
    adjacency: ``(N, N)`` bool, ``adjacency[j, i]`` = edge ``j -> i`` kept (a DAG).
    weights: ``(N, N)`` least-squares weights on the kept edges (``B_hat``), zero elsewhere.
    """

    adjacency: np.ndarray
    weights: np.ndarray

    def parents(self, node: int) -> np.ndarray:
        """Sorted kept parents of ``node``."""
        return np.flatnonzero(self.adjacency[:, node])


def is_acyclic(adjacency: np.ndarray) -> np.ndarray | bool:
    """Whether each graph ``adjacency[..., j, i]`` (edge ``j -> i``) has no directed cycle.

    A graph is acyclic iff its adjacency matrix is nilpotent, i.e. ``A^(2^s) = 0`` for
    ``2^s >= N``: ``ceil(log2 N)`` boolean squarings, batched over leading axes.
    """
    power = np.asarray(adjacency) != 0
    n = power.shape[-1]
    for _ in range(max(1, int(np.ceil(np.log2(max(n, 2)))))):
        power = (power.astype(float) @ power.astype(float)) > 0
    acyclic = ~power.any(axis=(-2, -1))
    return bool(acyclic) if acyclic.ndim == 0 else acyclic


#: Standard deviation of the tie-breaking jitter added to standardised KSG inputs.
JITTER = 1e-10


class KSGEdgeScores:
    """Eq. 25's edge scores ``I(r_i; x_j) - w log|B_hat[j, i]|`` of the graphs CSL prunes,
    exact only where the selection needs them (:mod:`causalbandits.estimators.csl_kernel`).

    KSG's inputs are standardised and jittered (decisions: csl-ucb A17):
    each learned pair's samples (all ``N`` columns) once per call, in the order of the
    slots and of the nodes (``n x N`` draws of ``rng`` each), and the residual at every refit
    (``n`` draws). A pair's candidate columns are thus the same values at every refit, sorted
    once. The samples each learned node needs are checked by :func:`_prune`.
    """

    def __init__(
        self,
        data: SubgraphData,
        modes: tuple[int, ...],
        columns: list[np.ndarray],
        k: int,
        weight: float,
        generator: np.random.Generator,
    ) -> None:
        from causalbandits.estimators import csl_kernel  # compiled (or loaded) on first use

        self.kernel = csl_kernel
        n = data.n_nodes
        self.data, self.modes, self.k, self.weight = data, modes, int(k), weight
        self.generator = generator
        self.pairs = np.full((len(modes), n), -1, dtype=np.int64)
        self.samples: list[tuple[np.ndarray, np.ndarray]] = []
        for slot, learned in enumerate(columns):
            for node in learned:
                self.pairs[slot, node] = len(self.samples)
                self.samples.append(data.samples(int(node), modes[slot]))
        sizes = [z.size for _, z in self.samples]
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        total, longest = int(offsets[-1]), max(sizes, default=k + 1)
        standardised = np.empty((n, total))
        for (x, _), low, high in zip(self.samples, offsets[:-1], offsets[1:], strict=True):
            standardised[:, low:high] = _standardise(x, "samples", JITTER, generator).T
        head, _, self.psi = _constants(longest, self.k)
        shape = (len(modes), n, n)
        self.state = csl_kernel.Samples(
            pairs=self.pairs,
            offsets=offsets,
            x_ordered=np.empty(total),
            order=np.empty(total, dtype=np.int64),
            rank=np.empty(total, dtype=np.int64),
            columns=standardised,
            sorted_columns=np.empty((n, total)),
            is_sorted=np.zeros((len(self.samples), n), dtype=bool),
            y_by_x=np.empty(longest),
            scratch=np.empty(longest),
            tails=np.array([digamma(size) for size in sizes]),
            head=head,
            floor=2 * self.psi[self.k - 1],
        )
        self.edges = csl_kernel.Edges(
            done=np.zeros(shape, dtype=np.int64),
            partial=np.zeros(shape),
            penalty=np.zeros(shape),
            key=np.full(shape, -np.inf),
            exact=np.zeros(shape, dtype=bool),
            column_max=np.full(shape[:2], -np.inf),
            column_arg=np.zeros(shape[:2], dtype=np.int64),
        )
        self.no_mask = np.zeros((1, 1, 1), dtype=bool)
        #: Per pair: whether a Gram block of it passed the ridge guard (A2), so its
        #: sub-blocks do too (:meth:`SubgraphData.nested_ols`).
        self.conditioned = np.zeros(len(self.samples), dtype=bool)

    def refresh(self, slot: int, node: int, candidates: np.ndarray) -> np.ndarray:
        """Refit ``node`` on ``candidates`` (least squares, A2): the weights; the edges' keys
        become their upper bounds."""
        pair = self.pairs[slot, node]
        coefficients, self.conditioned[pair] = self.data.nested_ols(
            node, self.modes[slot], candidates, self.conditioned[pair]
        )
        x, z = self.samples[pair]
        if candidates.size:
            residual = z - x[:, candidates] @ coefficients
            xs = _standardise(residual, "x", JITTER, self.generator)
        else:
            xs = np.zeros(z.size)
        penalties = np.zeros(candidates.size)
        if self.weight > 0:
            with np.errstate(divide="ignore"):
                magnitude = np.abs(coefficients)
                penalties = np.where(magnitude > 0, -self.weight * np.log(magnitude), np.inf)
        self.kernel.refit_target(self.state, self.edges, slot, node, candidates, xs, penalties)
        return coefficients

    def highest(self, allowed: np.ndarray | None) -> tuple[int, int, int] | None:
        """The first highest-scoring kept edge (among ``allowed``), ``None`` if every score
        is ``-inf``."""
        kernel = self.kernel
        mask = self.no_mask if allowed is None else allowed
        while True:
            outcome, edge, stop, tied = kernel.select_edge(
                self.state, self.edges, self.psi, self.k, mask, allowed is not None
            )
            if outcome == kernel.EDGE:
                return edge
            if outcome == kernel.NO_EDGE:
                return None
            self._tree_terms(*edge, tied)
            kernel.finish_block(self.state, self.edges, *edge, stop)

    def _tree_terms(self, slot: int, source: int, target: int, rows: np.ndarray) -> None:
        """The terms of the ``rows`` whose neighbours tie, from a KD-tree, into the scratch."""
        state = self.state
        pair = state.pairs[slot, target]
        low, high = state.offsets[pair], state.offsets[pair + 1]
        x_ordered, y_ordered = state.x_ordered[low:high], state.sorted_columns[source, low:high]
        xs, ys = x_ordered[state.rank[low:high]], state.columns[source, low:high]
        tree = cKDTree(np.column_stack([xs, ys]))
        state.scratch[rows] = tree_terms(tree, xs, ys, x_ordered, y_ordered, self.psi, self.k, rows)


class ExactScores:
    """Edge scores given in full by ``scorer(slot, node, candidates) -> (weights, scores)``
    (as :func:`population_subgraphs`), for :func:`_delete_until_acyclic`."""

    def __init__(self, shape: tuple[int, int, int], scorer: EdgeScorer) -> None:
        self.scorer = scorer
        self.key = np.full(shape, -np.inf)

    def refresh(self, slot: int, node: int, candidates: np.ndarray) -> np.ndarray:
        weights, scores = self.scorer(slot, node, candidates)
        self.key[slot][:, node] = -np.inf
        self.key[slot][candidates, node] = scores
        return weights

    def highest(self, allowed: np.ndarray | None) -> tuple[int, int, int] | None:
        pool = self.key if allowed is None else np.where(allowed, self.key, -np.inf)
        flat = int(np.argmax(pool))
        if pool.flat[flat] == -np.inf:
            return None
        return tuple(int(i) for i in np.unravel_index(flat, pool.shape))


#: ``(slot, node, candidates) -> (weights, scores)``: the least-squares weights of
#: ``candidates -> node`` in the mode of ``slot`` and their edge scores (eq. 25).
EdgeScorer = Callable[[int, int, np.ndarray], tuple[np.ndarray, np.ndarray]]


def learn_subgraphs(
    data: SubgraphData,
    mode: int,
    k: int = 5,
    weight: float = 1.0,
    rng: RNGLike = None,
    nodes: np.ndarray | None = None,
    cycle_edges_only: bool = False,
) -> CSLResult:
    """CSL (Algorithm 1) on the samples of every node in ``mode`` (0 -> B_hat, 1 -> B_hat*).

    Parameters
    ----------
    data: the sub-graph data; every learned node needs more than ``max(N - 1, k)`` samples
        in ``mode`` (the first fit uses all ``N - 1`` candidates, KSG needs ``n > k``).
    mode: 0 (observational columns) or 1 (interventional columns).
    k: KSG neighbours.
    weight: ``w`` in eq. 25; 0 gives CSL-nw.
    rng: source of the KSG tie-breaking jitter.
    nodes: the nodes whose column is learned (default: all); the others keep an empty
        column, as the interventional mechanism of a node that no arm intervenes on.
    cycle_edges_only: delete the highest-scoring edge among those on a directed cycle
        only (same strongly connected component), not among all edges as printed: an edge
        on no cycle cannot make the graph acyclic, and deleting such edges prunes large
        graphs far past their first DAG (at N = 50, 21 edges kept of 78 true).
    """
    if mode not in (0, 1):
        raise ValueError(f"mode must be 0 or 1, got {mode}")
    (result,) = _prune(data, (mode,), (nodes,), k, weight, as_generator(rng), cycle_edges_only)
    return result


def learn_joint_subgraphs(
    data: SubgraphData,
    k: int = 5,
    weight: float = 1.0,
    rng: RNGLike = None,
    nodes: tuple[np.ndarray | None, np.ndarray | None] = (None, None),
    cycle_edges_only: bool = False,
) -> tuple[CSLResult, CSLResult]:
    """CSL on both modes at once with one causal order (decisions: csl-ucb A8(b)).

    As :func:`learn_subgraphs`, but the highest-scoring edge of either mode is deleted until
    the union of the two graphs is a DAG: soft interventions change a node's mechanism, not
    the order of the nodes, so ``B`` and ``B*`` share a topological order, and a mixture
    ``B_a`` of the two is acyclic for every arm. ``nodes`` lists the learned nodes per mode;
    ``cycle_edges_only`` as in :func:`learn_subgraphs`.
    """
    return _prune(data, (0, 1), nodes, k, weight, as_generator(rng), cycle_edges_only)


def _learned_columns(n: int, chosen: np.ndarray | None) -> np.ndarray:
    """The sorted learned nodes (all by default), checked to lie in ``0..n-1``."""
    learned = np.arange(n) if chosen is None else np.unique(np.asarray(chosen, dtype=np.intp))
    if learned.size and (learned[0] < 0 or learned[-1] >= n):
        raise ValueError(f"nodes must lie in 0..{n - 1}, got {chosen}")
    return learned


def _check_weight(weight: float) -> None:
    if not weight >= 0:
        raise ValueError(f"weight must be non-negative, got {weight}")


def _prune(
    data: SubgraphData,
    modes: tuple[int, ...],
    nodes: tuple[np.ndarray | None, ...],
    k: int,
    weight: float,
    generator: np.random.Generator,
    cycle_edges_only: bool = False,
) -> tuple[CSLResult, ...]:
    """Algorithm 1 on the samples of the given modes: checks that every learned node has
    the samples CSL needs, then :func:`_delete_until_acyclic` with KSG edge scores."""
    _check_weight(weight)
    n = data.n_nodes
    needed = max(n - 1, k) + 1
    if data.n_max is not None and data.n_max < needed:
        raise ValueError(f"n_max = {data.n_max} is below the {needed} samples CSL needs")
    columns = []
    for mode, chosen in zip(modes, nodes, strict=True):
        learned = _learned_columns(n, chosen)
        counts = data.counts[learned, mode]
        if counts.size and counts.min() < needed:
            node = int(learned[np.argmin(counts)])
            raise ValueError(
                f"CSL needs at least {needed} samples of every learned node in mode {mode}; "
                f"node {node} has {data.counts[node, mode]}"
            )
        columns.append(learned)

    scores = KSGEdgeScores(data, modes, columns, k, weight, generator)
    return _delete_until_acyclic(n, columns, scores, cycle_edges_only)


def _find_cycle(union: np.ndarray) -> set[tuple[int, int]] | None:
    """The edges of one directed cycle of ``union`` (no self-loops), or ``None`` if acyclic.

    A 2-cycle if there is one; otherwise a walk inside a strongly connected component of
    more than one node (every such node has a successor in its component) until it
    repeats a node.
    """
    both = union & union.T
    if both.any():
        u, v = np.unravel_index(int(np.argmax(both)), both.shape)
        return {(int(u), int(v)), (int(v), int(u))}
    count, labels = connected_components(union, directed=True, connection="strong")
    if count == union.shape[0]:
        return None
    component = int(np.argmax(np.bincount(labels) > 1))
    inside = labels == component
    node, seen, path = int(np.argmax(inside)), {}, []
    while node not in seen:
        seen[node] = len(path)
        path.append(node)
        node = int(np.argmax(union[node] & inside))
    cycle = [*path[seen[node] :], node]
    return set(zip(cycle[:-1], cycle[1:], strict=True))


def _delete_until_acyclic(
    n: int,
    columns: list[np.ndarray],
    scores: KSGEdgeScores | ExactScores,
    cycle_edges_only: bool,
) -> tuple[CSLResult, ...]:
    """Algorithm 1's loop, one graph per entry of ``columns`` (the learned nodes of a mode):
    complete graphs on the learned columns, then delete the highest-scoring edge of any
    graph until their union is a DAG, refitting only the edge's target.

    ``scores`` refits a node (replacing the scores of all its edges, so a deleted edge
    leaves the selection with the refit of its target) and finds the first highest-scoring
    edge (lazily, for :class:`KSGEdgeScores`: the same edge as scoring every edge after every
    refit).
    Acyclicity: a witness cycle of the union is kept; while all its edges remain the
    union stays cyclic, and a new witness (or proof of acyclicity) is sought only when a
    deletion removes one of them from the union.
    """
    adjacency = np.zeros((len(columns), n, n), dtype=bool)
    for slot, learned in enumerate(columns):
        adjacency[slot][:, learned] = True
        adjacency[slot][np.arange(n), np.arange(n)] = False
    weights = np.zeros(adjacency.shape)

    def refresh(slot: int, node: int) -> None:
        candidates = np.flatnonzero(adjacency[slot][:, node])
        weights[slot][:, node] = 0.0
        weights[slot][candidates, node] = scores.refresh(slot, node, candidates)

    for slot in range(len(columns)):
        for node in np.flatnonzero(adjacency[slot].any(axis=0)):
            refresh(slot, int(node))
    union = adjacency.any(axis=0)
    witness = _find_cycle(union)
    while witness is not None:
        allowed = None
        if cycle_edges_only:
            _, component = connected_components(union, directed=True, connection="strong")
            allowed = adjacency & (component[:, None] == component[None, :])
        edge = scores.highest(allowed)  # each pass removes one edge of one mode
        if edge is None:  # every candidate at -inf: the first, as argmax
            flat = int(np.flatnonzero(adjacency if allowed is None else allowed)[0])
            edge = tuple(int(i) for i in np.unravel_index(flat, adjacency.shape))
        slot, source, target = edge
        adjacency[slot, source, target] = False
        if not adjacency[:, source, target].any():
            union[source, target] = False
            if (source, target) in witness:
                witness = _find_cycle(union)
        refresh(slot, target)
    return tuple(
        CSLResult(adjacency=adjacency[slot], weights=weights[slot]) for slot in range(len(columns))
    )


def population_subgraphs(
    weights: np.ndarray,
    noise_mean: np.ndarray,
    noise_variance: np.ndarray,
    weight: float = 1.0,
    cycle_edges_only: bool = False,
) -> CSLResult:
    """CSL (Algorithm 1) on infinitely many observational samples of a linear-Gaussian SEM:
    what :func:`learn_graph` converges to, with no estimation error left.

    ``X = (I - B^T)^{-1} eps`` with ``eps ~ N(nu, diag(noise_variance))`` (``B = weights``,
    ``B[j, i]``: edge ``j -> i``) has mean ``mu`` and covariance ``Sigma``. The least squares of
    ``z = x_i - nu_i`` on ``x_C`` without intercept (A2) is ``b = E[x_C x_C^T]^{-1} E[x_C z]``;
    the residual ``r = z - b^T x_C`` is Gaussian with ``E[r x_C] = 0``, so
    ``Cov(r, x_j) = -E[r] mu_j`` and eq. 25's mutual information is
    ``I(r; x_j) = -log(1 - corr(r, x_j)^2) / 2``, exactly. It is zero in the true direction
    (``r`` is the centred noise) and can be positive in the wrong one only through the known,
    non-zero noise means. Deterministic: ties are broken by the first edge in row-major order.
    """
    weights = np.asarray(weights, dtype=float)
    n = weights.shape[0]
    if weights.shape != (n, n):
        raise ValueError(f"weights must be square, got shape {weights.shape}")
    noise_mean = np.broadcast_to(np.asarray(noise_mean, dtype=float), (n,))
    noise_variance = np.broadcast_to(np.asarray(noise_variance, dtype=float), (n,))
    if not np.all(noise_variance > 0):
        raise ValueError("noise_variance must be positive")
    _check_weight(weight)
    transfer = transfer_matrix(weights)
    mean = transfer @ noise_mean
    covariance = transfer @ (noise_variance[:, None] * transfer.T)
    variance = np.diag(covariance)
    second = covariance + np.outer(mean, mean)  # E[x x^T]

    def scorer(_: int, node: int, candidates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        cross = second[candidates, node] - mean[candidates] * noise_mean[node]  # E[x_C z]
        block = second[np.ix_(candidates, candidates)]
        b = np.linalg.solve(block, cross)
        residual_mean = mean[node] - noise_mean[node] - b @ mean[candidates]
        z_second = second[node, node] - 2 * noise_mean[node] * mean[node] + noise_mean[node] ** 2
        residual_variance = z_second - 2 * b @ cross + b @ block @ b - residual_mean**2
        correlation2 = (residual_mean * mean[candidates]) ** 2 / (
            max(residual_variance, 1e-300) * variance[candidates]
        )
        information = -0.5 * np.log1p(-np.minimum(correlation2, 1 - 1e-15))
        if weight == 0:
            return b, information
        with np.errstate(divide="ignore"):
            penalty = -weight * np.log(np.abs(b))
        return b, information + penalty

    exact = ExactScores((1, n, n), scorer)
    (result,) = _delete_until_acyclic(n, [np.arange(n)], exact, cycle_edges_only)
    return result


def learn_both_modes(
    data: SubgraphData, k: int = 5, weight: float = 1.0, rng: RNGLike = None
) -> tuple[CSLResult, CSLResult]:
    """CSL for mode 0 and mode 1: the results for ``B_hat`` and ``B_hat*``."""
    generator = as_generator(rng)
    return (
        learn_subgraphs(data, 0, k=k, weight=weight, rng=generator),
        learn_subgraphs(data, 1, k=k, weight=weight, rng=generator),
    )


def learn_graph(
    x: np.ndarray,
    noise_mean: np.ndarray | float,
    k: int = 5,
    weight: float = 1.0,
    rng: RNGLike = None,
) -> CSLResult:
    """CSL on purely observational samples ``x`` (T, N) (graph identification;
    decisions: csl-ucb A9)."""
    x = np.asarray(x, dtype=float)
    if x.ndim != 2:
        raise ValueError(f"x must have shape (T, N), got {x.shape}")
    data = SubgraphData(x.shape[1], noise_mean)
    data.extend(x, np.zeros(x.shape, dtype=bool))
    return learn_subgraphs(data, 0, k=k, weight=weight, rng=rng)
