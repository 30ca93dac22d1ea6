"""Exogenous noise models with a known mean (what the learner is told)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


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


NoiseModel = UniformNoise | GaussianNoise
