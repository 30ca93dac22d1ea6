"""METS: mixed-effect Thompson sampling (Aouali, Kveton, Katariya, AISTATS 2023) as the
SSEM-UCB paper runs it, "provided with the distribution type and parameter ranges of the
exogenous distributions", with "its computation tree form[ing] an SEM" (Sec. V).

Our instantiation (decisions: ssem-ucb 6), a two-level Gaussian model:

* **Base-arm means** ``beta_i ~ N(mu_0, sigma_0^2)``, the prior moment-matched to the uniform
  law on the known ``mean_range = (a, b)``: ``mu_0 = (a + b) / 2``, ``sigma_0 = (b - a) /
  sqrt(12)``. The observed ``z_i`` of a selected arm is ``beta_i`` plus noise of variance
  ``sigma_z^2 = max(sd_range)^2``, the largest base-arm variance the known range allows (a
  conservative choice: the posterior is never narrower than the data support). Conjugate
  update from the count and the sum of ``z_i`` per arm.
* **Linear SEM weights** ``W[i, :] ~ N(0, weight_sd^2 I)``, and per row ``i`` the Bayesian
  linear regression ``y[i] - z[i] = W[i, :] . y + e``, ``e ~ N(0, noise_sd^2)``, on every
  round (an unselected arm has ``z[i] = 0``, the equation still holds). Row ``i`` regresses
  on ``y[j]``, ``j != i``, or with ``upper_triangular`` on ``j > i`` only (the paper's DAG
  convention: node ``i`` depends on higher-indexed nodes). The posterior is kept as
  sufficient statistics, the precision ``I / weight_sd^2 + sum_t x x^T / noise_sd^2`` and
  ``sum_t x r / noise_sd^2`` (one rank-one term per row and round), never refitted.

Each round every replicate samples ``beta~`` and ``W~`` from its posterior, computes the total
effects ``c~ = 1^T (I - W~)^{-1}`` and plays the top-``s`` arms among those with
``c~_i beta~_i > 0`` (the exact argmax of the linear-SEM payoff ``sum_i c_i beta_i x_i``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from causalbandits.estimators.topk import top_s_mask, total_effects
from causalbandits.policies.base import options_of
from causalbandits.random import SubStream, derive, normal_stream, uniform_stream


def regressor_mask(n_arms: int, upper_triangular: bool) -> np.ndarray:
    """``M[i, j]``: whether row ``i`` regresses on ``y[j]`` (``j > i`` or ``j != i``)."""
    if upper_triangular:
        return np.triu(np.ones((n_arms, n_arms), dtype=bool), k=1)
    return ~np.eye(n_arms, dtype=bool)


@dataclass(frozen=True, kw_only=True)
class METSOptions:
    """METS's prior (module docstring; decisions: ssem-ucb 6), checked on construction."""

    #: The known range ``(a, b)`` of the base-arm means, "provided" to METS (Sec. V; trial 1:
    #: ``(0.3, 0.7)``).
    mean_range: tuple[float, float] = (0.3, 0.7)
    #: The known range of the base-arm standard deviations (trial 1: ``(0.1, 0.4)``); its
    #: upper end is the observation noise of ``z``.
    sd_range: tuple[float, float] = (0.1, 0.4)
    #: Prior standard deviation of every SEM weight.
    weight_sd: float = 1.0
    #: Noise standard deviation of the per-row regression.
    noise_sd: float = 0.1
    #: Restrict ``W`` to the known order (row ``i`` on ``j > i``); ``None``:
    #: ``problem.upper_triangular`` when the problem has it, else ``False``.
    upper_triangular: bool | None = None

    def __post_init__(self) -> None:
        low, high = (float(v) for v in self.mean_range)
        if not low < high:
            raise ValueError(f"mean_range must be an increasing pair (a, b), got {self.mean_range}")
        sd_low, sd_high = (float(v) for v in self.sd_range)
        if not 0 <= sd_low <= sd_high or sd_high <= 0:
            raise ValueError(
                f"sd_range must satisfy 0 <= low <= high, high > 0, got {self.sd_range}"
            )
        if self.weight_sd <= 0:
            raise ValueError(f"weight_sd must be positive, got {self.weight_sd}")
        if self.noise_sd <= 0:
            raise ValueError(f"noise_sd must be positive, got {self.noise_sd}")


