"""Eq. 5 of the SSEM-UCB paper: one upper-triangular ``F_hat`` assembled column by column from
per-arm graph fits (Alg. 1, lines 6-9).

For every base arm ``o``, ``F_hat^(o)`` is fitted only on the rounds in which ``o`` was played.
Under the single-node excitation ``b e_o`` of a DAG in the paper's order (edges go from higher
to lower index), ``y^(o)(b) = (I - F_hat^(o))^{-1}(b e_o)`` has ``y^(o)[o] = b`` and zeros above
``o``, and column ``o`` of ``F_hat`` is defined for ``i < o`` by

    F_hat[i, o](b) = y^(o)(b)[i] - sum_{j = i+1}^{o-1} F_hat[i, j](y^(o)(b)[j])      (eq. 5)

(the paper writes ``i = o - k``, ``k = 1..o-1``), using the columns ``j < o`` defined before.

Function class of the assembled entries (Asm. IV.2): the right-hand side is a
composition of dictionary functions, not itself a dictionary member. We represent each entry
by its least-squares projection onto the fit's dictionary on an even grid of ``y[o]`` values
covering the observed range of ``y[o]`` (which may exceed ``[0, 1]``), rather than closures
(Asm. IV.2 asks for a finite-dimensional space); the assembled ``F_hat`` is then again a
dictionary SEM (jets, solves and the residual refit test apply unchanged). When every
``F_hat^(o)`` equals one DAG ``F`` in the dictionary, the compositions cancel and the entry is
exactly ``F[i, o]``, so the projection is exact up to rounding (whatever the edge functions);
when the per-arm fits disagree, the entry is a composition and the projection is its best
approximation on the grid.
"""

from __future__ import annotations

import numpy as np

from causalbandits.scm.basis import Dictionary
from causalbandits.scm.separable import SeparableSEM


def assemble_columns(
    per_arm_weights: np.ndarray,
    dictionary: Dictionary,
    observed: tuple[np.ndarray, np.ndarray],
    grid_size: int = 64,
    edge_threshold: float = 0.0,
) -> np.ndarray:
    """The upper-triangular ``F_hat`` of eq. 5, weights ``(N, N, K)``.

    Parameters
    ----------
    per_arm_weights: ``(N, N, N, K)``; ``per_arm_weights[o]`` is ``F_hat^(o)`` (weights
        ``W[i, j, k]`` of :class:`~causalbandits.scm.separable.SeparableSEM`), strictly upper
        triangular in ``(i, j)``.
    dictionary: the ``K`` basis functions of the fits, onto which the entries are projected.
    observed: ``(low, high)``, each ``(N,)``, the observed range of every node's ``y``; entry
        ``F_hat[i, o]`` is projected on ``grid_size`` even points of ``[low[o], high[o]]`` (a
        range of zero width is widened to ``[low[o], low[o] + 1]``).
    edge_threshold: assembled entries whose coefficient vector has a Euclidean norm at most this
        are set to 0 (the paper's edge-recognition threshold; 0 keeps every non-zero entry).
    """
    w = np.asarray(per_arm_weights, dtype=float)
    if w.ndim != 4 or not w.shape[0] == w.shape[1] == w.shape[2] or w.shape[0] < 1:
        raise ValueError(f"per-arm weights must have shape (N, N, N, K), got {w.shape}")
    n, k = w.shape[0], w.shape[3]
    if k != dictionary.size:
        raise ValueError(
            f"weights have {k} basis coefficients per edge, the dictionary {dictionary.size}"
        )
    low, high = (np.asarray(bound, dtype=float) for bound in observed)
    if low.shape != (n,) or high.shape != (n,):
        raise ValueError(f"low and high must have shape ({n},), got {low.shape}, {high.shape}")
    if not (np.all(np.isfinite(low)) and np.all(np.isfinite(high))) or np.any(low > high):
        raise ValueError("the observed ranges must be finite with low <= high")
    if int(grid_size) != grid_size or grid_size < k:
        raise ValueError(f"grid_size must be an integer >= K = {k}, got {grid_size}")
    if edge_threshold < 0:
        raise ValueError(f"edge_threshold must be >= 0, got {edge_threshold}")
    high = np.where(high > low, high, low + 1.0)
    out = np.zeros((n, n, k))
    for o in range(1, n):
        excited = SeparableSEM(w[o], dictionary, method="backward")
        grid = np.linspace(low[o], high[o], int(grid_size))
        inputs = np.zeros((grid.size, n))
        inputs[:, o] = grid
        y = excited.solve(inputs[None])[0]  # (G, N): y^(o)(b) on the grid
        # Columns j >= o of ``out`` are still 0, so this sums exactly over i < j < o.
        earlier = np.einsum("gjk,ijk->gi", dictionary.evaluate(y), out)
        targets = y[:, :o] - earlier[:, :o]
        coefficients = np.linalg.lstsq(dictionary.evaluate(grid), targets, rcond=None)[0]
        column = coefficients.T  # (o, K)
        keep = np.linalg.norm(column, axis=1) > edge_threshold
        out[:o, o] = np.where(keep[:, None], column, 0.0)
    return out
