"""CSL-UCB's and LinSEM-TS's defaults beside the papers' settings on the E3 systems (issue 33).

Usage::

    python benchmarks/bench_csl_presets.py [--systems 10] [--jobs 2]

The first ``--systems`` systems of E3 (N = 10, 1,024 arms, T = 1,500, E3's noise), every
learner on every system through the one round loop: regret at T (mean ± se over systems),
lock-ins (systems without an optimal pick in the last 100 rounds) and wall milliseconds per
round (the ``elapsed`` recorder; the machine's other load included, so compare within one
run). ``CSLUCB(problem)`` and ``LinSEMTS(problem)`` are the defaults a user gets.
Results go to stdout and to ``benchmarks/results/csl_presets.json``.
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
from pathlib import Path

from causalbandits.experiments.runner import processor
from causalbandits.experiments.spec import AlgorithmSpec
from causalbandits.papers.csl_ucb.bandits import BLOCK, CSLUCBExperiment, block_shares, e3

LEARNERS = (
    AlgorithmSpec("CSL-UCB (default)", "csl-ucb"),
    AlgorithmSpec("CSL-UCB authors-code", "csl-ucb", {"preset": "authors-code"}),
    AlgorithmSpec("CSL-UCB paper", "csl-ucb", {"preset": "paper"}),
    AlgorithmSpec("LinSEM-TS (default)", "linsem-ts"),
    AlgorithmSpec("LinSEM-TS mode_parents=True", "linsem-ts", {"mode_parents": True}),
    AlgorithmSpec("LinSEM-TS mode_parents=False", "linsem-ts", {"mode_parents": False}),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    base = e3(quick=True).spec
    spec = base.replace(
        name="csl-presets",
        algorithms=list(LEARNERS),
        replicates=args.systems,
        chunk_size=1,
        recorders=["elapsed"],
    )
    with tempfile.TemporaryDirectory() as out:
        df = CSLUCBExperiment(spec, part="E3").run(Path(out), jobs=args.jobs, progress=False)
    last = df[df["t"] == spec.horizon]
    final_block = block_shares(df)
    locked = final_block[final_block["t"] == spec.horizon].groupby("algorithm")["block_share"]
    rows = []
    print(f"{'learner':30s} {'regret at T':>16s} {'lock-ins':>9s} {'ms/round':>9s}")
    for label in [a.label for a in LEARNERS]:
        regret = last.loc[last["algorithm"] == label, "cum_regret"]
        elapsed = last.loc[last["algorithm"] == label, "elapsed"]
        lock_ins = int((locked.get_group(label) == 0).sum())
        ms = 1e3 * float(elapsed.mean()) / spec.horizon
        se = float(regret.std(ddof=1) / len(regret) ** 0.5)
        rows.append(
            {
                "learner": label,
                "regret_mean": float(regret.mean()),
                "regret_se": se,
                "lock_ins": lock_ins,
                "systems": int(regret.size),
                "ms_per_round": ms,
            }
        )
        shown = f"{regret.mean():9.1f} ± {se:5.1f}"
        print(f"{label:30s} {shown} {lock_ins:5d}/{regret.size:<3d} {ms:9.2f}")
    out = Path(__file__).with_name("results") / "csl_presets.json"
    out.parent.mkdir(exist_ok=True)
    report = {
        "machine": platform.platform(),
        "processor": processor(),
        "systems": args.systems,
        "horizon": spec.horizon,
        "lock_in": f"no optimal pick in the last {BLOCK} rounds",
        "rows": rows,
    }
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