class METS:
    """Mixed-effect Thompson sampling over a linear SEM on ``R`` replicates.

    Parameters
    ----------
    problem: ``n_arms`` (``N``), ``super_arm_size`` (``s``); ``upper_triangular`` if present.
    options: the prior (:class:`METSOptions`, default its defaults).
    changes: its fields by name, applied on top of ``options`` (e.g. ``METS(problem,
        mean_range=(0.2, 0.8))``).
    """

    #: Bench declarations (causalbandits.bench.capabilities).
    ACTS_ON = frozenset({"separable-super-arms"})

    def __init__(self, problem: Any, options: METSOptions | None = None, **changes: Any) -> None:
        self.n_arms, self.super_arm_size = int(problem.n_arms), int(problem.super_arm_size)
        if not 1 <= self.super_arm_size <= self.n_arms:
            raise ValueError(
                f"super-arm size s must lie in 1..{self.n_arms}, got {self.super_arm_size}"
            )
        self.options = options = options_of(METSOptions, options, changes)
        upper_triangular = options.upper_triangular
        if upper_triangular is None:
            upper_triangular = bool(getattr(problem, "upper_triangular", False))
        self.upper_triangular = bool(upper_triangular)
        low, high = (float(v) for v in options.mean_range)
        self.prior_mean = 0.5 * (low + high)
        self.prior_var = (high - low) ** 2 / 12.0
        self.z_var = float(options.sd_range[1]) ** 2
        self.weight_var = float(options.weight_sd) ** 2
        self.noise_var = float(options.noise_sd) ** 2
        self.mask = regressor_mask(self.n_arms, self.upper_triangular)

    def reset(self, seeds: Sequence[np.random.SeedSequence]) -> None:
        replicates, n = len(seeds), self.n_arms
        self.counts = np.zeros((replicates, n))
        self.sums = np.zeros((replicates, n))
        self.precision = np.broadcast_to(np.eye(n) / self.weight_var, (replicates, n, n, n)).copy()
        self.moment = np.zeros((replicates, n, n))
        self.ties = uniform_stream(seeds, (n,))
        # row 0: the beta draw; rows 1..N: the rows of W
        self.normals = normal_stream(derive(seeds, SubStream.POSTERIOR), (n + 1, n))

    def mean_posterior(self) -> tuple[np.ndarray, np.ndarray]:
        """Posterior means and variances of ``beta``, each ``(R, N)``."""
        precision = 1.0 / self.prior_var + self.counts / self.z_var
        mean = (self.prior_mean / self.prior_var + self.sums / self.z_var) / precision
        return mean, 1.0 / precision

    def weight_posterior(self) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean ``(R, N, N)`` of ``W`` and the Cholesky factors ``(R, N, N, N)`` of
        the per-row precisions (entries outside the regressor mask are prior only)."""
        cholesky = np.linalg.cholesky(self.precision)
        half = np.linalg.solve(cholesky, self.moment[..., None])
        mean = np.linalg.solve(np.swapaxes(cholesky, -1, -2), half)[..., 0]
        return mean * self.mask, cholesky

    def select(self) -> np.ndarray:
        """Top-``s`` of ``c~_i beta~_i > 0`` under one posterior draw per replicate."""
        normals = self.normals.next()
        mean, variance = self.mean_posterior()
        beta = mean + np.sqrt(variance) * normals[:, 0]
        w_mean, cholesky = self.weight_posterior()
        # W~[i] = mean + L^{-T} eps has covariance (L L^T)^{-1}, the row's posterior covariance
        noise = np.linalg.solve(np.swapaxes(cholesky, -1, -2), normals[:, 1:, :, None])[..., 0]
        weights = w_mean + noise * self.mask
        return top_s_mask(
            total_effects(weights) * beta, self.super_arm_size, self.ties.next(), positive_only=True
        )

    def update(self, actions: np.ndarray, feedback: Any) -> None:
        """Conjugate updates from ``z`` of the selected arms and every row's ``(y, y - z)``."""
        played = np.asarray(actions, dtype=bool)
        z = np.asarray(feedback.z, dtype=float)
        y = np.asarray(feedback.y, dtype=float)
        self.counts += played
        self.sums += np.where(played, z, 0.0)
        features = y[:, None, :] * self.mask  # (R, N rows, N regressors)
        self.precision += features[..., :, None] * features[..., None, :] / self.noise_var
        self.moment += features * (y - z)[..., None] / self.noise_var
