"""What the round loop records: pluggable recorders, one per family of metrics.

The loop (:func:`~causalbandits.experiments.simulate.simulate`) calls, for every round
``t`` (1-based), ``on_action(t, actions, oracle)`` after the policy has chosen and before the
environment steps, ``after_update(t, actions)`` once the policy has learned from the round,
and ``on_checkpoint(k, t)`` at the ``k``-th recorded round. ``result()`` returns one
``(checkpoints, R)`` array per column. A recorder reads the round's regret oracle
(:class:`RoundOracle`: each quantity computed once per round, whatever the number of
recorders) and the policy's public state only.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import cached_property
from typing import Any

import numpy as np
from tqdm.auto import tqdm


class RoundOracle:
    """The environment's regret oracle for one round's ``actions``, read before the step."""

    def __init__(self, env: Any, actions: np.ndarray) -> None:
        self.env, self.actions = env, actions

    @cached_property
    def regret(self) -> np.ndarray:
        """Pseudo-regret of each replicate's action, ``(R,)``."""
        return self.env.pseudo_regret(self.actions)

    @cached_property
    def optimal(self) -> np.ndarray:
        """Whether each replicate's action is optimal, ``(R,)``."""
        return self.env.is_optimal(self.actions)

    @cached_property
    def best(self) -> np.ndarray:
        """The optimal action of each replicate (a super arm's mask for semi-bandits)."""
        return np.asarray(self.env.optimal_action, dtype=bool)


class Recorder:
    """Base class: no-op hooks; subclasses set ``columns`` and fill ``values``."""

    columns: tuple[str, ...] = ()

    def start(self, env: Any, policy: Any, rounds: np.ndarray, replicates: int) -> None:
        """Bind to a run of ``replicates`` replicates recorded at the 1-based ``rounds``."""
        self.env, self.policy, self.rounds = env, policy, rounds
        self.values = {c: np.zeros((rounds.size, replicates)) for c in self.columns}

    def on_action(self, t: int, actions: np.ndarray, oracle: RoundOracle) -> None:
        """Round ``t``'s actions and their oracle, before the environment steps."""

    def after_update(self, t: int, actions: np.ndarray) -> None:
        """Round ``t`` is over: the policy has learned from its feedback."""

    def on_checkpoint(self, k: int, t: int) -> None:
        """Round ``t`` is the ``k``-th recorded round."""

    def result(self) -> dict[str, np.ndarray]:
        return self.values


class CumulativeRegret(Recorder):
    """``cum_regret``: the cumulative pseudo-regret ``sum_s (mu*_s - mu_{a_s})`` up to ``t``."""

    columns = ("cum_regret",)

    def start(self, env: Any, policy: Any, rounds: np.ndarray, replicates: int) -> None:
        super().start(env, policy, rounds, replicates)
        self._total = np.zeros(replicates)

    def on_action(self, t: int, actions: np.ndarray, oracle: RoundOracle) -> None:
        self._total += oracle.regret

    def on_checkpoint(self, k: int, t: int) -> None:
        self.values["cum_regret"][k] = self._total


class OptimalShare(Recorder):
    """``optimal_share``: the share of rounds ``1..t`` in which an optimal action was played."""

    columns = ("optimal_share",)

    def start(self, env: Any, policy: Any, rounds: np.ndarray, replicates: int) -> None:
        super().start(env, policy, rounds, replicates)
        self._count = np.zeros(replicates)

    def on_action(self, t: int, actions: np.ndarray, oracle: RoundOracle) -> None:
        self._count += oracle.optimal

    def on_checkpoint(self, k: int, t: int) -> None:
        np.divide(self._count, t, out=self.values["optimal_share"][k])


class SuperArmOverlap(Recorder):
    """The cumulative numerator and denominator of the optimality ratio (NDC-SEM App. VII-C2):
    ``matched = sum_s |I(x_s) & I(x*_s)|`` and ``optimal_arms = sum_s |I(x*_s)|``."""

    columns = ("matched", "optimal_arms")

    def start(self, env: Any, policy: Any, rounds: np.ndarray, replicates: int) -> None:
        super().start(env, policy, rounds, replicates)
        self._totals = np.zeros((2, replicates))

    def on_action(self, t: int, actions: np.ndarray, oracle: RoundOracle) -> None:
        best = oracle.best
        self._totals[0] += (actions & best).sum(axis=1)
        self._totals[1] += best.sum(axis=1)

    def on_checkpoint(self, k: int, t: int) -> None:
        self.values["matched"][k], self.values["optimal_arms"][k] = self._totals


