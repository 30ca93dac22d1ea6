"""Exogenous noise models with a known mean (what the learner is told)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: Tolerance on the sum of mixture weights (``|sum w - 1| <= WEIGHT_TOLERANCE``).
WEIGHT_TOLERANCE = 1e-9


def _gauss_hermite(order: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights of ``E f(Z) ~ sum_j w_j f(z_j)`` for ``Z ~ N(0, 1)`` (exact for
    polynomials of degree ``< 2 order``)."""
    if int(order) != order or order < 1:
        raise ValueError(f"the quadrature order must be a positive integer, got {order}")
    nodes, weights = np.polynomial.hermite.hermgauss(int(order))
    return np.sqrt(2.0) * nodes, weights / np.sqrt(np.pi)


@dataclass(frozen=True)
class UniformNoise:
    """Independent ``eps_i ~ Uniform[low_i, high_i]`` (the Robust-LCB paper uses [0, 2])."""

    low: np.ndarray
    high: np.ndarray

    def __post_init__(self) -> None:
        low, high = np.broadcast_arrays(np.atleast_1d(self.low), np.atleast_1d(self.high))
        if np.any(high <= low) or not (np.all(np.isfinite(low)) and np.all(np.isfinite(high))):
            raise ValueError("uniform noise needs finite bounds with low < high")
        object.__setattr__(self, "low", np.asarray(low, dtype=float))
        object.__setattr__(self, "high", np.asarray(high, dtype=float))

    @classmethod
    def iid(cls, n_nodes: int, low: float = 0.0, high: float = 2.0) -> UniformNoise:
        return cls(np.full(n_nodes, low), np.full(n_nodes, high))

    @property
    def n_nodes(self) -> int:
        return self.low.size

    @property
    def mean(self) -> np.ndarray:
        return (self.low + self.high) / 2

    @property
    def variance(self) -> np.ndarray:
        return (self.high - self.low) ** 2 / 12

    @property
    def box(self) -> tuple[np.ndarray, np.ndarray]:
        """Element-wise support ``(low, high)``."""
        return self.low, self.high

    def sample(self, rng: np.random.Generator, size: tuple[int, ...]) -> np.ndarray:
        """Draws of shape ``(*size, n_nodes)``."""
        return self.low + (self.high - self.low) * rng.random((*size, self.n_nodes))


@dataclass(frozen=True)
class GaussianNoise:
    """Independent ``eps_i ~ N(mean_i, std_i^2)`` (unbounded support)."""

    loc: np.ndarray
    scale: np.ndarray

    def __post_init__(self) -> None:
        loc, scale = np.broadcast_arrays(np.atleast_1d(self.loc), np.atleast_1d(self.scale))
        if np.any(scale <= 0) or not np.all(np.isfinite(loc)):
            raise ValueError("gaussian noise needs a finite mean and a positive scale")
        object.__setattr__(self, "loc", np.asarray(loc, dtype=float))
        object.__setattr__(self, "scale", np.asarray(scale, dtype=float))

    @classmethod
    def iid(cls, n_nodes: int, loc: float = 0.0, scale: float = 1.0) -> GaussianNoise:
        return cls(np.full(n_nodes, loc), np.full(n_nodes, scale))

    @property
    def n_nodes(self) -> int:
        return self.loc.size

    @property
    def mean(self) -> np.ndarray:
        return self.loc

    @property
    def variance(self) -> np.ndarray:
        return self.scale**2

    @property
    def box(self) -> tuple[np.ndarray, np.ndarray]:
        """The 4-sigma box: bounds derived from it hold with high probability only."""
        return self.loc - 4 * self.scale, self.loc + 4 * self.scale

    def sample(self, rng: np.random.Generator, size: tuple[int, ...]) -> np.ndarray:
        return self.loc + self.scale * rng.standard_normal((*size, self.n_nodes))

    def quadrature(self, order: int = 64) -> tuple[np.ndarray, np.ndarray]:
        """Gauss-Hermite rule per node: nodes and weights ``(n_nodes, order)`` with
        ``E f(eps_i) ~ sum_j weights[i, j] f(nodes[i, j])``."""
        z, w = _gauss_hermite(order)
        nodes = self.loc[:, None] + self.scale[:, None] * z
        return nodes, np.broadcast_to(w, nodes.shape).copy()


