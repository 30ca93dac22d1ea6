"""Per-round cost of the NDC-SEM paper's policies and the full synthetic sweep (Sec. V-A).

Usage::

    python benchmarks/bench_ndc_sem.py               # per-round costs (about a minute)
    python benchmarks/bench_ndc_sem.py --sweep       # also the full sweep, 2 workers

Per-round cost: one policy on the paper's environment (N = 10, s = 4, constant delay
D = 200, one instance per replicate), ``--rounds`` rounds timed (select + regret + step +
update, the OR bookkeeping of the experiment's loop included), at R = 20 replicates
(vectorised, the sweep's task size) and at R = 1, on one core; reported as milliseconds per
round and per replicate-round, and as a ratio to the floor (the same environment driven by
the random super arm). The paper's authors publish no code, so there is no peer figure.
The sweep: 3 delays x 6 algorithms x 20 replicates x T = 5000 with ``--jobs`` workers
(target <= 120 s on 2 cores). Results go to stdout and ``benchmarks/results/ndc_sem.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from causalbandits.experiments.runner import processor
from causalbandits.experiments.simulate import simulate
from causalbandits.papers.ndc_sem.synthetic import ALGORITHMS, SyntheticExperiment
from causalbandits.random import policy_stream, replicate_seeds

SWEEP_TARGET_SECONDS = 120
DELAY = 200


def ms_per_round(algorithm: str, replicates: int, rounds: int, repeats: int = 2) -> float:
    """Wall milliseconds per round for ``replicates`` replicates, best of ``repeats``."""
    experiment = SyntheticExperiment(horizon=rounds, change_points=(), replicates=replicates)
    best = np.inf
    for repeat in range(repeats):
        env = experiment.environment(range(replicates), DELAY)
        policy = experiment.policy(algorithm, env, experiment.lam, experiment.xi[DELAY])
        policy.reset(replicate_seeds(repeat, 0, range(replicates), policy_stream(algorithm)))
        start = time.perf_counter()
        simulate(env, policy, np.array([rounds]), experiment.recorders(env))
        best = min(best, (time.perf_counter() - start) / rounds * 1e3)
    return best


def per_round_table(rounds: int) -> list[dict]:
    rows = []
    for replicates in (20, 1):
        costs = {a: ms_per_round(a, replicates, rounds) for a in ALGORITHMS}
        floor = costs["Random"]
        for algorithm, cost in costs.items():
            rows.append(
                {
                    "algorithm": algorithm,
                    "replicates": replicates,
                    "ms_per_round": cost,
                    "ms_per_round_per_replicate": cost / replicates,
                    "x_floor": cost / floor,
                }
            )
    return rows


def sweep(jobs: int) -> dict:
    """Time the full sweep; per-task seconds from the manifest."""
    experiment = SyntheticExperiment()
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        experiment.run(out, jobs=jobs, progress=False)
        seconds = time.perf_counter() - start
        manifest = json.loads((Path(out) / "manifest.json").read_text(encoding="utf-8"))
    by_algorithm: dict[str, float] = {}
    for task in manifest["tasks"]:
        by_algorithm[task["algorithm"]] = by_algorithm.get(task["algorithm"], 0.0) + task["seconds"]
    return {
        "jobs": jobs,
        "seconds": seconds,
        "target_seconds": SWEEP_TARGET_SECONDS,
        "tasks": len(manifest["tasks"]),
        "task_seconds_by_algorithm": by_algorithm,
        "load_average_after": os.getloadavg(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1000, help="rounds timed per run")
    parser.add_argument("--sweep", action="store_true", help="also time the full sweep")
    parser.add_argument("--jobs", type=int, default=2, help="workers of the sweep")
    args = parser.parse_args()
    report: dict = {
        "machine": platform.platform(),
        "processor": processor(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_average_before": os.getloadavg(),
        "delay": DELAY,
        "rounds": args.rounds,
    }
    with threadpool_limits(limits=1):
        rows = per_round_table(args.rounds)
    report["rows"] = rows
    print(f"{'algorithm':10s} {'R':>3s} {'ms/round':>9s} {'ms/round/rep':>13s} {'x floor':>8s}")
    for row in rows:
        print(
            f"{row['algorithm']:10s} {row['replicates']:3d} {row['ms_per_round']:9.3f} "
            f"{row['ms_per_round_per_replicate']:13.4f} {row['x_floor']:8.1f}"
        )
    if args.sweep:
        result = sweep(args.jobs)
        report["sweep"] = result
        verdict = result["seconds"] <= SWEEP_TARGET_SECONDS
        print(
            f"full sweep (3 delays x 6 algorithms x 20 replicates x T = 5000), "
            f"{args.jobs} workers: {result['seconds']:.0f} s "
            f"(target <= {SWEEP_TARGET_SECONDS} s: {verdict})"
        )
        for algorithm, seconds in result["task_seconds_by_algorithm"].items():
            print(f"  {algorithm:10s} {seconds:7.1f} task-seconds")
    out = Path(__file__).with_name("results") / "ndc_sem.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
