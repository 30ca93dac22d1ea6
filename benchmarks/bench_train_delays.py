"""Where the time of the train-delay runs goes (SSEM-UCB Sec. V-B; the issue's split: jets,
fixed point, refits, argmax over the super arms).

Usage::

    python benchmarks/bench_train_delays.py [--data FOLDER] [--mc-samples 256]

One BLAS thread, one core. Measured: the fit of the SEM to the hours, the simulator's Monte
Carlo table of ``mu`` over the 60,460 super arms, and one full run (``T = 342``) of each
algorithm of the ``ssem-ucb-train-delays`` preset on the simulator and on the replay, with the
learner's time split into

- ``refit``: the dictionary-lasso fits of ``F_hat`` (:meth:`DictionaryLasso.fit`);
- ``fixed point``: the cyclic solves of the jets' constant terms (:class:`ChordSEM`);
- ``jets``: the rest of :func:`reward_jets` (one linear solve per degree, the truncated
  products);
- ``scores``: the internal and external UCBs of every super arm and the argmax (eq. 9);
- ``reconstruction``: the in-sample error of Fig. 3 (a diagnostic, recorded every round);
- the rest (the environment, the recorders, the moments' power sums).

The random policy's run is the floor. Results go to stdout and
``benchmarks/results/train_delays.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from collections import defaultdict
from pathlib import Path

from threadpoolctl import threadpool_limits

from causalbandits.estimators import dictionary_lasso, jets
from causalbandits.papers.ssem_ucb import train_delays
from causalbandits.policies import ssem_ucb
from causalbandits.scm import separable

ROOT = Path(__file__).resolve().parents[1]
SPENT: dict[str, float] = defaultdict(float)


def timed(owner: object, name: str, label: str) -> None:
    """Replace ``owner.name`` by a wrapper adding its wall time to ``SPENT[label]``."""
    original = getattr(owner, name)

    def wrapper(*args, **kwargs):
        started = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            SPENT[label] += time.perf_counter() - started

    setattr(owner, name, wrapper)


class JetSolves(separable.ChordSEM):
    """The jets' cyclic solves of the constant terms (timed as ``fixed point``)."""


def instrument() -> None:
    timed(dictionary_lasso.DictionaryLasso, "fit", "refit")
    timed(ssem_ucb, "taylor_coefficients", "jets (all)")
    timed(JetSolves, "solve", "fixed point")
    jets.ChordSEM = JetSolves  # only the jets' solves, not the environment's
    timed(ssem_ucb.SSEMUCBJO, "scores", "scores")
    timed(ssem_ucb.SSEMUCBJO, "reconstruction_error", "reconstruction")


def run(grid: train_delays.TrainDelayRun, label: str) -> dict[str, float]:
    """One run of ``label`` with its time split."""
    SPENT.clear()
    started = time.perf_counter()
    frame = grid.run_chunk({"algorithm": label}, 0, range(1))
    total = time.perf_counter() - started
    split = dict(SPENT)
    split["jets"] = split.pop("jets (all)", 0.0) - split.get("fixed point", 0.0)
    split["rest"] = total - sum(split.values())
    split["total"] = total
    split["rounds"] = int(frame["t"].max())
    return split


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None, help="the train-delay data folder")
    parser.add_argument("--mc-samples", type=int, default=train_delays.MC_SAMPLES)
    args = parser.parse_args()
    results: dict[str, object] = {"machine": platform.processor() or platform.machine()}
    instrument()
    with threadpool_limits(limits=1):
        folder = train_delays.TrainDelayRun(data_path=args.data).folder()
        started = time.perf_counter()
        train_delays.fitted(folder)
        results["fit seconds"] = time.perf_counter() - started
        for environment in train_delays.ENVIRONMENTS:
            grid = train_delays.TrainDelayRun(
                environment=environment, data_path=folder, mc_samples=args.mc_samples
            )
            started = time.perf_counter()
            grid.oracle()
            results["simulator table seconds"] = results.get(
                "simulator table seconds", time.perf_counter() - started
            )
            for label in grid.algorithms:
                split = run(grid, label)
                results[f"{environment}: {label}"] = split
                print(environment, label, {k: round(v, 2) for k, v in split.items()}, flush=True)
    floor = {
        env: results[f"{env}: Random"]["total"]  # type: ignore[index]
        for env in train_delays.ENVIRONMENTS
    }
    results["ratio to the floor"] = {
        key: value["total"] / floor[key.split(":")[0]]  # type: ignore[index]
        for key, value in results.items()
        if ":" in key and isinstance(value, dict)
    }
    print(json.dumps(results, indent=1))
    out = ROOT / "benchmarks" / "results" / "train_delays.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({**results, "cpus": os.cpu_count()}, indent=1) + "\n")


if __name__ == "__main__":
    main()
