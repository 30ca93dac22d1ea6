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


def table(curves: dict[tuple[float, str], list[float]], checkpoints=CHECKPOINTS) -> pd.DataFrame:
    """Two identical replicates per (C, algorithm) with cumulative regret ``curves`` at the
    ``checkpoints`` (so the means are exactly the given values)."""
    rows = []
    for (budget, algorithm), values in curves.items():
        setting = f"C={budget:g}"
        for replicate in (0, 1):
            for t, value in zip(checkpoints, values, strict=True):
                rows.append(
                    {
                        "setting": setting,
                        "deviation_budget": budget,
                        "algorithm": algorithm,
                        "replicate": replicate,
                        "t": t,
                        "cum_regret": value,
                        "optimal_share": 0.5,
                    }
                )
    return pd.DataFrame(rows)


def verdicts(experiment, df: pd.DataFrame) -> dict[str, tuple[str, str]]:
    """``claim text -> (ours, holds)`` read from the report's claims table."""
    out = {}
    for line in experiment.report(df).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if len(cells) == 3 and cells[2] in ("yes", "NO", "n/a"):
            out[cells[0]] = (cells[1], cells[2])
    return out


# ------------------------------------------------------------------------------ Fig. 1(b)

C_B = 100.0  # sqrt(T)


def fig1b_curves(robust=None, linsem=None, ucb=None) -> pd.DataFrame:
    """The paper's picture: Robust-LCB flattens (no regret in the last quarter), LinSEM-UCB
    grows linearly to 0.9 of the worst case, UCB to 0.5."""
    curves = {
        "Robust-LCB": robust or [0.05 * W, 0.08 * W, 0.09 * W, 0.09 * W],
        "LinSEM-UCB": linsem or [0.9 * W * t / T for t in CHECKPOINTS],
        "UCB": ucb or [0.5 * W * t / T for t in CHECKPOINTS],
    }
    return table({(C_B, a): v for a, v in curves.items()})


def fig1b_holds(df: pd.DataFrame) -> list[str]:
    found = verdicts(fig1b(quick=True), df)
    return [found[text][1] for text in CLAIMS["fig1b"]]


def test_fig1b_the_papers_picture_holds():
    found = verdicts(fig1b(quick=True), fig1b_curves())
    assert [found[text][1] for text in CLAIMS["fig1b"]] == ["yes", "yes", "yes"]
    # late regret per round as a share of the gap W / T: 0, 0.9 and 0.5 (columns sorted)
    assert found[CLAIMS["fig1b"][0]][0] == (
        "late regret per round as a share of the worst gap: "
        "LinSEM-UCB 90.0%, Robust-LCB 0.0%, UCB 50.0%"
    )
    assert found[CLAIMS["fig1b"][1]][0] == "LinSEM-UCB at 90% of the worst case"
    assert found[CLAIMS["fig1b"][2]][0] == "Robust-LCB / LinSEM-UCB = 0.10, Robust-LCB / UCB = 0.18"


def test_fig1b_sublinear_claim_needs_the_smallest_late_slope():
    # Robust-LCB's last quarter grows as fast as UCB's: not sub-linear by comparison
    robust = [0.0, 0.0, 0.0, 0.5 * W * 2500 / T]
    assert fig1b_holds(fig1b_curves(robust=robust))[0] == "NO"
    # the slope is measured from the first checkpoint >= 3T/4, not over the whole run
    early = [0.08 * W, 0.085 * W, 0.09 * W, 0.09 * W]
    assert fig1b_holds(fig1b_curves(robust=early))[0] == "yes"
    late_burst = [0.0, 0.0, 0.01 * W, 0.01 * W + 0.6 * W * 2500 / T]
    assert fig1b_holds(fig1b_curves(robust=late_burst))[0] == "NO"


def test_fig1b_near_the_worst_threshold_is_inclusive():
    at = [0.6 * W * t / T for t in CHECKPOINTS]
    at[-1] = 0.6 * W
    assert fig1b_holds(fig1b_curves(linsem=at))[1] == "yes"
    below = at[:-1] + [0.6 * W * (1 - 1e-9)]
    assert fig1b_holds(fig1b_curves(linsem=below))[1] == "NO"


def test_fig1b_ranking_needs_both_strict_comparisons():
    linsem = [0.9 * W * t / T for t in CHECKPOINTS]
    tie = [0.05 * W, 0.08 * W, 0.2 * linsem[-1], 0.2 * linsem[-1]]  # exactly 0.2 LinSEM-UCB
    assert fig1b_holds(fig1b_curves(robust=tie))[2] == "NO"
    ucb = [0.0, 0.0, 0.0, 0.09 * W]  # UCB as good as Robust-LCB at T
    assert fig1b_holds(fig1b_curves(ucb=ucb))[2] == "NO"


# ------------------------------------------------------------------------------ Fig. 1(c)

