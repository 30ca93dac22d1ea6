"""The SSEM-UCB paper module: the trial grid, its determinism and its report."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from causalbandits.experiments.report import Claim
from causalbandits.papers.catalogue import load_experiment
from causalbandits.papers.ssem_ucb.report import claims
from causalbandits.papers.ssem_ucb.trials import SyntheticTrial, algorithm_family
from causalbandits.random import replicate_seeds

SMALL = dict(
    trial="linear",
    algorithms=("SSEM-UCB-JO q=1", "Taylor oracle q=1", "Random"),
    replicates=2,
    horizon=40,
    mc_samples=2000,
    checkpoint_every=10,
    name="ssem-test",
)


@pytest.fixture(scope="module")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[SyntheticTrial, pd.DataFrame]:
    grid = SyntheticTrial(**SMALL, chunk_size=2)
    return grid, grid.run(tmp_path_factory.mktemp("ssem"), progress=False)


def test_results_do_not_depend_on_the_chunking(small_run, tmp_path: Path) -> None:
    together = small_run[1]
    apart = SyntheticTrial(**SMALL, chunk_size=1).run(tmp_path, progress=False)
    columns = ["algorithm", "replicate", "t", "cum_regret", "optimal_now", "regret_now"]
    key = ["algorithm", "replicate", "t"]
    pd.testing.assert_frame_equal(
        together[columns].sort_values(key).reset_index(drop=True),
        apart[columns].sort_values(key).reset_index(drop=True),
    )
    final = together[together.t == 40].set_index(["algorithm", "replicate"])
    # degree 1 is exact on a linear SEM: the Taylor oracle plays the best super arm
    assert final.loc["Taylor oracle q=1", "regret_now"].max() < 0.02
    assert (
        final.loc["Random", "cum_regret"].min() > final.loc["SSEM-UCB-JO q=1", "cum_regret"].max()
    )
    np.testing.assert_allclose(final["avg_regret"], final["cum_regret"] / 40)


def test_report_checks_the_linear_statements(small_run, tmp_path: Path) -> None:
    grid, df = small_run
    found = claims(df, grid)
    assert all(isinstance(c, Claim) for c in found) and len(found) == 2
    assert "8 of 10" in found[1].text
    text = grid.report(df)
    assert "paper's claim" in text and "ms per round and replicate" in text
    assert [p.name for p in grid.plot(df, tmp_path)] == ["avg_regret.png", "cum_regret.png"]


def test_catalogue_lists_the_trials_with_quick_variants() -> None:
    for trial in ("linear", "trial-1", "trial-2", "trial-3"):
        quick = load_experiment(f"ssem-ucb-{trial}", quick=True)
        assert quick.horizon == 200 and quick.replicates == 2
    full = load_experiment("ssem-ucb-trial-1")
    assert full.replicates == 10 and "METS" in full.algorithms
    assert "SSEM-UCB-Norm q=4" in load_experiment("ssem-ucb-trial-2").algorithms


def test_algorithm_labels_are_parsed_and_checked() -> None:
    assert algorithm_family("SSEM-UCB-JO q=4") == ("SSEM-UCB-JO", 4)
    assert algorithm_family("METS") == ("METS", None)
    with pytest.raises(ValueError, match="unknown algorithm"):
        SyntheticTrial(algorithms=("UCB1",))
    with pytest.raises(ValueError, match="trial must be"):
        SyntheticTrial(trial="trial-4")
    with pytest.raises(ValueError, match="radius scales"):
        SyntheticTrial(radius_grid=(0.0,))


def test_tuning_report_tabulates_every_scale_pair() -> None:
    grid = load_experiment("ssem-ucb-tuning", quick=True)
    assert (
        grid.radius_grid
        and grid.bonus_grid
        and grid.seed != load_experiment("ssem-ucb-trial-1").seed
    )
    rows = [
        {
            "setting": 0,
            "algorithm": a,
            "radius_scale": r,
            "bonus_scale": b,
            "replicate": k,
            "t": 200,
            "avg_regret": r + b + (a == "SSEM-UCB-JO q=4") + 0.01 * k,
        }
        for a in ("SSEM-UCB-JO q=1", "SSEM-UCB-JO q=4")
        for r in (1.0, 0.01)
        for b in (1.0, 0.01)
        for k in range(2)
    ]
    text = grid.report(pd.DataFrame(rows))
    assert text.count("\n| 0.01 |") + text.count("\n| 1.0 |") == 4
    assert "mean over algorithms" in text
    assert "| 0.01 | 0.01 | 0.025 ± 0.005 | 1.025 ± 0.005 | 0.525 |" in text


def test_every_algorithm_label_builds_its_policy() -> None:
    grid = SyntheticTrial(trial="trial-2", design={"n_arms": 4}, super_arm_size=2, mc_samples=50)
    env = grid.environment(range(1), 0)
    labels = (*load_experiment("ssem-ucb-trial-2").algorithms, "SSEM-UCB-Norm q=2")
    scales = {"radius_scale": 0.5, "bonus_scale": 0.5}
    for label in labels:
        policy = grid.policy(label, env, scales)
        policy.reset(replicate_seeds(0, 0, [0], 1))
        assert policy.select().shape == (1, 4), label
    norm = grid.policy("SSEM-UCB-Norm q=2", env, scales)
    assert (norm.degree, norm.radius_scale) == (2, 0.5)
    with pytest.raises(ValueError, match="unknown design fields"):
        SyntheticTrial(design={"arms": 3})
