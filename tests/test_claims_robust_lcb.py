"""The Robust-LCB report's claim verdicts on hand-built result tables whose right verdicts
are known: the paper's picture (every claim holds), each claim failing alone, and every
threshold at its boundary value (``>=`` thresholds hold there, strict ones do not)."""

from __future__ import annotations

import pandas as pd
import pytest

from causalbandits.papers.robust_lcb.figures import CLAIMS, fig1b, fig1c, worst_case_regret

T = 10000  # the quick presets' horizon
W = worst_case_regret(T)
CHECKPOINTS = (2500, 5000, 7500, 10000)
ALGORITHMS = ("Robust-LCB", "LinSEM-UCB", "UCB")


def test_worst_case_regret_is_t_times_the_largest_gap():
    """``T (mu* - min_a mu_a)``: about 124,641 at T = 40000 (the docstring), linear in T."""
    assert worst_case_regret(40000) == pytest.approx(124641.016, abs=1e-3)
    assert worst_case_regret(T) == pytest.approx(worst_case_regret(40000) / 4, rel=1e-12)


#: Per-replicate offsets (replicate 0: +noise, replicate 1: -noise, times the algorithm's
#: factor and t / T): the means stay the given values, and paired differences between two
#: algorithms get a standard error of ``noise`` times the difference of their factors.
NOISE_FACTORS = {"Robust-LCB": 1.0, "LinSEM-UCB": -1.0, "UCB": 0.0}


def table(
    curves: dict[tuple[float, str], list[float]], checkpoints=CHECKPOINTS, noise: float = 0.0
) -> pd.DataFrame:
    """Two replicates per (C, algorithm) with cumulative regret ``curves`` at the
    ``checkpoints``: identical without ``noise`` (so the means are exactly the given values
    and every paired difference is decisive), else apart by the offsets of
    :data:`NOISE_FACTORS`."""
    rows = []
    for (budget, algorithm), values in curves.items():
        setting = f"C={budget:g}"
        for replicate, sign in ((0, 1.0), (1, -1.0)):
            for t, value in zip(checkpoints, values, strict=True):
                offset = sign * noise * NOISE_FACTORS[algorithm] * t / checkpoints[-1]
                rows.append(
                    {
                        "setting": setting,
                        "deviation_budget": budget,
                        "algorithm": algorithm,
                        "replicate": replicate,
                        "t": t,
                        "cum_regret": value + offset,
                        "optimal_share": 0.5,
                    }
                )
    return pd.DataFrame(rows)


def verdicts(experiment, df: pd.DataFrame) -> dict[str, tuple[str, str]]:
    """``claim text -> (ours, verdict label)`` read from the report's claims table."""
    lines = experiment.report(df).split("| paper's claim |", 1)[1].splitlines()
    header = ["paper's claim", *(c.strip() for c in lines[0].strip().strip("|").split(" | "))]
    out = {}
    for line in lines[2:]:
        if not line.startswith("|"):
            break
        cells = dict(zip(header, (c.strip() for c in line.strip("|").split(" | ")), strict=True))
        out[cells["paper's claim"]] = (cells["ours"], cells["verdict"])
    return out


HOLDS, NOT_REPRODUCED, CONTRADICTED = "holds", "not reproduced", "contradicted"
TIE = ", not significant"  # the end of every label of a tie


# ------------------------------------------------------------------------------ Fig. 1(b)

C_B = 100.0  # sqrt(T)


def fig1b_curves(robust=None, linsem=None, ucb=None, noise: float = 0.0) -> pd.DataFrame:
    """The paper's picture: Robust-LCB flattens (no regret in the last quarter), LinSEM-UCB
    grows linearly to 0.9 of the worst case, UCB to 0.5."""
    curves = {
        "Robust-LCB": robust or [0.05 * W, 0.08 * W, 0.09 * W, 0.09 * W],
        "LinSEM-UCB": linsem or [0.9 * W * t / T for t in CHECKPOINTS],
        "UCB": ucb or [0.5 * W * t / T for t in CHECKPOINTS],
    }
    return table({(C_B, a): v for a, v in curves.items()}, noise=noise)


