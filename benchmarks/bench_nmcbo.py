"""Cost of one NMCBO proposal beside the other causal-BO methods (EXCBO paper, App. C.1:
MCBO takes "10+ times" the CPU time of the other methods).

Usage::

    python benchmarks/bench_nmcbo.py            # a few minutes on one idle core

One proposal (``propose``) of each method on the same data: Dropwave (sigma = 0.05, mixture
noise), ``n`` uniform random actions and their observed node values (``n`` in
``--observations``, default 20 and 50), every policy built with ``n_init = 6`` (MCBO's
``2(|A| + 1)``) and its default settings, one torch thread. NMCBO runs with the
reference's 1000 re-initialisations (the default) and with 64 (a labelled option), both
with the per-re-initialisation moving-average stopping rule (at most 1000 steps), and with
64 at a fixed budget of 1000 SGD steps (what ``maxiter = 1000`` would cost if the rule
never fired; its 1000-re-initialisation cost is extrapolated linearly). Reported: the
median over ``--repeats`` data sets of the seconds per proposal, NMCBO's mean and largest
number of SGD steps per re-initialisation, and each method's time over the mean of EXCBO's,
GP-UCB's and EICF's (the paper's "other three methods"). Results go to stdout and
``benchmarks/results/nmcbo.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from botorch.exceptions.warnings import (
    BadInitialCandidatesWarning,
    NumericsWarning,
    OptimizationWarning,
)

from causalbandits.envs.bo_problems import dropwave
from causalbandits.experiments.runner import processor
from causalbandits.policies import nmcbo
from causalbandits.policies.bo_baselines import EICF, GPUCB, MCBO
from causalbandits.policies.causal_bo import SequentialOptimizer
from causalbandits.policies.excbo import EXCBO
from causalbandits.policies.nmcbo import NMCBO

N_INIT = 6
SIGMA = 0.05
FIXED_STEPS = 1000
#: name -> policy factory (every policy's defaults but the named settings).
POLICIES: dict[str, Callable[..., SequentialOptimizer]] = {
    "NMCBO (64)": lambda p: NMCBO(p, n_init=N_INIT, reinits=64),
    "NMCBO (1000)": lambda p: NMCBO(p, n_init=N_INIT, reinits=1000),
    "NMCBO (64, fixed 1000 steps)": lambda p: NMCBO(
        p, n_init=N_INIT, reinits=64, stopping="fixed", max_steps=FIXED_STEPS
    ),
    "MCBO": lambda p: MCBO(p, n_init=N_INIT),
    "EXCBO": lambda p: EXCBO(p, n_init=N_INIT),
    "UCB": lambda p: GPUCB(p, n_init=N_INIT),
    "EICF": lambda p: EICF(p, n_init=N_INIT),
}
OTHERS = ("EXCBO", "UCB", "EICF")


def data(observations: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``observations`` uniform random actions on Dropwave and their node values."""
    env = dropwave(sigma=SIGMA, horizon=observations)
    env.reset(seed)
    actions = np.random.default_rng(seed).random((observations, 2))
    values = np.stack([env.step(a[None])[0] for a in actions])
    return actions, values


def one_proposal(name: str, observations: int, seed: int) -> dict[str, float]:
    """Seconds of one proposal of ``name`` on the data set ``(observations, seed)``, and
    NMCBO's SGD steps per re-initialisation."""
    actions, values = data(observations, seed)
    policy = POLICIES[name](dropwave(sigma=SIGMA, horizon=1).problem)
    policy.reset(seed)
    for action, node_values in zip(actions, values, strict=True):
        policy.observe(action, node_values)
    steps: list[torch.Tensor] = []
    train = nmcbo.NoisyHallucination.train

    def recorded(self, *args, **kwargs):
        trained, taken = train(self, *args, **kwargs)
        steps.append(taken)
        return trained, taken

    nmcbo.NoisyHallucination.train = recorded
    try:
        with warnings.catch_warnings():  # as SequentialOptimizer.suggest
            for category in (OptimizationWarning, BadInitialCandidatesWarning, NumericsWarning):
                warnings.simplefilter("ignore", category)
            start = time.perf_counter()
            policy.propose(seed)
            seconds = time.perf_counter() - start
    finally:
        nmcbo.NoisyHallucination.train = train
    row = {"seconds": seconds}
    if steps:
        row |= {"mean_steps": float(steps[0].double().mean()), "max_steps": int(steps[0].max())}
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--observations", type=int, nargs="+", default=[20, 50])
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "nmcbo.json"))
    args = parser.parse_args()
    torch.set_num_threads(1)
    one_proposal("UCB", 20, 0)  # warm-up: first-call costs of torch and GPyTorch
    results: dict[str, dict] = {}
    for n in args.observations:
        rows = {}
        for name in POLICIES:
            runs = [one_proposal(name, n, seed) for seed in range(args.repeats)]
            rows[name] = {k: float(np.median([run[k] for run in runs])) for k in runs[0]}
        if "NMCBO (64, fixed 1000 steps)" in rows:
            fixed = rows["NMCBO (64, fixed 1000 steps)"]["seconds"]
            rows["NMCBO (1000, fixed 1000 steps; extrapolated)"] = {"seconds": fixed * 1000 / 64}
        others = float(np.mean([rows[m]["seconds"] for m in OTHERS]))
        print(f"n = {n} observations (median of {args.repeats} data sets; one thread)")
        for name, row in rows.items():
            row["ratio_to_others"] = row["seconds"] / others
            steps = (
                f"; SGD steps per re-init mean {row['mean_steps']:.1f}, max {row['max_steps']:.0f}"
                if "mean_steps" in row
                else ""
            )
            print(
                f"  {name:45s} {row['seconds']:8.2f} s  {row['ratio_to_others']:7.1f}x the "
                f"mean of EXCBO, UCB, EICF{steps}"
            )
        results[str(n)] = {"others_mean_seconds": others, "policies": rows}
    result = {
        "problem": f"dropwave, sigma {SIGMA}, mixture noise",
        "n_init": N_INIT,
        "repeats": args.repeats,
        "observations": results,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "processor": processor(),
        "torch_threads": torch.get_num_threads(),
    }
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
