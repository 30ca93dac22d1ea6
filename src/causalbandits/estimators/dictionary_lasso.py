"""The graph fit of SSEM-UCB (eqs. 3-4) as a per-row dictionary lasso (App. -G1), for ``R``
replicates on sufficient statistics.

Row ``i`` regresses ``u = y[i] - z[i]`` on the features ``phi_k(y[j])``, ``j != i`` (``j > i``
in the paper's DAG order), with the RKHS norm surrogated by the l1 norm:

    min_w  (1/t) sum_tau (u_tau - sum_{j,k} w_jk phi_k(y_tau[j]))^2 + lam ||w||_1.

With ``G = sum Phi Phi^T`` and ``c_i = sum Phi u_i`` this is ``w^T G w - 2 w^T c_i + t lam
||w||_1`` (up to the factor ``t``), solved by cyclic coordinate descent with soft
thresholding, warm-started, for every row and replicate at once. Edges whose fitted function is
smaller than ``edge_threshold`` on the data are removed ("edge-recognition thresholds").

``lam`` is fixed, or tuned at each fit (``target_density``) by bisection on ``log lam`` until
the number of edges is closest to ``target_density`` times the number of possible edges (the
paper tunes it "so that the empirical graphs are appropriately sparse"; decisions: ssem-ucb 2).
An edge's size is the root mean square of its fitted function over the data.
With ``debias`` the selected edges are refitted by least squares (a relaxed lasso, our choice:
the lasso's shrinkage would bias every Taylor coefficient; decisions: ssem-ucb 3).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from causalbandits.scm.basis import Dictionary
from causalbandits.validation import in_range, non_negative, optional, positive

#: Coordinate descent stops once no coefficient moves by more than this (relative; see
#: :func:`soft_threshold_lasso`) or after :data:`LASSO_SWEEPS` sweeps.
LASSO_TOL = 1e-6
LASSO_SWEEPS = 200
#: Bisection steps on ``log lam`` when ``target_density`` is set.
BISECTION_STEPS = 8


def features(y: np.ndarray, dictionary: Dictionary) -> np.ndarray:
    """``phi_k(y[j])`` flattened to ``(..., N K)`` (feature ``j K + k``)."""
    values = dictionary.evaluate(y)  # (..., N, K)
    return values.reshape(*values.shape[:-2], -1)


def row_support(n_nodes: int, n_basis: int, upper_triangular: bool) -> np.ndarray:
    """``(N, N K)`` booleans: row ``i`` may use the features of node ``j != i`` (``j > i`` in the
    paper's DAG order)."""
    parents = np.triu(np.ones((n_nodes, n_nodes), dtype=bool), k=1)
    if not upper_triangular:
        parents = ~np.eye(n_nodes, dtype=bool)
    return np.repeat(parents, n_basis, axis=1)


def soft_threshold_lasso(
    gram: np.ndarray,
    cross: np.ndarray,
    penalty: np.ndarray,
    support: np.ndarray,
    start: np.ndarray,
) -> np.ndarray:
    """``argmin_w w^T G w - 2 w^T c_i + penalty ||w||_1`` per row, by coordinate descent.

    ``gram`` ``(R, P, P)``, ``cross`` ``(R, P, N)`` (column ``i``: row ``i``'s ``c_i``),
    ``penalty`` ``(R,)``, ``support`` ``(N, P)``, ``start`` ``(R, N, P)``; returns ``(R, N, P)``.
    Sweeps (at most :data:`LASSO_SWEEPS`) stop once no coefficient moves by more than
    :data:`LASSO_TOL` times the largest ``|c|`` divided by the largest ``G[p, p]``: the fit
    only selects the edges (:class:`DictionaryLasso` refits them by least squares), so a loose
    tolerance suffices.
    """
    w = np.where(support, start, 0.0)
    target = np.swapaxes(cross, 1, 2)  # (R, N, P)
    diag = np.einsum("rpp->rp", gram)
    safe = np.where(diag > 0, diag, 1.0)
    half = penalty[:, None] / 2
    q = w @ gram  # q[r, i, p] = sum_l w[r, i, l] G[r, l, p]
    scale = np.abs(target).max(initial=0.0) / max(float(diag.max(initial=0.0)), 1e-300) + 1e-300
    columns = [p for p in range(gram.shape[1]) if support[:, p].any()]
    for _ in range(LASSO_SWEEPS):
        largest = 0.0
        for p in columns:
            free = support[:, p]
            old = w[:, :, p]
            rho = target[:, :, p] - q[:, :, p] + old * diag[:, p, None]
            new = np.sign(rho) * np.maximum(np.abs(rho) - half, 0.0) / safe[:, p, None]
            new = np.where(free & (diag[:, p, None] > 0), new, 0.0)
            delta = new - old
            w[:, :, p] = new
            q += delta[:, :, None] * gram[:, p, None, :]
            largest = max(largest, float(np.abs(delta).max()))
        if largest <= LASSO_TOL * scale:
            break
    return w


@dataclass(frozen=True, kw_only=True)
class DictionaryLassoOptions:
    """The options of the graph fit of eqs. 3-4 (:class:`DictionaryLasso`); ``lam`` and
    ``edge_threshold`` are kept as floats."""

    #: The penalty of eq. 3's l1 surrogate (App. -G1), used when ``target_density`` is
    #: ``None`` and as the first bracket centre.
    lam: float = 1e-3
    #: Tune ``lam`` at each fit so that the graph has this share of the possible edges
    #: (decisions: ssem-ucb 2; ``None``: keep ``lam``).
    target_density: float | None = None
    #: Edges ``(i, j)`` whose function has a root mean square over the data below it are
    #: removed (App. -G1's "edge-recognition thresholds"; :meth:`DictionaryLasso.edge_norms`).
    edge_threshold: float = 0.05
    #: Refit the selected edges by least squares, ridge ``1e-8`` for stability (decisions:
    #: ssem-ucb 3).
    debias: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "lam", positive("lam", self.lam))
        optional(in_range, "target_density", self.target_density, 0, 1, low_open=True)
        threshold = non_negative("edge_threshold", self.edge_threshold)
        object.__setattr__(self, "edge_threshold", threshold)


