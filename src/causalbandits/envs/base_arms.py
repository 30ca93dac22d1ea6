"""Base-arm laws of the nonlinear semi-bandit (SSEM-UCB paper, Sec. V), per replicate and arm.

Each law maps one uniform per arm and round to the base-arm signal ``b`` by its quantile
function (common random numbers: the draw does not depend on the action). Parameters have
shape ``(R, N)`` (one instance per replicate).

- :class:`NormalArms`: trial 1-2's normal arms, after one global affine map per instance that
  sends ``[min(mu - 3 sigma), max(mu + 3 sigma)]`` to ``[0, 1]`` and a clip to ``[0, 1]``
  ("rescaled to be supported almost entirely on [0,1]"; decisions: ssem-ucb 1).
- :class:`ArcsineArms`: trial 3's arcsine arms on ``[mu - sqrt(2) sigma, mu + sqrt(2) sigma]``.
- :class:`EmpiricalArms`: resampling of observed values (the train-delay simulator).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from scipy.special import ndtri


class BaseArmLaw(Protocol):
    """What the environment needs of a base-arm law."""

    def quantile(self, uniforms: np.ndarray) -> np.ndarray:
        """Signals ``b`` from uniforms ``(R, ..., N)``."""

    @property
    def support(self) -> tuple[float, float]:
        """An interval holding every signal of every arm."""


def _parameters(means: np.ndarray, sds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mu, sigma = np.atleast_2d(np.asarray(means, dtype=float)), np.atleast_2d(sds).astype(float)
    if mu.shape != sigma.shape or mu.ndim != 2:
        raise ValueError(f"means and sds must have one shape (R, N), got {mu.shape}, {sigma.shape}")
    if not (np.all(np.isfinite(mu)) and np.all(np.isfinite(sigma))):
        raise ValueError("means and standard deviations must be finite")
    if np.any(sigma <= 0):
        raise ValueError("standard deviations must be > 0")
    return mu, sigma


def _per_arm(parameter: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    """``(R, N)`` parameters broadcast against uniforms ``(R, ..., N)``."""
    return parameter.reshape(parameter.shape[0], *([1] * (uniforms.ndim - 2)), -1)


@dataclass(frozen=True)
class MeanSdArms:
    """A law given by per-replicate, per-arm means and standard deviations ``(R, N)``."""

    means: np.ndarray
    sds: np.ndarray

    def __post_init__(self) -> None:
        mu, sigma = _parameters(self.means, self.sds)
        object.__setattr__(self, "means", mu)
        object.__setattr__(self, "sds", sigma)


@dataclass(frozen=True)
class NormalArms(MeanSdArms):
    """``b = clip(mu + sigma Phi^{-1}(U), 0, 1)`` with ``(mu, sigma)`` already rescaled."""

    @classmethod
    def rescaled(cls, means: np.ndarray, sds: np.ndarray, spread: float = 3.0) -> NormalArms:
        """The global affine map of each instance (row) sending ``[min(mu - spread sigma),
        max(mu + spread sigma)]`` to ``[0, 1]``, applied to the means and sds."""
        mu, sigma = _parameters(means, sds)
        low = (mu - spread * sigma).min(axis=1, keepdims=True)
        high = (mu + spread * sigma).max(axis=1, keepdims=True)
        return cls((mu - low) / (high - low), sigma / (high - low))

    @property
    def support(self) -> tuple[float, float]:
        return (0.0, 1.0)

    def quantile(self, uniforms: np.ndarray) -> np.ndarray:
        u = np.clip(uniforms, 1e-16, 1 - 1e-16)
        values = _per_arm(self.means, u) + _per_arm(self.sds, u) * ndtri(u)
        return np.clip(values, 0.0, 1.0)


@dataclass(frozen=True)
class ArcsineArms(MeanSdArms):
    """The arcsine law on ``[l, u] = mu -+ sqrt(2) sigma`` (mean ``mu``, sd ``sigma``):
    ``b = l + (u - l) sin^2(pi U / 2)``."""

    @property
    def support(self) -> tuple[float, float]:
        half = np.sqrt(2) * self.sds
        return float((self.means - half).min()), float((self.means + half).max())

    def quantile(self, uniforms: np.ndarray) -> np.ndarray:
        low = _per_arm(self.means - np.sqrt(2) * self.sds, uniforms)
        width = _per_arm(2 * np.sqrt(2) * self.sds, uniforms)
        return low + width * np.sin(np.pi * uniforms / 2) ** 2


@dataclass(frozen=True)
class EmpiricalArms:
    """Resampling: arm ``i`` draws uniformly among ``values[i]`` (one instance, shared by the
    replicates); the quantile is the ``floor(U n_i)``-th smallest value."""

    values: Sequence[np.ndarray]

    def __post_init__(self) -> None:
        arms = [np.sort(np.asarray(v, dtype=float).reshape(-1)) for v in self.values]
        if not arms or any(v.size == 0 for v in arms):
            raise ValueError("every arm needs at least one observed value")
        if not all(np.all(np.isfinite(v)) for v in arms):
            raise ValueError("observed values must be finite")
        object.__setattr__(self, "values", tuple(arms))

    @property
    def support(self) -> tuple[float, float]:
        return min(float(v[0]) for v in self.values), max(float(v[-1]) for v in self.values)

    def quantile(self, uniforms: np.ndarray) -> np.ndarray:
        if uniforms.shape[-1] != len(self.values):
            raise ValueError(f"need {len(self.values)} arms, got {uniforms.shape[-1]}")
        out = np.empty(uniforms.shape)
        for i, values in enumerate(self.values):
            index = np.minimum((uniforms[..., i] * values.size).astype(np.intp), values.size - 1)
            out[..., i] = values[index]
        return out
