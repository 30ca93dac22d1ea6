"""The SSEM-UCB paper module: the trial grid, its determinism and its report."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from causalbandits.experiments.evidence import Verdict
from causalbandits.experiments.report import Claim
from causalbandits.papers.catalogue import load_experiment
from causalbandits.papers.ssem_ucb.report import CLAIM_CHECKS, claims
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
    assert all(c.verdict in set(Verdict) for c in found)
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
    with pytest.raises(ValueError, match="radius_grid"):
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
    norm = grid.policy("SSEM-UCB-Norm q=2", env, scales).options
    assert (norm.degree, norm.radius_scale) == (2, 0.5)
    with pytest.raises(ValueError, match="unknown design fields"):
        SyntheticTrial(design={"arms": 3})


# --- the claim table on hand-built results -------------------------------------------------

#: Five replicates' paired differences: beyond 2 se below 0, within, beyond 2 se above 0.
BELOW = [-0.20, -0.21, -0.19, -0.20, -0.22]
WITHIN = [0.10, -0.10, 0.05, -0.04, 0.00]
ABOVE = [0.20, 0.21, 0.19, 0.20, 0.22]
BASE = [0.50, 0.40, 0.60, 0.45, 0.55]


def hand_built(final: dict[str, list[float]], early: dict[str, list[float]] | None = None):
    """A long table of R(t)/t at t = 100 (``early``, default: the final values) and
    t = 1000 (``final``), replicate per list entry, with the columns the report reads."""
    rows = []
    for t, values in ((100, early or final), (1000, final)):
        for label, series in values.items():
            for replicate, value in enumerate(series):
                rows.append(
                    {
                        "setting": 0,
                        "algorithm": label,
                        "replicate": replicate,
                        "t": t,
                        "avg_regret": value,
                        "cum_regret": value * t,
                        "optimal_now": False,
                        "regret_now": value,
                        "elapsed": 10.0 + replicate // 2 + (label == "SSEM-UCB-JO q=4"),
                    }
                )
    return pd.DataFrame(rows)


def shifted(base: list[float], by: list[float]) -> list[float]:
    return [b + d for b, d in zip(base, by, strict=True)]


def only(found: list[Claim], start: str) -> Claim:
    (claim,) = [c for c in found if c.text.startswith(start)]
    return claim


@pytest.mark.parametrize(
    ("differences", "verdict", "label"),
    [
        (BELOW, Verdict.HOLDS, "holds"),
        (WITHIN, Verdict.NOT_SIGNIFICANT, "opposite direction, not significant"),
        (ABOVE, Verdict.CONTRADICTED, "contradicted"),
    ],
)
def test_q4_below_q1_is_a_paired_comparison(differences, verdict, label) -> None:
    df = hand_built(
        {
            "SSEM-UCB-JO q=1": BASE,
            "SSEM-UCB-JO q=4": shifted(BASE, differences),
            "Taylor oracle q=1": BASE,
            "Taylor oracle q=4": BASE,
        }
    )
    claim = only(claims(df, SimpleNamespace(trial="trial-1")), "q = 4 below q = 1")
    assert (claim.verdict, claim.label) == (verdict, label)
    assert "Taylor-moment" in claim.text and "Taylor oracles: +0.000" in claim.ours
    assert claim.test.startswith("paired difference over 5 replicates, threshold 2 se")
    assert claim.test.endswith(f"lower in {sum(d < 0 for d in differences)} of 5")


@pytest.mark.parametrize(
    ("differences", "verdict"),
    [(BELOW, Verdict.HOLDS), (WITHIN, Verdict.NOT_SIGNIFICANT), (ABOVE, Verdict.CONTRADICTED)],
)
def test_a_group_ranking_pairs_its_worst_member_with_the_best_of_the_rest(
    differences, verdict
) -> None:
    """The claim "q = 4 and METS lowest" pairs the worse of the two (by mean) with the best of
    the rest; "SGB and IGP-UCB highest" the lower of the two with the highest of the rest."""
    worst = shifted(BASE, differences)  # METS, against the best of the rest, q = 1
    df = hand_built(
        {
            "SSEM-UCB-JO q=1": BASE,
            "SSEM-UCB-JO q=2": shifted(BASE, [0.3] * 5),
            "SSEM-UCB-JO q=4": shifted(worst, [-0.01] * 5),
            "METS": worst,
            "SGB": shifted(BASE, [1.0] * 5),
            "IGP-UCB": shifted(shifted(BASE, [0.3] * 5), [-d for d in differences]),
            "Taylor oracle q=1": [0.0] * 5,  # no competitor: never the best of the rest
        }
    )
    found = claims(df, SimpleNamespace(trial="trial-1"))
    lowest = only(found, "SSEM-UCB-JO q = 4 and METS end with the lowest")
    assert lowest.verdict is verdict and lowest.ours.startswith("METS minus SSEM-UCB-JO q=1")
    # IGP-UCB (the lower of the two) against q = 2 (the highest of the rest): above it by
    # minus the differences
    highest = only(found, "SGB and IGP-UCB end highest")
    assert highest.verdict is verdict and highest.ours.startswith("IGP-UCB minus SSEM-UCB-JO q=2")


def test_initial_regret_and_the_interval_widths() -> None:
    final = {"SSEM-UCB-JO q=1": BASE, "SSEM-UCB-JO q=2": BASE, "SGB": BASE, "IGP-UCB": BASE}
    early = {**final, "SSEM-UCB-JO q=2": shifted(BASE, [1.0] * 5), "SGB": shifted(BASE, ABOVE)}
    found = claims(hand_built(final, early), SimpleNamespace(trial="trial-1"))
    initial = only(found, "SSEM and METS incur much less initial regret")
    # the worst structured (q = 2, 1.0 above IGP-UCB) against the best of SGB / IGP-UCB
    assert initial.verdict is Verdict.CONTRADICTED and "t = 100" in initial.text
    widths = only(found, "the 95 % intervals narrow")
    assert widths.verdict is Verdict.HOLDS and widths.test == ""  # equal widths: a property


def test_no_worse_holds_for_identical_runs_and_is_otherwise_a_paired_test() -> None:
    def verdicts(differences: list[float]) -> list[Verdict]:
        df = hand_built(
            {
                "SSEM-UCB-JO q=1": BASE,
                "SSEM-UCB-JO q=2": BASE,
                "SSEM-UCB-JO q=3": shifted(BASE, differences),
            }
        )
        return [c.verdict for c in claims(df, SimpleNamespace(trial="linear"))[-2:]]

    same = verdicts(BELOW)
    assert same == [Verdict.HOLDS, Verdict.HOLDS]
    assert verdicts(WITHIN)[1] is Verdict.NOT_SIGNIFICANT
    assert verdicts(ABOVE)[1] is Verdict.CONTRADICTED


def test_trial_2_compares_norm_with_jo_paired_and_times_per_task() -> None:
    values = {
        "SSEM-UCB-JO q=4": BASE,
        "SSEM-UCB-Norm q=4": shifted(BASE, WITHIN),
        "SGB": shifted(BASE, [2.0] * 5),
        "IGP-UCB": shifted(BASE, [1.5] * 5),
    }
    df = hand_built(values)
    found = claims(df, SimpleNamespace(trial="trial-2", chunk_size=2))
    assert only(found, "SSEM-UCB-Norm does no worse").verdict is Verdict.NOT_SIGNIFICANT
    # three tasks of 2, 2 and 1 replicates, JO 1 s slower in each: Norm cheaper, but
    # identical differences have se 0: beyond any threshold
    cheaper = only(found, "SSEM-UCB-Norm is cheaper")
    assert cheaper.verdict is Verdict.HOLDS and "over 3 replicates" in cheaper.test
    one_task = claims(df, SimpleNamespace(trial="trial-2", chunk_size=5))
    assert only(one_task, "SSEM-UCB-Norm is cheaper").verdict is Verdict.NA
    below = only(found, "SSEM-UCB-Norm and -JO both below SGB and IGP-UCB")
    assert below.verdict is Verdict.HOLDS and below.ours.startswith("SSEM-UCB-")


def test_every_trial_has_its_checks() -> None:
    assert set(CLAIM_CHECKS) == {"linear", "trial-1", "trial-2", "trial-3"}
    df = hand_built({"SSEM-UCB-JO q=1": BASE, "SSEM-UCB-JO q=2": shifted(BASE, [0.1] * 5)})
    found = claims(df, SimpleNamespace(trial="trial-3"))
    assert [c.verdict for c in found] == [Verdict.NOT_REPRODUCED] * 2  # flat curves


def test_finite_difference_variants_are_not_the_learners_of_the_q_claims() -> None:
    df = hand_built(
        {
            "SSEM-UCB-JO q=4": BASE,
            "SSEM-UCB-JO q=4 fd=0.001": shifted(BASE, ABOVE),
            "SSEM-UCB-JO q=4 fd=0.01": shifted(BASE, BELOW),
        }
    )
    assert claims(df, SimpleNamespace(trial="trial-1")) == []
    assert claims(df, SimpleNamespace(trial="trial-3"))[0].text.startswith("SSEM-UCB-JO q=4:")
    assert len(claims(df, SimpleNamespace(trial="trial-3"))) == 1


def test_finite_difference_variants_are_each_paired_with_exact_q1() -> None:
    df = hand_built(
        {
            "SSEM-UCB-JO q=1": BASE,
            "SSEM-UCB-JO q=4 fd=0.001": shifted(BASE, ABOVE),
            "SSEM-UCB-JO q=4 fd=0.01": shifted(BASE, BELOW),
        }
    )
    found = claims(df, SimpleNamespace(trial="trial-1"))
    steps = {c.text.split("step ")[1].split(" ")[0]: c.verdict for c in found}
    assert steps == {"0.001": Verdict.CONTRADICTED, "0.01": Verdict.HOLDS}


def test_trial_1_variants_share_its_instances() -> None:
    trial = load_experiment("ssem-ucb-trial-1")
    fd = load_experiment("ssem-ucb-trial-1-fd")
    constants = load_experiment("ssem-ucb-trial-1-paper-constants", quick=True)
    assert fd.seed == trial.seed == constants.seed and fd.design == trial.design
    assert fd.algorithms[:2] == ("SSEM-UCB-JO q=1", "SSEM-UCB-JO q=4")
    assert all(label.startswith("SSEM-UCB-JO q=4 fd=") for label in fd.algorithms[2:])
    assert (constants.radius_scale, constants.bonus_scale) == (1.0, 1.0)
    assert constants.horizon == 200 and constants.name == "ssem-ucb-trial-1-paper-constants-quick"


def test_the_long_linear_check_is_the_linear_check_at_t_2000() -> None:
    linear = load_experiment("ssem-ucb-linear")
    long = load_experiment("ssem-ucb-linear-long")
    assert long.horizon == 2000 and long.name == "ssem-ucb-linear-long"
    assert dataclasses.replace(long, horizon=linear.horizon, name=linear.name, description="") == (
        dataclasses.replace(linear, description="")
    )
    quick = load_experiment("ssem-ucb-linear-long", quick=True)
    assert quick.horizon == 200 and quick.name == "ssem-ucb-linear-long-quick"