def fig1b_verdicts(df: pd.DataFrame) -> list[str]:
    found = verdicts(fig1b(quick=True), df)
    return [found[text][1] for text in CLAIMS["fig1b"]]


def test_fig1b_the_papers_picture_holds():
    found = verdicts(fig1b(quick=True), fig1b_curves())
    assert [found[text][1] for text in CLAIMS["fig1b"]] == [HOLDS] * 3
    # late regret per round as a share of the gap W / T: 0, 0.9 and 0.5 (columns sorted);
    # Robust-LCB against the flatter baseline, UCB
    assert found[CLAIMS["fig1b"][0]][0] == (
        "late regret per round as a share of the worst gap: "
        "LinSEM-UCB 90.0%, Robust-LCB 0.0%, UCB 50.0%; "
        "Robust-LCB - UCB: difference -0.500 ± 0.000"
    )
    assert found[CLAIMS["fig1b"][1]][0] == "LinSEM-UCB at 90% of the worst case"
    assert found[CLAIMS["fig1b"][2]][0] == (
        f"Robust-LCB / LinSEM-UCB = 0.10, Robust-LCB / UCB = 0.18; Robust-LCB - UCB: "
        f"difference {-0.41 * W:,.0f} ± 0"
    )
    report = fig1b(quick=True).report(fig1b_curves())
    assert "| verdict | test |" in report
    assert "paired difference over 2 replicates, threshold 2 se; lower in 2 of 2" in report


def test_fig1b_sublinear_claim_is_a_paired_comparison_of_late_slopes():
    # Robust-LCB's last quarter grows as fast as UCB's: a tie (the noise gives the paired
    # late slopes a standard error of 0.05 of the gap per round)
    robust = [0.0, 0.0, 0.0, 0.5 * W * 2500 / T]
    assert fig1b_verdicts(fig1b_curves(robust=robust, noise=0.05 * W))[0].endswith(TIE)
    # faster than UCB beyond 2 se: contradicted
    late_burst = [0.0, 0.0, 0.01 * W, 0.01 * W + 0.6 * W * 2500 / T]
    assert fig1b_verdicts(fig1b_curves(robust=late_burst))[0] == CONTRADICTED
    # within 2 se of UCB's slope either way: not significant
    noisy = fig1b_curves(robust=late_burst, noise=0.5 * W)
    assert fig1b_verdicts(noisy)[0] == "opposite direction, not significant"
    # the slope is measured from the first checkpoint >= 3T/4, not over the whole run
    early = [0.08 * W, 0.085 * W, 0.09 * W, 0.09 * W]
    assert fig1b_verdicts(fig1b_curves(robust=early))[0] == HOLDS


def test_fig1b_late_slope_noise_gives_the_paired_standard_error():
    """Replicates +-noise at T and +-0.75 noise at 3T/4: Robust-LCB's (factor 1) and UCB's
    (factor 0) late slopes differ per replicate by +-0.25 noise / 2500 rounds."""
    late_burst = [0.0, 0.0, 0.01 * W, 0.01 * W + 0.6 * W * 2500 / T]
    ours = verdicts(fig1b(quick=True), fig1b_curves(robust=late_burst, noise=0.5 * W))
    gap = W / T
    se = 0.25 * 0.5 * W / 2500 / gap
    assert ours[CLAIMS["fig1b"][0]][0].endswith(f"difference 0.100 ± {se:.3f}")


def test_fig1b_near_the_worst_threshold_is_inclusive():
    at = [0.6 * W * t / T for t in CHECKPOINTS]
    at[-1] = 0.6 * W
    assert fig1b_verdicts(fig1b_curves(linsem=at))[1] == HOLDS
    below = at[:-1] + [0.6 * W * (1 - 1e-9)]
    assert fig1b_verdicts(fig1b_curves(linsem=below))[1] == NOT_REPRODUCED


