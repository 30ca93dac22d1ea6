"""Additively separable nonlinear SEMs over a dictionary (SSEM-UCB paper, Sec. II, eq. 2).

``y = F(y) + u`` with ``F(y)[i] = sum_{j != i} sum_k W[i, j, k] phi_k(y[j])``: ``W[i, j, k]`` is
the coefficient of basis function ``k`` on the edge ``j -> i`` (the paper's orientation, as
NDC-SEM's ``A[i, j]``: row ``i`` is the node the edge enters). In the paper's DAG convention
``W`` is strictly upper triangular in ``(i, j)``: node ``i`` depends on higher-indexed nodes and
node ``N - 1`` is a root, so one backward sweep ``i = N-1, ..., 0`` solves the system. A
general graph (cycles allowed, Prop. IV.4) is solved by the fixed-point iteration
``y <- F(y) + u`` or by Newton's method on ``y - F(y) - u = 0``; both stop with
:class:`ConvergenceError` when they do not converge.

Weights carry a leading replicate axis ``(R, N, N, K)`` (one instance per replicate); inputs
are ``(R, ..., N)`` (any number of samples per replicate).
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from causalbandits.scm.basis import Dictionary

Method = Literal["auto", "backward", "fixed-point", "newton"]


class ConvergenceError(ValueError):
    """The solve of ``y = F(y) + u`` did not converge (no stable solution, or none at all)."""


def edge_support(weights: np.ndarray, tol: float = 0.0) -> np.ndarray:
    """``(..., N, N)`` booleans: edge ``j -> i`` is present when some ``|W[i, j, k]| > tol``."""
    return np.abs(np.asarray(weights)).max(axis=-1) > tol


def is_strictly_upper(support: np.ndarray) -> bool:
    """Whether every edge goes from a higher to a lower index (the paper's DAG order)."""
    return not np.any(np.tril(np.asarray(support, dtype=bool)))


class SeparableSEM:
    """``R`` dictionary SEMs ``y = F(y) + u`` (eq. 2), solved for batches of inputs.

    Parameters
    ----------
    weights: ``W`` of shape ``(R, N, N, K)`` (or ``(N, N, K)`` for one instance: ``R = 1``).
    dictionary: the ``K`` basis functions.
    method: ``"auto"`` (backward substitution when every instance is strictly upper
        triangular, else the fixed point), ``"backward"``, ``"fixed-point"`` or ``"newton"``.
    tol, max_iter: the stopping rule of the iterative solves (largest change of ``y``).
    """

    def __init__(
        self,
        weights: np.ndarray,
        dictionary: Dictionary,
        method: Method = "auto",
        tol: float = 1e-12,
        max_iter: int = 500,
    ) -> None:
        w = np.array(weights, dtype=float)
        if w.ndim == 3:
            w = w[None]
        if w.ndim != 4 or w.shape[1] != w.shape[2] or w.shape[1] < 1:
            raise ValueError(f"weights must have shape ([R,] N, N, K), got {np.shape(weights)}")
        if w.shape[3] != dictionary.size:
            raise ValueError(
                f"weights have {w.shape[3]} basis coefficients per edge, the dictionary "
                f"{dictionary.size}"
            )
        if not np.all(np.isfinite(w)):
            raise ValueError("weights must be finite")
        if np.any(np.einsum("rii...->ri...", w) != 0):
            raise ValueError("a separable SEM has no self-loops: W[i, i, :] must be 0")
        if method not in ("auto", "backward", "fixed-point", "newton"):
            raise ValueError(f"unknown solve method {method!r}")
        self.support = edge_support(w)
        self.upper = is_strictly_upper(self.support)
        if method == "backward" and not self.upper:
            raise ValueError("backward substitution needs strictly upper-triangular weights")
        self.method = ("backward" if self.upper else "fixed-point") if method == "auto" else method
        w.setflags(write=False)
        self.weights = w
        self.dictionary = dictionary
        self.tol, self.max_iter = float(tol), int(max_iter)

    @property
    def replicates(self) -> int:
        return self.weights.shape[0]

    @property
    def n_nodes(self) -> int:
        return self.weights.shape[1]

    def _flat(self, u: np.ndarray) -> np.ndarray:
        u = np.asarray(u, dtype=float)
        if u.ndim < 2 or u.shape[0] != self.replicates or u.shape[-1] != self.n_nodes:
            raise ValueError(
                f"inputs must have shape (R, ..., N) = ({self.replicates}, ..., "
                f"{self.n_nodes}), got {u.shape}"
            )
        return u.reshape(self.replicates, -1, self.n_nodes)

    def mechanisms(self, y: np.ndarray) -> np.ndarray:
        """``F(y)`` of inputs ``(R, ..., N)``."""
        flat = self._flat(y)
        out = np.einsum("rsjk,rijk->rsi", self.dictionary.evaluate(flat), self.weights)
        return out.reshape(np.shape(y))

    def jacobian(self, y: np.ndarray) -> np.ndarray:
        """``dF/dy`` at ``y`` ``(R, ..., N)``: ``(R, ..., N, N)`` with entry ``[i, j] = sum_k
        W[i, j, k] phi_k'(y[j])``."""
        flat = self._flat(y)
        slopes = self.dictionary.derivatives(flat, 1)[:, 1]  # (K, R, S, N)
        out = np.einsum("krsj,rijk->rsij", slopes, self.weights)
        return out.reshape(*np.shape(y), self.n_nodes)

    def solve(self, u: np.ndarray) -> np.ndarray:
        """``y`` with ``y = F(y) + u`` for inputs ``u`` ``(R, ..., N)``."""
        flat = self._flat(u)
        if self.method == "backward":
            y = self._backward(flat)
        elif self.method == "newton":
            y = self._newton(flat)
        else:
            y = self._fixed_point(flat)
        return y.reshape(np.shape(u))

    def _backward(self, u: np.ndarray) -> np.ndarray:
        y = np.moveaxis(u, -1, 0).copy()  # node-major (N, R, S): whole contiguous slabs
        for j in range(self.n_nodes - 1, 0, -1):  # y[j] is final once its parents (> j) are
            edges = self.weights[:, :, j]  # (R, N, K): the edges leaving j
            for k in np.flatnonzero(np.any(edges, axis=(0, 1))):  # the bases j's edges use
                phi = self.dictionary.functions[k](y[j])  # (R, S)
                for i in np.flatnonzero(np.any(edges[:, :, k], axis=0)):
                    y[i] += edges[:, i, k, None] * phi
        return np.moveaxis(y, 0, -1)

    def _fixed_point(self, u: np.ndarray) -> np.ndarray:
        y = u.copy()
        for _ in range(self.max_iter):
            new = u + self._mechanisms_flat(y)
            if not np.all(np.isfinite(new)):
                break
            change = np.abs(new - y).max(initial=0.0)
            y = new
            if change <= self.tol * max(1.0, np.abs(y).max(initial=0.0)):
                return y
        raise ConvergenceError(
            f"the fixed point y = F(y) + u did not converge in {self.max_iter} iterations: "
            "F is not a contraction on these inputs (try method='newton', or check the graph)"
        )

    def _newton(self, u: np.ndarray) -> np.ndarray:
        y = u.copy()
        eye = np.eye(self.n_nodes)
        for _ in range(self.max_iter):
            residual = y - self._mechanisms_flat(y) - u
            slopes = self.dictionary.derivatives(y, 1)[:, 1]
            jac = eye - np.einsum("krsj,rijk->rsij", slopes, self.weights)
            try:
                step = np.linalg.solve(jac, residual[..., None])[..., 0]
            except np.linalg.LinAlgError as error:
                message = f"Newton's method met a singular I - dF/dy: {error}"
                raise ConvergenceError(message) from error
            y = y - step
            if not np.all(np.isfinite(y)):
                break
            if np.abs(step).max(initial=0.0) <= self.tol * max(1.0, np.abs(y).max(initial=0.0)):
                return y
        raise ConvergenceError(
            f"Newton's method on y - F(y) - u = 0 did not converge in {self.max_iter} iterations"
        )

    def _mechanisms_flat(self, y: np.ndarray) -> np.ndarray:
        return np.einsum("rsjk,rijk->rsi", self.dictionary.evaluate(y), self.weights)

    def reward_gradient(self, u: np.ndarray) -> np.ndarray:
        """``d(1^T y)/du = 1^T (I - dF/dy)^{-1}`` at inputs ``u`` ``(R, ..., N)`` (implicit
        function theorem), same shape as ``u``."""
        y = self.solve(u)
        jac = self.jacobian(y)
        system = np.eye(self.n_nodes) - np.swapaxes(jac, -1, -2)
        ones = np.ones(np.shape(u))
        return np.linalg.solve(system, ones[..., None])[..., 0]


class ChordSEM(SeparableSEM):
    """A :class:`SeparableSEM` whose cyclic solve is the chord
    (simplified Newton) iteration about ``y = 0``: with ``J0 = dF/dy (0)`` and
    ``P = (I - J0)^{-1}``,

        y <- P (u + F(y) - J0 y),

    started at the linear solution ``P u``. The fixed points are those of ``y = F(y) + u``;
    the linear part of ``F`` is solved exactly, so the iteration contracts at the rate of
    ``P (dF/dy - J0)`` (the nonlinear remainder) instead of ``dF/dy``'s, and each sweep
    evaluates the nonlinear bases only on the nodes whose edges use them (node-major, one
    matrix product per basis), with Anderson(1) mixing. The fitted train-delay SEM needs
    about 11 sweeps to 1e-10 (27 without the mixing) where the plain fixed point needs 50 to
    80 (rate about 0.7). Same constructor and results as
    the parent (within ``tol``); when ``rho(J0) >= 1`` or the chord iteration does not
    converge in ``max_iter`` sweeps, the parent's fixed point decides (and raises
    :class:`ConvergenceError` if it fails too). Other methods
    (``"backward"``, ``"newton"``) are the parent's.
    """

    def __init__(
        self,
        weights: np.ndarray,
        dictionary: Dictionary,
        method: str = "auto",
        tol: float = 1e-12,
        max_iter: int = 500,
    ) -> None:
        super().__init__(weights, dictionary, method, tol, max_iter)  # type: ignore[arg-type]
        zero = dictionary.derivatives(np.zeros(1), 1)[:, :, 0]  # (K, 2): phi_k(0), phi_k'(0)
        probe = np.linspace(-1.0, 1.0, 7)
        remainder = dictionary.evaluate(probe) - probe[:, None] * zero[:, 1]
        curved = np.flatnonzero(np.abs(remainder).max(axis=0) > 0)
        self._slopes0 = zero[:, 1]
        jacobian0 = np.einsum("rijk,k->rij", self.weights, self._slopes0)
        eye = np.eye(self.n_nodes)
        self._chord: list[tuple[np.ndarray, list]] | None = None
        if self.method == "fixed-point" and all(
            float(np.abs(np.linalg.eigvals(j)).max(initial=0.0)) < 1 for j in jacobian0
        ):
            self._chord = []
            for r in range(self.replicates):
                groups = []
                for k in curved:
                    sources = np.flatnonzero(np.any(self.weights[r, :, :, k], axis=0))
                    if sources.size:
                        groups.append((k, sources, self.weights[r][:, sources, k]))
                self._chord.append((np.linalg.inv(eye - jacobian0[r]), groups))

    def solve(self, u: np.ndarray) -> np.ndarray:
        """``y`` with ``y = F(y) + u`` for inputs ``u`` ``(R, ..., N)``."""
        if self._chord is None:
            return super().solve(u)
        flat = self._flat(u)
        out = np.empty_like(flat)
        for r, (inverse, groups) in enumerate(self._chord):
            y = self._chord_solve(flat[r].T, inverse, groups)
            if y is None:
                return super().solve(u)
            out[r] = y.T
        return out.reshape(np.shape(u))

    def _chord_solve(self, u: np.ndarray, inverse: np.ndarray, groups: list) -> np.ndarray | None:
        """The chord iteration on node-major inputs ``(N, S)`` with Anderson(1) mixing per
        column (the secant step ``G(y) - gamma (G(y) - G(y_prev))`` with ``gamma`` minimising
        the new residual's linearisation); ``None`` if it fails. Stops, like the parent, when
        a sweep moves no value by more than ``tol * max(1, max |y|)`` and returns that
        sweep's image."""
        y = inverse @ u
        if not groups:
            return y
        functions = self.dictionary.functions
        previous: tuple[np.ndarray, np.ndarray] | None = None
        for _ in range(self.max_iter):
            pushed = u.copy()
            for k, sources, edges in groups:
                values = y[sources]
                pushed += edges @ (functions[k](values) - self._slopes0[k] * values)
            image = inverse @ pushed
            if not np.all(np.isfinite(image)):
                return None
            residual = image - y
            if np.abs(residual).max(initial=0.0) <= self.tol * max(
                1.0, np.abs(image).max(initial=0.0)
            ):
                return image
            new = image
            if previous is not None:
                change = residual - previous[1]
                square = np.einsum("ns,ns->s", change, change)
                gamma = np.einsum("ns,ns->s", change, residual) / np.where(square > 0, square, 1)
                new = image - np.where(square > 0, gamma, 0.0) * (image - previous[0])
            previous = (image, residual)
            y = new
        return None
