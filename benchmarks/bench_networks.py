"""Linear-SEM bandits on mixed-sign networks: cost of the valid UCB, its looseness, memory.

Usage::

    python benchmarks/bench_networks.py

1. Milliseconds per round (one core, 10 replicates vectorised, T = 600) on mixed-sign
   network 0 (50 nodes, 32 arms; ``envs.mixed_sign``): the random policy (the floor), UCB1,
   LinSEM-TS and LinSEM-UCB with the greedy and the interval solver; the issue's target is
   interval within 3x of greedy.
2. Looseness on small networks (12 nodes, 16 arms) after 100 random rounds: the interval
   bound against block-coordinate ascent (a feasible value of eq. 18, so a lower bound of
   the exact maximum), and how often greedy falls below that feasible value (not optimistic).
3. Peak memory above the import baseline (a fresh process) to build the 107-node,
   1024-arm network and run LinSEM-UCB (interval) for 20 rounds on 10 replicates.

Results go to stdout and to ``benchmarks/results/networks.json``.
"""

from __future__ import annotations

import json
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from causalbandits.envs.mixed_sign import mixed_sign_bandit
from causalbandits.estimators.propagation import block_coordinate_ascent, propagate_means
from causalbandits.experiments.runner import processor
from causalbandits.policies import UCB1, LinSEMTS, LinSEMUCB, RandomPolicy

POLICIES = {
    "random": RandomPolicy,
    "UCB1": UCB1,
    "LinSEM-TS": LinSEMTS,
    "LinSEM-UCB greedy": LinSEMUCB,
    "LinSEM-UCB interval": lambda problem: LinSEMUCB(problem, solver="interval"),
}
MEMORY_SCRIPT = """
import resource
import numpy as np
from threadpoolctl import threadpool_limits
from causalbandits.envs.mixed_sign import mixed_sign_bandit
from causalbandits.policies import LinSEMUCB
threadpool_limits(limits=1)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
env = mixed_sign_bandit(100, 0, n_nodes=107, n_intervenable=10)
env.reset(0, 10)
policy = LinSEMUCB(env.problem, solver="interval")
policy.reset(np.random.SeedSequence(0).spawn(10))
for _ in range(20):
    arms = policy.select()
    policy.update(arms, env.step(arms))
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) / 1024)
"""


def ms_per_round(label: str, rounds: int = 600, replicates: int = 10) -> float:
    env = mixed_sign_bandit(rounds, 0)
    env.reset(0, replicates)
    policy = POLICIES[label](env.problem)
    policy.reset(np.random.SeedSequence(0).spawn(replicates))
    start = time.perf_counter()
    for _ in range(rounds):
        arms = policy.select()
        env.pseudo_regret(arms)
        policy.update(arms, env.step(arms))
    return (time.perf_counter() - start) / rounds * 1e3


def looseness(instances: int = 5, rounds: int = 100) -> dict[str, float]:
    """Mean (interval - feasible) relative to the spread of the arms' true means, and the
    share of arms where greedy is below the feasible value."""
    gaps, below = [], []
    for instance in range(instances):
        env = mixed_sign_bandit(rounds, instance, n_nodes=12, n_intervenable=4)
        env.reset(instance, 2)
        policy = LinSEMUCB(env.problem, solver="interval")
        policy.reset(np.random.SeedSequence(instance).spawn(2))
        rng = np.random.default_rng(instance)
        for _ in range(rounds):
            arms = rng.integers(env.n_actions, size=2)
            policy.update(arms, env.step(arms))
        ridge, beta = policy.ridge, policy.beta_scale * policy.beta(policy.t + 1)
        args = (policy.plan, policy.noise_mean, ridge.theta)
        feasible = block_coordinate_ascent(
            *args[:1], policy.masks, *args[1:], ridge.ellipsoid_inv, beta, policy.reward_node, 3
        )
        greedy = propagate_means(*args, policy.reward_node, ridge.ellipsoid_inv, beta)
        scale = np.ptp(env.expected_rewards) or 1.0
        gaps.append(np.mean(policy.upper_confidence_bounds() - feasible) / scale)
        below.append(np.mean(greedy < feasible - 1e-9))
    return {
        "interval_minus_feasible_over_spread": float(np.mean(gaps)),
        "greedy_below": float(np.mean(below)),
    }


def peak_memory_mb() -> float:
    out = subprocess.run(
        [sys.executable, "-c", MEMORY_SCRIPT], capture_output=True, text=True, check=True
    )
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    with threadpool_limits(limits=1):
        costs = {label: ms_per_round(label) for label in POLICIES}
        loose = looseness()
    memory = peak_memory_mb()
    floor, greedy = costs["random"], costs["LinSEM-UCB greedy"]
    print(f"{'policy':22s} {'ms/round':>9s} {'x floor':>8s} {'x greedy':>9s}")
    for label, cost in costs.items():
        print(f"{label:22s} {cost:9.3f} {cost / floor:8.1f} {cost / greedy:9.2f}")
    ratio = costs["LinSEM-UCB interval"] / greedy
    print(f"interval within 3x of greedy: {ratio <= 3} ({ratio:.2f}x)")
    print(
        f"looseness: interval - feasible = {loose['interval_minus_feasible_over_spread']:.2f} "
        f"x the spread of the true means; greedy below a feasible value on "
        f"{loose['greedy_below']:.0%} of arms"
    )
    print(f"107 nodes, 1024 arms: peak memory {memory:.0f} MB above import (target < 200)")
    out = Path(__file__).with_name("results") / "networks.json"
    report = {
        "machine": platform.platform(),
        "processor": processor(),
        "ms_per_round": costs,
        "interval_over_greedy": ratio,
        "looseness": loose,
        "peak_memory_mb_107_nodes_1024_arms": memory,
    }
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
