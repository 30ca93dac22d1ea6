"""Non-negative lasso of a noise-free linear SEM on sufficient statistics (NDC-SEM eq. 9).

Paper convention: ``y = A y + z`` with ``A[i, j]`` the effect of node ``j`` on node ``i`` (the
library's edge-weight matrix ``W[i, j]`` = weight of edge ``i -> j`` is ``A.T``). Eq. 9, with
the matrix "L2 norm" read as the Frobenius norm (decisions: ndc-sem 1):

    A_hat = argmin_A  ||Y - A Y - Z||_F^2 + lam * sum_ij A[i, j]
            s.t.  A >= 0,  A[i, j] = 0 off the support,

where ``Y, Z`` are the ``N x n`` matrices of the received rounds. The objective carries no
``1/(2n)`` factor: per row it equals scikit-learn's ``Lasso(positive=True,
fit_intercept=False)`` objective times ``2n`` with ``alpha = lam / (2n)`` (decisions: ndc-sem 3).

Supports: ``"dag"`` is the paper's known vertex order (strictly upper triangular, row ``i`` uses
columns ``j > i``); ``"cyclic"`` keeps only ``A[i, i] = 0`` (the Covid experiment).

The problem decouples by rows. With ``G = Y Y^T = sum y y^T`` and ``C = Y (Y - Z)^T =
sum y (y - z)^T``, row ``a = A[i, J]`` minimises ``a^T G_JJ a - 2 a^T C[J, i] + lam 1^T a`` and
cyclic projected coordinate descent updates

    a_j <- max(0, (C[j, i] - lam / 2 - sum_{k != j} G[j, k] a_k) / G[j, j]),

one column ``j`` of ``A`` for all rows and replicates at once: O(R N^3) per sweep, whatever n.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

Structure = Literal["dag", "cyclic"]


def lasso_support(n_nodes: int, structure: Structure) -> np.ndarray:
    """Boolean ``(N, N)`` mask of the free entries ``A[i, j]`` of eq. 9."""
    if structure == "dag":
        return np.triu(np.ones((n_nodes, n_nodes), dtype=bool), k=1)
    if structure == "cyclic":
        return ~np.eye(n_nodes, dtype=bool)
    raise ValueError(f"structure must be 'dag' or 'cyclic', got {structure!r}")


def nonnegative_lasso(
    gram: np.ndarray,
    cross: np.ndarray,
    lam: float | np.ndarray,
    support: np.ndarray,
    start: np.ndarray | None = None,
    tol: float = 1e-10,
    max_sweeps: int = 1000,
) -> tuple[np.ndarray, int]:
    """Solve eq. 9 for ``R`` replicates by cyclic coordinate descent; return ``(A, sweeps)``.

    ``gram`` = ``G`` and ``cross`` = ``C`` have shape ``(R, N, N)`` or ``(N, N)`` (shared by all
    replicates), ``lam`` is a scalar or ``(R,)``, ``support`` the ``(N, N)`` free entries and
    ``start`` an optional warm start ``(R, N, N)``. Sweeps stop once no entry moves by more
    than ``tol`` in a sweep, or after ``max_sweeps``.
    """
    gram = np.asarray(gram, dtype=float)
    cross = np.asarray(cross, dtype=float)
    gram, cross = (m[None] if m.ndim == 2 else m for m in (gram, cross))
    n = gram.shape[-1]
    lam = np.asarray(lam, dtype=float).reshape(-1)
    if np.any(lam < 0):
        raise ValueError("lam must be non-negative")
    support = np.asarray(support, dtype=bool)
    if support.shape != (n, n) or support.diagonal().any():
        raise ValueError(f"support must be ({n}, {n}) with a zero diagonal")
    sizes = [gram.shape[0], cross.shape[0], lam.size, 1 if start is None else len(start)]
    replicates = max(sizes)
    gram = np.broadcast_to(gram, (replicates, n, n))
    cross = np.broadcast_to(cross, (replicates, n, n))
    half_lam = np.broadcast_to(lam, (replicates,))[:, None] / 2
    if start is None:
        a = np.zeros((replicates, n, n))
    else:
        a = np.where(support, np.maximum(np.asarray(start, dtype=float), 0.0), 0.0)
        a = np.array(np.broadcast_to(a, (replicates, n, n)))
    diag = np.einsum("rjj->rj", gram)
    safe_diag = np.where(diag > 0, diag, 1.0)
    free = support.T[None] & (diag > 0)[:, :, None]  # free[r, j, i]: row i may use column j
    columns = [j for j in range(n) if support[:, j].any()]
    # Column-major copies, so that column j of A and of q = A G are contiguous (R, N) blocks
    # (a_t[j] = A[:, :, j], q_t[j] = q[:, :, j]), and the sweep-invariant pieces per column j.
    # Only the memory layout differs from the textbook loop: every entry sees the same
    # floating-point operations, so the iterates do not depend on it.
    a_t = np.ascontiguousarray(a.transpose(2, 0, 1))
    target = np.ascontiguousarray((cross - half_lam[:, :, None]).transpose(1, 0, 2))
    pivot = np.repeat(diag.T[:, :, None], n, axis=2)  # pivot[j, r, i] = G[r, j, j]
    safe_pivot = np.repeat(safe_diag.T[:, :, None], n, axis=2)
    rows = free.transpose(1, 0, 2)  # rows[j, r, i]: row i may use column j
    # gram_rows[j, k, (r, i)] = G[r, j, k]: the rank-1 update of q by column j, flattened
    gram_rows = np.repeat(gram.transpose(1, 2, 0), n, axis=2)
    step = np.empty((n, replicates * n))
    for sweep in range(1, max_sweeps + 1):
        before = a_t.copy()
        a = np.ascontiguousarray(a_t.transpose(1, 2, 0))
        q = a @ gram  # q[r, i, j] = sum_k A[i, k] G[k, j], kept current column by column
        q_t = np.ascontiguousarray(q.transpose(2, 0, 1)).reshape(n, replicates * n)
        for j in columns:
            old = a_t[j]
            num = target[j] - q_t[j].reshape(replicates, n) + old * pivot[j]
            new = np.where(rows[j], np.maximum(num, 0.0) / safe_pivot[j], 0.0)
            delta = (new - old).reshape(-1)
            a_t[j] = new
            # only the columns after j are read again in this sweep
            np.multiply(gram_rows[j, j + 1 :], delta, out=step[j + 1 :])
            q_t[j + 1 :] += step[j + 1 :]
        # every entry moves once per sweep, so this is the sweep's largest |delta|
        if np.abs(a_t - before).max(initial=0.0) <= tol:
            return np.ascontiguousarray(a_t.transpose(1, 2, 0)), sweep
    return np.ascontiguousarray(a_t.transpose(1, 2, 0)), max_sweeps


class SEMStatistics:
    """Sufficient statistics of eq. 9 per replicate: ``G = sum y y^T``, ``C = sum y (y - z)^T``.

    Adding a round costs O(N^2); ``counts`` holds the number of rounds added per replicate.
    """

    def __init__(self, replicates: int, n_nodes: int) -> None:
        self.gram = np.zeros((replicates, n_nodes, n_nodes))
        self.cross = np.zeros((replicates, n_nodes, n_nodes))
        self.counts = np.zeros(replicates, dtype=np.int64)

    def add(self, y: np.ndarray, z: np.ndarray, received: np.ndarray | None = None) -> None:
        """Add rounds ``(y, z)`` of shape ``(R, N)`` or a batch ``(R, K, N)``.

        ``received`` (``(R,)`` or ``(R, K)`` booleans) marks the rounds that really arrived;
        ``None`` means all of them.
        """
        y = np.asarray(y, dtype=float)
        z = np.asarray(z, dtype=float)
        if y.ndim == 2:
            y, z = y[:, None], z[:, None]
            received = None if received is None else np.asarray(received)[:, None]
        if y.shape != z.shape or y.shape[::2] != self.gram.shape[:2]:
            raise ValueError(f"y and z must have shape (R, [K,] N), got {y.shape}, {z.shape}")
        weight = np.ones(y.shape[:2]) if received is None else np.asarray(received, dtype=float)
        wy = weight[:, :, None] * y
        self.gram += np.einsum("rki,rkj->rij", wy, y)
        self.cross += np.einsum("rki,rkj->rij", wy, y - z)
        self.counts += np.rint(weight.sum(axis=1)).astype(np.int64)


class SEMLasso:
    """Eq. 9 refitted on growing data by warm-started coordinate descent, ``R`` replicates.

    Parameters
    ----------
    replicates, n_nodes: ``R`` and ``N``.
    lam: ``lam`` of eq. 9, a scalar or one value per replicate (e.g. a lambda grid).
    structure: ``"dag"`` (known order, strictly upper triangular) or ``"cyclic"``.
    tol, max_sweeps: stopping rule of :func:`nonnegative_lasso`.
    """

    def __init__(
        self,
        replicates: int,
        n_nodes: int,
        lam: float | np.ndarray,
        structure: Structure = "dag",
        tol: float = 1e-10,
        max_sweeps: int = 1000,
    ) -> None:
        self.lam = np.broadcast_to(np.asarray(lam, dtype=float), (replicates,)).copy()
        if np.any(self.lam < 0):
            raise ValueError("lam must be non-negative")
        self.support = lasso_support(n_nodes, structure)
        self.tol = tol
        self.max_sweeps = max_sweeps
        self.statistics = SEMStatistics(replicates, n_nodes)
        self.adjacency = np.zeros((replicates, n_nodes, n_nodes))
        self.sweeps = 0
        self._fitted_counts = self.statistics.counts.copy()

    def add(self, y: np.ndarray, z: np.ndarray, received: np.ndarray | None = None) -> None:
        """Add received rounds; see :meth:`SEMStatistics.add`."""
        self.statistics.add(y, z, received)

    def fit(self) -> np.ndarray:
        """``A_hat`` ``(R, N, N)`` on all data added so far, re-solved only if data arrived."""
        counts = self.statistics.counts
        if np.array_equal(counts, self._fitted_counts):
            return self.adjacency
        self.adjacency, self.sweeps = nonnegative_lasso(
            self.statistics.gram,
            self.statistics.cross,
            self.lam,
            self.support,
            start=self.adjacency,
            tol=self.tol,
            max_sweeps=self.max_sweeps,
        )
        self._fitted_counts = counts.copy()
        return self.adjacency
