"""Per-round cost of SSEM-UCB and its baselines on the paper's synthetic trials, the split of
SSEM-UCB-JO's round, and the wall time of the full trial 1.

Usage::

    python benchmarks/bench_ssem_ucb.py            # per-round costs and the split
    python benchmarks/bench_ssem_ucb.py --trial1   # also the full trial 1 on 2 workers

Per-round cost: one policy against one instance of trial 1 (N = 10, s = 6, 848 super arms) or
trial 3 (N = 15, 9,949 super arms), ``--rounds`` rounds timed (select, regret oracle, step,
update; refits included, so the cost is amortised over them), one core, R = 1 replicate;
reported in milliseconds per round and as a ratio to the floor (the random super arm on the
same environment). The paper publishes no code, so there is no peer figure; the issue's
targets are 20 ms (N = 10, q = 4) and 200 ms (N = 15, q = 4) per round and replicate.
The split: SSEM-UCB-JO q = 4's time in graph refits (lasso), jets, interval products (the
internal UCB), the external bonus and the argmax. Policies use the presets' settings (the
tuned radius and bonus scales). Results: stdout and
``benchmarks/results/ssem_ucb.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from causalbandits.experiments.runner import processor
from causalbandits.experiments.simulate import simulate
from causalbandits.papers.ssem_ucb.trials import SyntheticTrial, preset
from causalbandits.policies.ssem_ucb import SSEMUCBJO
from causalbandits.random import policy_stream, replicate_seeds

TARGETS_MS = {"trial-1": 20.0, "trial-3": 200.0}
TRIAL1_TARGET_SECONDS = 30 * 60


def ms_per_round(grid: SyntheticTrial, algorithm: str, rounds: int) -> float:
    """Wall milliseconds per round of one replicate (the environment built beforehand)."""
    env = grid.environment(range(1), 0)
    scales = {"radius_scale": grid.radius_scale, "bonus_scale": grid.bonus_scale}
    policy = grid.policy(algorithm, env, scales)
    policy.reset(replicate_seeds(0, 0, range(1), policy_stream(algorithm)))
    start = time.perf_counter()
    simulate(env, policy, np.array([rounds]))
    return (time.perf_counter() - start) / rounds * 1e3


class TimedJO(SSEMUCBJO):
    """SSEM-UCB-JO that adds the seconds of each part of its round to ``timings``."""

    timings: dict[str, float]

    def _timed(self, part: str, call, *args):
        start = time.perf_counter()
        out = call(*args)
        self.timings[part] += time.perf_counter() - start
        return out

    def fit_graph(self, which):
        return self._timed("refits (lasso)", super().fit_graph, which)

    def _refit(self, which):
        start = time.perf_counter()
        super()._refit(which)
        self.timings["jets"] += time.perf_counter() - start

    def internal_upper_bounds(self):
        return self._timed("interval products", super().internal_upper_bounds)

    def external_bonus(self):
        return self._timed("external bonus", super().external_bonus)

    def select(self):
        start = time.perf_counter()
        out = super().select()
        self.timings["select"] += time.perf_counter() - start
        return out

    def update(self, actions, feedback):
        return self._timed("update (statistics)", super().update, actions, feedback)


def split(grid: SyntheticTrial, rounds: int) -> dict[str, float]:
    """Milliseconds per round of each part of SSEM-UCB-JO q = 4's round."""
    env = grid.environment(range(1), 0)
    policy = TimedJO(
        env.problem,
        degree=4,
        dictionary=grid.instance_design().families,
        radius_scale=grid.radius_scale,
        bonus_scale=grid.bonus_scale,
        signal_width=None if grid.instance_design().arm_law != "normal" else 1.0,
    )
    policy.timings = defaultdict(float)
    policy.reset(replicate_seeds(0, 0, range(1), policy_stream("timed")))
    start = time.perf_counter()
    simulate(env, policy, np.array([rounds]))
    total = time.perf_counter() - start
    t = dict(policy.timings)
    t["jets"] -= t.get("refits (lasso)", 0.0)  # _refit includes the lasso
    inside = t["select"] - t["jets"] - t.get("refits (lasso)", 0.0)
    t["argmax and rest of select"] = inside - t["interval products"] - t["external bonus"]
    t["environment and loop"] = total - t["select"] - t["update (statistics)"]
    del t["select"]
    out = {part: 1e3 * seconds / rounds for part, seconds in t.items()}
    out["total"] = 1e3 * total / rounds
    out["refits"] = int(policy.refits[0])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--trial1", action="store_true", help="also time the full trial 1")
    args = parser.parse_args()
    report: dict = {"processor": processor(), "rounds": args.rounds}
    with threadpool_limits(limits=1):
        for trial in ("trial-1", "trial-3"):
            grid = preset(trial)
            algorithms = [*grid.algorithms]
            if "IGP-UCB" not in algorithms:
                algorithms.append("IGP-UCB")
            costs = {a: ms_per_round(grid, a, args.rounds) for a in algorithms}
            floor = costs["Random"]
            report[trial] = {
                "target_ms": TARGETS_MS[trial],
                "ms_per_round": costs,
                "ratio_to_floor": {a: c / floor for a, c in costs.items()},
                "split_jo_q4_ms": split(grid, args.rounds),
            }
            print(f"\n{trial}: ms per round and replicate (floor = Random {floor:.3f} ms)")
            for algorithm, cost in costs.items():
                print(f"  {algorithm:22s} {cost:9.2f} ms  x{cost / floor:8.1f} floor")
            print("  split of SSEM-UCB-JO q=4 (ms per round):")
            for part, value in report[trial]["split_jo_q4_ms"].items():
                print(f"    {part:28s} {value:9.3f}")
    if args.trial1:
        with tempfile.TemporaryDirectory() as out:
            start = time.perf_counter()
            preset("trial-1").run(Path(out), jobs=2, progress=False)
            seconds = time.perf_counter() - start
        report["trial1_full_seconds_2_workers"] = seconds
        print(f"\nfull trial 1 on 2 workers: {seconds:.0f} s (target {TRIAL1_TARGET_SECONDS} s)")
    path = Path(__file__).parent / "results" / "ssem_ucb.json"
    path.write_text(json.dumps(report, indent=2) + "\n")
    print(f"\nwritten {path} (cpus: {os.cpu_count()})")


if __name__ == "__main__":
    main()