class DictionaryLasso:
    """Eq. 3 with an l1 surrogate, refitted on growing data, for ``R`` replicates.

    Parameters
    ----------
    replicates, n_nodes: ``R`` and ``N``.
    dictionary: the ``K`` basis functions of the fit.
    upper_triangular: fit only edges ``j -> i`` with ``j > i`` (a known DAG order).
    options: the penalty, its tuning, the edge threshold and the debiasing
        (:class:`DictionaryLassoOptions`).
    """

    def __init__(
        self,
        replicates: int,
        n_nodes: int,
        dictionary: Dictionary,
        upper_triangular: bool = True,
        options: DictionaryLassoOptions | None = None,
    ) -> None:
        options = DictionaryLassoOptions() if options is None else options
        self.dictionary = dictionary
        self.n_nodes, self.n_basis = int(n_nodes), dictionary.size
        n_features = self.n_nodes * self.n_basis
        self.support = row_support(self.n_nodes, self.n_basis, upper_triangular)
        self.upper_triangular = upper_triangular
        self.lam = np.full(replicates, options.lam)
        self.target_density = options.target_density
        self.edge_threshold = options.edge_threshold
        self.debias = options.debias
        self.gram = np.zeros((replicates, n_features, n_features))
        self.cross = np.zeros((replicates, n_features, self.n_nodes))
        self.counts = np.zeros(replicates, dtype=np.int64)
        self.coefficients = np.zeros((replicates, self.n_nodes, n_features))

    @property
    def weights(self) -> np.ndarray:
        """``W`` ``(R, N, N, K)`` of the last fit (:class:`~causalbandits.scm.separable.
        SeparableSEM`'s layout)."""
        shape = (len(self.coefficients), self.n_nodes, self.n_nodes, self.n_basis)
        return self.coefficients.reshape(shape)

    @property
    def possible_edges(self) -> int:
        n = self.n_nodes
        return n * (n - 1) // 2 if self.upper_triangular else n * (n - 1)

    def add(self, z: np.ndarray, y: np.ndarray) -> None:
        """Add one round ``(z, y)`` ``(R, N)`` per replicate."""
        phi = features(y, self.dictionary)
        target = y - z
        self.gram += phi[:, :, None] * phi[:, None, :]
        self.cross += phi[:, :, None] * target[:, None, :]
        self.counts += 1

    def residual(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        """``||y - F_hat(y) - z||^2`` of one round per replicate, ``(R,)``."""
        fitted = np.einsum("rnp,rp->rn", self.coefficients, features(y, self.dictionary))
        return ((y - z - fitted) ** 2).sum(axis=1)

    def edge_counts(self, coefficients: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """The number of edges of the fitted coefficients ``(count, N, N K)`` of the replicates
        ``rows``, ``(count,)``."""
        return (self.edge_norms(coefficients, rows) > self.edge_threshold).sum(axis=(1, 2))

    def edge_norms(self, coefficients: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """The size of every fitted edge function ``f_ij = sum_k w_ijk phi_k``: its root mean
        square over the data, ``sqrt(w_ij^T G_jj w_ij / t)``, ``(count, N, N)``.

        Measured on the data rather than as ``||w_ij||``, an edge's size does not depend on how
        the dictionary parametrises it: ``{v, v^2, tanh v}`` is nearly collinear on ``[0, 1]``,
        so large coefficients can cancel into a small function."""
        count, n, k = len(rows), self.n_nodes, self.n_basis
        w = coefficients.reshape(count, n, n, k)
        blocks = self.gram[rows].reshape(count, n, k, n, k)
        diagonal = np.einsum("rjkjl->rjkl", blocks)  # (count, N, K, K): G_jj per node j
        energy = np.einsum("rijk,rjkl,rijl->rij", w, diagonal, w)
        t = np.maximum(self.counts[rows], 1)[:, None, None]
        return np.sqrt(np.maximum(energy, 0.0) / t)

    def fit(self, which: np.ndarray | None = None) -> np.ndarray:
        """Refit the replicates ``which`` (booleans ``(R,)``; all by default); return
        :attr:`weights`."""
        rows = np.flatnonzero(np.ones(len(self.counts), bool) if which is None else which)
        if rows.size == 0:
            return self.weights
        gram, cross = self.gram[rows], self.cross[rows]
        t = np.maximum(self.counts[rows], 1).astype(float)
        start = self.coefficients[rows]
        if self.target_density is None:
            w = soft_threshold_lasso(gram, cross, t * self.lam[rows], self.support, start)
        else:
            w = self._tuned(rows, gram, cross, t, start)
        norms = self.edge_norms(w, rows)
        keep = np.repeat(norms > self.edge_threshold, self.n_basis, axis=2)
        w = np.where(keep, w, 0.0)
        if self.debias:
            w = self._least_squares(gram, cross, keep)
        self.coefficients[rows] = w
        return self.weights

    def _tuned(
        self,
        rows: np.ndarray,
        gram: np.ndarray,
        cross: np.ndarray,
        t: np.ndarray,
        start: np.ndarray,
    ) -> np.ndarray:
        """Bisection on ``log lam`` towards ``target_density`` of the possible edges."""
        target = self.target_density * self.possible_edges
        low = np.log(self.lam[rows]) - 4.0
        high = np.log(self.lam[rows]) + 4.0
        best = start.copy()
        best_gap = np.full(rows.size, np.inf)
        best_lam = self.lam[rows].copy()
        for _ in range(BISECTION_STEPS):
            middle = (low + high) / 2
            w = soft_threshold_lasso(gram, cross, t * np.exp(middle), self.support, best)
            count = self.edge_counts(w, rows)
            gap = np.abs(count - target)
            better = gap < best_gap
            best[better] = w[better]
            best_gap[better] = gap[better]
            best_lam[better] = np.exp(middle[better])
            too_many = count > target
            low = np.where(too_many, middle, low)
            high = np.where(too_many, high, middle)
        self.lam[rows] = best_lam
        return best

    def _least_squares(self, gram: np.ndarray, cross: np.ndarray, keep: np.ndarray) -> np.ndarray:
        """Least squares of every row on its kept features (zero elsewhere)."""
        out = np.zeros(keep.shape)
        ridge = 1e-8 * (np.einsum("rpp->r", gram) / gram.shape[1] + 1.0)
        for r in range(keep.shape[0]):
            for i in range(keep.shape[1]):
                cols = np.flatnonzero(keep[r, i])
                if cols.size:
                    system = gram[r][np.ix_(cols, cols)] + ridge[r] * np.eye(cols.size)
                    out[r, i, cols] = np.linalg.solve(system, cross[r, cols, i])
        return out
