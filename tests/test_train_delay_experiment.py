"""The train-delay experiment of SSEM-UCB (Sec. V-B): its grid, records and report."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from causalbandits.experiments.evidence import Verdict
from causalbandits.papers.ssem_ucb.train_delay_report import (
    decode,
    distances_km,
    lowest_regret,
    switches_per_block,
)
from causalbandits.papers.ssem_ucb.train_delays import TrainDelayRun, fitted, simulator

FOLDER = Path(__file__).resolve().parents[2] / "shared" / "data" / "train_delays"
needs_data = pytest.mark.skipif(
    not FOLDER.is_dir(), reason=f"the train-delay data are not available at {FOLDER}"
)


def test_switches_are_counted_per_block_after_the_initial_rounds() -> None:
    codes = np.array([1, 2, 4, 4, 4, 8, 8, 16, 16, 16, 16])
    # after round 2: rounds 3..11 against their predecessors, blocks of 4 rounds (the last
    # block, one round without a switch, scaled to 4 rounds)
    assert switches_per_block(codes, 2, block=4).tolist() == [2, 1, 0]
    assert switches_per_block(codes[:-1], 2, block=3).tolist() == [1, 2, 0]


def test_super_arm_codes_decode_to_their_stations_and_distances_are_haversine() -> None:
    assert decode(0b100101, 8).tolist() == [0, 2, 5]
    # one degree of latitude is about 111.2 km; the distance matrix is symmetric
    d = distances_km(np.array([51.0, 52.0, 51.0]), np.array([10.0, 10.0, 11.0]))
    assert d[0, 1] == pytest.approx(111.19, abs=0.05)
    np.testing.assert_allclose(d, d.T)
    assert d[0, 2] == pytest.approx(111.19 * np.cos(np.radians(51.0)), rel=1e-3)


@pytest.mark.parametrize(
    ("differences", "verdict"),
    [
        ([-3.0, -2.5, -3.5], Verdict.HOLDS),
        ([1.0, -1.2, 0.4], Verdict.NOT_SIGNIFICANT),
        ([3.0, 2.5, 3.5], Verdict.CONTRADICTED),
        ([-3.0], Verdict.NA),  # one run: no standard error
    ],
)
def test_the_lowest_regret_is_paired_against_the_best_other(differences, verdict) -> None:
    base = [20.0, 25.0, 30.0][: len(differences)]
    totals = {
        "SSEM-UCB-JO q=3": [b + d for b, d in zip(base, differences, strict=True)],
        "SEM-UCB (linear dictionary)": base,
        "Random": [b + 20 for b in base],
    }
    last = pd.DataFrame(
        [
            {"algorithm": label, "replicate": r, "cum_regret": value}
            for label, values in totals.items()
            for r, value in enumerate(values)
        ]
    )
    claim = lowest_regret(last, "SSEM-UCB-JO q=3")
    assert claim.verdict is verdict
    assert "SSEM-UCB-JO q=3 minus SEM-UCB" in claim.ours
    assert claim.test.startswith(f"paired difference over {len(differences)} replicate")


def test_bad_configurations_are_refused() -> None:
    with pytest.raises(ValueError, match="environment"):
        TrainDelayRun(environment="trains")
    with pytest.raises(ValueError, match="unknown algorithm"):
        TrainDelayRun(algorithms=("SSEM-UCB-JO q=0",))
    with pytest.raises(ValueError, match="unknown algorithm"):
        TrainDelayRun(algorithms=("METS",))
    with pytest.raises(ValueError, match="max_contraction"):
        TrainDelayRun(max_contraction=1.0)
    with pytest.raises(ValueError, match="distinct"):
        TrainDelayRun(algorithms=("Random", "Random"))
    with pytest.raises(ValueError, match="lam"):
        TrainDelayRun(lam=0.0)
    with pytest.raises(ValueError, match="target_density"):
        TrainDelayRun(target_density=0.0)


@needs_data
@pytest.mark.parametrize("environment", ["simulator", "replay"])
def test_the_records_match_the_environment(environment: str, tmp_path: Path) -> None:
    """The recorded super arm of every round has the recorded regret under the simulator's
    ``mu``; SSEM-UCB's in-sample reconstruction error is recorded every round."""
    grid = TrainDelayRun(
        environment=environment,
        algorithms=("SSEM-UCB-JO q=2", "Random"),
        super_arm_size=2,
        horizon=15,
        mc_samples=16,
        data_path=str(FOLDER),
    )
    df = grid.run(tmp_path, progress=False)
    oracle = grid.oracle()
    arms = np.array([np.isin(np.arange(20), decode(c, 20)) for c in df["super_arm"]])
    regrets = [oracle.pseudo_regret(arm[None])[0] for arm in arms]
    np.testing.assert_allclose(df["regret_now"], regrets, atol=1e-12)
    learner = df[df["algorithm"] == "SSEM-UCB-JO q=2"]
    assert learner["reconstruction_mse"].notna().sum() >= 10
    assert learner["heldout_mse"].notna().sum() >= 10
    assert learner["prequential_mse"].notna().sum() >= 10
    if environment == "replay":  # the held-out rounds are the real hours as they were
        env = grid.build_environment(1)
        env.reset(0)
        z, y = env.reference_rounds()
        np.testing.assert_array_equal(y[0], env.endogenous)
        np.testing.assert_array_equal(z[0], env.signals[:, 0])
    assert df[df["algorithm"] == "Random"]["reconstruction_mse"].isna().all()
    assert len(df) == 2 * (15 if environment == "simulator" else 79)
    assert fitted(str(FOLDER.resolve()))[0].names[0] == "Eisenach"
    assert simulator.cache_info().currsize >= 1
