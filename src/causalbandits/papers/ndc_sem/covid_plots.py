"""Figures of the NDC-SEM Covid-19 experiment: regions chosen (Fig. 4), predictions on the
validation days (Fig. 3), the validation error eps(t) and the estimated cumulative overall
reward (Fig. 9), drawn from the long table of :mod:`causalbandits.papers.ndc_sem.covid`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from causalbandits.data.italy_covid import ABBREVIATIONS, REGIONS
from causalbandits.experiments.plots import band, panel_figure, plot_choices, save_figure
from causalbandits.experiments.report import standard_error
from causalbandits.papers.ndc_sem.covid_report import (
    COLORS,
    POLICIES,
    UNIT_LABELS,
    day_rows,
    learned_start,
    policies_present,
    primary_unit,
    selection_matrix,
)

if TYPE_CHECKING:
    from causalbandits.papers.ndc_sem.covid import CovidExperiment


def plot_regions(df: pd.DataFrame, out_path: Path, experiment: CovidExperiment) -> Path:
    """Fig. 4: regions chosen each day (featured replicate), one panel per policy."""
    unit, featured = primary_unit(df), experiment.featured_replicate
    days = day_rows(df, unit)
    policies = policies_present(df)
    figure, axes = panel_figure(len(policies), 1, (12, 3.75), sharex=True)
    for ax, policy in zip(axes, policies, strict=True):
        rows = days[(days["policy"] == policy) & (days["replicate"] == featured)].sort_values("day")
        plot_choices(ax, selection_matrix(rows["selected"].tolist()), ABBREVIATIONS, fontsize=7)
        ax.axvline(experiment.change_point - 0.5, color="tab:red", lw=2, label="change point")
        ax.axvline(
            learned_start(experiment) - 0.5,
            color="tab:green",
            ls="--",
            lw=1.2,
            label="end of the H initialisation",
        )
        shift = int(rows["shift"].iloc[0])
        ax.set_title(f"{policy}: regions chosen each day (replicate {featured}, k = {shift})")
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7)
    axes[-1].set_xlabel("day (1 = 31 Jul 2020)")
    return save_figure(figure, out_path)


def plot_predictions(df: pd.DataFrame, out_path: Path, experiment: CovidExperiment) -> Path:
    """Fig. 3: true vs predicted overall daily cases on 4 validation days (final graph)."""
    unit, featured = primary_unit(df), experiment.featured_replicate
    rows = df[(df["record"] == "prediction") & (df["unit"] == unit) & (df["replicate"] == featured)]
    validation_days = sorted(rows["day"].unique())
    shown = validation_days[1::2][:4] if len(validation_days) >= 8 else validation_days[:4]
    figure, axes = panel_figure(len(shown), 1, (12, 2.6), sharex=True)
    position = np.arange(len(REGIONS))
    for ax, day in zip(axes, shown, strict=True):
        at = rows[rows["day"] == day].set_index("region").loc[list(ABBREVIATIONS)]
        ax.bar(position - 0.2, at["y"], 0.4, label="true y")
        ax.bar(position + 0.2, at["y_pred"], 0.4, label="predicted (I - A_hat)^-1 b")
        ax.set_title(f"validation day {day} ({at['date'].iloc[0]})", fontsize=9)
        ax.set_ylabel("cases / max")
        ax.legend(fontsize=7)
    axes[-1].set_xticks(position, ABBREVIATIONS, rotation=90, fontsize=7)
    return save_figure(figure, out_path)


def plot_validation_error(df: pd.DataFrame, out_path: Path, experiment: CovidExperiment) -> Path:
    """``eps(t)`` and ``lam(t)`` over days, mean ± se over replicates."""
    days = day_rows(df, primary_unit(df))
    days = days[days["policy"] == POLICIES[0]]
    figure, (left, right) = panel_figure(1, 2, (5.5, 4))
    for column, label in (
        ("eps", "eps(t): validation days received"),
        ("eps_all", "error of A_hat(t) on all 8 validation days"),
        ("eps_empty", "empty graph (y_hat = b), all 8 days"),
    ):
        stats = days.groupby("day")[column].agg(["mean", lambda v: standard_error(v.dropna())])
        band(left, stats.iloc[:, 0], stats.iloc[:, 1], label=label)
    left.axvline(experiment.change_point, color="tab:red", ls=":", lw=1)
    left.set(xlabel="day", ylabel="mean absolute error (cases / max)")
    left.legend(fontsize=7)
    logs = days.assign(log_lam=np.log10(days["lam"]))
    for _, rows in logs.groupby("replicate"):
        right.plot(rows["day"], rows["log_lam"], color="grey", alpha=0.25, lw=0.8)
    right.plot(logs.groupby("day")["log_lam"].median(), color="black", label="median")
    right.set(xlabel="day", ylabel="log10 lambda chosen")
    right.legend(fontsize=7)
    return save_figure(figure, out_path)


def plot_cumulative_reward(df: pd.DataFrame, out_path: Path, experiment: CovidExperiment) -> Path:
    """Fig. 9: estimated cumulative overall reward (final graph), mean ± se over replicates."""
    units = list(day_rows(df)["unit"].unique())
    figure, axes = panel_figure(len(units), 2, (5.5, 3.8))
    for row, unit in zip(axes.reshape(-1, 2), units, strict=True):
        days = day_rows(df, unit).sort_values(["policy", "replicate", "day"])
        for ax, start in zip(row, (1, experiment.change_point), strict=True):
            for policy in policies_present(df):
                mine = days[(days["policy"] == policy) & (days["day"] >= start)]
                curves = mine.pivot(index="day", columns="replicate", values="reward").cumsum()
                mean, se = curves.mean(axis=1), curves.apply(standard_error, axis=1)
                ax.plot(mean.index, mean, color=COLORS[policy], label=policy)
                ax.fill_between(mean.index, mean - se, mean + se, color=COLORS[policy], alpha=0.2)
            ax.axvline(experiment.change_point, color="tab:red", ls=":", lw=1)
            ax.set(xlabel="day", ylabel="estimated cumulative overall reward")
            ax.set_title(f"from day {start}; {UNIT_LABELS[unit]}", fontsize=9)
            ax.legend(fontsize=8)
    return save_figure(figure, out_path)


def plot_all(df: pd.DataFrame, out_dir: Path, experiment: CovidExperiment) -> list[Path]:
    """The four figures: Fig. 4, Fig. 3, eps(t) and lam(t), Fig. 9."""
    figures = {
        "regions_selected": plot_regions,
        "validation_predictions": plot_predictions,
        "validation_error": plot_validation_error,
        "cumulative_reward": plot_cumulative_reward,
    }
    return [plot(df, out_dir / f"{name}.png", experiment) for name, plot in figures.items()]
