"""EXCBO (Ren & Qian, arXiv 2402.02277): the synthetic comparisons of Figs 3, 9 and 10, the
applied problems of Figs 5 and 7 (epidemic calibration, COVID-19 pooled testing), the
EXCBO-only noise studies of Figs 12 and 14 and the surrogate of Fig. 13 (Secs 7.2-7.4,
App. C.1-C.3).

One :class:`BOComparison` is a grid over noise levels ``sigma`` and methods, with the seeds
as replicates. Every method of a seed meets the same noise and starts from the same uniform
design of ``2(|A| + 1)`` actions (the policies' stream is shared: ``SEED_AXES`` holds only
``sigma``), then runs ``rounds`` BO rounds through the library's round loop. Per round we
record ``E[y | a_t]`` (exact, by quadrature or by Monte Carlo with common random numbers),
its best so far, the observed objective, the pseudo-regret, the wall time of the choice and
the observed node values. The paper reports curves only; its statements are checked as
comparisons of the mean ``E[y | a_t]`` over late BO rounds (the design's rounds, ``round <=
0``, never count), decided by the paired difference between methods over seeds (same seeds:
:class:`~causalbandits.experiments.evidence.PairedComparison`). Across noise levels the seeds
are not shared (``sigma`` is a seed axis), so comparisons between sigmas are unpaired (Welch).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from causalbandits.envs.bo_problems import (
    DROPWAVE_C1,
    DROPWAVE_C2,
    alpine2,
    dropwave,
    rosenbrock,
)
from causalbandits.envs.covid_testing import covid_pooled_testing
from causalbandits.envs.epidemic import epidemic_calibration
from causalbandits.experiments.bandit_grid import BanditGrid, BanditRun
from causalbandits.experiments.evidence import PAIRED_SE, PairedComparison, weakest
from causalbandits.experiments.plots import plot_regret_curves
from causalbandits.experiments.recorders import CumulativeRegret, OptimisationTrace, Recorder
from causalbandits.experiments.report import (
    Claim,
    claims_table,
    markdown_document,
    markdown_table,
    mean_pm,
)
from causalbandits.papers.excbo.surrogate import plot_surrogate, surrogate_claims
from causalbandits.policies import POLICIES
from causalbandits.policies.causal_bo import (
    AcquisitionOptimiser,
    SequentialOptimizer,
    default_initial_design,
)
from causalbandits.random import Stream
from causalbandits.validation import count, each, non_negative, optional, positive

PROBLEMS: dict[str, Callable[..., Any]] = {
    "dropwave": dropwave,
    "alpine2": alpine2,
    "rosenbrock": rosenbrock,
    "epidemic": epidemic_calibration,
    "covid": covid_pooled_testing,
}
#: The methods by report label -> entries of the one registry (:data:`causalbandits.policies.
#: POLICIES`). The paper's "MCBO" is the package's neural variant NMCBO; GP-MCBO is MCBO
#: with GP nodes only (the package's noiseless variant).
METHODS: dict[str, str] = {
    "EXCBO": "excbo",
    "GP-UCB": "gp-ucb",
    "EICF": "eicf",
    "NMCBO": "nmcbo",
    "GP-MCBO": "mcbo",
}
#: The MCBO variants, the paper's first.
MCBO_VARIANTS = ("NMCBO", "GP-MCBO")
#: The methods with an exploration weight ``beta`` (EICF has none).
EXPLORING = ("EXCBO", "GP-UCB", "NMCBO", "GP-MCBO")
#: The per-round metrics of a run (``CumulativeRegret`` and ``OptimisationTrace``).
TRACE_COLUMNS = ("cum_regret", "expected_reward", "best_expected", "observed", "seconds")
#: BO rounds over which "late" performance is averaged (the issue's "last 10 rounds"; a run
#: with fewer BO rounds averages all of them).
LATE_ROUNDS = 10
#: The columns that identify one run (a method at a noise level with one seed).
RUN = ["sigma", "method", "replicate"]


@dataclass(frozen=True, kw_only=True)
class BOComparison(BanditGrid):
    """Causal-BO methods on one problem at several noise levels (module docstring)."""

    SEED_AXES: ClassVar[tuple[str, ...]] = ("sigma",)
    #: An optimiser carries no replicate axis: one seed at a time.
    PER_REPLICATE: ClassVar[bool] = True

    problem: str = "dropwave"
    figure: str = "fig9"
    sigmas: tuple[float, ...] = (0.05, 0.2)
    methods: tuple[str, ...] = ("EXCBO", "GP-UCB", "EICF", "NMCBO", "GP-MCBO")
    noise: str = "mixture"
    rounds: int = 50
    n_init: int | None = None
    method_params: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: A sensitivity axis: every method run with each exploration weight ``beta`` (empty:
    #: each method's own default).
    betas: tuple[float, ...] = ()
    replicates: int = 4
    chunk_size: int = 1
    seed: int = 2024
    name: str = "excbo-dropwave"
    description: str = "EXCBO paper Fig. 9: Dropwave, EXCBO vs GP-UCB, EICF, NMCBO, GP-MCBO"

    def check(self) -> None:
        if self.problem not in PROBLEMS:
            raise ValueError(f"unknown problem {self.problem!r}; use one of {sorted(PROBLEMS)}")
        if self.figure not in CLAIM_CHECKS:
            raise ValueError(f"unknown figure {self.figure!r}; use one of {sorted(CLAIM_CHECKS)}")
        unknown = [m for m in self.methods if m not in METHODS]
        if unknown or not self.methods:
            raise ValueError(f"methods must be names from {sorted(METHODS)}, got {self.methods}")
        each(non_negative, "betas", self.betas)
        if self.betas and not set(self.methods) <= set(EXPLORING):
            raise ValueError(f"a beta axis applies to the methods with a beta: {EXPLORING}")
        count("rounds", self.rounds)
        optional(count, "n_init", self.n_init)
        if not each(positive, "sigmas", self.sigmas):
            raise ValueError("sigmas must hold at least one noise level")

    def axes(self) -> dict[str, Sequence[Any]]:
        axes: dict[str, Sequence[Any]] = {"sigma": self.sigmas, "method": self.methods}
        if self.betas:
            axes["beta"] = self.betas
        return axes

    def task_cost(self, point: Mapping[str, Any]) -> float:
        """NMCBO trains networks, MCBO and EXCBO optimise over (a, eta) and fit more GPs:
        start them first."""
        costs = {"NMCBO": 4.0, "GP-MCBO": 3.0, "EXCBO": 2.0, "EICF": 1.0}
        return costs.get(point["method"], 0.0)

    def environment(self, sigma: float) -> Any:
        """The problem at noise level ``sigma`` with a horizon of design plus rounds."""
        probe = PROBLEMS[self.problem](sigma=sigma, noise=self.noise, horizon=1)
        design = default_initial_design(probe.problem) if self.n_init is None else self.n_init
        return PROBLEMS[self.problem](sigma=sigma, noise=self.noise, horizon=design + self.rounds)

    # ---------------------------------------------------------------- the hooks

    def make_environment(self, run: BanditRun) -> Any:
        return self.environment(float(run.point["sigma"]))

    def make_policy(self, run: BanditRun) -> SequentialOptimizer:
        method = run.point["method"]
        params = dict(self.method_params.get(method, {}))
        if "beta" in run.point:
            params["beta"] = float(run.point["beta"])
        return POLICIES.build(METHODS[method], run.env, n_init=self.n_init, **params)

    def label(self, point: Mapping[str, Any]) -> str:
        method = point["method"]
        return method if "beta" not in point else f"{method} (beta = {point['beta']:g})"

    def policy_seeds(self, run: BanditRun) -> Any:
        """The seed's ``POLICY`` stream, shared by every method: the same initial design."""
        return self.seeds(run.setting, run.replicates, Stream.POLICY)[0]

    def recorded_rounds(self, run: BanditRun) -> np.ndarray:
        return np.arange(1, run.env.horizon + 1)  # every round

    def make_recorders(self, run: BanditRun) -> list[Recorder]:
        return [CumulativeRegret(), OptimisationTrace()]

    def columns(self, run: BanditRun) -> dict[str, Any]:
        return {"setting": run.setting}

    def table(self, run: BanditRun) -> pd.DataFrame:
        """The rows of a seed, with its noise level, design size and the known optimum."""
        frame = (
            super()
            .table(run)
            .assign(
                sigma=float(run.point["sigma"]), design=run.policy.n_init, optimum=run.env.optimum
            )
        )
        if "beta" in run.point:
            frame = frame.assign(base_method=run.point["method"], beta=float(run.point["beta"]))
        return frame

    def finish(self, frame: pd.DataFrame, point: Mapping[str, Any]) -> pd.DataFrame:
        return frame.assign(round=frame["t"] - frame["design"])

    def plot(self, df: pd.DataFrame, out_dir: Path) -> list[Path]:
        """The paper's figure: mean ``E[y | a_t]`` per BO round with its band, one panel per
        sigma; and the best so far."""
        columns = ["sigma", "algorithm", "replicate", "round", *TRACE_COLUMNS]
        bo = df.loc[df["round"] >= 0, columns].rename(columns={"round": "t"})
        title = f"EXCBO paper: {self.problem} ({self.replicates} seeds)"
        out = Path(out_dir)
        paths = [
            plot_regret_curves(bo, out / name, name.removesuffix(".png"), title, panel_by="sigma")
            for name in ("expected_reward.png", "best_expected.png")
        ]
        if self.figure == "fig13":
            paths.append(plot_surrogate(df, out / "surrogate.png", self.sigmas[0]))
        return paths

    def report(self, df: pd.DataFrame) -> str:
        return build_report(self, df)


