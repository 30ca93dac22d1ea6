"""The example spec in examples/ runs through the command line."""

from pathlib import Path

import pandas as pd

from causalbandits.cli import main
from causalbandits.experiments import ExperimentSpec

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "robust_lcb_small.yaml"


def test_example_spec_runs(tmp_path):
    spec = ExperimentSpec.from_yaml(EXAMPLE).replace(horizon=300, replicates=2, chunk_size=2)
    small = tmp_path / "small.yaml"
    spec.to_yaml(small)
    assert main(["run", str(small), "--out", str(tmp_path / "out"), "--no-progress"]) == 0
    table = pd.read_csv(tmp_path / "out" / "results.csv")
    assert set(table["algorithm"]) == {a.label for a in spec.algorithms}
    assert (tmp_path / "out" / "final_vs_deviation_budget.png").stat().st_size > 1000
