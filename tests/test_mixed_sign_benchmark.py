"""The mixed-sign network benchmark: its spec and the verdicts of its report."""

from __future__ import annotations

import numpy as np
import pandas as pd

from causalbandits.bench.mixed_sign import TUNED, build_report, networks
from causalbandits.papers.catalogue import load_experiment


def test_the_benchmark_is_in_the_catalogue_and_its_spec_builds():
    experiment = load_experiment("mixed-sign-networks", quick=True)
    spec = experiment.spec
    assert [s["instance"] for s in spec.settings] == [0, 1]
    experiment.validate()  # every environment and policy builds
    full = networks(False).spec
    assert full.horizon == 5000 and full.replicates == 10 and len(full.settings) == 4
    budgets = {a.label: a.params.get("deviation_budget") for a in full.algorithms}
    assert budgets["Robust-LCB C=sqrt(T)"] == np.sqrt(5000)


def long_table(regret: dict[int, dict[str, list[float]]]) -> pd.DataFrame:
    """The rows at T of ``{network: {algorithm: regret per replicate}}``."""
    rows = [
        {"instance": i, "algorithm": a, "replicate": r, "t": 10, "cum_regret": value}
        for i, per_algorithm in regret.items()
        for a, values in per_algorithm.items()
        for r, value in enumerate(values)
    ]
    return pd.DataFrame(rows)


def test_the_report_checks_each_network_with_paired_differences():
    regret = {
        "UCB1": [100, 110, 90],
        "LinSEM-TS": [10, 12, 8],
        "LinSEM-UCB": [101, 111, 92],  # paired +1, +1, +2: above UCB1 by 4 se
        TUNED: [99, 112, 91],  # -1, +2, +1: within 2 se
        "CSL-UCB": [50, 40, 60],
    }
    report = build_report(long_table({0: regret}))
    test = "paired difference over 3 replicates, threshold 2 se; lower in"
    assert "| expectation | ours | verdict | test |" in report
    rows = report.splitlines()
    assert (
        f"| network 0: LinSEM-TS beats UCB1 | difference -90 ± 5 | holds | {test} 3 of 3 |" in rows
    )
    assert (
        f"| network 0: LinSEM-UCB beats UCB1 | difference 1 ± 0 | contradicted | {test} 0 of 3 |"
        in rows
    )
    assert (
        f"| network 0: {TUNED} beats UCB1 | difference 1 ± 1 | "
        f"opposite direction, not significant | {test} 1 of 3 |"
    ) in report
    assert (
        f"| network 0: CSL-UCB beats UCB1 | difference -50 ± 12 | holds | {test} 3 of 3 |" in rows
    )
    assert (
        "| network 0: LinSEM-TS has the lowest regret | lowest: LinSEM-TS; LinSEM-TS - CSL-UCB: "
        f"difference -40 ± 7 | holds | {test} 3 of 3 |"
    ) in report
    # CSL's limit on the network (population_subgraphs; docs/reproductions/mixed-sign.md:
    # 16 of 72 true edges kept).
    assert "## CSL with infinitely many observational samples" in report
    assert "| network 0 | 72 | 16 / 3 / 21 |" in report


def test_the_lowest_regret_is_paired_against_the_next_lowest_learner():
    close = {"UCB1": [100, 110, 90], "LinSEM-TS": [10, 12, 8], "CSL-UCB": [9, 10, 9]}
    lower = {"UCB1": [100, 110, 90], "LinSEM-TS": [10, 12, 8], "CSL-UCB": [5, 7, 3]}
    report = build_report(long_table({0: close, 1: lower}))
    assert (
        "| network 0: LinSEM-TS has the lowest regret | lowest: CSL-UCB; LinSEM-TS - CSL-UCB: "
        "difference 1 ± 1 | opposite direction, not significant |"
    ) in report
    assert (
        "| network 1: LinSEM-TS has the lowest regret | lowest: CSL-UCB; LinSEM-TS - CSL-UCB: "
        "difference 5 ± 0 | contradicted |"
    ) in report
