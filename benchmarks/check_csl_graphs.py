"""Do the compiled CSL and the previous CSL learn the same graphs on the E1-E4 systems?

Usage::

    python benchmarks/check_csl_graphs.py [--replicates R] [--parts E1 E2 E3 E4]

Runs the CSL-UCB paper's experiments in-process (only their CSL methods: E1's CSL and
CSL-nw, E2's CSL-UCB, E3's CSL-UCB, E4's CSL-UCB-CD) with every CSL call answered by the
working tree, and on the same data (a copy of the same generator) by the code of commit
:data:`BEFORE` (``git show`` into scratch modules). The jitter that breaks KSG's ties is drawn
differently since the compiled path (once per pair instead of at every refit), so the
generators part after the first call: the graphs must still agree. Writes
``benchmarks/results/csl_graphs.json``: per part, the CSL calls compared and how many
graphs differ.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import time
from pathlib import Path

import numpy as np
from bench_csl_step import load_before

from causalbandits.estimators import csl
from causalbandits.papers.csl_ucb import bandits, fn_errors, graphs

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "csl_graphs.json"
#: The last commit before the compiled selection (its graphs are the saved reproductions').
BEFORE = "c0e0db4"
#: Per part: the experiment and the labels of its CSL methods.
PARTS = {
    "E1": (graphs.e1, ("CSL", "CSL-nw")),
    "E2": (fn_errors.e2, None),
    "E3": (bandits.e3, ("CSL-UCB",)),
    "E4": (bandits.e4, ("CSL-UCB-CD",)),
}


class Comparison:
    """Wraps a CSL entry point: the working tree's answer, checked against ``before``'s."""

    def __init__(self, new, old) -> None:
        self.new, self.old = new, old
        self.calls = self.different = 0

    def __call__(self, *args, **kwargs):
        def twin(value):  # the generator copied, everything else as given
            return copy.deepcopy(value) if isinstance(value, np.random.Generator) else value

        before = self.old(*map(twin, args), **{key: twin(v) for key, v in kwargs.items()})
        result = self.new(*args, **kwargs)
        results = result if isinstance(result, tuple) else (result,)
        befores = before if isinstance(before, tuple) else (before,)
        self.calls += 1
        self.different += any(
            not np.array_equal(a.adjacency, b.adjacency)
            for a, b in zip(results, befores, strict=True)
        )
        return result


def run_part(part: str, replicates: int | None, before) -> dict:
    """Run ``part``'s CSL methods (on ``replicates`` systems, default the paper's) with
    every CSL call compared; the counts."""
    make, labels = PARTS[part]
    experiment = make()
    if replicates is not None:
        experiment = experiment.with_replicates(replicates)
    replicates = experiment.replicates
    if part == "E1":
        experiment = dataclasses.replace(experiment, methods=labels)
    comparisons = {
        (graphs, "learn_subgraphs"): Comparison(csl.learn_subgraphs, before.learn_subgraphs),
        (csl_ucb_policy(), "learn_joint_subgraphs"): Comparison(
            csl.learn_joint_subgraphs, before.learn_joint_subgraphs
        ),
        (csl_ucb_policy(), "learn_subgraphs"): Comparison(
            csl.learn_subgraphs, before.learn_subgraphs
        ),
    }
    originals = {target: getattr(*target) for target in comparisons}
    for (module, name), comparison in comparisons.items():
        setattr(module, name, comparison)
    start = time.process_time()
    try:
        for setting, point in enumerate(experiment.points()):
            if part == "E1" or labels is None or point["algorithm"] in labels:
                experiment.run_chunk(point, setting, range(replicates))
    finally:
        for (module, name), original in originals.items():
            setattr(module, name, original)
    return {
        "replicates": replicates,
        "csl_calls": sum(c.calls for c in comparisons.values()),
        "different_graphs": sum(c.different for c in comparisons.values()),
        "cpu_s": round(time.process_time() - start, 1),
    }


def csl_ucb_policy():
    from causalbandits.policies import csl_ucb as policy

    return policy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=None)
    parser.add_argument("--parts", nargs="+", default=list(PARTS), choices=list(PARTS))
    args = parser.parse_args()
    before = load_before(BEFORE)
    rows = {}
    for part in args.parts:
        rows[part] = run_part(part, args.replicates, before)
        print(part, json.dumps(rows[part]), flush=True)
    kept = json.loads(RESULTS.read_text())["parts"] if RESULTS.exists() else {}
    payload = {
        "check": "graphs of every CSL call of the CSL-UCB paper's experiments, compiled vs "
        f"commit {BEFORE} on the same data",
        "parts": {**kept, **rows},
    }
    RESULTS.write_text(json.dumps(payload, indent=2) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
