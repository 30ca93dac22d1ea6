"""GOLEM-MAB and GOLEM-MAB-CD: explore-then-commit with whole-graph structure learning
(decisions: csl-ucb B5; the paper's baseline for CSL-UCB and CSL-UCB-CD).

* Rounds ``1..n_learn``: play the empty intervention (``a = 0``); fit ``B_hat`` with
  GOLEM-EV (:func:`~causalbandits.estimators.structure_learning.golem_ev`) on those samples.
* Rounds ``n_learn+1..2 n_learn``: play the full intervention (``a = 1``, every intervenable
  node); fit ``B_hat*``.
* Then commit to ``argmax_a [(I - B_hat_a^T)^{-1} nu]_reward`` over the problem's action set,
  where column ``j`` of ``B_hat_a`` is taken from ``B_hat*`` if ``a`` intervenes on ``j``.

GOLEM-MAB-CD (the authors' ``det_change_all``) adds a whole-graph Gaussian GLR once the
committed arm has been played ``window`` times since the last (re)start: every round, the
last ``window`` samples are tested against ``N(C^T nu, C^T Sigma C)``,
``C = (I - B_hat_a)^{-1}`` of the committed arm, with the per-sample, per-node statistic of
:func:`~causalbandits.estimators.change_detection.sem_window_glr`; a value above
``glr_threshold`` (20 in the authors' code) restarts the whole ``2 n_learn`` re-learning.

Replicates cannot be vectorised (each one fits its own graphs, and with change detection
they restart at different times), so the fits loop over replicates; the cheap parts
(selection, the detector) are batched.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from causalbandits.estimators.change_detection import sem_window_glr
from causalbandits.estimators.structure_learning import golem_ev
from causalbandits.random import random_argmax

__all__ = ["GolemMAB", "GolemMABCD", "mixture_means"]


def mixture_means(
    masks: np.ndarray,
    weights: np.ndarray,
    intervention_weights: np.ndarray,
    noise_mean: np.ndarray,
    exclude_cyclic: bool = False,
) -> np.ndarray:
    """``mu_a = (I - B_a^T)^{-1} nu`` of every action (rows of ``masks``), shape ``(A, N)``.

    ``B_a`` takes column ``j`` from ``intervention_weights`` where ``masks[a, j]`` and from
    ``weights`` elsewhere. Two estimated DAGs can mix into a cyclic ``B_a``
    (decisions: csl-ucb A8): arms whose ``I - B_a`` is singular (or numerically so) get
    ``-inf``; with
    ``exclude_cyclic=True`` every arm with a cyclic ``B_a`` does.
    """
    masks = np.asarray(masks, dtype=bool)
    n = masks.shape[1]
    b_a = np.where(masks[:, None, :], intervention_weights, weights)  # (A, N, N)
    system = np.eye(n) - np.swapaxes(b_a, -1, -2)
    invalid = np.linalg.cond(system) > 1e12
    if exclude_cyclic:
        invalid |= _has_cycle(b_a != 0)
    system[invalid] = np.eye(n)
    means = np.linalg.solve(system, np.broadcast_to(noise_mean, (len(masks), n))[..., None])
    means = means[..., 0]
    means[invalid] = -np.inf
    return means


def _has_cycle(adjacency: np.ndarray) -> np.ndarray:
    """Batched: whether each ``(..., N, N)`` boolean graph has a directed cycle (``A^N != 0``)."""
    n = adjacency.shape[-1]
    power = adjacency.astype(np.int64)
    reach = power.copy()
    steps = 1
    while steps < n:  # reach = A^(2^k) with entries clipped to {0, 1}
        reach = np.minimum(reach @ reach, 1)
        steps *= 2
    # A graph is acyclic iff A^m = 0 for every m >= N; 2^k >= N here.
    return reach.any(axis=(-1, -2))


class GolemMAB:
    """GOLEM-MAB: learn ``B`` on ``a = 0``, ``B*`` on ``a = 1`` with GOLEM-EV, then commit.

    Parameters
    ----------
    problem:
        A :class:`~causalbandits.envs.linear_bandit.LinearSEMProblem` (uses ``actions``,
        ``reward_node``, ``noise_mean``); the graph is not used. The action set must contain
        the empty intervention and the intervention on every intervenable node.
    n_learn:
        Exploration rounds per matrix (300 in the authors' code; 600 in all).
    lambda1, lambda2, threshold:
        GOLEM-EV's L1 and acyclicity weights and post-processing threshold.
    exclude_cyclic:
        Give ``-inf`` to arms whose estimated ``B_a`` mixes into a cycle (decisions: csl-ucb A8).
        Default ``False``, as in the authors' code (only singular systems are excluded).
    window, glr_threshold, noise_variance:
        The change detector's window (20), threshold on the per-sample, per-node GLR (20)
        and known noise variance (1); used by :class:`GolemMABCD` only.

    Attributes (after ``reset``): ``committed`` (R,) the committed action (-1 while
    learning), ``estimates`` the last ``(B_hat, B_hat*)`` per replicate, ``commits`` and
    ``detections`` lists of ``(replicate, round)``.
    """

    #: Bench declarations (causalbandits.bench.capabilities).
    ACTS_ON = frozenset({"interventions"})

    #: Whether the whole-graph change detector runs (GOLEM-MAB-CD).
    change_detection = False

    def __init__(
        self,
        problem: object,
        n_learn: int = 300,
        lambda1: float = 2e-2,
        lambda2: float = 5.0,
        threshold: float = 0.3,
        exclude_cyclic: bool = False,
        window: int = 20,
        glr_threshold: float = 20.0,
        noise_variance: float | np.ndarray = 1.0,
    ) -> None:
        if int(n_learn) != n_learn or n_learn < 2:
            raise ValueError(f"n_learn must be an integer >= 2, got {n_learn}")
        self.masks = np.asarray(problem.actions.masks, dtype=bool)
        self.n_actions, self.n_nodes = self.masks.shape
        self.reward_node = int(problem.reward_node)
        self.noise_mean = np.asarray(problem.noise_mean, dtype=float)
        self.n_learn = int(n_learn)
        self.lambda1, self.lambda2, self.threshold = lambda1, lambda2, threshold
        self.exclude_cyclic = exclude_cyclic
        self.window = int(window)
        self.glr_threshold = float(glr_threshold)
        self.noise_variance = noise_variance
        if self.change_detection and self.window <= self.n_nodes:
            raise ValueError(
                f"the GLR window ({self.window}) must exceed the number of nodes "
                f"({self.n_nodes}): its sample covariance is singular otherwise"
            )
        empty = np.flatnonzero(~self.masks.any(axis=1))
        full = np.flatnonzero((self.masks == self.masks.any(axis=0)).all(axis=1))
        if empty.size == 0 or full.size == 0:
            raise ValueError(
                "GOLEM-MAB needs the empty intervention and the intervention on every "
                "intervenable node in the action set"
            )
        self.empty_action, self.full_action = int(empty[0]), int(full[0])

    def reset(self, seeds: Sequence[np.random.SeedSequence]) -> None:
        R, n = len(seeds), self.n_nodes
        self._rngs = [np.random.default_rng(s) for s in seeds]
        self.t = 0
        self.phase_count = np.zeros(R, dtype=np.int64)  # samples since the last (re)start
        self.committed = np.full(R, -1, dtype=np.intp)
        self._data = np.zeros((R, 2 * self.n_learn, n))
        self._b_committed = np.zeros((R, n, n))
        self._recent = np.zeros((R, self.window, n))
        self._n_recent = np.zeros(R, dtype=np.int64)
        #: Fitted ``(B_hat, B_hat*)`` of each replicate's last commit.
        self.estimates: list[tuple[np.ndarray, np.ndarray] | None] = [None] * R
        #: ``(replicate, round)`` of every commit and every detected change (1-based rounds).
        self.commits: list[tuple[int, int]] = []
        self.detections: list[tuple[int, int]] = []

    def select(self) -> np.ndarray:
        count = self.phase_count
        return np.where(
            count < self.n_learn,
            self.empty_action,
            np.where(count < 2 * self.n_learn, self.full_action, self.committed),
        ).astype(np.intp)

    def update(self, actions: np.ndarray, feedback: np.ndarray) -> None:
        self.t += 1
        feedback = np.asarray(feedback, dtype=float)
        learning = self.phase_count < 2 * self.n_learn
        rows = np.flatnonzero(learning)
        self._data[rows, self.phase_count[rows]] = feedback[rows]
        self.phase_count[rows] += 1
        for r in rows[self.phase_count[rows] == 2 * self.n_learn]:
            self._commit(int(r))
        playing = np.flatnonzero(~learning)
        if playing.size == 0:
            return
        self._recent[playing, self._n_recent[playing] % self.window] = feedback[playing]
        self._n_recent[playing] += 1
        if self.change_detection:
            ready = playing[self._n_recent[playing] >= self.window]
            if ready.size:
                stat = sem_window_glr(
                    self._recent[ready],
                    self._b_committed[ready],
                    self.noise_mean,
                    self.noise_variance,
                )
                for r in ready[stat > self.glr_threshold]:
                    self._restart(int(r))

    def _commit(self, r: int) -> None:
        data = self._data[r]
        fit = dict(lambda1=self.lambda1, lambda2=self.lambda2, threshold=self.threshold)
        b_hat = golem_ev(data[: self.n_learn], **fit)
        b_star = golem_ev(data[self.n_learn :], **fit)
        means = mixture_means(self.masks, b_hat, b_star, self.noise_mean, self.exclude_cyclic)
        rewards = means[:, self.reward_node]
        if not np.isfinite(rewards).any():  # every mixture singular: fall back to a = 0
            rewards = np.where(np.arange(self.n_actions) == self.empty_action, 0.0, -np.inf)
        u = self._rngs[r].random(self.n_actions)
        action = int(random_argmax(rewards[None, :], u[None, :])[0])
        self.committed[r] = action
        self._b_committed[r] = np.where(self.masks[action][None, :], b_star, b_hat)
        self._n_recent[r] = 0
        self.estimates[r] = (b_hat, b_star)
        self.commits.append((r, self.t))

    def _restart(self, r: int) -> None:
        self.phase_count[r] = 0
        self.committed[r] = -1
        self._n_recent[r] = 0
        self.detections.append((r, self.t))


class GolemMABCD(GolemMAB):
    """GOLEM-MAB-CD: :class:`GolemMAB` with the whole-graph GLR change detector.

    ``window`` (20), ``glr_threshold`` (20) and ``noise_variance`` (1, known) are the
    authors' values; see the module docstring.
    """

    change_detection = True
