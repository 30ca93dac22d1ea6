"""CPU seconds of one CSL step (CSL-UCB's graph learning) before and after the lazy KSG scores.

Usage::

    python benchmarks/bench_csl_step.py [--nodes 10 50 107] [--repeats 3]
        [--before-max-nodes 50] [--before-repeats 1]

One CSL step is what CSL-UCB runs every ``graph_every`` rounds with its default
``joint_order``: :func:`~causalbandits.estimators.csl.learn_joint_subgraphs` on both modes
(``k = 5``, ``w = 1``). The data: a seeded random system of the paper's generator
(:func:`~causalbandits.envs.random_systems.random_soft_intervention_sem`, authors' preset)
and 1000 rounds of uniformly random arms, so about 500 samples per (node, mode) pair
(the size of issue 33's measurement); at N = 10 the authors-code cap ``n_max = 100`` of
E3/E4. BEFORE is the code of commit :data:`BEFORE`, the last before the lazy scores (``git
show`` into a scratch module, no change to the git state); AFTER the working tree. Both get
the same data and KSG seed; the learned graphs, weights and final generator states are
compared. Times are CPU seconds
(``time.process_time``, one BLAS thread), the median of the repeats. Results go to stdout
and ``benchmarks/results/csl_step.json`` (rows of
sizes not rerun are kept).
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
import types
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from causalbandits.envs.random_systems import random_soft_intervention_sem
from causalbandits.estimators import csl
from causalbandits.estimators.subgraph import SubgraphData

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "csl_step.json"
ROUNDS = 1000
GOALS_S = {50: 1.0, 107: 5.0}
#: The commit whose ``csl.py`` and ``mutual_information.py`` are timed as BEFORE.
BEFORE = "c9fc6da"


def load_before(commit: str = BEFORE) -> types.ModuleType:
    """``csl.py`` and ``mutual_information.py`` as of ``commit``, as scratch modules (the
    other modules are the working tree's)."""

    def show(path: str) -> str:
        return subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{commit}:{path}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout

    modules = {}
    for name, path in (
        ("head_mutual_information", "src/causalbandits/estimators/mutual_information.py"),
        ("head_csl", "src/causalbandits/estimators/csl.py"),
    ):
        source = show(path).replace(
            "from causalbandits.estimators.mutual_information import",
            "from head_mutual_information import",
        )
        module = types.ModuleType(name)
        module.__file__ = f"{commit}:{path}"
        sys.modules[name] = module
        exec(compile(source, module.__file__, "exec"), module.__dict__)
        modules[name] = module
    return modules["head_csl"]


def system_data(n_nodes: int, seed: int) -> SubgraphData:
    """The sub-graph data of ``ROUNDS`` random-arm rounds on a seeded random system."""
    rng = np.random.default_rng(seed)
    sem = random_soft_intervention_sem(n_nodes, rng)
    masks = rng.random((ROUNDS, n_nodes)) < 0.5
    x = sem.sample(masks, rng)
    data = SubgraphData(n_nodes, sem.noise.mean, 100 if n_nodes == 10 else None)
    data.extend(x, masks)
    return data


def one_step(module: types.ModuleType, data: SubgraphData, seed: int) -> tuple[float, tuple, dict]:
    """CPU seconds, results and final generator state of one joint CSL step."""
    generator = np.random.default_rng(seed)
    nodes = (np.arange(data.n_nodes), np.arange(data.n_nodes))
    start = time.process_time()
    results = module.learn_joint_subgraphs(data, 5, 1.0, generator, nodes)
    return time.process_time() - start, results, generator.bit_generator.state


def identical(a: tuple, b: tuple) -> bool:
    return all(
        np.array_equal(x.adjacency, y.adjacency) and np.array_equal(x.weights, y.weights)
        for x, y in zip(a, b, strict=True)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[10, 50, 107])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--before-max-nodes", type=int, default=50)
    parser.add_argument("--before-repeats", type=int, default=1)
    parser.add_argument("--seed", type=int, default=33)
    args = parser.parse_args()
    head = load_before()
    rows = []
    one_step(csl, system_data(6, 0), 0)  # numba's one-off compile or cache load: not timed
    with threadpool_limits(limits=1):
        for n in args.nodes:
            data = system_data(n, args.seed + n)
            ksg_seed = args.seed + 1000 + n
            after = [one_step(csl, data, ksg_seed) for _ in range(args.repeats)]
            row = {
                "n_nodes": n,
                "samples_per_pair": [int(data.counts.min()), int(data.counts.max())],
                "after_cpu_s": float(np.median([t for t, *_ in after])),
                "after_repeats": args.repeats,
                "goal_cpu_s": GOALS_S.get(n),
                "kept_edges": [int(r.adjacency.sum()) for r in after[0][1]],
            }
            if n <= args.before_max_nodes:
                before = [one_step(head, data, ksg_seed) for _ in range(args.before_repeats)]
                row["before_cpu_s"] = float(np.median([t for t, *_ in before]))
                row["before_repeats"] = args.before_repeats
                row["speedup"] = row["before_cpu_s"] / row["after_cpu_s"]
                row["identical_graphs_and_weights"] = identical(before[0][1], after[0][1])
                row["identical_generator_state"] = before[0][2] == after[0][2]
            rows.append(row)
            print(json.dumps(row), flush=True)
    if RESULTS.exists():  # keep the rows of sizes not rerun
        rerun = {row["n_nodes"] for row in rows}
        kept = [r for r in json.loads(RESULTS.read_text())["rows"] if r["n_nodes"] not in rerun]
        rows = sorted(kept + rows, key=lambda row: row["n_nodes"])
    for row in rows:
        if row["goal_cpu_s"] is not None:
            row["goal_met"] = row["after_cpu_s"] <= row["goal_cpu_s"]
    payload = {
        "benchmark": "one joint CSL step (learn_joint_subgraphs, k=5, w=1), CPU seconds",
        "rounds": ROUNDS,
        "machine": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "processor": platform.processor() or platform.machine(),
            "note": "2 cores shared with other jobs (wall time 2-3x slower); CPU time via "
            "time.process_time, one BLAS thread",
        },
        "rows": rows,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(payload, indent=2) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
