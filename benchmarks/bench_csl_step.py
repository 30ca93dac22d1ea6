"""CPU seconds of one CSL step (CSL-UCB's graph learning) before and after the speed work.

Usage::

    python benchmarks/bench_csl_step.py [--nodes 10 50 107] [--regimes default uncapped]
        [--repeats 3] [--before-max-nodes 50] [--before-repeats 1]
    python benchmarks/bench_csl_step.py --in-use   # CSL-UCB on the 50-node networks
    python benchmarks/bench_csl_step.py --count    # the work of each row's step

One CSL step is what CSL-UCB runs every ``graph_every`` rounds with its default
``joint_order``: :func:`~causalbandits.estimators.csl.learn_joint_subgraphs` on both modes
(``k = 5``, ``w = 1``). The data: a seeded random system of the paper's generator
(:func:`~causalbandits.envs.random_systems.random_soft_intervention_sem`, authors' preset)
and 1000 rounds of uniformly random arms, about 500 samples per (node, mode) pair. Two
sample regimes: ``default``, the first ``max(100, N)`` samples per pair (the sample cap of
CSL-UCB's default preset; at N = 10 the authors' code's ``n_max = 100`` of E3/E4), and
``uncapped``, all of them (the paper's preset). BEFORE is the code of commit :data:`BEFORE`,
before the speed work of issue 33 (``git show`` into scratch modules, no change to the git
state), run where ``N <= --before-max-nodes`` or with the default cap. Both get the same
data and KSG seed; the learned graphs and weights are compared (the generator states differ
since the jitter is drawn once per pair). Times are CPU seconds (``time.process_time``, one
BLAS thread), the median of the repeats. Results go to stdout and
``benchmarks/results/csl_step.json`` (rows not rerun are kept).

``--in-use`` times instead what a user meets: CSL-UCB at its default preset, one replicate
(seed 14) on each of the four 50-node mixed-sign networks at T = 5,000, the CPU seconds of
the whole run and of its CSL steps (``in_use`` in the same file). ``--count`` adds to each
saved row the work its step does, from one more step: the KSG terms computed, the refits,
and the CPU seconds of the compiled selection and of the refits within it.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
import types
import warnings
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from causalbandits.envs.random_systems import random_soft_intervention_sem
from causalbandits.estimators import csl
from causalbandits.estimators.subgraph import SubgraphData
from causalbandits.experiments.runner import processor

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


def system_data(n_nodes: int, seed: int, cap: int | None) -> SubgraphData:
    """The sub-graph data of ``ROUNDS`` random-arm rounds on a seeded random system, the
    first ``cap`` samples per pair (all with ``None``)."""
    rng = np.random.default_rng(seed)
    sem = random_soft_intervention_sem(n_nodes, rng)
    masks = rng.random((ROUNDS, n_nodes)) < 0.5
    x = sem.sample(masks, rng)
    data = SubgraphData(n_nodes, sem.noise.mean, cap)
    data.extend(x, masks)
    return data


def one_step(module: types.ModuleType, data: SubgraphData, seed: int) -> tuple[float, tuple, dict]:
    """CPU seconds, results and final generator state of one joint CSL step."""
    generator = np.random.default_rng(seed)
    nodes = (np.arange(data.n_nodes), np.arange(data.n_nodes))
    start = time.process_time()
    results = module.learn_joint_subgraphs(data, 5, 1.0, generator, nodes)
    return time.process_time() - start, results, generator.bit_generator.state


def same(a: tuple, b: tuple, field: str) -> bool:
    """Whether two steps' results agree on ``field`` (adjacency or weights) in both modes."""
    return all(
        np.array_equal(getattr(x, field), getattr(y, field)) for x, y in zip(a, b, strict=True)
    )


def cap_of(n_nodes: int, regime: str) -> int | None:
    """The sample cap of ``regime``: CSL-UCB's default ``max(100, N)``, or none."""
    return max(100, n_nodes) if regime == "default" else None


