"""Per-round cost of the CSL-UCB paper's algorithms at N = 10 (1024 arms, T = 1500).

Usage::

    python benchmarks/bench_csl_ucb.py [--systems 10]

One system at a time (R = 1), one core, averaged over the first ``--systems`` systems of
E3 (its replicates, with their noise). Reports milliseconds per round and the ratio to the
floor (the same environment driven by the random policy). The peer (the authors' public
code) is not timed here, so no ratio against it is reported: a peer's cost is only
comparable timed side by side (docs/speed.md). Then the same systems as the vectorised
replicates of one environment, as E3's tasks run them: milliseconds per round and system.
Results go to stdout and to ``benchmarks/results/csl_ucb.json``.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from causalbandits.experiments import simulate
from causalbandits.experiments.runner import processor
from causalbandits.papers.csl_ucb.bandits import e3
from causalbandits.policies import POLICIES

TARGETS_MS = {"CSL-UCB": 2.0, "LinSEM-TS": 0.5}
POLICY_SPECS = {
    "CSL-UCB": ("csl-ucb", {"preset": "authors-code"}),
    "LinSEM-TS": ("linsem-ts", {"mode_parents": True}),
    "GOLEM-MAB": ("golem-mab", {}),
    "UCB": ("ucb", {"exploration": 1.0}),
    "random": ("random", {}),
}


def ms_per_round(label: str, systems: int, stacked: bool) -> float:
    """Milliseconds per round and system: one system at a time, or all in one stack."""
    name, params = POLICY_SPECS[label]
    experiment = e3()
    groups = [range(systems)] if stacked else [[system] for system in range(systems)]
    total = 0.0
    for replicates in groups:
        env = experiment.setup(0, "UCB", replicates).env  # E3's replicates: systems and noise
        policy = POLICIES[name](env.problem, **params)
        policy.reset(np.random.SeedSequence(replicates[0]).spawn(len(replicates)))
        start = time.perf_counter()
        simulate(env, policy, 1)
        total += time.perf_counter() - start
    return total / systems / experiment.spec.horizon * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", type=int, default=10)
    args = parser.parse_args()
    with threadpool_limits(limits=1):
        costs = {label: ms_per_round(label, args.systems, False) for label in POLICY_SPECS}
        stacked = {label: ms_per_round(label, args.systems, True) for label in POLICY_SPECS}
    floor = costs["random"]
    rows = []
    print(f"{'algorithm':10s} {'ms/round':>9s} {'x floor':>8s} {'stacked ms/round/system':>24s}")
    for label, cost in costs.items():
        rows.append(
            {
                "algorithm": label,
                "ms_per_round": cost,
                "x_floor": cost / floor,
                "target_ms": TARGETS_MS.get(label),
                "stacked_ms_per_round_and_system": stacked[label],
            }
        )
        print(f"{label:10s} {cost:9.3f} {cost / floor:8.1f} {stacked[label]:24.3f}")
    for label, target in TARGETS_MS.items():
        print(f"{label} target <= {target} ms/round: {costs[label] <= target}")
    out = Path(__file__).with_name("results") / "csl_ucb.json"
    out.parent.mkdir(exist_ok=True)
    report = {
        "machine": platform.platform(),
        "processor": processor(),
        "systems": args.systems,
        "rows": rows,
    }
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