class GraphError(Recorder):
    """``a_mse``: ``||A - A_hat||_F^2 / N^2`` of the policy's last fitted graph (its
    ``lasso.adjacency``) against the environment's ``adjacency``; NaN for a policy without one."""

    columns = ("a_mse",)

    def on_checkpoint(self, k: int, t: int) -> None:
        truth = np.asarray(self.env.adjacency)
        lasso = getattr(self.policy, "lasso", None)
        if lasso is None:
            self.values["a_mse"][k] = np.nan
        else:
            self.values["a_mse"][k] = ((lasso.adjacency - truth) ** 2).mean(axis=(1, 2))


class ReconstructionError(Recorder):
    """``reconstruction_mse``: the policy's in-sample error of rebuilding ``y`` from ``z``
    through its current fit (its ``reconstruction_error()``; SSEM-UCB Fig. 3);
    ``prequential_mse``: the same on the newest round alone, through the fit that chose it,
    which has seen the earlier rounds only (the paper's "reconstructing the overall delay from
    the immediate delay based on earlier observations"); and ``heldout_mse``: on the
    environment's fixed ``reference_rounds()`` ``(z, y)`` (NaN when it has none). NaN for a
    policy without a ``reconstruction_error``. The recorder is meant for every round
    (``prequential_mse`` only looks at the newest one)."""

    columns = ("reconstruction_mse", "prequential_mse", "heldout_mse")

    def start(self, env: Any, policy: Any, rounds: np.ndarray, replicates: int) -> None:
        super().start(env, policy, rounds, replicates)
        reference = getattr(env, "reference_rounds", None)
        self._reference = None if reference is None else reference()

    def on_checkpoint(self, k: int, t: int) -> None:
        error = getattr(self.policy, "reconstruction_error", None)
        if error is None:
            for column in self.columns:
                self.values[column][k] = np.nan
            return
        self.values["reconstruction_mse"][k] = error()
        z, y = self.policy.observations[-1]
        self.values["prequential_mse"][k] = error(z[:, None], y[:, None])
        held_out = np.nan if self._reference is None else error(*self._reference)
        self.values["heldout_mse"][k] = held_out


class LockIns(Recorder):
    """Runs of at least ``min_length`` consecutive rounds in which one base arm outside the
    optimal super arm ``x*_t`` is played (runs still open at the last recorded round close
    there): ``lock_ins`` and ``lock_in_rounds`` count the runs finished by ``t`` and their
    total length; ``lock_in_regret`` is the regret of rounds ``<= t`` inside some run (in
    hindsight: a round counts once its run has reached ``min_length`` rounds). Off (all zero)
    for ``min_length = 0``.
    """

    columns = ("lock_ins", "lock_in_rounds", "lock_in_regret")

    def __init__(self, min_length: int) -> None:
        if min_length < 0:
            raise ValueError(f"min_length must be >= 0, got {min_length}")
        self.min_length = int(min_length)

    def start(self, env: Any, policy: Any, rounds: np.ndarray, replicates: int) -> None:
        super().start(env, policy, rounds, replicates)
        last = int(rounds[-1])
        self._last = last
        self._run = np.zeros((replicates, np.asarray(env.adjacency).shape[-1]), dtype=np.int64)
        self._counts = np.zeros((2, replicates))
        self._regret = np.zeros((last, replicates))
        self._locked = np.zeros((last, replicates), dtype=bool)

    def on_action(self, t: int, actions: np.ndarray, oracle: RoundOracle) -> None:
        self._regret[t - 1] = oracle.regret
        if self.min_length == 0:
            return
        off = actions & ~oracle.best
        run = self._run
        run += off
        closing = ~off | (t == self._last)
        done = closing & (run >= self.min_length)
        for r, i in zip(*np.nonzero(done), strict=True):
            end = t if off[r, i] else t - 1  # the run covers rounds end - run + 1 .. end
            self._locked[end - run[r, i] : end, r] = True
            self._counts[0, r] += 1
            self._counts[1, r] += run[r, i]
        run[closing] = 0

    def on_checkpoint(self, k: int, t: int) -> None:
        self.values["lock_ins"][k], self.values["lock_in_rounds"][k] = self._counts

    def result(self) -> dict[str, np.ndarray]:
        index = self.rounds - 1
        locked_regret = np.where(self._locked, self._regret, 0.0)
        self.values["lock_in_regret"] = np.cumsum(locked_regret, axis=0)[index]
        return self.values