def in_use() -> list[dict]:
    """CPU seconds of one CSL-UCB replicate (default preset) per 50-node mixed-sign network
    at T = 5,000, and of its CSL steps."""
    from causalbandits.envs.mixed_sign import mixed_sign_bandit
    from causalbandits.experiments.simulate import compare
    from causalbandits.policies import csl_ucb

    steps: list[float] = []
    learn = csl_ucb.learn_joint_subgraphs

    def timed(*args, **kwargs):
        start = time.process_time()
        result = learn(*args, **kwargs)
        steps.append(time.process_time() - start)
        return result

    rows = []
    csl_ucb.learn_joint_subgraphs = timed
    try:
        for network in range(4):
            steps.clear()
            env = mixed_sign_bandit(5000, network)
            start = time.process_time()
            compare(env, {"CSL-UCB": csl_ucb.CSLUCB}, replicates=1, seed=14, progress=False)
            row = {
                "network": network,
                "cpu_s": time.process_time() - start,
                "csl_steps": len(steps),
                "csl_cpu_s": sum(steps),
                "longest_step_cpu_s": max(steps),
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
    finally:
        csl_ucb.learn_joint_subgraphs = learn
    return rows


def work(data: SubgraphData, seed: int) -> dict:
    """The KSG terms and refits of one step and where its CPU time goes: the compiled
    selection (``select_edge``: bounds, blocks and their KSG terms) and the refits (least
    squares, ridge guard, standardised residual, penalties); ns per term = selection time /
    terms, in the step itself. (A kernel pass repeated on one block costs less than half
    as much per term as its first pass, the branch predictor having learnt the block, so
    repeated passes would understate it.)"""
    tally = {"ksg_terms": 0, "refits": 0, "selection_cpu_s": 0.0, "refit_cpu_s": 0.0}

    def timed(key: str, call, *args):
        start = time.process_time()
        result = call(*args)
        tally[key] += time.process_time() - start
        return result

    made = []

    class Counting(csl.KSGEdgeScores):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self)

        def refresh(self, slot, node, candidates):
            tally["ksg_terms"] += int(self.edges.done[slot, :, node].sum())
            tally["refits"] += 1
            return timed("refit_cpu_s", super().refresh, slot, node, candidates)

        def highest(self, allowed):
            return timed("selection_cpu_s", super().highest, allowed)

    original, csl.KSGEdgeScores = csl.KSGEdgeScores, Counting
    try:
        step_cpu_s, *_ = one_step(csl, data, seed)
    finally:
        csl.KSGEdgeScores = original
    (scores,) = made
    tally["ksg_terms"] += int(scores.edges.done.sum())  # the final refits' terms
    tally["step_cpu_s"] = step_cpu_s
    tally["selection_ns_per_term"] = 1e9 * tally["selection_cpu_s"] / tally["ksg_terms"]
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[10, 50, 107])
    parser.add_argument(
        "--regimes", nargs="+", default=["default", "uncapped"], choices=["default", "uncapped"]
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--before-max-nodes", type=int, default=50)
    parser.add_argument("--before-repeats", type=int, default=1)
    parser.add_argument("--seed", type=int, default=33)
    parser.add_argument("--in-use", action="store_true", help="CSL-UCB on 50-node networks")
    parser.add_argument("--count", action="store_true", help="the work of each saved row")
    args = parser.parse_args()
    if args.count:
        payload = json.loads(RESULTS.read_text())
        one_step(csl, system_data(6, 0, None), 0)  # compile or load first
        with threadpool_limits(limits=1):
            for row in payload["rows"]:
                n = row["n_nodes"]
                data = system_data(n, args.seed + n, cap_of(n, row["regime"]))
                row.update(work(data, args.seed + 1000 + n))
                print(json.dumps(row), flush=True)
        RESULTS.write_text(json.dumps(payload, indent=2) + "\n")
        print(f"wrote {RESULTS}")
        return
    if args.in_use:
        with threadpool_limits(limits=1), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the few-samples warning, expected here
            rows = in_use()
        payload = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
        payload["in_use"] = rows
        RESULTS.write_text(json.dumps(payload, indent=2) + "\n")
        print(f"wrote {RESULTS}")
        return
    head = load_before()
    rows = []
    one_step(csl, system_data(6, 0, None), 0)  # numba's one-off compile or cache load
    with threadpool_limits(limits=1):
        for n in args.nodes:
            for regime in args.regimes:
                if n == 10 and regime == "uncapped":
                    continue  # N = 10 is CSL-UCB's paper size: its cap only
                data = system_data(n, args.seed + n, cap_of(n, regime))
                ksg_seed = args.seed + 1000 + n
                after = [one_step(csl, data, ksg_seed) for _ in range(args.repeats)]
                row = {
                    "n_nodes": n,
                    "regime": regime,
                    "samples_per_pair": [int(data.counts.min()), int(data.counts.max())],
                    "after_cpu_s": float(np.median([t for t, *_ in after])),
                    "after_repeats": args.repeats,
                    "goal_cpu_s": GOALS_S.get(n),
                    "kept_edges": [int(r.adjacency.sum()) for r in after[0][1]],
                }
                if n <= args.before_max_nodes or regime == "default":
                    before = [one_step(head, data, ksg_seed) for _ in range(args.before_repeats)]
                    row["before_cpu_s"] = float(np.median([t for t, *_ in before]))
                    row["before_repeats"] = args.before_repeats
                    row["speedup"] = row["before_cpu_s"] / row["after_cpu_s"]
                    row["identical_graphs"] = same(before[0][1], after[0][1], "adjacency")
                    row["identical_weights"] = same(before[0][1], after[0][1], "weights")
                rows.append(row)
                print(json.dumps(row), flush=True)
    if RESULTS.exists():  # keep the rows not rerun
        rerun = {(row["n_nodes"], row["regime"]) for row in rows}
        previous = json.loads(RESULTS.read_text())["rows"]
        kept = [r for r in previous if (r["n_nodes"], r.get("regime")) not in rerun]
        rows = sorted(kept + rows, key=lambda row: (row["n_nodes"], row.get("regime", "")))
    for row in rows:
        if row["goal_cpu_s"] is not None:
            row["goal_met"] = row["after_cpu_s"] <= row["goal_cpu_s"]
    saved = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    payload = {
        **saved,
        "benchmark": "one joint CSL step (learn_joint_subgraphs, k=5, w=1), CPU seconds",
        "rounds": ROUNDS,
        "before": BEFORE,
        "machine": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "processor": processor(),
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