def test_fig1b_ranking_compares_robust_lcb_with_the_better_baseline():
    # UCB as good as Robust-LCB at T on average: within 2 se (the noise) a tie
    ucb = [0.0, 0.0, 0.0, 0.09 * W]
    assert fig1b_verdicts(fig1b_curves(ucb=ucb, noise=0.01 * W))[2].endswith(TIE)
    # UCB lower beyond 2 se: contradicted
    ucb_lower = [0.0, 0.0, 0.0, 0.08 * W]
    assert fig1b_verdicts(fig1b_curves(ucb=ucb_lower, noise=0.001 * W))[2] == CONTRADICTED
    # the other baseline by mean: here LinSEM-UCB, and it is the one compared
    linsem = [0.0, 0.0, 0.0, 0.2 * W]
    found = verdicts(fig1b(quick=True), fig1b_curves(linsem=linsem))
    assert found[CLAIMS["fig1b"][2]][1] == HOLDS
    assert "Robust-LCB - LinSEM-UCB: difference" in found[CLAIMS["fig1b"][2]][0]


# ------------------------------------------------------------------------------ Fig. 1(c)

BUDGETS = (2.0, 5.0, 15.0, 50.0, 200.0, 500.0, 2000.0)
PICTURE = {
    "LinSEM-UCB": [0.01, 0.02, 0.05, 0.3, 0.7, 0.8, 0.9],
    "UCB": [0.012, 0.03, 0.06, 0.4, 0.65, 0.85, 0.95],
    "Robust-LCB": [0.02, 0.025, 0.03, 0.04, 0.06, 0.08, 0.1],
}


def fig1c_table(
    changes: dict[tuple[float, str], float] | None = None, budgets=BUDGETS, noise: float = 0.0
):
    """Final regrets only (one checkpoint, t = T), as multiples of W unless changed."""
    finals = {(c, a): PICTURE[a][BUDGETS.index(c)] * W for a in PICTURE for c in budgets} | (
        changes or {}
    )
    return table({key: [value] for key, value in finals.items()}, checkpoints=(T,), noise=noise)


def fig1c_verdicts(df: pd.DataFrame) -> list[str]:
    found = verdicts(fig1c(quick=True), df)
    return [found[text][1] if text in found else "absent" for text in CLAIMS["fig1c"]]


def test_fig1c_the_papers_picture_holds():
    found = verdicts(fig1c(quick=True), fig1c_table())
    assert [found[text][1] for text in CLAIMS["fig1c"]] == [HOLDS] * 5
    assert found[CLAIMS["fig1c"][0]][0].startswith("C = 2: LinSEM-UCB ")
    assert found[CLAIMS["fig1c"][0]][0].endswith(
        f"UCB - Robust-LCB: difference {-0.008 * W:,.0f} ± 0"
    )
    assert found[CLAIMS["fig1c"][1]][0] == "from C = 2 to 15: LinSEM-UCB x5.0, UCB x5.0"
    assert found[CLAIMS["fig1c"][2]][0] == "C = 200: LinSEM-UCB 70%, UCB 65% of the worst case"
    assert found[CLAIMS["fig1c"][3]][0].startswith(
        "Robust-LCB / best baseline: C=15: 0.60, C=50: 0.13, C=200: 0.09"
    )
    assert found[CLAIMS["fig1c"][4]][0].endswith(
        "non-decreasing in C (dips within 2% of the worst case): True"
    )


def test_fig1c_small_deviation_claim_compares_the_weaker_baseline_at_the_smallest_c():
    # LinSEM-UCB equal to Robust-LCB (and UCB better): the weaker is LinSEM-UCB, a tie
    equal = fig1c_table({(2.0, "LinSEM-UCB"): PICTURE["Robust-LCB"][0] * W}, noise=0.001 * W)
    assert fig1c_verdicts(equal)[0].endswith(TIE)
    worse = fig1c_table({(2.0, "LinSEM-UCB"): 0.03 * W})
    assert fig1c_verdicts(worse)[0] == CONTRADICTED
    # UCB is part of the claim ("LinSEM-UCB and UCB are slightly better")
    assert fig1c_verdicts(fig1c_table({(2.0, "UCB"): 0.5 * W}))[0] == CONTRADICTED
    # within 2 se of Robust-LCB, UCB above it on average: a tie pointing the other way
    close = fig1c_table({(2.0, "UCB"): 0.021 * W}, noise=0.001 * W)
    assert fig1c_verdicts(close)[0] == "opposite direction, not significant"