def late_window_size(df: pd.DataFrame, window: int = LATE_ROUNDS) -> int:
    """The number of late BO rounds averaged: ``window``, or all the BO rounds of a shorter
    run."""
    return max(1, min(window, int(df["round"].max())))


def late_window(df: pd.DataFrame, window: int = LATE_ROUNDS) -> pd.DataFrame:
    """The rows of each run's last ``window`` BO rounds (``round >= 1``: the design never
    counts; a run with fewer BO rounds gives all of them)."""
    bo = df[df["round"] >= 1]
    last = bo.groupby(RUN)["round"].transform("max")
    return bo[bo["round"] > last - window]


def late_means(df: pd.DataFrame, window: int = LATE_ROUNDS) -> pd.DataFrame:
    """Per (sigma, method, seed): the mean ``E[y | a_t]`` over the last ``window`` BO rounds
    (:func:`late_window`)."""
    return late_window(df, window).groupby(RUN)["expected_reward"].mean().unstack("method")


def final_best(df: pd.DataFrame) -> pd.DataFrame:
    """Per (sigma, method, seed): the best ``E[y | a_t]`` played by the last round (the best
    so far, design included)."""
    last = df[df["round"] == df["round"].max()]
    return last.groupby(RUN)["best_expected"].first().unstack("method")


