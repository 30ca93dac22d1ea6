"""Combinatorial semi-bandit baselines (NDC-SEM paper, Sec. V) and their shared plumbing.

Every policy here selects super arms as ``(R, N)`` boolean masks and learns from feedback as
it arrives: the plain :class:`~causalbandits.envs.semibandit.SemiBanditFeedback` of the round
just played, or the :class:`~causalbandits.envs.delay.DelayedFeedback` of a delay wrapper.
The causal-agnostic baselines observe the overall rewards ``y[i]`` of the chosen arms
("we apply all the benchmarks to the vector of overall reward"), normalised to ``[0, 1]`` by
each replicate's running maximum (decisions: ndc-sem 10) and are delay-agnostic: they update
when feedback arrives and otherwise ignore the delay.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import betaincinv

from causalbandits.envs.delay import DelayedFeedback
from causalbandits.estimators.topk import top_s_mask
from causalbandits.random import uniform_stream


@dataclass(frozen=True)
class Arrivals:
    """Feedback items arriving in one round, padded per replicate to ``K`` slots.

    ``rounds`` (R, K) are the 1-based rounds the items belong to (0 marks an empty slot);
    ``actions`` (R, K, N) the super arms played then; ``z``, ``y`` (and ``b`` when the
    environment reveals it) (R, K, N) the feedback; empty slots hold zeros.
    """

    rounds: np.ndarray
    actions: np.ndarray
    z: np.ndarray
    y: np.ndarray
    b: np.ndarray | None

    @property
    def received(self) -> np.ndarray:
        """(R, K) booleans: the slots holding an item."""
        return self.rounds > 0


def collect_arrivals(actions: np.ndarray, feedback: object, t: int, replicates: int) -> Arrivals:
    """The :class:`Arrivals` of round ``t`` from undelayed or delayed feedback."""
    if not isinstance(feedback, DelayedFeedback):
        rows = np.arange(replicates)
        return Arrivals(
            np.full((replicates, 1), t),
            np.asarray(actions, dtype=bool)[:, None],
            np.asarray(feedback.z, dtype=float)[:, None],
            np.asarray(feedback.y, dtype=float)[:, None],
            None if getattr(feedback, "b", None) is None else feedback.b[rows][:, None],
        )
    rows = np.asarray(feedback.replicates, dtype=np.intp)
    slot = np.zeros(rows.size, dtype=np.intp)
    counts = np.zeros(replicates, dtype=np.intp)
    for k, r in enumerate(rows):  # items are few per round (one per replicate when D is fixed)
        slot[k] = counts[r]
        counts[r] += 1
    width = max(int(counts.max(initial=0)), 1)
    n = np.shape(feedback.actions)[-1]

    def padded(values: np.ndarray, dtype: type) -> np.ndarray:
        out = np.zeros((replicates, width, n), dtype=dtype)
        out[rows, slot] = values
        return out

    rounds = np.zeros((replicates, width), dtype=np.int64)
    rounds[rows, slot] = feedback.rounds
    inner = feedback.feedback
    b = getattr(inner, "b", None)
    return Arrivals(
        rounds,
        padded(feedback.actions, bool),
        padded(inner.z, float),
        padded(inner.y, float),
        None if b is None else padded(b, float),
    )


class RunningScale:
    """Per-replicate running maximum of the observations, to map them into ``[0, 1]``."""

    def __init__(self, replicates: int) -> None:
        self.scale = np.zeros(replicates)

    def normalise(self, values: np.ndarray, played: np.ndarray) -> np.ndarray:
        """Update the maxima with the played entries of ``values`` (R, K, N); return them
        divided by the maxima and clipped to ``[0, 1]``."""
        seen = np.where(played, values, -np.inf).max(axis=(1, 2), initial=-np.inf)
        self.scale = np.maximum(self.scale, seen)
        scale = np.where(self.scale > 0, self.scale, 1.0)[:, None, None]
        return np.clip(values / scale, 0.0, 1.0)


class _CountingBaseline:
    """Shared state of the index baselines: counts and sums of normalised ``y`` per arm."""

    #: Bench declarations (causalbandits.bench.capabilities).
    ACTS_ON = frozenset({"super-arms", "delayed-super-arms", "separable-super-arms"})

    def __init__(self, problem: object) -> None:
        self.n_arms, self.super_arm_size = int(problem.n_arms), int(problem.super_arm_size)
        if not 1 <= self.super_arm_size <= self.n_arms:
            raise ValueError(
                f"super-arm size s must lie in 1..{self.n_arms}, got {self.super_arm_size}"
            )

    def reset(self, seeds: Sequence[np.random.SeedSequence]) -> None:
        replicates = len(seeds)
        self.counts = np.zeros((replicates, self.n_arms))
        self.sums = np.zeros((replicates, self.n_arms))
        self.scale = RunningScale(replicates)
        self.uniforms = uniform_stream(seeds, (2, self.n_arms))
        self.t = 0

    def select(self) -> np.ndarray:
        self.t += 1
        draws = self.uniforms.next()
        return top_s_mask(
            self.scores(draws[:, 0]), self.super_arm_size, draws[:, 1], positive_only=False
        )

    def update(self, actions: np.ndarray, feedback: object) -> None:
        arrived = collect_arrivals(actions, feedback, self.t, len(self.counts))
        played = arrived.actions & arrived.received[..., None]
        rewards = self.scale.normalise(arrived.y, played)
        self.learn(played, rewards)

    def learn(self, played: np.ndarray, rewards: np.ndarray) -> None:
        self.counts += played.sum(axis=1)
        self.sums += np.where(played, rewards, 0.0).sum(axis=1)

    def scores(self, uniforms: np.ndarray) -> np.ndarray:
        raise NotImplementedError


class CUCB(_CountingBaseline):
    """CUCB (Chen et al., JMLR 2016): top-``s`` of ``min(1, mu_hat + sqrt(3 ln t / (2 T_i)))``.

    ``T_i`` counts received observations of arm ``i``; an arm never observed has index
    ``+inf`` (ties broken at random).
    """

    def scores(self, uniforms: np.ndarray) -> np.ndarray:
        seen = self.counts > 0
        safe = np.where(seen, self.counts, 1.0)
        bonus = np.sqrt(3.0 * np.log(max(self.t, 1)) / (2.0 * safe))
        return np.where(seen, np.minimum(1.0, self.sums / safe + bonus), np.inf)


class CTS(_CountingBaseline):
    """Combinatorial Thompson sampling (Hüyük & Tekin, AISTATS 2019), Beta(1, 1) priors.

    A normalised observation ``r`` is turned into a Bernoulli(r) success (the Bernoulli trick);
    ``theta_i ~ Beta(1 + successes, 1 + failures)`` is drawn by inverting the Beta CDF at a
    uniform of the replicate's own stream; the super arm is the top-``s`` of ``theta``.
    """

    def reset(self, seeds: Sequence[np.random.SeedSequence]) -> None:
        super().reset(seeds)
        self.trials = uniform_stream([s.spawn(1)[0] for s in seeds], (self.n_arms,))

    def learn(self, played: np.ndarray, rewards: np.ndarray) -> None:
        # The Bernoulli draws of one round are shared by the K slots of a replicate: with a
        # constant delay K = 1, and several items of one arm in a round are rare.
        successes = rewards > self.trials.next()[:, None, :]
        self.counts += played.sum(axis=1)
        self.sums += (played & successes).sum(axis=1)

    def scores(self, uniforms: np.ndarray) -> np.ndarray:
        successes = self.sums
        failures = self.counts - self.sums
        return betaincinv(1.0 + successes, 1.0 + failures, uniforms)


class RandomSuperArm:
    """A uniformly random super arm of exactly ``s`` arms every round (decisions: ndc-sem 12)."""

    #: Bench declarations (causalbandits.bench.capabilities).
    ACTS_ON = frozenset({"super-arms", "delayed-super-arms", "separable-super-arms"})

    def __init__(self, problem: object) -> None:
        self.n_arms, self.super_arm_size = int(problem.n_arms), int(problem.super_arm_size)

    def reset(self, seeds: Sequence[np.random.SeedSequence]) -> None:
        self.uniforms = uniform_stream(seeds, (self.n_arms,))

    def select(self) -> np.ndarray:
        return top_s_mask(self.uniforms.next(), self.super_arm_size, positive_only=False)

    def update(self, actions: np.ndarray, feedback: object) -> None:
        """Nothing to learn."""