class ActionLog(Recorder):
    """Every round's actions, ``(T, R, ...)``, in ``actions`` (no result columns)."""

    def start(self, env: Any, policy: Any, rounds: np.ndarray, replicates: int) -> None:
        super().start(env, policy, rounds, replicates)
        self.actions: list[np.ndarray] = []

    def on_action(self, t: int, actions: np.ndarray, oracle: RoundOracle) -> None:
        self.actions.append(np.array(actions, copy=True))

    def stacked(self) -> np.ndarray:
        return np.stack(self.actions)


class Trace(Recorder):
    """Calls ``hook(t, env, policy, actions)`` every ``every`` rounds and keeps what it returns
    (``None`` is dropped) in ``rows``; no result columns.

    ``when="action"`` calls it with round ``t``'s chosen actions before the environment steps
    (for rounds ``t`` with ``(t - 1) % every == 0``), ``"update"`` after the policy has learned
    from round ``t`` (rounds with ``t % every == 0``).
    """

    def __init__(
        self, hook: Callable[[int, Any, Any, np.ndarray], Any], every: int = 1, when: str = "action"
    ) -> None:
        if every < 1:
            raise ValueError(f"every must be >= 1, got {every}")
        if when not in ("action", "update"):
            raise ValueError(f"when must be 'action' or 'update', got {when!r}")
        self.hook, self.every, self.when = hook, int(every), when

    def start(self, env: Any, policy: Any, rounds: np.ndarray, replicates: int) -> None:
        super().start(env, policy, rounds, replicates)
        self.rows: list[Any] = []

    def _call(self, t: int, actions: np.ndarray) -> None:
        row = self.hook(t, self.env, self.policy, actions)
        if row is not None:
            self.rows.append(row)

    def on_action(self, t: int, actions: np.ndarray, oracle: RoundOracle) -> None:
        if self.when == "action" and (t - 1) % self.every == 0:
            self._call(t, actions)

    def after_update(self, t: int, actions: np.ndarray) -> None:
        if self.when == "update" and t % self.every == 0:
            self._call(t, actions)


class OptimisationTrace(Recorder):
    """Per round of a continuous-action run (causal BO): ``expected_reward`` ``E[y | a_t]``
    (the environment's oracle), ``best_expected`` (its best so far), ``observed`` (the noisy
    objective the policy saw, read from its ``observed_objective``), ``seconds`` (the wall
    time of the policy's choice and update), the action's coordinates ``a0, a1, ...`` and
    the observed node values ``x0, x1, ...`` (read from the policy's ``values``)."""

    columns = ("expected_reward", "best_expected", "observed", "seconds")

    def start(self, env: Any, policy: Any, rounds: np.ndarray, replicates: int) -> None:
        self._actions = tuple(f"a{j}" for j in range(env.problem.n_actions))
        nodes = tuple(f"x{i}" for i in range(env.problem.n_nodes))
        self.columns = (*type(self).columns, *self._actions, *nodes)
        super().start(env, policy, rounds, replicates)
        self._best = np.full(replicates, -np.inf)
        self._round = np.zeros((len(self.columns), replicates))
        self._clock = time.perf_counter()

    def on_action(self, t: int, actions: np.ndarray, oracle: RoundOracle) -> None:
        chosen = time.perf_counter()
        expected = self.env.expected_reward(actions)
        self._best = np.maximum(self._best, expected)
        self._round[0], self._round[1] = expected, self._best
        self._round[3] = chosen - self._clock
        self._round[4 : 4 + len(self._actions)] = np.asarray(actions, dtype=float).T
        self._clock = time.perf_counter()

    def after_update(self, t: int, actions: np.ndarray) -> None:
        self._round[2] = self.policy.observed_objective[-1]
        self._round[4 + len(self._actions) :, 0] = self.policy.values[-1]
        self._round[3] += time.perf_counter() - self._clock
        self._clock = time.perf_counter()

    def on_checkpoint(self, k: int, t: int) -> None:
        for row, column in enumerate(self.columns):
            self.values[column][k] = self._round[row]