def best_observed(df: pd.DataFrame) -> pd.Series:
    """Per (sigma, method, seed): the best noisy ``observed`` objective over all of a run's
    rounds, design included (the best observation so far by the last round; BO papers often
    plot it)."""
    return df.groupby(RUN)["observed"].max()


def seed_means(rows: pd.DataFrame) -> pd.DataFrame:
    """Per seed (rows) and method (columns): the mean ``E[y | a_t]`` over ``rows``."""
    return rows.groupby(["method", "replicate"])["expected_reward"].mean().unstack("method")


def top_share(df: pd.DataFrame, sigma: float, method: str, tolerance: float) -> float:
    """The share of BO rounds at which ``method``'s mean ``E[y | a_t]`` (over seeds) is within
    ``tolerance`` of the best method's."""
    rows = df[(df["sigma"] == sigma) & (df["round"] > 0)]
    means = rows.groupby(["round", "method"])["expected_reward"].mean().unstack("method")
    return float((means[method] >= means.max(axis=1) - tolerance).mean())


def seed_table(per_seed: pd.DataFrame, sigmas: Sequence[float], methods: list[str]) -> str:
    """Per sigma (rows) and method (columns): mean ± se over seeds of ``per_seed`` (index
    ``(sigma, replicate)``, a column per method)."""
    rows = [[s, *(mean_pm(per_seed.loc[s][m], digits=3) for m in methods)] for s in sigmas]
    return markdown_table(["sigma", *methods], rows)


def build_report(experiment: BOComparison, df: pd.DataFrame) -> str:
    """Late-round means per method and sigma, paired differences and the paper's statements."""
    df = df.rename(columns={"algorithm": "method"})
    late, window = late_means(df), late_window_size(df)
    methods = [m for m in df["method"].unique() if m in late.columns]
    observed = best_observed(df)
    observed_rows = [
        [s, m, mean_pm(observed.loc[(s, m)], digits=3), f"{observed.loc[(s, m)].median():.3f}"]
        for s in experiment.sigmas
        for m in methods
    ]
    optimum = df.groupby("sigma")["optimum"].first()
    exceed = df["expected_reward"] > df["sigma"].map(optimum) + 1e-9
    seconds = df[df["round"] > 0].groupby("method")["seconds"].mean()
    return markdown_document(
        f"# EXCBO paper: {experiment.problem}, our results beside the paper's statements",
        f"{experiment.replicates} seeds, {experiment.rounds} BO rounds after a uniform design "
        f"of {int(df['design'].iloc[0])} actions; noise {experiment.noise}. Mean ± se over seeds "
        f"of E[y | a_t] averaged over the last {window} BO rounds (optimum per sigma: "
        + ", ".join(f"{s}: {v:.4g}" for s, v in optimum.items())
        + ").",
        seed_table(late, experiment.sigmas, methods),
        "The best E[y | a_t] played by the last round (best so far, mean ± se over seeds):",
        seed_table(final_best(df), experiment.sigmas, methods),
        "The best noisy observation by the last round (the best observed objective over all "
        "rounds of a seed, design included; mean ± se and median over seeds):",
        markdown_table(["sigma", "method", "mean ± se", "median"], observed_rows),
        markdown_table(
            ["method", "mean seconds per BO round"],
            [[m, f"{seconds[m]:.2f}"] for m in methods if m in seconds],
        ),
        claims_table(
            [
                Claim.check(
                    "no method's E[y | a_t] exceeds the known optimum",
                    f"{int(exceed.sum())} rounds above it",
                    not bool(exceed.any()),
                ),
                *CLAIM_CHECKS[experiment.figure](df, late, experiment),
            ]
        ),
        dropwave_diagnosis(df) if experiment.problem == "dropwave" else None,
    )


