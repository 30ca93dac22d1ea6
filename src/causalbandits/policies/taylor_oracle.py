"""A clairvoyant diagnostic for SSEM-UCB: the super arm that the degree-``q`` Taylor-moment
payoff of the *true* SEM, with the *exact* moments, ranks first (SSEM-UCB paper, Sec. III-B).

Its regret is what truncating the Taylor series costs by itself, with no estimation error:
the floor that any SSEM-UCB of degree ``q`` approaches (the ``4 Gamma`` term of Cor. .3).
Like :class:`~causalbandits.policies.oracle.Oracle` it is built from the environment
(:meth:`TaylorOracle.from_environment`), never from what a learner is told.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from causalbandits.envs.super_arms import members
from causalbandits.estimators.expansion import Expansion
from causalbandits.estimators.jets import monomials, reward_jets
from causalbandits.validation import count

#: Signals drawn per replicate for the exact moments and the expansion point ``a = E[b]``.
MOMENT_SAMPLES = 50_000


def taylor_moment_payoffs(
    weights: np.ndarray,
    expansion: Expansion,
    signals: np.ndarray,
    super_arms: np.ndarray,
    degree: int,
) -> np.ndarray:
    """``sum_{|alpha| <= q} D^alpha r_x(a)/alpha! prod_j phi^(alpha_j)[j]`` of every super arm,
    ``(R, |X|)``, for weights ``(R, N, N, K)`` (on ``expansion.dictionary``, exact jets), with
    ``a`` the mean of ``signals`` ``(R, S, N)`` and ``phi^(p)`` their central moments about
    it."""
    centres = signals.mean(axis=1)
    deviations = signals - centres[:, None]
    moments = np.stack([(deviations**p).mean(axis=1) for p in range(degree + 1)], axis=1)
    out = np.empty((len(weights), len(super_arms)))
    sizes = super_arms.sum(axis=1)
    for k in np.unique(sizes):
        rows = np.flatnonzero(sizes == k)
        arms = members(super_arms[rows])
        exponents = monomials(int(k), degree).exponents
        coefficients = reward_jets(weights, expansion, centres, arms, degree)
        factors = np.ones((len(weights), len(rows), len(exponents)))
        for v in range(int(k)):
            factors *= moments[:, exponents[None, :, v], arms[:, v, None]]
        out[:, rows] = (coefficients * factors).sum(axis=-1)
    return out


class TaylorOracle:
    """Plays, every round, the argmax of the true model's degree-``q`` Taylor-moment payoff."""

    #: Bench declarations (causalbandits.bench.capabilities).
    ACTS_ON = frozenset({"separable-super-arms"})
    NEEDS = frozenset({"truth"})

    def __init__(self, problem: Any, actions: np.ndarray) -> None:
        self.n_arms = int(problem.n_arms)
        self.actions = np.asarray(actions, dtype=bool)

    @classmethod
    def from_environment(cls, env: Any, degree: int) -> TaylorOracle:
        """The oracle of a :class:`~causalbandits.envs.separable_semibandit.
        SeparableSemiBandit`: moments of :data:`MOMENT_SAMPLES` signals per replicate."""
        degree = count("degree q", degree)
        expansion = Expansion(dictionary=env.sem.dictionary, upper_triangular=env.sem.upper)
        signals = env.signal_samples(MOMENT_SAMPLES)
        payoffs = taylor_moment_payoffs(
            env.sem.weights, expansion, signals, env.super_arms, int(degree)
        )
        return cls(env.problem, env.super_arms[payoffs.argmax(axis=1)])

    def reset(self, seeds: Sequence[np.random.SeedSequence]) -> None:
        if len(seeds) != len(self.actions):
            raise ValueError(f"the oracle holds {len(self.actions)} instances, got {len(seeds)}")

    def select(self) -> np.ndarray:
        return self.actions.copy()

    def update(self, actions: np.ndarray, feedback: object) -> None:
        """Nothing to learn."""