BUDGETS = (2.0, 5.0, 15.0, 50.0, 200.0, 500.0, 2000.0)
PICTURE = {
    "LinSEM-UCB": [0.01, 0.02, 0.05, 0.3, 0.7, 0.8, 0.9],
    "UCB": [0.012, 0.03, 0.06, 0.4, 0.65, 0.85, 0.95],
    "Robust-LCB": [0.02, 0.025, 0.03, 0.04, 0.06, 0.08, 0.1],
}


def fig1c_table(changes: dict[tuple[float, str], float] | None = None, budgets=BUDGETS):
    """Final regrets only (one checkpoint, t = T), as multiples of W unless changed."""
    finals = {(c, a): PICTURE[a][BUDGETS.index(c)] * W for a in PICTURE for c in budgets} | (
        changes or {}
    )
    return table({key: [value] for key, value in finals.items()}, checkpoints=(T,))


def fig1c_holds(df: pd.DataFrame) -> list[str]:
    found = verdicts(fig1c(quick=True), df)
    return [found[text][1] if text in found else "absent" for text in CLAIMS["fig1c"]]


def test_fig1c_the_papers_picture_holds():
    found = verdicts(fig1c(quick=True), fig1c_table())
    assert [found[text][1] for text in CLAIMS["fig1c"]] == ["yes"] * 4
    assert found[CLAIMS["fig1c"][1]][0] == "from C = 2 to 15: LinSEM-UCB x5.0, UCB x5.0"
    assert found[CLAIMS["fig1c"][2]][0] == "C = 200: LinSEM-UCB 70%, UCB 65% of the worst case"
    assert found[CLAIMS["fig1c"][3]][0].startswith(
        "Robust-LCB / best baseline: C=15: 0.60, C=50: 0.13, C=200: 0.09"
    )
    assert found[CLAIMS["fig1c"][3]][0].endswith("non-decreasing in C: True")


def test_fig1c_small_deviation_claim_compares_at_the_smallest_c():
    equal = fig1c_table({(2.0, "LinSEM-UCB"): PICTURE["Robust-LCB"][0] * W})
    assert fig1c_holds(equal)[0] == "yes"  # "slightly better": <= counts a tie
    worse = fig1c_table({(2.0, "LinSEM-UCB"): 0.03 * W})
    assert fig1c_holds(worse)[0] == "NO"
    # UCB is reported but not part of this verdict
    assert fig1c_holds(fig1c_table({(2.0, "UCB"): 0.5 * W}))[0] == "yes"


@pytest.mark.parametrize("algorithm", ["LinSEM-UCB", "UCB"])
def test_fig1c_failing_at_15_needs_more_than_doubling(algorithm):
    doubled = 2 * PICTURE[algorithm][0] * W
    assert fig1c_holds(fig1c_table({(15.0, algorithm): doubled}))[1] == "NO"
    assert fig1c_holds(fig1c_table({(15.0, algorithm): doubled * (1 + 1e-9)}))[1] == "yes"


@pytest.mark.parametrize("algorithm", ["LinSEM-UCB", "UCB"])
def test_fig1c_worst_at_200_is_inclusive_and_needs_both_baselines(algorithm):
    other = "UCB" if algorithm == "LinSEM-UCB" else "LinSEM-UCB"
    at = {(200.0, algorithm): 0.6 * W, (200.0, other): 0.9 * W}
    assert fig1c_holds(fig1c_table(at))[2] == "yes"
    below = {(200.0, algorithm): 0.6 * W * (1 - 1e-9), (200.0, other): 0.9 * W}
    assert fig1c_holds(fig1c_table(below))[2] == "NO"


def test_fig1c_outperforming_is_strict_from_c_15_on():
    tie_at_15 = fig1c_table({(15.0, "Robust-LCB"): PICTURE["LinSEM-UCB"][2] * W})
    assert fig1c_holds(tie_at_15)[3] == "NO"
    # below C = 15 Robust-LCB may lose (C = 5: 0.025 W, LinSEM-UCB 0.02 W in the picture)
    assert PICTURE["Robust-LCB"][1] > PICTURE["LinSEM-UCB"][1]
    assert fig1c_holds(fig1c_table())[3] == "yes"


def test_fig1c_smooth_growth_tolerates_a_dip_of_2_percent_of_w():
    u = 0.02 * W  # the tolerance, exactly as the check computes it
    dip = {(500.0, "Robust-LCB"): 2 * u, (2000.0, "Robust-LCB"): u}  # a dip of exactly u
    assert fig1c_holds(fig1c_table(dip))[3] == "yes"
    deeper = {(500.0, "Robust-LCB"): 2 * u, (2000.0, "Robust-LCB"): u * (1 - 1e-6)}
    assert fig1c_holds(fig1c_table(deeper))[3] == "NO"


def test_fig1c_claims_without_their_budgets_are_left_out():
    """Without C = 15 and C = 200 in the results those two claims are not listed."""
    assert fig1c_holds(fig1c_table(budgets=(2.0, 50.0))) == ["yes", "absent", "absent", "yes"]
    found = verdicts(fig1c(quick=True), fig1c_table(budgets=(5.0, 50.0)))
    assert found[CLAIMS["fig1c"][0]][0].startswith("C = 5: LinSEM-UCB ")
