"""The benchmark's environment factories for the papers' problem families, one fixed
instance per ``instance`` number.

Each is a spec's environment (``"module:function"``), called as ``factory(horizon=...,
instance=..., **options)``: the problem is drawn from ``SeedSequence(instance)`` alone, so
the replicates of a setting are noise draws on one instance and every policy meets the same
instance and noise (the leaderboard's instances are the settings). EXCBO's functions are
fixed and take no ``instance``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from causalbandits.envs.bo_problems import alpine2, dropwave
from causalbandits.envs.causal_bo import FunctionNetworkBandit
from causalbandits.envs.csl_ucb import csl_system
from causalbandits.envs.delay import FeedbackDelay
from causalbandits.envs.semibandit import SyntheticDesign, ndc_synthetic_env
from causalbandits.envs.separable_instances import TRIAL_1, TRIAL_2, TRIAL_3, trial_environment
from causalbandits.envs.separable_semibandit import SeparableSemiBandit

#: SSEM-UCB's synthetic trials (Sec. V-A) by number.
TRIALS = {1: TRIAL_1, 2: TRIAL_2, 3: TRIAL_3}
#: EXCBO's synthetic function networks by name.
FUNCTIONS = {"dropwave": dropwave, "alpine2": alpine2}


def instance_seed(instance: int) -> np.random.SeedSequence:
    """The seed of instance number ``instance`` (a non-negative integer)."""
    if isinstance(instance, bool) or not isinstance(instance, int) or instance < 0:
        raise ValueError(f"instance must be a non-negative integer, got {instance!r}")
    return np.random.SeedSequence(instance)


def csl_random_system(
    horizon: int = 1500, instance: int = 0, n_nodes: int = 10, changes: int = 0
) -> object:
    """A system of CSL-UCB's random family (N(1, 1) weights, ``2^N`` arms), with the
    mechanisms of its optimal arm regenerated ``changes`` times, evenly spaced (CSL-UCB
    E4: twice)."""
    points = [round(horizon * (k + 1) / (changes + 1)) for k in range(changes)]
    return csl_system(instance_seed(instance), horizon, n_nodes, change_points=points)


def delayed_semibandit(horizon: int = 5000, instance: int = 0, delay: int = 50) -> FeedbackDelay:
    """NDC-SEM's synthetic semi-bandit (Sec. V-A: 10 base arms, super arms of 4, the means
    changing at 1/5, 1/2 and 4/5 of the horizon) with constant feedback delay ``D``."""
    points = tuple(int(round(horizon * share)) for share in (0.2, 0.5, 0.8))
    design = SyntheticDesign(horizon=horizon, change_points=points)
    rng = np.random.default_rng(instance_seed(instance))
    return FeedbackDelay(ndc_synthetic_env(rng, design), int(delay))


def separable_trial(
    instance_seeds: Sequence[np.random.SeedSequence],
    horizon: int = 1000,
    instance: int = 0,
    trial: int = 1,
    mc_samples: int = 4000,
) -> SeparableSemiBandit:
    """Instance ``instance`` of SSEM-UCB's synthetic trial ``trial`` (1-3; super arms of 6),
    once per replicate (``instance_seeds`` only count them)."""
    if trial not in TRIALS:
        raise ValueError(f"trial must be one of {sorted(TRIALS)}, got {trial!r}")
    seeds = [instance_seed(instance)] * len(list(instance_seeds))
    return trial_environment(TRIALS[trial], seeds, horizon=horizon, mc_samples=mc_samples)


def function_network(
    horizon: int = 30, function: str = "dropwave", sigma: float = 0.1
) -> FunctionNetworkBandit:
    """EXCBO's synthetic function network ``function`` (fixed, no random instance) at noise
    level ``sigma`` (the paper's mixture noise), ``horizon`` rounds."""
    if function not in FUNCTIONS:
        raise ValueError(f"function must be one of {sorted(FUNCTIONS)}, got {function!r}")
    return FUNCTIONS[function](sigma=sigma, horizon=horizon)
