"""LinSEM-UCB's radii on the benchmark networks: regret beside coverage (issue 33).

Usage::

    python benchmarks/bench_radius_coverage.py [--networks mixed-sign|real-structures]
        [--horizon 2000] [--replicates 3] [--jobs 2]

On each of the four networks of ``mixed-sign-networks`` (or the five real structures of the
benchmark's ``real-structures`` family: asia, sachs, child, insurance, alarm), LinSEM-UCB
with the interval bound and each radius: the default self-normalised one, the paper's, and
the paper's times the scale tuned on other networks (0.1, no longer valid), and UCB1 for
reference. Per learner and network: regret at T (mean ± se over replicates) and, from the
``coverage`` recorder, the share of rounds in which the upper bound of the best arm, and of
every arm, is at least its true mean (the optimism the regret bound rests on; the lowest
share over the replicates).
Results go to stdout and to ``benchmarks/results/radius_coverage.json`` (the real
structures: ``radius_coverage_real_structures.json``).
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
from pathlib import Path

from causalbandits.bench.families import FAMILIES
from causalbandits.bench.mixed_sign import RADIUS_SCALE, MixedSignExperiment, networks
from causalbandits.experiments.evidence import PairedComparison
from causalbandits.experiments.report import mean_pm
from causalbandits.experiments.runner import processor
from causalbandits.experiments.spec import AlgorithmSpec

LEARNERS = (
    AlgorithmSpec("LinSEM-UCB (default: self-normalised)", "linsem-ucb"),
    AlgorithmSpec("LinSEM-UCB (paper radius)", "linsem-ucb", {"radius": "theory"}),
    AlgorithmSpec(
        f"LinSEM-UCB (paper radius x {RADIUS_SCALE})",
        "linsem-ucb",
        {"radius": "theory", "beta_scale": RADIUS_SCALE},
    ),
)
RESULTS = Path(__file__).resolve().parent / "results"
#: The networks' specs (their settings and seeds) and the results file of each.
NETWORKS = {
    "mixed-sign": (lambda: networks(False).spec, "radius_coverage.json"),
    "real-structures": (
        lambda: FAMILIES["real-structures"].spec("standard", AlgorithmSpec("UCB1", "ucb")),
        "radius_coverage_real_structures.json",
    ),
}


def run(learners: list[AlgorithmSpec], recorders: list[str], args: argparse.Namespace):
    spec = NETWORKS[args.networks][0]().replace(
        name="radius-coverage",
        algorithms=learners,
        horizon=args.horizon,
        replicates=args.replicates,
        chunk_size=args.replicates,
        recorders=recorders,
    )
    with tempfile.TemporaryDirectory() as out:
        df = MixedSignExperiment(spec).run(Path(out), jobs=args.jobs, progress=False)
    last = df[df["t"] == args.horizon]
    return last.assign(instance=last["setting"]) if "instance" not in last else last


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--networks", choices=sorted(NETWORKS), default="mixed-sign")
    parser.add_argument("--horizon", type=int, default=2000)
    parser.add_argument("--replicates", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    ucb = run([AlgorithmSpec("UCB1", "ucb")], [], args)
    last = run(list(LEARNERS), ["coverage"], args)
    rows = []
    print(f"{'learner':42s} {'network':>7s} {'regret':>14s} {'best':>6s} {'all':>6s}  vs UCB1")
    for spec in LEARNERS:
        for instance, group in last[last["algorithm"] == spec.label].groupby("instance"):
            group = group.set_index("replicate")
            reference = ucb[ucb["instance"] == instance].set_index("replicate")["cum_regret"]
            versus = PairedComparison.between(group["cum_regret"], reference, direction=-1)
            row = {
                "learner": spec.label,
                "network": int(instance),
                "regret": mean_pm(group["cum_regret"]),
                "ucb1_regret": mean_pm(reference),
                "covers_best": float(group["covers_best"].min()),
                "covers_all": float(group["covers_all"].min()),
                "against_ucb1": versus.describe(0),
                "verdict": versus.verdict.value,
            }
            rows.append(row)
            print(
                f"{spec.label:42s} {instance:>7d} {row['regret']:>14s} "
                f"{row['covers_best']:6.3f} {row['covers_all']:6.3f}  {row['verdict']}"
            )
    meta = {"horizon": args.horizon, "replicates": args.replicates, "jobs": args.jobs}
    meta["machine"] = f"{platform.machine()}, {platform.python_version()}"
    meta["processor"] = processor()
    if args.networks != "mixed-sign":
        meta["networks"] = args.networks
    path = RESULTS / NETWORKS[args.networks][1]
    path.write_text(json.dumps({"settings": meta, "rows": rows}, indent=2) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
