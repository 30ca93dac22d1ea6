"""The combinatorial semi-bandit with a nonlinear separable SEM (SSEM-UCB paper, Sec. II).

Round ``t``: each replicate plays a super arm ``x_t`` (``||x_t||_0 <= s``), the environment
draws the base-arm signals ``b_t`` (one uniform per arm and round from the replicate's own
stream: common random numbers), forms ``z_t = x_t * b_t`` and reveals ``z_t + n_t``
(exogenous observation noise on the selected entries) and the endogenous ``y_t``. The payoff is
``1^T y_t``. Where the endogenous noise ``e_t`` (scale ``model_noise``) enters is
``noise_placement``:

- ``"model"``: inside the SEM, ``y_t = F(y_t) + z_t + e_t`` (eq. 2 with the model noise of
  Thm IV.6), so that a nonlinear ``F`` shifts the expected payoffs by the noise;
- ``"observation"``: on the observations, ``y_t = (I - F)^{-1}(z_t) + e_t`` (Sec. V-A: the
  observations "obfuscated" by noise), so that the expected payoffs are the noise-free ones.

The regret oracle tabulates ``mu(x) = E[1^T y]`` for every super arm by Monte Carlo with
common samples (the same ``b`` and, with model noise, ``e`` draws for all super arms), as the
paper determines the optimal reward "empirically" (Sec. V); with observation noise ``e``
has mean 0 outside the SEM and drops out of ``mu``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri

from causalbandits.envs.base import ReplicatedEnvironment, SeedLike
from causalbandits.envs.base_arms import BaseArmLaw
from causalbandits.envs.semibandit import (
    SemiBanditFeedback,
    SemiBanditProblem,
    check_horizon_and_super_arm_size,
    check_super_arms,
)
from causalbandits.envs.super_arms import all_super_arms
from causalbandits.random import RNGLike, as_generator, derive, uniform_stream
from causalbandits.scm.separable import SeparableSEM
from causalbandits.validation import count, each, non_negative

#: Super arms solved at once when tabulating ``mu(x)`` (bounds the memory to a few 100 MB).
MC_CHUNK = 64
#: Where the endogenous noise enters (see the module docstring).
NOISE_PLACEMENTS = ("observation", "model")


def monte_carlo_payoffs(
    sem: SeparableSEM,
    super_arms: np.ndarray,
    signals: np.ndarray,
    model_noise: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``mu(x)`` and ``max_b r_x(b)`` of every super arm and replicate over common samples:
    ``signals`` ``(R, S, N)``, ``model_noise`` ``(R, S, N)`` or ``None``; returns two
    ``(R, |X|)`` arrays (the sample mean and the sample maximum of the payoff)."""
    replicates, samples, n = signals.shape
    means = np.empty((replicates, len(super_arms)))
    maxima = np.empty_like(means)
    for r in range(replicates):
        single = type(sem)(sem.weights[r], sem.dictionary, sem.method, sem.tol, sem.max_iter)
        for start in range(0, len(super_arms), MC_CHUNK):
            chunk = super_arms[start : start + MC_CHUNK]
            inputs = chunk[:, None, :] * signals[r][None]
            if model_noise is not None:
                inputs = inputs + model_noise[r][None]
            payoff = single.solve(inputs[None])[0].sum(axis=-1)  # (chunk, S)
            means[r, start : start + len(chunk)] = payoff.mean(axis=1)
            maxima[r, start : start + len(chunk)] = payoff.max(axis=1)
    return means, maxima


#: Held-out rounds of :meth:`SeparableSemiBandit.reference_rounds` (a fit's error there).
REFERENCE_ROUNDS = 200


