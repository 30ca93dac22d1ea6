"""The round loop: one policy against one environment, all replicates at once."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from causalbandits.random import NOISE_STREAM, POLICY_STREAM, replicate_seeds, stable_hash


def checkpoint_rounds(horizon: int, count: int) -> np.ndarray:
    """``min(count, horizon)`` evenly spaced 1-based rounds, the last being ``horizon``."""
    if horizon < 1 or count < 1:
        raise ValueError(f"need horizon >= 1 and count >= 1, got {horizon} and {count}")
    k = np.arange(1, count + 1, dtype=np.int64)
    return np.unique((k * horizon + count - 1) // count)


def simulate(env: Any, policy: Any, checkpoints: int | np.ndarray) -> dict[str, np.ndarray]:
    """Run ``env.horizon`` rounds of ``policy`` on ``env`` (both already reset).

    ``checkpoints`` is a count of evenly spaced rounds or an increasing array of 1-based
    rounds; the loop stops after the last checkpoint. Returns ``t`` (n,); ``cum_regret``
    (n, R), the cumulative pseudo-regret after round ``t``; and ``optimal_share`` (n, R), the
    share of optimal actions in rounds 1..t.
    """
    horizon = int(env.horizon)
    if np.ndim(checkpoints) == 0:
        rounds = checkpoint_rounds(horizon, int(checkpoints))
    else:
        rounds = np.asarray(checkpoints, dtype=np.int64)
        if rounds.size == 0 or rounds[0] < 1 or rounds[-1] > horizon:
            raise ValueError(f"checkpoint rounds must lie in 1..{horizon}")
        if np.any(np.diff(rounds) <= 0):
            raise ValueError("checkpoint rounds must be strictly increasing")
    cum_regret = optimal_count = regret_at = share_at = None
    k, next_round = 0, rounds[0]
    for t in range(1, horizon + 1):
        actions = policy.select()
        regret = env.pseudo_regret(actions)
        optimal = env.is_optimal(actions)
        policy.update(actions, env.step(actions))
        if cum_regret is None:
            cum_regret = np.zeros(len(actions))
            optimal_count = np.zeros(len(actions))
            regret_at = np.empty((len(rounds), len(actions)))
            share_at = np.empty((len(rounds), len(actions)))
        cum_regret += regret
        optimal_count += optimal
        if t == next_round:
            regret_at[k] = cum_regret
            np.divide(optimal_count, t, out=share_at[k])
            k += 1
            if k == len(rounds):
                break
            next_round = rounds[k]
    return {"t": rounds, "cum_regret": regret_at, "optimal_share": share_at}


def results_frame(
    result: dict[str, np.ndarray],
    algorithm: str,
    replicates: Sequence[int],
    per_replicate: Mapping[str, np.ndarray] | None = None,
    **columns: Any,
) -> pd.DataFrame:
    """The long table of one :func:`simulate` result: one row per (replicate, checkpoint).

    ``per_replicate`` adds columns with one value per replicate (e.g. the change-detection
    scores of :mod:`~causalbandits.experiments.change_metrics`), repeated at every checkpoint.
    """
    rounds = result["t"]
    extra = {
        name: np.repeat(np.asarray(values), len(rounds))
        for name, values in (per_replicate or {}).items()
    }
    return pd.DataFrame(
        {
            **columns,
            "algorithm": algorithm,
            "replicate": np.repeat(np.asarray(replicates), len(rounds)),
            "t": np.tile(rounds, len(replicates)),
            "cum_regret": result["cum_regret"].T.ravel(),
            "optimal_share": result["optimal_share"].T.ravel(),
            **extra,
        }
    )


def compare(
    env: Any,
    policies: Mapping[str, Callable[[Any], Any]],
    replicates: int,
    seed: int = 0,
    checkpoints: int = 100,
) -> pd.DataFrame:
    """Run every policy on ``env`` with the same noise (common random numbers).

    ``policies`` maps labels to constructors taking the environment's ``problem``. Returns
    the long results table (setting 0), ready for :func:`~causalbandits.experiments.plots`.
    """
    frames = []
    reps = range(replicates)
    for label, make_policy in policies.items():
        env.reset(replicate_seeds(seed, 0, reps, NOISE_STREAM))
        policy = make_policy(env.problem)
        policy.reset(replicate_seeds(seed, 0, reps, POLICY_STREAM + stable_hash(label)))
        result = simulate(env, policy, checkpoints)
        frames.append(results_frame(result, label, reps, setting=0))
    return pd.concat(frames, ignore_index=True)
