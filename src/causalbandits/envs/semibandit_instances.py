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

from collections.abc import Sequence

import numpy as np

from causalbandits.envs.semibandit import (
    Bernoulli,
    RewardDistribution,
    SemiBanditFeedback,
    SemiBanditProblem,
    check_adjacency,
    check_change_points,
    check_horizon_and_budget,
    check_super_arms,
    ndc_synthetic_env,
    top_s,
)
from causalbandits.random import ReplicateStream, as_seed_sequences, uniform_stream

SeedLike = int | np.random.SeedSequence | Sequence[np.random.SeedSequence] | None


class SemiBanditInstances:
    """``R`` combinatorial semi-bandits with causally related rewards, one instance each.

    Parameters
    ----------
    adjacency: ``A_r`` per replicate, ``(R, N, N)``, paper convention (``A[i, j]``: effect of
        ``j`` on ``i``).
    means: ``beta`` per replicate and period, ``(R, n_periods, N)``.
    budget, horizon, change_points, distribution, optimal_tolerance: as in
        :class:`~causalbandits.envs.semibandit.SemiBanditEnv` (shared by all instances).
    """

    def __init__(
        self,
        adjacency: np.ndarray,
        means: np.ndarray,
        budget: int,
        horizon: int,
        change_points: Sequence[int] = (),
        distribution: RewardDistribution | None = None,
        optimal_tolerance: float = 1e-9,
    ) -> None:
        stack = np.asarray(adjacency, dtype=float)
        if stack.ndim != 3 or stack.shape[0] < 1:
            raise ValueError(f"adjacency must have shape (R, N, N), got {stack.shape}")
        self.adjacency = np.stack([check_adjacency(a) for a in stack])
        replicates, n = self.adjacency.shape[:2]
        check_horizon_and_budget(horizon, budget, n)
        self.horizon, self.budget = int(horizon), int(budget)
        self.change_points = check_change_points(change_points, self.horizon)
        beta = np.array(means, dtype=float)
        shape = (replicates, self.change_points.size + 1, n)
        if beta.shape != shape:
            raise ValueError(f"means must have shape (R, n_periods, N) = {shape}, got {beta.shape}")
        self.distribution = distribution if distribution is not None else Bernoulli()
        self.distribution.check(beta)
        if optimal_tolerance < 0:
            raise ValueError(f"optimal_tolerance must be >= 0, got {optimal_tolerance}")
        self.optimal_tolerance = float(optimal_tolerance)
        self.means = beta
        eye = np.eye(n)
        self.transfer = np.linalg.inv(eye - self.adjacency)  # (I - A_r)^{-1}, eq. 4
        self.total_effects = np.linalg.solve(
            np.swapaxes(eye - self.adjacency, 1, 2), np.ones((replicates, n, 1))
        )[..., 0]  # w*_r = (I - A_r)^{-T} 1, eq. 6
        self.scores = self.total_effects[:, None, :] * beta  # (R, P, N)
        self.optimal_actions = top_s(self.scores, self.budget)
        self.optimal_values = np.sum(self.scores * self.optimal_actions, axis=-1)  # (R, P)
        self.problem = SemiBanditProblem(
            n_arms=n,
            budget=self.budget,
            horizon=self.horizon,
            upper_triangular=bool(np.all(np.tril(self.adjacency) == 0)),
        )
        self._noise: ReplicateStream | None = None
        self.t = 0

    @property
    def n_arms(self) -> int:
        return self.adjacency.shape[-1]

    @property
    def replicates(self) -> int:
        return self.adjacency.shape[0]

    def period_of(self, rounds: np.ndarray | int) -> np.ndarray:
        """Period index of 1-based ``rounds``."""
        return np.searchsorted(self.change_points, rounds, side="right")

    @property
    def period(self) -> int:
        """Period of the round about to be played (the last one once the horizon is over)."""
        return int(self.period_of(min(self.t + 1, self.horizon)))

    @property
    def optimal_action(self) -> np.ndarray:
        """``x*_t`` of every replicate for the round about to be played, ``(R, N)``."""
        return self.optimal_actions[:, self.period]

    def expected_payoff(self, actions: np.ndarray) -> np.ndarray:
        """``mu_t(x) = sum_i w*[i] beta_t[i] x[i]`` (eq. 6) of masks ``(R, N)``, per replicate."""
        return np.einsum("rn,rn->r", np.asarray(actions, dtype=float), self.scores[:, self.period])

    def reset(self, seed: SeedLike = None, replicates: int | None = None) -> None:
        """Start round 1; ``seed`` is a root seed or one ``SeedSequence`` per replicate."""
        seeds = as_seed_sequences(seed, self.replicates if replicates is None else replicates)
        if len(seeds) != self.replicates:
            raise ValueError(f"got {len(seeds)} seeds for {self.replicates} instances")
        self._noise = uniform_stream(seeds, (self.n_arms,))
        self.t = 0

    def step(self, actions: np.ndarray) -> SemiBanditFeedback:
        """Play one super arm per replicate (masks ``(R, N)``); return ``(z, y)`` (eqs. 1, 4)."""
        if self._noise is None:
            raise RuntimeError("call reset() before step()")
        if self.t >= self.horizon:
            raise RuntimeError(f"the horizon T = {self.horizon} is over; call reset()")
        x = check_super_arms(actions, self.n_arms, self.budget, self.replicates)
        b = self.distribution.quantile(self._noise.next(), self.means[:, self.period])
        z = b * x
        self.t += 1
        return SemiBanditFeedback(z=z, y=np.einsum("rij,rj->ri", self.transfer, z))

    def pseudo_regret(self, actions: np.ndarray) -> np.ndarray:
        """``mu_t(x*_t) - mu_t(x_t)`` per replicate (eq. 7) for the round about to be played."""
        x = check_super_arms(actions, self.n_arms, self.budget, self.replicates)
        return self.optimal_values[:, self.period] - self.expected_payoff(x)

    def is_optimal(self, actions: np.ndarray) -> np.ndarray:
        """Whether each replicate's super arm is within ``optimal_tolerance`` of the best."""
        return self.pseudo_regret(actions) <= self.optimal_tolerance


def synthetic_instances(
    instance_seeds: Sequence[np.random.SeedSequence], **options: object
) -> SemiBanditInstances:
    """One §5.1 instance per seed (:func:`ndc_synthetic_env`), stacked into one environment.

    ``options`` go to :func:`ndc_synthetic_env` (its defaults are the paper's setup: ``N =
    10``, ``s = 4``, ``T = 5000``, changes at 1000/2500/4000; also ``n_edges``,
    ``weight_range``, ``mean_range``, ``min_gap``, ``n_redraw``). Equal seeds give equal
    instances (the paper's single fixed instance).
    """
    envs = [ndc_synthetic_env(np.random.default_rng(seed), **options) for seed in instance_seeds]
    if not envs:
        raise ValueError("need at least one instance seed")
    first = envs[0]
    return SemiBanditInstances(
        np.stack([e.adjacency for e in envs]),
        np.stack([e.means for e in envs]),
        first.budget,
        first.horizon,
        first.change_points,
    )