@dataclass(frozen=True, kw_only=True, eq=False)
class SeparableBanditConfig:
    """The rounds, the noise and the regret oracle of a :class:`SeparableSemiBandit` (Sec. II,
    V); checked on construction (the sizes against the SEM by the environment)."""

    #: ``s``: super arms of at most this many base arms.
    super_arm_size: int
    #: ``T``.
    horizon: int
    #: Standard deviation of the exogenous observation noise ``n_t`` added to the selected
    #: entries of ``z`` (trial 1: 0.02).
    observation_noise: float = 0.0
    #: Standard deviation of the endogenous noise ``e_t`` on every node, a scalar or one per
    #: replicate (trial 1: 2 % of the average reward, :func:`~causalbandits.envs.
    #: separable_instances.trial_environment`).
    model_noise: float | np.ndarray = 0.0
    #: ``"model"`` (``e_t`` inside the SEM, Thm IV.6) or ``"observation"`` (``e_t`` added to
    #: the solved ``y_t``, Sec. V-A; ``mu`` noise-free).
    noise_placement: str = "model"
    #: Common Monte Carlo samples of ``mu(x)`` (the paper's "empirical" optimum, Sec. V).
    mc_samples: int = 10_000
    #: A super arm is optimal within this of ``max_x mu(x)``.
    optimal_tolerance: float = 1e-9

    def __post_init__(self) -> None:
        non_negative("observation_noise", self.observation_noise)
        if np.ndim(self.model_noise) == 0:
            non_negative("model_noise", self.model_noise)
        else:
            each(non_negative, "model_noise", np.asarray(self.model_noise, dtype=object))
        if self.noise_placement not in NOISE_PLACEMENTS:
            raise ValueError(
                f"noise_placement must be one of {NOISE_PLACEMENTS}, got {self.noise_placement!r}"
            )
        count("mc_samples", self.mc_samples, minimum=2)
        non_negative("optimal_tolerance", self.optimal_tolerance)