#: Dropwave: a played action counts as "at the centre" when its radius ``r(a)`` (the
#: noiseless ``X``) is below this; ``E[y | a]`` averages 0.42-0.47 there, 0.10 at ``r`` in
#: [3, 5] (the action square's radii run to 7.24).
CENTRE_RADIUS = 1.0
#: Dropwave: a design point lies near the peak when its radius is below this (there
#: ``E[y | a]`` is at least 0.2, about the mixture noise's standard deviation at sigma = 0.05).
PEAK_RADIUS = 2.5


def dropwave_radius(df: pd.DataFrame) -> pd.Series:
    """``r(a) = ||c_1 a - c_2||``, the noiseless ``X`` of each row's action (App. C.3)."""
    return np.hypot(DROPWAVE_C1 * df["a0"] - DROPWAVE_C2, DROPWAVE_C1 * df["a1"] - DROPWAVE_C2)


def dropwave_diagnosis(df: pd.DataFrame) -> str:
    """Where the methods play on Dropwave: per sigma and method, the seeds whose actions of
    the last rounds sit at the centre (median ``r(a)`` below :data:`CENTRE_RADIUS`), the late
    ``E[y | a_t]`` of those seeds and of the others, and how many of the seeds' designs held
    a point near the peak (``r < PEAK_RADIUS``): a design that did and a method that still
    plays far from the centre point to the noise, not the design."""
    df = df.assign(radius=dropwave_radius(df))
    window = late_window_size(df)
    seeds = (
        late_window(df)
        .groupby(RUN)
        .agg(radius=("radius", "median"), reward=("expected_reward", "mean"))
    )
    design = df[df["round"] <= 0].groupby(RUN)["radius"].min()
    seeds["shown"] = design.reindex(seeds.index) < PEAK_RADIUS
    rows = []
    for (sigma, method), group in seeds.groupby(level=["sigma", "method"]):
        centre = group["radius"] < CENTRE_RADIUS
        rows.append(
            [
                sigma,
                method,
                f"{int(centre.sum())}/{len(group)}",
                f"{group.loc[centre, 'reward'].mean():.3f}" if centre.any() else "-",
                f"{group.loc[~centre, 'reward'].mean():.3f}" if (~centre).any() else "-",
                f"{int(group['shown'].sum())}/{len(group)}",
            ]
        )
    header = [
        "sigma",
        "method",
        f"seeds at the centre (median r < {CENTRE_RADIUS:g}, last {window} rounds)",
        "their late E[y | a_t]",
        "the others'",
        f"designs with a point at r < {PEAK_RADIUS:g}",
    ]
    return "\n".join(
        [
            f"Where the methods play (r(a) = ||{DROPWAVE_C1:g} a - {DROPWAVE_C2:g}||, the "
            "noiseless X; E[y | a] is highest at r = 0):",
            "",
            markdown_table(header, rows),
        ]
    )


def beats(
    late: pd.DataFrame, sigma: float, first: str, second: str, window: int = LATE_ROUNDS
) -> Claim:
    """``first``'s late mean above ``second``'s: the paired difference over seeds."""
    text = f"sigma = {sigma}: {first} above {second} (last {window} rounds)"
    if sigma not in late.index.get_level_values(0) or not {first, second} <= set(late.columns):
        return Claim.not_checkable(text)
    rows = late.loc[sigma]
    return Claim.compare(text, PairedComparison.between(rows[first], rows[second]))


def excbo_best(*others: str) -> Callable[..., list[Claim]]:
    """The claim check "EXCBO above each of ``others`` at every sigma" (Figs 3, 5, 7)."""

    def claims(df: pd.DataFrame, late: pd.DataFrame, experiment: BOComparison) -> list[Claim]:
        window = late_window_size(df)
        return [
            beats(late, sigma, "EXCBO", other, window)
            for sigma in experiment.sigmas
            for other in others
            if other in experiment.methods
        ]

    claims.__doc__ = f"EXCBO above {', '.join(others)} at every sigma."
    return claims


