"""Per-(node, mode) data of the sub-graph least squares of CSL-UCB (eq. 21).

Ids (A2, A3, A7, A11) are entries of docs/decisions/csl-ucb.md.

Sub-graph ``(i, m)`` is node ``i`` with its incoming edges under mode ``m`` (0 observational,
1 intervened). Its data are the rounds in which node ``i`` was in mode ``m``; its regression
("MMSE", A2) is ordinary least squares of ``z = x_i - nu_i`` on the candidate parents, with
the known noise mean subtracted and no intercept:

    b_hat = (X_S X_S^T)^{-1} X_S z,        Phi(i, m) = sigma_i^2 (X_S X_S^T)^{-1}.

For every pair the store keeps the Gram matrix ``G = sum x x^T`` over all ``N`` nodes and
``h = sum x (x_i - nu_i)``, updated by rank-one additions, so a fit on any parent set ``S``
is ``solve(G[S, S], h[S])`` without a pass over the data. With ``n_max`` only the first
``n_max`` samples of each pair (since its last reset) count (A7).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: Eigenvalue ratio below which a Gram block counts as ill-conditioned (A2: ridge guard).
_CONDITION_FLOOR = 1e-12
#: Ridge added to an ill-conditioned block, relative to its mean eigenvalue ``trace / p``.
_RIDGE = 1e-8


class SubgraphData:
    """Rounds ``(x, modes)`` and the least-squares statistics of every (node, mode) pair.

    Parameters
    ----------
    n_nodes: ``N``.
    noise_mean: ``nu``, known (scalar or shape ``(N,)``).
    n_max: if given, only the first ``n_max`` samples of each pair since its last reset
        enter its statistics (the authors' code uses 100); ``None`` keeps all.
    """

    def __init__(
        self, n_nodes: int, noise_mean: np.ndarray | float, n_max: int | None = None
    ) -> None:
        if int(n_nodes) != n_nodes or n_nodes < 1:
            raise ValueError(f"n_nodes must be a positive integer, got {n_nodes}")
        if n_max is not None and (int(n_max) != n_max or n_max < 1):
            raise ValueError(f"n_max must be a positive integer or None, got {n_max}")
        self.n_nodes = int(n_nodes)
        self.n_max = None if n_max is None else int(n_max)
        mean = np.asarray(noise_mean, dtype=float)
        if mean.ndim > 1 or (mean.ndim == 1 and mean.size != self.n_nodes):
            raise ValueError(f"noise_mean must be a scalar or have shape ({n_nodes},)")
        if not np.all(np.isfinite(mean)):
            raise ValueError("noise_mean contains non-finite values")
        self.noise_mean = np.broadcast_to(mean, (self.n_nodes,)).copy()
        n = self.n_nodes
        self._gram = np.zeros((n, 2, n, n))
        self._cross = np.zeros((n, 2, n))
        self._counts = np.zeros((n, 2), dtype=np.int64)
        self._x = np.empty((0, n))
        self._modes = np.empty((0, n), dtype=bool)
        self._used = np.empty((0, n), dtype=bool)  # round t counts for (i, modes[t, i])
        self._rounds = 0

    @property
    def rounds(self) -> int:
        """Number of rounds added."""
        return self._rounds

    @property
    def counts(self) -> np.ndarray:
        """Samples in the statistics of each pair, shape ``(N, 2)`` (capped by ``n_max``)."""
        return self._counts.copy()

    def count(self, node: int, mode: int) -> int:
        """Samples in the statistics of pair ``(node, mode)``."""
        self._check_pair(node, mode)
        return int(self._counts[node, mode])

    def add(self, x: np.ndarray, modes: np.ndarray) -> None:
        """Add one round: the sample ``x`` (N,) and the mode of every node ``modes`` (N,).

        Each node's pair ``(i, modes[i])`` gets the rank-one updates ``G += x x^T`` and
        ``h += x (x_i - nu_i)``, unless it already holds ``n_max`` samples.
        """
        x, modes = self._check_rounds(np.asarray(x)[None], np.asarray(modes)[None])
        nodes = np.arange(self.n_nodes)
        row_modes = modes[0].astype(np.intp)
        kept = self._counts[nodes, row_modes] < self._cap
        nodes, pair_modes = nodes[kept], row_modes[kept]
        self._gram[nodes, pair_modes] += np.outer(x[0], x[0])
        self._cross[nodes, pair_modes] += (x[0, nodes] - self.noise_mean[nodes])[:, None] * x[0]
        self._counts[nodes, pair_modes] += 1
        self._store(x, modes, kept[None])

    def extend(self, x: np.ndarray, modes: np.ndarray) -> None:
        """Add ``T`` rounds in order: samples ``x`` (T, N) and modes ``modes`` (T, N).

        The same result as ``T`` calls of :meth:`add`, with one Gram update per pair.
        """
        x, modes = self._check_rounds(np.asarray(x), np.asarray(modes))
        # Position of each round in its pair's sample list; keep those below the cap.
        in_pair = np.stack([~modes, modes], axis=-1)  # (T, N, 2)
        position = self._counts + np.cumsum(in_pair, axis=0) - 1
        kept = in_pair & (position < self._cap)
        for node in range(self.n_nodes):
            for mode in (0, 1):
                rows = x[kept[:, node, mode]]
                self._gram[node, mode] += rows.T @ rows
                self._cross[node, mode] += rows.T @ (rows[:, node] - self.noise_mean[node])
        self._counts += kept.sum(axis=0)
        self._store(x, modes, kept.any(axis=-1))

    @property
    def _cap(self) -> float:
        return np.inf if self.n_max is None else self.n_max

    def _check_rounds(self, x: np.ndarray, modes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n = self.n_nodes
        if x.ndim != 2 or x.shape[1] != n or modes.shape != x.shape:
            raise ValueError(
                f"x and modes must have shape ({n},) per round, got {x.shape[1:]} and "
                f"{modes.shape[1:]}"
            )
        x = x.astype(float)
        if not np.isfinite(x).all():
            raise ValueError("x contains non-finite values (NaN or inf)")
        if not ((modes == 0) | (modes == 1)).all():
            raise ValueError("modes must contain only 0/1 or booleans")
        return x, modes.astype(bool)

    def _store(self, x: np.ndarray, modes: np.ndarray, used: np.ndarray) -> None:
        """Append rounds to the buffers, doubling their capacity when full."""
        end = self._rounds + x.shape[0]
        if end > self._x.shape[0]:
            capacity = max(end, 2 * self._x.shape[0], 64)
            for name in ("_x", "_modes", "_used"):
                old = getattr(self, name)
                grown = np.zeros((capacity, self.n_nodes), dtype=old.dtype)
                grown[: self._rounds] = old[: self._rounds]
                setattr(self, name, grown)
        self._x[self._rounds : end] = x
        self._modes[self._rounds : end] = modes
        self._used[self._rounds : end] = used
        self._rounds = end

    def reset(self, node: int, mode: int) -> None:
        """Forget the samples of pair ``(node, mode)`` (after a detected change, A11).

        Later rounds fill the pair again from zero, up to ``n_max``.
        """
        self._check_pair(node, mode)
        rows = slice(0, self._rounds)
        self._used[rows, node] &= self._modes[rows, node] != bool(mode)
        self._gram[node, mode] = 0.0
        self._cross[node, mode] = 0.0
        self._counts[node, mode] = 0

    def rounds_of(self, node: int, mode: int) -> np.ndarray:
        """Indices of the rounds in the statistics of pair ``(node, mode)``, in order."""
        self._check_pair(node, mode)
        rows = slice(0, self._rounds)
        return np.flatnonzero(self._used[rows, node] & (self._modes[rows, node] == bool(mode)))

    def samples(self, node: int, mode: int) -> tuple[np.ndarray, np.ndarray]:
        """``(X, z)``: the pair's samples (n, N) and targets ``z = x_node - nu_node`` (n,)."""
        x = self._x[self.rounds_of(node, mode)]
        return x, x[:, node] - self.noise_mean[node]

    def ols(self, node: int, mode: int, parents: Sequence[int] | np.ndarray) -> np.ndarray:
        """Least-squares weights of ``parents`` -> ``node`` in ``mode`` (A2), shape ``(p,)``.

        ``solve(G[S, S], h[S])``; an ill-conditioned block gets a ridge of
        ``1e-8 trace / p`` (A2) instead of an unstable solve.
        """
        index = self._check_parents(node, mode, parents, minimum=0)
        if index.size == 0:
            return np.zeros(0)
        gram = self._gram[node, mode][np.ix_(index, index)]
        return np.linalg.solve(_guarded(gram), self._cross[node, mode][index])

    def nested_ols(
        self, node: int, mode: int, parents: np.ndarray, conditioned: bool
    ) -> tuple[np.ndarray, bool]:
        """:meth:`ols` for pruning (CSL), without the argument checks: ``(weights, passed)``.

        ``parents`` are sorted valid indices inside a set already checked. ``conditioned``:
        a superset's block passed the ridge guard; by Cauchy interlacing, the eigenvalues of
        a principal sub-block lie between the block's extremes, so this one passes too and
        its eigenvalues are not computed. ``passed``: whether this block passed.
        """
        if parents.size == 0:
            return np.zeros(0), conditioned
        gram = self._gram[node, mode][np.ix_(parents, parents)]
        if not conditioned:
            guarded = _guarded(gram)
            conditioned = guarded is gram
            gram = guarded
        return np.linalg.solve(gram, self._cross[node, mode][parents]), conditioned

    def residuals(self, node: int, mode: int, parents: Sequence[int] | np.ndarray) -> np.ndarray:
        """``z - X_S b_hat`` over the pair's samples, shape ``(n,)`` (eq. 10 up to sign)."""
        index = self._check_parents(node, mode, parents, minimum=0)
        x, z = self.samples(node, mode)
        return z - x[:, index] @ self.ols(node, mode, index)

    def noise_variance(self, node: int, mode: int, parents: Sequence[int] | np.ndarray) -> float:
        """Unbiased residual variance ``||res||^2 / (n - p)`` (A3)."""
        index = self._check_parents(node, mode, parents, minimum=1)
        res = self.residuals(node, mode, index)
        return float(res @ res / (res.size - index.size))

    def weight_covariance(
        self,
        node: int,
        mode: int,
        parents: Sequence[int] | np.ndarray,
        noise_variance: float | None = None,
    ) -> np.ndarray:
        """``Phi(i, m) = sigma_i^2 (X_S X_S^T)^{-1}``, the covariance of the weight error.

        ``noise_variance`` is the known ``sigma_i^2``; ``None`` uses the residual estimate.
        """
        index = self._check_parents(node, mode, parents, minimum=0)
        if index.size == 0:
            return np.zeros((0, 0))
        if noise_variance is None:
            noise_variance = self.noise_variance(node, mode, index)
        elif not noise_variance > 0:
            raise ValueError(f"noise_variance must be positive, got {noise_variance}")
        gram = self._gram[node, mode][np.ix_(index, index)]
        return noise_variance * np.linalg.inv(_guarded(gram))

    def _check_pair(self, node: int, mode: int) -> None:
        if not 0 <= node < self.n_nodes:
            raise ValueError(f"node {node} is outside 0..{self.n_nodes - 1}")
        if mode not in (0, 1):
            raise ValueError(f"mode must be 0 or 1, got {mode}")

    def _check_parents(
        self, node: int, mode: int, parents: Sequence[int] | np.ndarray, minimum: int
    ) -> np.ndarray:
        """Validate a parent set; require ``n >= p + minimum`` samples of the pair."""
        self._check_pair(node, mode)
        index = np.asarray(parents, dtype=np.intp).reshape(-1)
        if np.any((index < 0) | (index >= self.n_nodes)):
            raise ValueError(f"parents {index.tolist()} has a node outside 0..{self.n_nodes - 1}")
        if np.unique(index).size != index.size or np.any(index == node):
            raise ValueError(f"parents of node {node} must be distinct and exclude {node}")
        needed = index.size + minimum
        if self.n_max is not None and self.n_max < needed:
            raise ValueError(
                f"n_max = {self.n_max} is below the {needed} samples needed for "
                f"{index.size} parents of node {node}"
            )
        have = self._counts[node, mode]
        if have < needed:
            raise ValueError(
                f"node {node} in mode {mode} has {have} samples, {needed} needed for "
                f"{index.size} parents"
            )
        return index


def _guarded(gram: np.ndarray) -> np.ndarray:
    """``gram``, plus a small ridge when its eigenvalue ratio is below the floor."""
    eigenvalues = np.linalg.eigvalsh(gram)
    if eigenvalues[0] > _CONDITION_FLOOR * eigenvalues[-1]:
        return gram
    ridge = _RIDGE * max(np.trace(gram) / gram.shape[0], np.finfo(float).tiny)
    return gram + ridge * np.eye(gram.shape[0])