class SeparableSemiBandit(ReplicatedEnvironment):
    """``R`` nonlinear separable semi-bandits (one SEM and base-arm law per replicate).

    Parameters
    ----------
    sem: the SEMs, weights ``(R, N, N, K)``.
    arms: the base-arm laws, parameters ``(R, N)``.
    config: ``s``, ``T``, the noise and the Monte Carlo oracle (:class:`SeparableBanditConfig`).
    mc_seeds: one seed per replicate for the Monte Carlo samples (its instance's own stream,
        so that ``mu`` of a replicate does not depend on the others); ``None``: seeds
        ``0..R-1``.
    """

    def __init__(
        self,
        sem: SeparableSEM,
        arms: BaseArmLaw,
        config: SeparableBanditConfig,
        mc_seeds: Sequence[RNGLike] | None = None,
    ) -> None:
        n = sem.n_nodes
        horizon, super_arm_size = config.horizon, config.super_arm_size
        check_horizon_and_super_arm_size(horizon, super_arm_size, n)
        noise = np.broadcast_to(np.asarray(config.model_noise, dtype=float), (sem.replicates,))
        self.sem, self.arms = sem, arms
        self.horizon, self.super_arm_size = int(horizon), int(super_arm_size)
        self.observation_noise = float(config.observation_noise)
        self.model_noise = noise.copy()
        self.noise_placement = config.noise_placement
        self.optimal_tolerance = float(config.optimal_tolerance)
        self.super_arms = all_super_arms(n, self.super_arm_size)
        seeds = list(range(sem.replicates)) if mc_seeds is None else list(mc_seeds)
        if len(seeds) != sem.replicates:
            raise ValueError(f"got {len(seeds)} Monte Carlo seeds for {sem.replicates} instances")
        self._mc_seeds = [
            s if isinstance(s, np.random.SeedSequence) else np.random.SeedSequence(s) for s in seeds
        ]
        shape = (2, int(config.mc_samples), n)
        uniforms = np.stack([as_generator(s).random(shape) for s in self._mc_seeds], axis=1)
        signals = arms.quantile(uniforms[0])
        self.expected_payoffs, maxima = monte_carlo_payoffs(
            sem, self.super_arms, signals, self._oracle_noise(uniforms[1])
        )
        #: IGP-UCB's noise range (App. -G1): ``max_x (max_b r_x(b) - mu(x))``.
        self.payoff_spread = (maxima - self.expected_payoffs).max(axis=1)
        best = self.expected_payoffs.argmax(axis=1)
        self.optimal_value = self.expected_payoffs[np.arange(sem.replicates), best]
        self.optimal_action = self.super_arms[best]
        self._codes = self.super_arms @ (1 << np.arange(n, dtype=np.int64))
        self._order = np.argsort(self._codes)
        self.problem = SemiBanditProblem(
            n_arms=n,
            super_arm_size=self.super_arm_size,
            horizon=self.horizon,
            upper_triangular=sem.upper,
        )

    def _oracle_noise(self, uniforms: np.ndarray) -> np.ndarray | None:
        """The model noise ``e`` ``(R, S, N)`` of the Monte Carlo samples of ``mu(x)`` from
        ``uniforms``; ``None`` (``mu`` noise-free) without model noise or when the noise is
        on the observations (zero-mean and outside the SEM: ``E[1^T (y + e)] = E[1^T y]``)."""
        if self.noise_placement == "observation" or not np.any(self.model_noise):
            return None
        return self.model_noise[:, None, None] * ndtri(np.clip(uniforms, 1e-16, 1 - 1e-16))

    @property
    def n_arms(self) -> int:
        return self.sem.n_nodes

    def signal_samples(self, count: int) -> np.ndarray:
        """``count`` fresh base-arm signals per replicate, ``(R, count, N)``, each replicate from
        a child of its own Monte Carlo seed (for diagnostics that need the true law)."""
        children = derive(self._mc_seeds, 1)
        uniforms = np.stack([as_generator(s).random((count, self.n_arms)) for s in children])
        return self.arms.quantile(uniforms)

    def reference_rounds(self, count: int = REFERENCE_ROUNDS) -> tuple[np.ndarray, np.ndarray]:
        """``count`` fixed held-out rounds per replicate (the same at every call): super arms
        drawn uniformly from :attr:`super_arms`, fresh base-arm signals, and the noise-free
        ``y = F(y) + z``; ``(z, y)``, each ``(R, count, N)``."""
        generators = [as_generator(s) for s in derive(self._mc_seeds, 2)]
        rows = np.stack([g.integers(len(self.super_arms), size=count) for g in generators])
        uniforms = np.stack([g.random((count, self.n_arms)) for g in generators])
        z = self.super_arms[rows] * self.arms.quantile(uniforms)
        return z, self.sem.solve(z)

    @property
    def replicates(self) -> int:
        """``R``, the number of instances (known before :meth:`reset`)."""
        return self.sem.replicates

    def reset(self, seed: SeedLike = None, replicates: int | None = None) -> None:
        """Start round 1; ``seed`` is a root seed or one ``SeedSequence`` per instance."""
        super().reset(seed, self.replicates if replicates is None else replicates)

    def start(self, seeds: list[np.random.SeedSequence]) -> None:
        if len(seeds) != self.replicates:
            raise ValueError(f"got {len(seeds)} seeds for {self.replicates} instances")
        self._noise = uniform_stream(seeds, (3, self.n_arms))

    def check_actions(self, actions: np.ndarray) -> np.ndarray:
        return check_super_arms(actions, self.n_arms, self.super_arm_size, self.replicates)

    def index_of(self, actions: np.ndarray) -> np.ndarray:
        """The rows of super arms ``(R, N)`` in :attr:`super_arms`."""
        codes = np.asarray(actions, dtype=np.int64) @ (1 << np.arange(self.n_arms, dtype=np.int64))
        position = np.searchsorted(self._codes, codes, sorter=self._order)
        return self._order[np.minimum(position, len(self._order) - 1)]

    def expected_payoff(self, actions: np.ndarray) -> np.ndarray:
        """``mu(x)`` of each replicate's super arm ``(R, N)``."""
        x = self.check_actions(actions)
        return self.expected_payoffs[np.arange(self.replicates), self.index_of(x)]

    def pseudo_regret(self, actions: np.ndarray) -> np.ndarray:
        """``mu(x*) - mu(x_t)`` per replicate."""
        return self.optimal_value - self.expected_payoff(actions)

    def is_optimal(self, actions: np.ndarray) -> np.ndarray:
        return self.pseudo_regret(actions) <= self.optimal_tolerance

    def play(self, actions: np.ndarray) -> SemiBanditFeedback:
        """``z = x * b`` observed with noise, and ``y = F(y) + z + e`` (eq. 2, Thm IV.6;
        ``noise_placement="model"``) or ``y = (I - F)^{-1}(z) + e`` (``"observation"``, Sec.
        V-A); the same draws either way (common random numbers)."""
        draws = self._noise.next()  # (R, 3, N)
        z = self.arms.quantile(draws[:, 0]) * actions
        gauss = ndtri(np.clip(draws[:, 1:], 1e-16, 1 - 1e-16))
        endogenous = self.model_noise[:, None] * gauss[:, 1]
        if self.noise_placement == "model":
            y = self.sem.solve((z + endogenous)[:, None])[:, 0]
        else:
            y = self.sem.solve(z[:, None])[:, 0] + endogenous
        observed = z + self.observation_noise * gauss[:, 0] * actions
        return SemiBanditFeedback(z=observed, y=y)
