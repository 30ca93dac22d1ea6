"""Combinatorial semi-bandits with one instance per replicate (NDC-SEM paper, Sec. V-A).

:func:`~causalbandits.envs.semibandit.ndc_synthetic_env` draws one instance (a 9-edge
upper-triangular DAG with weights U[0.4, 0.7] and piecewise-constant Bernoulli means whose
optimal super arm changes at every change point). :class:`SemiBanditInstances` runs ``R``
replicates at once, replicate ``r`` on its own instance ``(A_r, beta_r)``: the payoff model,
feedback and regret oracle of :class:`~causalbandits.envs.semibandit.SemiBanditEnv` (eqs. 1-7)
with a leading replicate axis on ``A`` and ``beta``. Sharing one instance across replicates
(the paper's single graph of Fig. 5) is the special case of ``R`` identical instances.

Noise: one uniform per arm and round from each replicate's own stream (common random numbers,
as in ``SemiBanditEnv``), mapped to ``b_t`` by the reward distribution's quantile function.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from causalbandits.envs.base import SeedLike
from causalbandits.envs.semibandit import (
    PiecewiseRounds,
    RewardDistribution,
    SemiBanditEnv,
    SemiBanditFeedback,
    SyntheticDesign,
    ndc_synthetic_env,
)


class SemiBanditInstances(PiecewiseRounds):
    """``R`` combinatorial semi-bandits with causally related rewards, one instance each.

    Parameters
    ----------
    adjacency: ``A_r`` per replicate, ``(R, N, N)``, paper convention (``A[i, j]``: effect of
        ``j`` on ``i``).
    means: ``beta`` per replicate and period, ``(R, n_periods, N)``.
    super_arm_size, horizon, change_points, distribution, optimal_tolerance: as in
        :class:`~causalbandits.envs.semibandit.SemiBanditEnv` (shared by all instances).
    """

    def __init__(
        self,
        adjacency: np.ndarray,
        means: np.ndarray,
        super_arm_size: int,
        horizon: int,
        change_points: Sequence[int] = (),
        distribution: RewardDistribution | None = None,
        optimal_tolerance: float = 1e-9,
    ) -> None:
        stack, beta = np.asarray(adjacency, dtype=float), np.asarray(means, dtype=float)
        if stack.ndim != 3 or stack.shape[0] < 1:
            raise ValueError(f"adjacency must have shape (R, N, N), got {stack.shape}")
        if beta.ndim != 3 or len(beta) != len(stack):
            raise ValueError(
                f"means must have shape (R, n_periods, N) with R = {len(stack)}, got {beta.shape}"
            )
        # each instance is validated and solved (eqs. 4, 6 and the top-s oracle) by the
        # single-instance environment; this class stacks the results on a replicate axis
        instances = [
            SemiBanditEnv(
                a, m, super_arm_size, horizon, change_points, distribution, optimal_tolerance
            )
            for a, m in zip(stack, beta, strict=True)
        ]
        first = instances[0]
        self.horizon, self.super_arm_size = first.horizon, first.super_arm_size
        self.change_points = first.change_points
        self.distribution = first.distribution
        self.optimal_tolerance = first.optimal_tolerance
        for name in ("adjacency", "means", "transfer", "total_effects", "scores"):
            setattr(self, name, np.stack([getattr(e, name) for e in instances]))
        self.optimal_actions = np.stack([e.optimal_actions for e in instances])  # (R, P, N)
        self.optimal_values = np.stack([e.optimal_values for e in instances])  # (R, P)
        self.problem = dataclasses.replace(
            first.problem,
            upper_triangular=all(e.problem.upper_triangular for e in instances),
        )

    @property
    def n_arms(self) -> int:
        return self.adjacency.shape[-1]

    @property
    def replicates(self) -> int:
        """``R``, the number of instances (known before :meth:`reset`)."""
        return self.adjacency.shape[0]

    @property
    def optimal_action(self) -> np.ndarray:
        """``x*_t`` of every replicate for the round about to be played, ``(R, N)``."""
        return self.optimal_actions[:, self.period]

    def expected_payoff(self, actions: np.ndarray) -> np.ndarray:
        """``mu_t(x) = sum_i w*[i] beta_t[i] x[i]`` (eq. 6) of masks ``(R, N)``, per replicate."""
        return np.einsum("rn,rn->r", np.asarray(actions, dtype=float), self.scores[:, self.period])

    def reset(self, seed: SeedLike = None, replicates: int | None = None) -> None:
        """Start round 1; ``seed`` is a root seed or one ``SeedSequence`` per instance."""
        super().reset(seed, self.replicates if replicates is None else replicates)

    def start(self, seeds: list[np.random.SeedSequence]) -> None:
        if len(seeds) != self.replicates:
            raise ValueError(f"got {len(seeds)} seeds for {self.replicates} instances")
        super().start(seeds)

    def play(self, actions: np.ndarray) -> SemiBanditFeedback:
        """``z = diag(b) x`` and ``y = (I - A)^{-1} z`` (eqs. 1, 4) of masks ``(R, N)``."""
        z = self.distribution.quantile(self._noise.next(), self.means[:, self.period]) * actions
        return SemiBanditFeedback(z=z, y=np.einsum("rij,rj->ri", self.transfer, z))

    def pseudo_regret(self, actions: np.ndarray) -> np.ndarray:
        """``mu_t(x*_t) - mu_t(x_t)`` per replicate (eq. 7) for the round about to be played."""
        x = self.check_actions(actions)
        return self.optimal_values[:, self.period] - self.expected_payoff(x)


def synthetic_instances(
    instance_seeds: Sequence[np.random.SeedSequence], design: SyntheticDesign | None = None
) -> SemiBanditInstances:
    """One synthetic instance of ``design`` (decisions: ndc-sem 14; default the paper's setup,
    :class:`~causalbandits.envs.semibandit.SyntheticDesign`) per seed
    (:func:`ndc_synthetic_env`), stacked into one environment. Equal seeds give equal
    instances (the paper's single fixed instance).
    """
    envs = [ndc_synthetic_env(np.random.default_rng(seed), design) for seed in instance_seeds]
    if not envs:
        raise ValueError("need at least one instance seed")
    first = envs[0]
    return SemiBanditInstances(
        np.stack([e.adjacency for e in envs]),
        np.stack([e.means for e in envs]),
        first.super_arm_size,
        first.horizon,
        first.change_points,
    )