@dataclass(frozen=True)
class MixtureNoise:
    """Independent Gaussian-mixture noise ``eps_i ~ sum_k w_ik N(loc_ik, scale_ik^2)``.

    The exogenous distribution of the EXCBO experiments (paper eq. 11) is the two-component
    case built by :meth:`eq11`. ``scale`` holds standard deviations.

    Parameters
    ----------
    weights:
        ``(K,)`` (shared by every node) or ``(n_nodes, K)``; non-negative, each row summing to
        one within :data:`WEIGHT_TOLERANCE`.
    loc, scale:
        ``(n_nodes, K)`` component means and (positive) standard deviations.
    """

    weights: np.ndarray
    loc: np.ndarray
    scale: np.ndarray

    def __post_init__(self) -> None:
        loc = np.asarray(self.loc, dtype=float)
        scale = np.asarray(self.scale, dtype=float)
        weights = np.asarray(self.weights, dtype=float)
        if loc.ndim != 2 or loc.shape != scale.shape or loc.shape[1] < 1:
            raise ValueError(
                "mixture noise needs loc and scale of one shape (n_nodes, K), got "
                f"{loc.shape} and {scale.shape}"
            )
        if weights.ndim == 1:
            weights = np.broadcast_to(weights, loc.shape)
        if weights.shape != loc.shape:
            raise ValueError(
                f"mixture weights must have shape ({loc.shape[1]},) or {loc.shape}, "
                f"got {weights.shape}"
            )
        if not (np.all(np.isfinite(loc)) and np.all(np.isfinite(weights))):
            raise ValueError("mixture noise needs finite means and weights")
        if not np.all((scale > 0) & np.isfinite(scale)):
            raise ValueError("mixture noise needs positive, finite component scales")
        if np.any(weights < 0):
            raise ValueError(f"mixture weights must be non-negative, got {weights.tolist()}")
        if np.any(np.abs(weights.sum(axis=1) - 1) > WEIGHT_TOLERANCE):
            raise ValueError(f"mixture weights must sum to 1, got sums {weights.sum(axis=1)}")
        for name, value in (("weights", weights), ("loc", loc), ("scale", scale)):
            value = np.array(value)
            value.setflags(write=False)
            object.__setattr__(self, name, value)

    @classmethod
    def eq11(
        cls,
        n_nodes: int,
        sigma: float,
        weights: Sequence[float] = (0.5, 0.5),
        means: Sequence[float] | None = None,
        scales: Sequence[float] = (1.0, 1.0),
    ) -> MixtureNoise:
        """Paper eq. 11 at every node: ``p(U) = w_1 N(mu_1, (c_1 sigma)^2) + w_2 N(mu_2,
        (c_2 sigma)^2)`` with ``sigma`` a standard deviation (decisions: excbo 1).

        The paper gives no ``w``, ``mu`` or ``c``; the defaults (decisions: excbo 1) are
        ``w = (1/2, 1/2)``, ``mu = (-2 sigma, +2 sigma)`` (zero mean, clearly
        bimodal), ``c = (1, 1)``. ``means`` are absolute (not in units of ``sigma``);
        ``scales`` are the factors ``c_k``.
        """
        if not (np.isfinite(sigma) and sigma > 0):
            raise ValueError(f"the noise level sigma must be positive and finite, got {sigma}")
        if int(n_nodes) != n_nodes or n_nodes < 1:
            raise ValueError(f"n_nodes must be a positive integer, got {n_nodes}")
        means = (-2.0 * sigma, 2.0 * sigma) if means is None else means
        if not len(weights) == len(means) == len(scales):
            raise ValueError(
                f"got {len(weights)} weights, {len(means)} means and {len(scales)} scales; "
                "need one of each per component"
            )
        loc = np.tile(np.asarray(means, dtype=float), (int(n_nodes), 1))
        scale = np.tile(sigma * np.asarray(scales, dtype=float), (int(n_nodes), 1))
        return cls(np.asarray(weights, dtype=float), loc, scale)

    @property
    def n_nodes(self) -> int:
        return self.loc.shape[0]

    @property
    def mean(self) -> np.ndarray:
        return (self.weights * self.loc).sum(axis=1)

    @property
    def variance(self) -> np.ndarray:
        second = (self.weights * (self.scale**2 + self.loc**2)).sum(axis=1)
        return second - self.mean**2

    @property
    def box(self) -> tuple[np.ndarray, np.ndarray]:
        """The union of the components' 4-sigma boxes (high probability only, as for
        :class:`GaussianNoise`)."""
        return (self.loc - 4 * self.scale).min(axis=1), (self.loc + 4 * self.scale).max(axis=1)

    def sample(self, rng: np.random.Generator, size: tuple[int, ...]) -> np.ndarray:
        """Draws of shape ``(*size, n_nodes)``: a component per draw, then its Gaussian."""
        shape = (*size, self.n_nodes)
        inner = np.cumsum(self.weights, axis=1)[:, :-1]
        component = (rng.random(shape)[..., None] >= inner).sum(axis=-1)
        nodes = np.arange(self.n_nodes)
        return self.loc[nodes, component] + self.scale[nodes, component] * rng.standard_normal(
            shape
        )

    def pdf(self, u: np.ndarray) -> np.ndarray:
        """The density of each node's noise at ``u`` ``(..., n_nodes)``."""
        z = (np.asarray(u, dtype=float)[..., None] - self.loc) / self.scale
        return (self.weights * np.exp(-0.5 * z**2) / (np.sqrt(2 * np.pi) * self.scale)).sum(-1)

    def quadrature(self, order: int = 64) -> tuple[np.ndarray, np.ndarray]:
        """A mixture of Gauss-Hermite rules: nodes and weights ``(n_nodes, K * order)`` with
        ``E f(eps_i) ~ sum_j weights[i, j] f(nodes[i, j])``."""
        z, w = _gauss_hermite(order)
        nodes = self.loc[:, :, None] + self.scale[:, :, None] * z
        weights = self.weights[:, :, None] * w
        return nodes.reshape(self.n_nodes, -1), weights.reshape(self.n_nodes, -1)


NoiseModel = UniformNoise | GaussianNoise | MixtureNoise


def same_noise(first: object, other: object) -> bool:
    """Whether two noise laws are the same: same type and equal parameters."""
    if type(first) is not type(other):
        return False
    return all(
        np.array_equal(getattr(first, f.name), getattr(other, f.name))
        for f in dataclasses.fields(first)
    )