@pytest.mark.parametrize("algorithm", ["LinSEM-UCB", "UCB"])
def test_fig1c_failing_at_15_needs_more_than_doubling(algorithm):
    doubled = 2 * PICTURE[algorithm][0] * W
    assert fig1c_verdicts(fig1c_table({(15.0, algorithm): doubled}))[1] == NOT_REPRODUCED
    assert fig1c_verdicts(fig1c_table({(15.0, algorithm): doubled * (1 + 1e-9)}))[1] == HOLDS


@pytest.mark.parametrize("algorithm", ["LinSEM-UCB", "UCB"])
def test_fig1c_worst_at_200_is_inclusive_and_needs_both_baselines(algorithm):
    other = "UCB" if algorithm == "LinSEM-UCB" else "LinSEM-UCB"
    at = {(200.0, algorithm): 0.6 * W, (200.0, other): 0.9 * W}
    assert fig1c_verdicts(fig1c_table(at))[2] == HOLDS
    below = {(200.0, algorithm): 0.6 * W * (1 - 1e-9), (200.0, other): 0.9 * W}
    assert fig1c_verdicts(fig1c_table(below))[2] == NOT_REPRODUCED


def test_fig1c_outperforming_is_paired_at_every_c_from_15_on():
    # a tie at C = 15 with the better baseline (LinSEM-UCB) decides the claim
    tie_at_15 = fig1c_table({(15.0, "Robust-LCB"): PICTURE["LinSEM-UCB"][2] * W}, noise=1e-3 * W)
    assert fig1c_verdicts(tie_at_15)[3].endswith(TIE)
    found = verdicts(fig1c(quick=True), tie_at_15)[CLAIMS["fig1c"][3]][0]
    assert "weakest, C = 15: Robust-LCB - LinSEM-UCB: difference 0 ± " in found
    # worse than the better baseline at one C beyond 2 se: contradicted
    worse_at_500 = fig1c_table({(500.0, "Robust-LCB"): 0.81 * W}, noise=1e-3 * W)
    assert fig1c_verdicts(worse_at_500)[3] == CONTRADICTED
    # below C = 15 Robust-LCB may lose (C = 5: 0.025 W, LinSEM-UCB 0.02 W in the picture)
    assert PICTURE["Robust-LCB"][1] > PICTURE["LinSEM-UCB"][1]
    assert fig1c_verdicts(fig1c_table())[3] == HOLDS


def test_fig1c_smooth_growth_tolerates_a_dip_of_2_percent_of_w():
    u = 0.02 * W  # the tolerance, exactly as the check computes it
    dip = {(500.0, "Robust-LCB"): 2 * u, (2000.0, "Robust-LCB"): u}  # a dip of exactly u
    assert fig1c_verdicts(fig1c_table(dip))[4] == HOLDS
    deeper = {(500.0, "Robust-LCB"): 2 * u, (2000.0, "Robust-LCB"): u * (1 - 1e-6)}
    assert fig1c_verdicts(fig1c_table(deeper))[4] == NOT_REPRODUCED


def test_fig1c_claims_without_their_budgets():
    """Without C = 15 and C = 200 in the results those two claims are not listed; without
    any C >= 15 the outperforming claim cannot be checked."""
    assert fig1c_verdicts(fig1c_table(budgets=(2.0, 50.0))) == [
        HOLDS,
        "absent",
        "absent",
        HOLDS,
        HOLDS,
    ]
    found = verdicts(fig1c(quick=True), fig1c_table(budgets=(5.0, 50.0)))
    assert found[CLAIMS["fig1c"][0]][0].startswith("C = 5: LinSEM-UCB ")
    small = fig1c_verdicts(fig1c_table(budgets=(2.0, 5.0)))
    assert small[3] == "n/a" and small[4] == HOLDS


def test_fig1c_one_replicate_is_not_checkable():
    one = fig1c_table()
    one = one[one["replicate"] == 0]
    assert fig1c_verdicts(one) == ["n/a", HOLDS, HOLDS, "n/a", HOLDS]