class CurrentAction(Recorder):
    """``regret_now`` and ``optimal_now``: the pseudo-regret of the action played at the
    recorded round itself and whether it is optimal (e.g. "the final super arm is optimal")."""

    columns = ("regret_now", "optimal_now")

    def on_action(self, t: int, actions: np.ndarray, oracle: RoundOracle) -> None:
        self._regret, self._optimal = oracle.regret, oracle.optimal

    def on_checkpoint(self, k: int, t: int) -> None:
        self.values["regret_now"][k] = self._regret
        self.values["optimal_now"][k] = self._optimal


class Elapsed(Recorder):
    """``elapsed``: wall seconds of the round loop from round 1 to the recorded round (policy,
    environment and recorders; a random policy's run gives the floor)."""

    columns = ("elapsed",)

    def start(self, env: Any, policy: Any, rounds: np.ndarray, replicates: int) -> None:
        super().start(env, policy, rounds, replicates)
        self._start = time.perf_counter()

    def on_checkpoint(self, k: int, t: int) -> None:
        self.values["elapsed"][k] = time.perf_counter() - self._start


class BoundCoverage(Recorder):
    """``covers_best`` and ``covers_all``: the share of rounds ``1..t`` in which the policy's
    upper confidence bound of the best arm, and of every arm, is at least that arm's true mean
    (the optimism an upper-confidence policy's regret bound rests on). Needs a policy with
    ``upper_confidence_bounds()`` ``(R, A)`` and an environment with ``expected_rewards``
    ``(A,)``; it computes the bounds once more per round."""

    columns = ("covers_best", "covers_all")

    def start(self, env: Any, policy: Any, rounds: np.ndarray, replicates: int) -> None:
        if not hasattr(policy, "upper_confidence_bounds"):
            raise ValueError(f"{type(policy).__name__} states no upper confidence bounds")
        super().start(env, policy, rounds, replicates)
        self._best = np.zeros(replicates)
        self._all = np.zeros(replicates)

    def on_action(self, t: int, actions: np.ndarray, oracle: RoundOracle) -> None:
        means = np.asarray(self.env.expected_rewards)
        covered = self.policy.upper_confidence_bounds() >= means - 1e-9 * np.abs(means)
        self._best += covered[:, int(np.argmax(means))]
        self._all += covered.all(axis=1)

    def on_checkpoint(self, k: int, t: int) -> None:
        np.divide(self._best, t, out=self.values["covers_best"][k])
        np.divide(self._all, t, out=self.values["covers_all"][k])


class ProgressBar(Recorder):
    """A progress bar over the rounds of one run (tqdm, on standard error; no columns)."""

    def __init__(self, label: str) -> None:
        self.label = label

    def start(self, env: Any, policy: Any, rounds: np.ndarray, replicates: int) -> None:
        super().start(env, policy, rounds, replicates)
        self._bar = tqdm(total=int(rounds[-1]), desc=self.label, unit="round", leave=False)

    def after_update(self, t: int, actions: np.ndarray) -> None:
        self._bar.update()

    def result(self) -> dict[str, np.ndarray]:
        self._bar.close()
        return {}


def default_recorders() -> list[Recorder]:
    """The metrics of every bandit run: cumulative regret and the optimal share."""
    return [CumulativeRegret(), OptimalShare()]


#: Recorders a spec can name (``ExperimentSpec.recorders``); each factory takes the
#: environment (after reset), e.g. to read its delay.
RECORDERS: dict[str, Callable[[Any], Recorder]] = {
    "overlap": lambda env: SuperArmOverlap(),
    "graph-error": lambda env: GraphError(),
    "lock-ins": lambda env: LockIns(-(-int(getattr(env, "delay", 0)) // 2)),
    "current": lambda env: CurrentAction(),
    "elapsed": lambda env: Elapsed(),
    "coverage": lambda env: BoundCoverage(),
}