def dropwave_claims(df: pd.DataFrame, late: pd.DataFrame, experiment: BOComparison) -> list[Claim]:
    """Fig. 9: sigma = 0.05: EXCBO at or near the top at nearly all rounds, above GP-UCB and EICF;
    sigma = 0.2: above GP-UCB and EICF, MCBO best after round 40; MCBO costs "10+ times" the CPU
    time of the others (checked for both variants: the paper's may be the neural one)."""
    claims, window = [], late_window_size(df)
    for sigma in experiment.sigmas:
        claims += [beats(late, sigma, "EXCBO", other, window) for other in ("GP-UCB", "EICF")]
    if 0.05 in experiment.sigmas and "EXCBO" in late.columns:
        share = top_share(df, 0.05, "EXCBO", tolerance=0.05)
        claims.append(
            Claim.check(
                "sigma = 0.05: EXCBO best (within 0.05) at nearly all rounds",
                f"{share:.0%} of rounds",
                share >= 0.8,
            )
        )
    variants = [m for m in MCBO_VARIANTS if m in late.columns]
    if 0.2 in experiment.sigmas and variants:
        claims.append(mcbo_best_claim(df, variants, sigma=0.2, after=40))
    seconds = df[df["round"] > 0].groupby("method")["seconds"].mean()
    others = [m for m in ("EXCBO", "GP-UCB", "EICF") if m in seconds]
    for variant in variants if others else ():
        ratio = seconds[variant] / seconds[others].mean()
        claims.append(
            Claim.check(
                f"MCBO takes 10+ times the CPU time of the others ({variant})",
                f"{ratio:.1f} times the mean of {', '.join(others)} per BO round",
                ratio >= 10,
            )
        )
    return claims


def mcbo_best_claim(df: pd.DataFrame, variants: Sequence[str], sigma: float, after: int) -> Claim:
    """MCBO best after round ``after``: the best MCBO variant (highest mean ``E[y | a_t]``
    over the rounds after ``after``) against the best other method, paired over seeds."""
    text = f"sigma = {sigma}: MCBO best after round {after} ({' or '.join(variants)})"
    per_seed = seed_means(df[(df["sigma"] == sigma) & (df["round"] > after)])
    means = per_seed.mean()
    others = [m for m in per_seed.columns if m not in variants]
    present = [m for m in variants if m in per_seed.columns]
    if not others or not present:
        return Claim.not_checkable(text, f"no round after {after}" if per_seed.empty else "not run")
    variant, other = means[present].idxmax(), means[others].idxmax()
    comparison = PairedComparison.between(per_seed[variant], per_seed[other])
    ours = (
        f"best: {means.idxmax()} ({means.max():.3f}); {variant} - {other} (the best other): "
        f"{comparison.describe(3)}"
    )
    return Claim.compare(text, comparison, ours=ours)


def rosenbrock_claims(
    df: pd.DataFrame, late: pd.DataFrame, experiment: BOComparison
) -> list[Claim]:
    """Fig. 10: EICF nearly best in all rounds (within 5% of the spread of the methods' mean
    curves); EXCBO above MCBO in rounds 20-40; MCBO above GP-UCB after round 20 (for each MCBO
    variant run, the paper's NMCBO first)."""
    claims = []
    for sigma in experiment.sigmas:
        rows = df[df["sigma"] == sigma]
        if "EICF" in late.columns:
            means = rows[rows["round"] > 0].groupby(["round", "method"])["expected_reward"]
            spread = means.mean().unstack("method")
            tolerance = 0.05 * float((spread.max(axis=1) - spread.min(axis=1)).mean())
            share = top_share(df, sigma, "EICF", tolerance)
            text = f"sigma = {sigma}: EICF nearly best in all rounds"
            claims.append(Claim.check(text, f"{share:.0%} of rounds", share >= 0.8))
        for variant in [m for m in MCBO_VARIANTS if m in experiment.methods]:
            claims.append(window_claim(rows, sigma, "EXCBO", variant, (20, 40)))
            claims.append(window_claim(rows, sigma, variant, "GP-UCB", (21, experiment.rounds)))
    return claims


def window_claim(
    rows: pd.DataFrame, sigma: float, first: str, second: str, window: tuple[int, int]
) -> Claim:
    """``first``'s mean ``E[y | a_t]`` above ``second``'s over the rounds ``window = (start,
    stop)``, both included: each seed's mean over the window, paired over seeds."""
    start, stop = window
    text = f"sigma = {sigma}: {first} above {second} in rounds {start}-{stop}"
    per_seed = seed_means(rows[(rows["round"] >= start) & (rows["round"] <= stop)])
    if not {first, second} <= set(per_seed.columns):
        return Claim.not_checkable(text)
    means = per_seed.mean()
    comparison = PairedComparison.between(per_seed[first], per_seed[second])
    ours = f"{means[first]:.3g} vs {means[second]:.3g}; {comparison.describe(3)}"
    return Claim.compare(text, comparison, ours=ours)


