"""Per-round cost of the Robust-LCB paper's policies, and the full Fig. 1(c) sweep.

Usage::

    python benchmarks/bench_robust_lcb.py            # per-round costs (about a minute)
    python benchmarks/bench_robust_lcb.py --sweep    # also the full Fig. 1(c) sweep, 2 workers

Reports milliseconds per round per replicate at R = 100 replicates (vectorised) and at
R = 1, and the ratio to the floor (the same environment driven by the random policy). The
peer (the public LinSEM-UCB script of the paper authors' group) is not timed here, so no
ratio against it is reported: a peer's cost is only comparable timed side by side
(docs/speed.md). Results go to stdout and, as JSON, to ``benchmarks/results/robust_lcb.json``.
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from causalbandits.envs.robust_lcb import make_environment
from causalbandits.experiments import run_experiment
from causalbandits.experiments.runner import processor
from causalbandits.papers.robust_lcb.figures import PAPER_DEVIATIONS, fig1c
from causalbandits.policies import POLICIES

TARGET_MS_PER_ROUND_PER_REPLICATE = 0.017
SWEEP_LIMIT_SECONDS = 600


def ms_per_round(policy_name: str, replicates: int, rounds: int) -> float:
    """Wall milliseconds per round (select + regret + step + update), best of three."""
    best = np.inf
    for repeat in range(3):
        env = make_environment(horizon=40000, deviation_budget=200.0, **PAPER_DEVIATIONS)
        env.reset(repeat, replicates)
        policy = POLICIES[policy_name](env.problem)
        policy.reset(np.random.SeedSequence(repeat).spawn(replicates))
        start = time.perf_counter()
        for _ in range(rounds):
            actions = policy.select()
            env.pseudo_regret(actions)
            policy.update(actions, env.step(actions))
        best = min(best, (time.perf_counter() - start) / rounds * 1e3)
    return best


def per_round_table(rounds: int) -> list[dict]:
    rows = []
    for replicates in (100, 1):
        floor = ms_per_round("random", replicates, rounds) / replicates
        for name in ("linsem-ucb", "robust-lcb", "linsem-ts", "ucb", "random"):
            per_rep = ms_per_round(name, replicates, rounds) / replicates
            rows.append(
                {
                    "policy": name,
                    "replicates": replicates,
                    "ms_per_round_per_replicate": per_rep,
                    "x_floor": per_rep / floor,
                }
            )
    return rows


def sweep_seconds() -> float:
    spec = fig1c(quick=False).spec
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        run_experiment(spec, Path(out), jobs=2, backend="loky", progress=False)
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2000, help="rounds timed per run")
    parser.add_argument("--sweep", action="store_true", help="also time the full sweep")
    args = parser.parse_args()
    with threadpool_limits(limits=1):
        rows = per_round_table(args.rounds)
    print(f"{'policy':12s} {'R':>4s} {'ms/round/rep':>13s} {'x floor':>8s}")
    for row in rows:
        print(
            f"{row['policy']:12s} {row['replicates']:4d} "
            f"{row['ms_per_round_per_replicate']:13.5f} {row['x_floor']:8.1f}"
        )
    linsem = next(r for r in rows if r["policy"] == "linsem-ucb" and r["replicates"] == 100)
    verdict = linsem["ms_per_round_per_replicate"] <= TARGET_MS_PER_ROUND_PER_REPLICATE
    print(f"LinSEM-UCB target <= {TARGET_MS_PER_ROUND_PER_REPLICATE} ms/round/replicate: {verdict}")
    report = {
        "machine": platform.platform(),
        "python": platform.python_version(),
        "processor": processor(),
        "rows": rows,
    }
    if args.sweep:
        seconds = sweep_seconds()
        report["fig1c_sweep_seconds_2_workers"] = seconds
        print(f"full Fig. 1(c) sweep, 2 workers: {seconds:.0f} s (limit {SWEEP_LIMIT_SECONDS} s)")
    out = Path(__file__).with_name("results") / "robust_lcb.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
