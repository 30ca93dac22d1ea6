"""Tuning runs of the NDC-SEM synthetic experiment: ``lambda`` of eq. 9 and ``xi`` of eq. 11.

The paper tunes ``lambda`` "by grid search over [1e-5, 1e6]" without the grid, criterion or
value. :func:`tune_lambda` runs NDC-SEM for every value of the decade grid on instances and
reward seeds disjoint from the reported ones (root seed :data:`~causalbandits.papers.
ndc_sem.TUNING_SEED`); :func:`choose_lambda` picks the value with the lowest time-averaged
``MSE(A_hat)``.

Table I's ``xi`` (1e-10, 1e-6, 1e-18 for D = 50, 200, 400) were tuned by the authors on their
own instance, whose ``beta`` schedule is not given in numbers. :func:`tune_xi` repeats that
tuning on our tuning instances (lowest mean final regret per delay, :func:`choose_xi`), and
:func:`main` evaluates NDC-SEM with the tuned values on the reported seeds: a sensitivity
beside the Table I run, not a replacement. It also runs the instance sensitivities and the
``count_pending`` variant of NDC-SEM (not in the paper), see :func:`main`.

Command line (writes the tables beside the main run)::

    python -m causalbandits.papers.ndc_sem.synthetic_tuning docs/results/ndc-sem-synthetic --jobs 2
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from causalbandits.papers.ndc_sem.synthetic import (
    EVALUATION_SEED,
    LAMBDA_GRID,
    PENDING,
    TUNING_SEED,
    SyntheticExperiment,
    slug,
)
from causalbandits.papers.ndc_sem.synthetic_report import mean_pm


def tuning_run(
    base: SyntheticExperiment,
    label: str,
    out_dir: Path,
    replicates: int,
    jobs: int,
    progress: bool,
    **changes: object,
) -> pd.DataFrame:
    """NDC-SEM alone (unless ``changes`` name the algorithms), ``base`` with ``changes``, on
    ``replicates`` tuning instances (root :data:`TUNING_SEED`), run into ``out_dir``
    (resumable); its long results table."""
    experiment = dataclasses.replace(
        base,
        seed=TUNING_SEED,
        replicates=replicates,
        name=f"{base.name}-{label}-tuning",
        **{"algorithms": ("NDC-SEM",), **changes},
    )
    return experiment.run(out_dir, jobs=jobs, progress=progress)


def tune_lambda(
    out_dir: str | Path,
    grid: Sequence[float] = LAMBDA_GRID,
    replicates: int = 10,
    jobs: int = 1,
    progress: bool = False,
    base: SyntheticExperiment | None = None,
) -> pd.DataFrame:
    """NDC-SEM for every ``lambda`` of ``grid`` on tuning instances (root :data:`TUNING_SEED`).

    One run per value into ``out_dir/lam=<value>`` (resumable); returns per (delay, lam,
    replicate) the final regret, the time-averaged and the final ``MSE(A_hat)``.
    """
    base = base or SyntheticExperiment()
    frames = []
    for lam in grid:
        path = Path(out_dir) / f"lam={lam:g}"
        df = tuning_run(base, "lambda", path, replicates, jobs, progress, lam=float(lam))
        grouped = df.groupby(["delay", "replicate"])
        frames.append(
            pd.DataFrame(
                {
                    "final_regret": grouped["cum_regret"].last(),
                    "mean_mse": grouped["a_mse"].mean(),
                    "final_mse": grouped["a_mse"].last(),
                }
            )
            .reset_index()
            .assign(lam=float(lam))
        )
    return pd.concat(frames, ignore_index=True)


def choose_lambda(tuning: pd.DataFrame) -> float:
    """The ``lambda`` with the lowest time-averaged ``MSE(A_hat)`` over delays and replicates
    (the criterion of spec §3.1 that measures what lambda controls; regret is flat for small
    lambda); ties go to the smaller value."""
    score = tuning.groupby("lam")["mean_mse"].mean().sort_index()
    return float(score.idxmin())


def tuning_summary(tuning: pd.DataFrame) -> pd.DataFrame:
    """Mean final regret (± se) and MSEs per (delay, lam)."""
    grouped = tuning.groupby(["delay", "lam"])
    out = grouped.agg(
        final_regret=("final_regret", "mean"),
        regret_sd=("final_regret", "std"),
        replicates=("final_regret", "size"),
        mean_mse=("mean_mse", "mean"),
        final_mse=("final_mse", "mean"),
    ).reset_index()
    out["regret_se"] = out.pop("regret_sd") / np.sqrt(out["replicates"])
    return out


def tuning_report(tuning: pd.DataFrame) -> str:
    """Markdown of :func:`tuning_summary` with the value :func:`choose_lambda` picks."""
    summary = tuning_summary(tuning)
    chosen = choose_lambda(tuning)
    overall = tuning.groupby("lam")["mean_mse"].mean()
    replicates = int(summary["replicates"].max())
    lines = [
        "# NDC-SEM synthetic experiment: the lasso penalty lambda (eq. 9)",
        "",
        f"NDC-SEM (Table I gamma and xi) on {replicates} tuning instances and reward seeds per "
        f"delay (root seed {TUNING_SEED}; the reported runs use {EVALUATION_SEED}), one run "
        "per lambda of the paper's grid. Criterion (spec §3.1): the lowest time-averaged "
        "MSE(A_hat) = ||A - A_hat||_F^2 / N^2 over the checkpoints, averaged over delays and "
        f"instances. Chosen: **lambda = {chosen:g}**.",
        "",
        "| lambda | time-averaged MSE (all D) | "
        + " | ".join(f"final regret D = {d}" for d in sorted(summary["delay"].unique()))
        + " |",
        "|---|---|" + "---|" * summary["delay"].nunique(),
    ]
    table = summary.set_index(["lam", "delay"])
    for lam in sorted(summary["lam"].unique()):
        cells = [
            mean_pm(table.loc[(lam, d), "final_regret"], table.loc[(lam, d), "regret_se"])
            for d in sorted(summary["delay"].unique())
        ]
        lines.append(f"| {lam:g} | {overall.loc[lam]:.2e} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


# -------------------------------------------------------------------- xi sensitivity

#: ``xi`` values tried per delay: Table I's three, their neighbours and Theorem 1's range.
XI_GRID = (0.0, 1e-18, 1e-14, 1e-10, 1e-6, 1e-3, 1e-1)


def tune_xi(
    out_dir: str | Path,
    grid: Sequence[float] = XI_GRID,
    replicates: int = 10,
    jobs: int = 1,
    progress: bool = False,
    base: SyntheticExperiment | None = None,
    algorithm: str = "NDC-SEM",
) -> pd.DataFrame:
    """``algorithm`` (NDC-SEM or its :data:`~causalbandits.papers.ndc_sem.PENDING` variant)
    for every ``xi`` of ``grid`` (the same at every delay) on the tuning instances.

    One run per value into ``out_dir/xi=<value>`` (resumable); returns the final regret per
    (delay, xi, replicate).
    """
    base = base or SyntheticExperiment()
    label = "xi" if algorithm == "NDC-SEM" else f"xi-{slug(algorithm)}"
    frames = []
    for xi in grid:
        path = Path(out_dir) / f"xi={xi:g}"
        values = dict.fromkeys(base.delays, float(xi))
        changes = {"xi": values, "algorithms": (algorithm,)}
        df = tuning_run(base, label, path, replicates, jobs, progress, **changes)
        last = df[df["t"] == df["t"].max()]
        frames.append(
            last[["delay", "replicate"]].assign(
                xi=float(xi), final_regret=last["cum_regret"].to_numpy()
            )
        )
    return pd.concat(frames, ignore_index=True)


def choose_xi(tuning: pd.DataFrame) -> dict[int, float]:
    """Per delay, the ``xi`` with the lowest mean final regret (ties: the smaller ``xi``)."""
    means = tuning.groupby(["delay", "xi"])["final_regret"].mean().sort_index()
    return {int(d): float(group.idxmin()[1]) for d, group in means.groupby(level="delay")}


def xi_report(tuning: pd.DataFrame, table_i: dict[int, float], algorithm: str = "NDC-SEM") -> str:
    """Markdown: ``algorithm``'s mean final regret (± se) per (xi, delay) on the tuning
    instances."""
    variant = (
        ""
        if algorithm == "NDC-SEM"
        else " (not in the paper: the padding of eq. 11 also counts the plays in flight)"
    )
    grouped = tuning.groupby(["xi", "delay"])["final_regret"]
    summary = grouped.agg(["mean", "std", "size"])
    chosen = choose_xi(tuning)
    delays = sorted(int(d) for d in tuning["delay"].unique())
    replicates = int(summary["size"].max())
    lines = [
        f"# NDC-SEM synthetic experiment: the exploration constant xi (eq. 11) of {algorithm}",
        "",
        f"{algorithm}{variant}, gamma and lambda of the main run, on {replicates} tuning "
        "instances per delay "
        f"(root seed {TUNING_SEED}; the reported runs use {EVALUATION_SEED}), final regret at T "
        "(mean ± standard error). Table I: "
        + ", ".join(f"D = {d}: {table_i[d]:g}" for d in delays if d in table_i)
        + ". Lowest mean regret: "
        + ", ".join(f"D = {d}: **{chosen[d]:g}**" for d in delays)
        + ".",
        "",
        "| xi | " + " | ".join(f"D = {d}" for d in delays) + " |",
        "|---|" + "---|" * len(delays),
    ]
    for xi in sorted(tuning["xi"].unique()):
        cells = []
        for d in delays:
            row = summary.loc[(xi, d)]
            cells.append(mean_pm(row["mean"], row["std"] / np.sqrt(row["size"])))
        lines.append(f"| {xi:g} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


# -------------------------------------------------------------------- command line


def run_variant(experiment: SyntheticExperiment, runs: Path, out: Path, jobs: int) -> None:
    """Run ``experiment`` with its task files under ``runs``; write its table
    (``results.csv.gz``), figures and report into ``out``."""
    df = experiment.run(runs, jobs=jobs, progress=False)
    out.mkdir(parents=True, exist_ok=True)
    df.to_csv(out / "results.csv.gz", index=False)
    experiment.plot(df, out)
    (out / "report.md").write_text(experiment.report(df), encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> None:
    """Write into ``out_dir`` the lambda and xi tuning tables and four sensitivity runs of
    the paper's sweep: ``xi-tuned`` (NDC-SEM with the tuned ``xi``, and SEM-UCB),
    ``fixed-instance`` (one instance shared by all replicates, as the paper's single Fig. 5
    schedule), ``all-arms-redrawn`` (every arm gets new means at each change point) and
    ``pending-counts`` (the variant of NDC-SEM whose padding counts the plays in flight, not
    in the paper, with its own ``xi`` tuned the same way, beside SEM-UCB). The task files of
    all runs go to ``--runs`` (resumable)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--replicates", type=int, default=10, help="tuning instances")
    parser.add_argument("--runs", type=Path, default=Path("results") / "ndc-sem-tuning-runs")
    args = parser.parse_args(argv)
    base = SyntheticExperiment()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    lam = tune_lambda(args.runs / "lambda", replicates=args.replicates, jobs=args.jobs)
    lam.to_csv(args.out_dir / "lambda_tuning_runs.csv", index=False)
    tuning_summary(lam).to_csv(args.out_dir / "lambda_tuning.csv", index=False)
    (args.out_dir / "lambda_tuning.md").write_text(tuning_report(lam), encoding="utf-8")
    xi = tune_xi(args.runs / "xi", replicates=args.replicates, jobs=args.jobs, base=base)
    xi.to_csv(args.out_dir / "xi_tuning_runs.csv", index=False)
    (args.out_dir / "xi_tuning.md").write_text(xi_report(xi, base.xi), encoding="utf-8")
    pending = tune_xi(
        args.runs / "xi-pending", replicates=args.replicates, jobs=args.jobs, algorithm=PENDING
    )
    pending.to_csv(args.out_dir / "xi_tuning_pending_runs.csv", index=False)
    (args.out_dir / "xi_tuning_pending.md").write_text(
        xi_report(pending, base.xi, PENDING), encoding="utf-8"
    )
    variants = {
        "xi-tuned": dataclasses.replace(
            base, xi=choose_xi(xi), algorithms=("NDC-SEM", "SEM-UCB"), name=f"{base.name}-xi"
        ),
        "fixed-instance": dataclasses.replace(base, instances="fixed", name=f"{base.name}-fixed"),
        "all-arms-redrawn": dataclasses.replace(
            base, n_redraw=base.n_arms, name=f"{base.name}-redraw-all"
        ),
        "pending-counts": dataclasses.replace(
            base,
            xi=choose_xi(pending),
            algorithms=(PENDING, "SEM-UCB"),
            name=f"{base.name}-pending",
        ),
    }
    for label, experiment in variants.items():
        run_variant(experiment, args.runs / label, args.out_dir / label, args.jobs)


if __name__ == "__main__":
    main()
