"""An upper bound of eq. 18 that is valid for weights of any sign (issue: mixed signs).

Eq. 18 maximises the reward node's mean over every column in its confidence ellipsoid.
Greedy forward propagation (:func:`~causalbandits.estimators.propagation.propagate_means`)
is that maximum only when the path effects are non-negative. Here every node carries an
interval ``[L_i, U_i]`` that holds its mean for every choice of columns in the ellipsoids,
propagated in topological order:

    U_i = nu_i + max_{u in box} (theta_hat^T u + beta ||u||_{M^{-1}}),
    L_i = nu_i + min_{u in box} (theta_hat^T u - beta ||u||_{M^{-1}}),

with ``box = prod_j [L_j, U_j]`` over the parents. ``max_theta theta^T u`` is convex in ``u``
(and ``min_theta`` concave), so both extremes lie at a vertex of the box; the in-degree is
small, so the vertices are enumerated. A coordinate whose column entry has the same sign on
the whole ellipsoid (``|theta_hat_j| >= beta sqrt(M^{-1}_jj)``) is monotone and fixed at one
end, and a parent with ``L_j = U_j`` (roots, masked parents) needs no branching: only the
remaining coordinates are enumerated. When every entry is confidently non-negative the
only vertex left is the one of the parents' upper bounds, and the bound is greedy
propagation's value (to rounding).
"""

from __future__ import annotations

import numpy as np

from causalbandits.estimators.propagation import PropagationPlan

#: Largest number of vertex values held at once (R x classes x vertices x width floats).
BLOCK_ELEMENTS = 1 << 22


def _box_extremes(
    first: np.ndarray,
    second: np.ndarray,
    theta: np.ndarray,
    ellipsoid_inv: np.ndarray,
    beta: np.ndarray,
    ball: bool,
    max_branch: int,
) -> np.ndarray:
    """Bounds over a box of ``theta^T u +/- beta ||u||_{M^{-1}}``: slice 0 the maximum of
    ``+``, slice 1 the minimum of ``-``; coordinate ``j`` of slice ``s`` lies between
    ``first[s, ..., j]`` and ``second[s, ..., j]`` (``(2, R, C, w)`` inputs, ``(2, R, C)``
    result).

    The vertices of up to ``max_branch`` coordinates (the widest) are enumerated; any other
    coordinate sits at its centre with half-width ``h_j`` and is bounded by the triangle
    inequality, ``|theta_j| h_j + beta h_j sqrt(M^{-1}_jj)``: a valid, looser bound.
    """
    sign = np.array([1.0, -1.0])[:, None, None]
    width_of = np.abs(first - second)
    branching = np.flatnonzero(np.any(width_of > 0, axis=(0, 1, 2)))
    relaxed = np.zeros(0, dtype=np.intp)
    if branching.size > max_branch:
        order = np.argsort(-width_of[..., branching].mean(axis=(0, 1, 2)), kind="stable")
        branching, relaxed = np.sort(branching[order[:max_branch]]), branching[order[max_branch:]]
    slack = ball_slack = np.zeros((1, 1, 1, 1))
    if relaxed.size:
        second = second.copy()
        second[..., relaxed] = 0.5 * (first[..., relaxed] + second[..., relaxed])  # centres
        half = 0.5 * width_of[..., relaxed]
        diagonal = np.sqrt(np.maximum(np.diagonal(ellipsoid_inv, 0, -2, -1)[..., relaxed], 0))
        spread = np.abs(theta[..., relaxed]) + beta[..., None] * diagonal
        slack = np.sum(half * spread, axis=-1)[..., None]
        ball_slack = half.sum(axis=-1)[..., None]
    width = first.shape[-1]
    n_vertices = 1 << branching.size
    block = max(1, BLOCK_ELEMENTS // first.size)
    best = np.full(first.shape[:-1], -np.inf) * sign
    for start in range(0, n_vertices, block):
        codes = np.arange(start, min(start + block, n_vertices))
        bits = np.zeros((codes.size, width), dtype=bool)
        bits[:, branching] = (codes[:, None] >> np.arange(branching.size)) & 1
        v = np.where(bits, first[..., None, :], second[..., None, :])  # (2, R, C, V, w)
        linear = np.matmul(v, theta[..., None])[..., 0]
        quad = np.sum(np.matmul(v, ellipsoid_inv) * v, axis=-1)
        spread = beta[..., None] * np.sqrt(np.maximum(quad, 0.0)) + slack
        value = linear + sign[..., None] * spread
        if ball:  # the unit ball also caps |theta^T u| by ||u||
            norm = np.sqrt(np.sum(v * v, axis=-1)) + ball_slack
            value = np.clip(value, -norm, norm)
        best = np.stack(
            [np.maximum(best[0], value[0].max(-1)), np.minimum(best[1], value[1].min(-1))]
        )
    return best


def propagate_bounds(
    plan: PropagationPlan,
    noise_mean: np.ndarray,
    theta: np.ndarray,
    target: int,
    ellipsoid_inv: np.ndarray,
    beta: float | np.ndarray,
    ball: bool = False,
    parent_mask: np.ndarray | None = None,
    max_branch: int = 4,
) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bounds ``(R, A)`` of node ``target``'s mean under every action, valid
    for every column in its ellipsoid whatever the signs (eq. 18 for the upper one).

    Arguments as in :func:`~causalbandits.estimators.propagation.propagate_means`; ``ball``
    also intersects each ellipsoid with the unit ball (eq. 14-15); ``max_branch`` caps the
    coordinates whose box vertices are enumerated per node (the others are relaxed).
    """
    if max_branch < 0:
        raise ValueError(f"max_branch must be >= 0, got {max_branch}")
    replicates = theta.shape[0]
    n_nodes = noise_mean.size
    upper = np.empty((replicates, plan.n_slots))
    upper[:, :n_nodes] = noise_mean
    upper[:, n_nodes] = 0.0
    lower = upper.copy()
    beta = np.broadcast_to(np.reshape(beta, (-1, 1)), (replicates, 1))
    last = plan.node_position(target)
    for level in plan.levels:
        lo, hi = lower[:, level.class_parents], upper[:, level.class_parents]  # (R, C, w)
        if parent_mask is not None:
            mask = parent_mask[:, level.class_node, level.class_mode]
            lo, hi = lo * mask, hi * mask
        theta_k = theta[:, level.class_node, level.class_mode]  # (R, C, w)
        inv_k = ellipsoid_inv[:, level.class_node, level.class_mode]  # (R, C, w, w)
        spread = beta[:, :, None] * np.sqrt(np.maximum(np.diagonal(inv_k, 0, -2, -1), 0.0))
        positive, negative = theta_k - spread >= 0, theta_k + spread <= 0
        # The upper bound is increasing in u_j where theta_j >= 0 on the whole ellipsoid and
        # decreasing where theta_j <= 0; the lower bound the other way round.
        first = np.stack([np.where(negative, lo, hi), np.where(positive, lo, hi)])
        second = np.stack([np.where(positive, hi, lo), np.where(negative, hi, lo)])
        top, bottom = _box_extremes(first, second, theta_k, inv_k, beta, ball, max_branch)
        nu = noise_mean[plan.nodes[level.class_node]]
        upper[:, level.slots] = top + nu
        lower[:, level.slots] = bottom + nu
    index = plan.offsets[last] + plan.action_class[last]
    return lower[:, index], upper[:, index]