def mean_median(values: pd.Series, digits: str = ".3g") -> str:
    """``mean m (median d)`` over seeds (one seed can decide a mean)."""
    return f"mean {values.mean():{digits}} (median {values.median():{digits}})"


def early_late(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """The first and last :data:`LATE_ROUNDS` BO rounds of each run, and their length (a run
    with fewer than twice that many BO rounds is split in halves: the windows never
    overlap)."""
    rounds = int(df["round"].max())
    window = max(1, min(LATE_ROUNDS, rounds // 2))
    bo = df[df["round"] >= 1]
    return bo[bo["round"] <= window], late_window(df, window), window


def increasing_claim(text: str, groups: Mapping[float, pd.Series]) -> Claim:
    """``text``: each group (a noise level: its seeds' values) above the one before, every
    step by :meth:`~causalbandits.experiments.evidence.PairedComparison.unpaired`
    (the seeds differ between noise levels), decided by the weakest step
    (:func:`~causalbandits.experiments.evidence.weakest`): holds if every step holds, is
    contradicted if a step is."""
    keys = sorted(groups)
    if len(keys) < 2:
        return Claim.not_checkable(text, "one noise level")
    steps = {
        (a, b): PairedComparison.unpaired(groups[b], groups[a]) for a, b in itertools.pairwise(keys)
    }
    ours = (
        ", ".join(f"{k}: {mean_median(groups[k])}" for k in keys)
        + "; "
        + ", ".join(f"{b} - {a}: {step.describe(3)}" for (a, b), step in steps.items())
    )
    sizes = sorted({len(g.dropna()) for g in groups.values()})
    test = (
        "unpaired (Welch) difference between consecutive sigmas over "
        f"{' or '.join(map(str, sizes))} seeds each (seeds not shared across sigma), threshold "
        f"{PAIRED_SE:g} se at every step"
    )
    deciding = steps[weakest(steps)]
    return Claim(text, ours, deciding.verdict, test=test, label=deciding.label)


def noise_study_claims(
    df: pd.DataFrame, late: pd.DataFrame, experiment: BOComparison
) -> list[Claim]:
    """Figs 12 and 14 (EXCBO only): the reward increases with rounds at every sigma (each
    seed's last rounds against its first, paired); on Rosenbrock the spread over seeds shrinks
    and the sigmas barely matter; on Dropwave the paper says higher sigma does better
    (reported, unexplained by the paper; consecutive sigmas compared unpaired, as the seeds
    differ between sigmas), checked both on the late mean ``E[y | a_t]`` and on each seed's
    best noisy observation over all rounds, design included (which the paper plotted is not
    stated)."""
    claims = []
    first, last, window = early_late(df)
    start = first.groupby(["sigma", "replicate"])["expected_reward"].mean()
    end = last.groupby(["sigma", "replicate"])["expected_reward"].mean()
    for sigma in experiment.sigmas:
        text = f"sigma = {sigma}: the reward increases with rounds"
        if sigma not in start.index.get_level_values("sigma"):
            claims.append(Claim.not_checkable(text))
            continue
        comparison = PairedComparison.between(end[sigma], start[sigma])
        ours = (
            f"first {window} rounds {mean_median(start[sigma])}, last {mean_median(end[sigma])}; "
            f"{comparison.describe(3)}"
        )
        claims.append(Claim.compare(text, comparison, ours=ours))
    if experiment.problem == "rosenbrock":
        before = start.groupby("sigma").std().mean()
        after = end.groupby("sigma").std().mean()
        claims.append(
            Claim.check(
                "the spread over seeds decreases significantly",
                f"std over seeds {before:.3g} -> {after:.3g}",
                bool(after < 0.5 * before),
            )
        )
        means, medians = end.groupby("sigma").mean(), end.groupby("sigma").median()
        gap = float(means.max() - means.min())
        scale = float(abs(end.mean() - start.mean()))
        claims.append(
            Claim.check(
                "barely affected by the noise level",
                f"late means differ by {gap:.3g}, medians by "
                f"{float(medians.max() - medians.min()):.3g} (gain {scale:.3g})",
                gap < 0.1 * scale,
            )
        )
    else:
        run = set(end.index.get_level_values("sigma"))
        claims.append(
            increasing_claim(
                "better results at higher noise levels (not explained by the paper)",
                {sigma: end[sigma] for sigma in experiment.sigmas if sigma in run},
            )
        )
        observed = df.groupby(["sigma", "replicate"])["observed"].max()
        run = set(observed.index.get_level_values("sigma"))
        claims.append(
            increasing_claim(
                "better results at higher noise levels, read as the best noisy observation "
                "(the paper's plotted metric is not stated)",
                {sigma: observed[sigma] for sigma in experiment.sigmas if sigma in run},
            )
        )
    return claims


def no_claims(df: pd.DataFrame, late: pd.DataFrame, experiment: BOComparison) -> list[Claim]:
    """A sensitivity of ours: the paper states nothing to check."""
    return []


CLAIM_CHECKS = {
    "sensitivity": no_claims,
    "fig3": excbo_best("GP-UCB", "EICF"),
    "fig5": excbo_best("GP-UCB", "EICF", *MCBO_VARIANTS),
    "fig7": excbo_best("GP-UCB", "EICF", *MCBO_VARIANTS),
    "fig9": dropwave_claims,
    "fig10": rosenbrock_claims,
    "fig12-14": noise_study_claims,
    "fig13": surrogate_claims,
}

ALL_METHODS = ("EXCBO", "GP-UCB", "EICF", *MCBO_VARIANTS)
#: Quick variants: few seeds and rounds, one noise level (smoke runs, CI).
QUICK = {"replicates": 2, "rounds": 6}
#: The tuning grid of every exploring method's ``beta`` (decisions: excbo 8).
TUNING_BETAS = (0.5, 2.0, 5.0)
#: Each exploring method's beta by the tuning rule (:func:`chosen_betas` of
#: :func:`beta_scores`) on the saved runs ``excbo-dropwave-beta`` and ``excbo-alpine2-beta``
#: (decisions: excbo 8; a test recomputes it from docs/results). The comparisons' verdicts
#: use these; the tuning reports show every method at every beta of the grid, the package's
#: untuned 5 among them.
TUNED_BETAS = {"EXCBO": 0.5, "GP-UCB": 0.5, "NMCBO": 5.0, "GP-MCBO": 0.5}


def tuned(
    methods: Sequence[str], budget: Mapping[str, Mapping[str, Any]] | None = None
) -> dict[str, dict[str, Any]]:
    """``method_params`` giving every method of ``methods`` its tuned beta
    (:data:`TUNED_BETAS`; EICF has none), merged with a per-method ``budget``."""
    budget = budget or {}
    return {
        m: {**budget.get(m, {}), **({"beta": TUNED_BETAS[m]} if m in TUNED_BETAS else {})}
        for m in methods
    }


#: The epidemic's 19-dimensional (a, eta) decisions at the default settings cost MCBO about
#: 12 s per round and the whole comparison about 90 minutes on 2 workers: half the starts and
#: raw points of the acquisition optimiser, half the Monte Carlo samples and half the NMCBO
#: re-initialisations (decisions: excbo 23).
_HALF_STARTS = AcquisitionOptimiser(max_restarts=10, max_raw_samples=256)
EPIDEMIC_BUDGET: dict[str, dict[str, Any]] = {
    "EXCBO": {"optimiser": _HALF_STARTS, "samples": 64},
    "GP-UCB": {"optimiser": _HALF_STARTS},
    "EICF": {"optimiser": _HALF_STARTS},
    "GP-MCBO": {"optimiser": _HALF_STARTS, "samples": 64},
    "NMCBO": {"reinits": 32},
}

#: The catalogue's comparisons (name -> fields): Figs 9, 3, 10, 5 and 7 (4 seeds, T = 50;
#: NMCBO, the paper's MCBO, beside GP-MCBO where the paper ran MCBO), the beta tuning of
#: every exploring method on Dropwave and Alpine2 (decisions: excbo 8; 3 seeds under a root
#: seed disjoint from the reported runs', 30 rounds; NMCBO on Dropwave only: at the package's
#: 1,000 re-initialisations it costs 27 s per Alpine2 round, and the paper ran no MCBO
#: there), two Dropwave sensitivities of ours (20 initial samples, the paper's upper bound; a
#: noise level of 0.01), the EXCBO-only noise studies of Figs 12 and 14 (Gaussian noise, 20
#: initial samples, 9 seeds) and Fig. 13's surrogate.
PRESETS: dict[str, dict[str, Any]] = {
    "excbo-dropwave": {
        "problem": "dropwave",
        "figure": "fig9",
        "sigmas": (0.05, 0.2),
        "methods": ALL_METHODS,
        "method_params": tuned(ALL_METHODS),
        "description": "EXCBO paper Fig. 9: Dropwave, EXCBO vs GP-UCB, EICF, NMCBO and GP-MCBO",
    },
    "excbo-alpine2": {
        "problem": "alpine2",
        "figure": "fig3",
        "sigmas": (0.05, 0.1, 0.2),
        "methods": ("EXCBO", "GP-UCB", "EICF"),
        "method_params": tuned(("EXCBO", "GP-UCB", "EICF")),
        "description": "EXCBO paper Fig. 3: Alpine2, EXCBO vs GP-UCB and EICF",
    },
    "excbo-rosenbrock": {
        "problem": "rosenbrock",
        "figure": "fig10",
        "sigmas": (0.05, 0.1, 0.2),
        "methods": ALL_METHODS,
        "method_params": tuned(ALL_METHODS),
        "description": "EXCBO paper Fig. 10: Rosenbrock, EXCBO vs GP-UCB, EICF, NMCBO, GP-MCBO",
    },
    "excbo-epidemic": {
        "problem": "epidemic",
        "figure": "fig5",
        "sigmas": (0.2, 0.3),
        "methods": ALL_METHODS,
        "method_params": tuned(ALL_METHODS, EPIDEMIC_BUDGET),
        "description": "EXCBO paper Fig. 5: epidemic-model calibration, EXCBO vs 4 baselines",
    },
    "excbo-covid": {
        "problem": "covid",
        "figure": "fig7",
        "sigmas": (0.2, 0.4),
        "methods": ALL_METHODS,
        "method_params": tuned(ALL_METHODS),
        "description": "EXCBO paper Fig. 7: COVID-19 pooled testing, EXCBO vs GP-UCB, EICF, MCBO",
    },
    **{
        f"excbo-{problem}-beta": {
            "problem": problem,
            "figure": "sensitivity",
            "sigmas": (0.05,),
            "methods": methods,
            "betas": TUNING_BETAS,
            "rounds": 30,
            "replicates": 3,
            "seed": 99,
            "description": description,
        }
        for problem, methods, description in (
            ("dropwave", EXPLORING, "Tuning every method's beta on Dropwave (3 seeds)"),
            (
                "alpine2",
                ("EXCBO", "GP-UCB", "GP-MCBO"),
                "Tuning every method's beta on Alpine2 (3 seeds; NMCBO on Dropwave only)",
            ),
        )
    },
    "excbo-dropwave-surrogate": {
        "problem": "dropwave",
        "figure": "fig13",
        "sigmas": (0.1,),
        "methods": ("EXCBO",),
        "noise": "gaussian",
        "n_init": 30,
        "rounds": 30,
        "description": "EXCBO paper Fig. 13: EXCBO's X -> Y surrogate on Dropwave",
    },
    "excbo-dropwave-design": {
        "problem": "dropwave",
        "figure": "sensitivity",
        "sigmas": (0.05,),
        "methods": ALL_METHODS,
        "method_params": tuned(ALL_METHODS),
        "n_init": 20,
        "description": "Dropwave sensitivity: 20 initial samples (the paper's upper bound)",
    },
    "excbo-dropwave-low-noise": {
        "problem": "dropwave",
        "figure": "sensitivity",
        "sigmas": (0.01,),
        "methods": ALL_METHODS,
        "method_params": tuned(ALL_METHODS),
        "description": "Dropwave sensitivity: mixture noise at sigma = 0.01",
    },
    **{
        f"excbo-{problem}-noise": {
            "problem": problem,
            "figure": "fig12-14",
            "sigmas": (0.1, 0.2, 0.3),
            "methods": ("EXCBO",),
            "noise": "gaussian",
            "n_init": 20,
            "replicates": 9,
            "description": f"EXCBO paper Fig. {figure}: EXCBO alone on {problem}, Gaussian noise",
        }
        for problem, figure in (("dropwave", 12), ("rosenbrock", 14))
    },
}


def beta_scores(frames: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """The tuning rule's scores (decisions: excbo 8): per tuning problem (``frames``: the
    long results of a beta run), method and beta, the mean over seeds of the late mean
    ``E[y | a_t]`` (:func:`late_means`) divided by the problem's optimum; the column
    ``score`` averages them over the problems the method ran on."""
    columns = {}
    for problem, df in frames.items():
        df = df.rename(columns={"algorithm": "method"})
        late = late_window(df).groupby(["base_method", "beta", "replicate"])
        means = late["expected_reward"].mean().groupby(["base_method", "beta"]).mean()
        columns[problem] = means / float(df["optimum"].iloc[0])
    table = pd.DataFrame(columns)
    table.index.names = ["method", "beta"]
    return table.assign(score=table.mean(axis=1))


def chosen_betas(scores: pd.DataFrame) -> dict[str, float]:
    """Each method's beta with the highest tuning score (:func:`beta_scores`)."""
    best = scores["score"].groupby(level="method").idxmax()
    return {method: float(beta) for method, (_, beta) in best.items()}


def preset(name: str, quick: bool = False) -> BOComparison:
    """The catalogue comparison ``name`` (:data:`PRESETS`); ``quick``: 2 seeds, 6 rounds and
    the first noise level only."""
    fields = {**PRESETS[name], "name": name}
    if quick:
        fields = {**fields, **QUICK, "sigmas": fields["sigmas"][:1], "name": f"{name}-quick"}
    return BOComparison(**fields)
