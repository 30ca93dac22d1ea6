"""The mixed-sign network benchmark: its spec and the verdicts of its report."""

from __future__ import annotations

import numpy as np
import pandas as pd

from causalbandits.experiments.runner import validate
from causalbandits.papers.catalogue import load_experiment
from causalbandits.papers.mixed_sign.benchmark import build_report, networks


def test_the_benchmark_is_in_the_catalogue_and_its_spec_builds():
    experiment = load_experiment("mixed-sign-networks", quick=True)
    spec = experiment.spec
    assert [s["instance"] for s in spec.settings] == [0, 1]
    validate(spec)  # every environment and policy builds
    full = networks(False).spec
    assert full.horizon == 5000 and full.replicates == 10 and len(full.settings) == 4
    budgets = {a.label: a.params.get("deviation_budget") for a in full.algorithms}
    assert budgets["Robust-LCB C=sqrt(T)"] == np.sqrt(5000)


def test_the_report_checks_each_network_with_paired_differences():
    rows = []
    regret = {"UCB1": [100, 110, 90], "LinSEM-TS": [10, 12, 8], "LinSEM-UCB": [100, 111, 91]}
    regret["CSL-UCB"] = [50, 40, 60]
    for algorithm, values in regret.items():
        for replicate, value in enumerate(values):
            rows.append(
                {
                    "instance": 0,
                    "algorithm": algorithm,
                    "replicate": replicate,
                    "t": 10,
                    "cum_regret": value,
                }
            )
    report = build_report(pd.DataFrame(rows))
    assert "| network 0: LinSEM-TS beats UCB1 | difference -90 ± 5 | yes |" in report
    assert "| network 0: LinSEM-UCB beats UCB1 | difference 1 ± 0 | NO |" in report
    assert "| network 0: CSL-UCB beats UCB1 | difference -50 ± 12 | yes |" in report
    assert "| network 0: LinSEM-TS has the lowest regret | lowest: LinSEM-TS | yes |" in report
    # CSL's limit on the network (population_subgraphs; README: 16 of 72 true edges kept).
    assert "## CSL with infinitely many observational samples" in report
    assert "| network 0 | 72 | 16 / 3 / 21 |" in report
