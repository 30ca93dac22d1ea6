"""Speed and accuracy of the pooled-testing Monte Carlo and of its interpolation table (EXCBO
Sec. 7.4, the COVID-19 problem).

Usage::

    python benchmarks/bench_pooled_testing.py          # about 3 minutes on one idle core

One BLAS/OpenMP thread throughout. Reported, at BOFN's fidelity (10 000 households x 50
replications):

- one evaluation of :func:`test_properties` (one prevalence, one group size), cold (the
  population drawn) and warm (the population of that seed already drawn: a further prevalence
  or group size); all 200 group sizes at one prevalence in one call; the issue's target is
  <= 50 ms per evaluation;
- the plain-loop version of the same model (``loop_test_counts`` of
  ``tests/test_pooled_testing.py``: Python loops over replications, households, people, arrays
  and pools, as the original pure-Python code) and our speed-up;
- the time to build the table (77 prevalences x 200 group sizes);
- the table's interpolation error against the direct simulation (same seed, so common random
  numbers) at every mid-point and one random point between consecutive grid prevalences, for
  every group size 1..200: absolute errors of ``qfnr`` and ``qfpr``, of the shares the
  dynamics use (``p qfnr``, ``(1 - p) qfpr``), and the simulator's own Monte Carlo standard
  error at the same points; the same at the unit tests' fidelity (1 000 x 10);
- the COVID bandit: construction time (table cached), one ``E[y | a]`` with 10 000 samples,
  and the optimum found.

Results go to stdout and ``benchmarks/results/pooled_testing.json``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from causalbandits.envs import covid_testing as ct
from causalbandits.envs import pooled_testing as pt
from causalbandits.experiments.runner import processor

TARGET_SECONDS = 0.05
ROOT = Path(__file__).resolve().parents[1]


def loop_reference():
    """``loop_test_counts`` from the test module (the version the tests check)."""
    spec = importlib.util.spec_from_file_location(
        "test_pooled_testing", ROOT / "tests" / "test_pooled_testing.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.loop_test_counts


def median_seconds(function, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def evaluation_times(repeats: int) -> dict[str, float]:
    def cold() -> None:
        pt._population.cache_clear()
        pt.test_properties(0.01, 20)

    pt.test_properties(0.01, 20)  # warm-up (imports, first calls)
    prevalences = iter(np.linspace(0.011, 0.2, 10 * repeats))
    return {
        "cold": median_seconds(cold, repeats),
        "warm": median_seconds(lambda: pt.test_properties(next(prevalences), 20), repeats),
        "all_200_group_sizes": median_seconds(
            lambda: pt.test_properties(next(prevalences), np.arange(1, 201)), repeats
        ),
    }


def ratio_se(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """Standard error of ``sum(num) / sum(den)`` over the last axis (replications), by the
    linearisation of the ratio estimator."""
    n = numerator.shape[-1]
    ratio = numerator.sum(-1) / np.maximum(denominator.sum(-1), 1)
    residual = numerator - ratio[..., None] * denominator
    return np.sqrt(residual.var(-1, ddof=1) / n) / np.maximum(denominator.mean(-1), 1e-300)


def interpolation_error(households: int, replications: int) -> dict:
    """Table against direct simulation between the grid points (module docstring)."""
    grid = pt.PREVALENCE_GRID
    pt._cached_table.cache_clear()
    pt._population.cache_clear()
    start = time.perf_counter()
    table = pt.test_properties_table(households, replications)  # kept for the bandit
    build = time.perf_counter() - start
    middle = (grid[:-1] + grid[1:]) / 2
    random_points = grid[:-1] + np.random.default_rng(0).random(len(grid) - 1) * np.diff(grid)
    p = np.concatenate([middle, random_points])
    groups = np.arange(1, pt.MAX_GROUP_SIZE + 1)
    counts = pt.pooled_test_counts(p[:, None], groups[None], households, replications)
    direct = counts.properties()
    estimate = table(p[:, None], groups[None])
    defined = counts.infected.sum(-1) > 0
    errors = {
        "qfnr": np.abs(estimate.qfnr - direct.qfnr)[defined],
        "qfpr": np.abs(estimate.qfpr - direct.qfpr),
        "free_infected_share": (p[:, None] * np.abs(estimate.qfnr - direct.qfnr)),
        "quarantined_healthy_share": ((1 - p[:, None]) * np.abs(estimate.qfpr - direct.qfpr)),
        "tests_per_person": np.abs(estimate.tests_per_person - direct.tests_per_person),
    }
    se = {
        "qfnr": ratio_se(counts.missed, counts.infected)[defined],
        "qfpr": ratio_se(counts.false_quarantined, counts.non_infected),
    }

    def summary(values: np.ndarray) -> dict[str, float]:
        return {
            "median": float(np.median(values)),
            "q95": float(np.quantile(values, 0.95)),
            "max": float(values.max()),
        }

    within = {k: float(np.mean(errors[k] <= np.maximum(2 * se[k], 1e-3))) for k in ("qfnr", "qfpr")}
    return {
        "households": households,
        "replications": replications,
        "grid_points": len(grid),
        "table_build_seconds": build,
        "points": int(p.size * groups.size),
        "abs_error": {k: summary(v) for k, v in errors.items()},
        "monte_carlo_se": {k: summary(v) for k, v in se.items()},
        "share_within_2se_or_1e-3": within,
        "qfnr_points_undefined": int((~defined).sum()),
    }


def covid_bandit() -> dict:
    start = time.perf_counter()
    env = ct.covid_pooled_testing()
    construction = time.perf_counter() - start
    action = np.random.default_rng(0).random((1, 3))
    seconds = median_seconds(lambda: env.expected_reward(action), 5)
    mean, se = env._expected_reward.estimate(env.optimal_action)
    return {
        "construction_seconds_table_cached": construction,
        "expected_reward_seconds_one_action_10000_samples": seconds,
        "optimal_pool_sizes": ct.pool_size(env.optimal_action).tolist(),
        "optimal_action": env.optimal_action.tolist(),
        "optimum": env.optimum,
        "optimum_se": float(se),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--loop-repeats", type=int, default=2)
    parser.add_argument(
        "--out", default=str(Path(__file__).parent / "results" / "pooled_testing.json")
    )
    args = parser.parse_args()
    with threadpool_limits(1):
        times = evaluation_times(args.repeats)
        print(
            f"one evaluation (10 000 x 50): cold {times['cold'] * 1e3:.1f} ms, warm "
            f"{times['warm'] * 1e3:.1f} ms (target <= {TARGET_SECONDS * 1e3:.0f} ms); all 200 "
            f"group sizes {times['all_200_group_sizes'] * 1e3:.0f} ms"
        )
        loop = loop_reference()
        loop_seconds = median_seconds(
            lambda: loop(0.01, 20, pt.HOUSEHOLDS, pt.REPLICATIONS, 0), args.loop_repeats
        )
        speedup = {k: loop_seconds / times[k] for k in ("cold", "warm")}
        speedup["all_200_group_sizes"] = 200 * loop_seconds / times["all_200_group_sizes"]
        print(
            f"plain loop: {loop_seconds:.2f} s per evaluation; speed-up cold "
            f"{speedup['cold']:.0f}x, warm {speedup['warm']:.0f}x, 200 group sizes in one call "
            f"{speedup['all_200_group_sizes']:.0f}x"
        )
        accuracy = {}
        for households, replications in ((1000, 10), (pt.HOUSEHOLDS, pt.REPLICATIONS)):
            result = interpolation_error(households, replications)
            accuracy[f"{households}x{replications}"] = result
            err, se = result["abs_error"], result["monte_carlo_se"]
            print(
                f"table {households} x {replications}: built in "
                f"{result['table_build_seconds']:.1f} s; |error| median / 95% / max: "
                + "; ".join(
                    f"{k} {v['median']:.2g} / {v['q95']:.2g} / {v['max']:.2g}"
                    for k, v in err.items()
                )
                + "; Monte Carlo se median: "
                + ", ".join(f"{k} {v['median']:.2g}" for k, v in se.items())
                + "; share within max(2 se, 0.001): "
                + ", ".join(f"{k} {v:.3f}" for k, v in result["share_within_2se_or_1e-3"].items())
            )
        bandit = covid_bandit()
        print(
            f"COVID bandit: built in {bandit['construction_seconds_table_cached']:.1f} s "
            f"(table cached); E[y|a] one action "
            f"{bandit['expected_reward_seconds_one_action_10000_samples'] * 1e3:.0f} ms; optimum "
            f"{bandit['optimum']:.3f} +- {bandit['optimum_se']:.3f} at pool sizes "
            f"{bandit['optimal_pool_sizes']}"
        )
    result = {
        "households": pt.HOUSEHOLDS,
        "replications": pt.REPLICATIONS,
        "evaluation_seconds": times,
        "target_seconds": TARGET_SECONDS,
        "loop_reference_seconds": loop_seconds,
        "speedup_vs_loop": speedup,
        "interpolation": accuracy,
        "covid_bandit": bandit,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "processor": processor(),
        "threads": 1,
    }
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
