"""Figures from a results table: regret curves per setting, final regret vs a parameter.

Figures are drawn on ``matplotlib.figure.Figure`` (Agg canvas) without pyplot, so plotting
never changes the user's global backend and works on machines without a display.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from causalbandits.experiments.metrics import Z95, final, parameter_columns, summarise

LABELS = {
    "cum_regret": "cumulative regret",
    "avg_regret": "time-averaged regret R(t)/t",
    "optimal_share": "share of optimal actions",
}


def save_figure(figure: Figure, out_path: str | Path, dpi: int = 150) -> Path:
    """Save ``figure`` (creating the folder) and return the path: the one figure writer."""
    path = Path(out_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=dpi, bbox_inches="tight")
    return path


def panel_figure(
    rows: int, cols: int, panel: tuple[float, float], **options: Any
) -> tuple[Figure, np.ndarray]:
    """A constrained-layout figure of ``rows x cols`` panels of ``panel`` (width, height)
    inches each, and its axes flat, row by row (``options``: of ``Figure.subplots``, e.g.
    ``sharex=True``)."""
    figure = Figure(figsize=(panel[0] * cols, panel[1] * rows), layout="constrained")
    return figure, figure.subplots(rows, cols, squeeze=False, **options).ravel()


def grouped_bars(
    ax: Axes, bars: Mapping[str, tuple[Sequence[float], Sequence[float]]], **options: Any
) -> None:
    """Bars side by side at the positions ``0, 1, ...``: ``bars`` maps each label to its
    means and standard errors (one per position), drawn with 95% error bars (a NaN se as
    none); ``options`` go to ``Axes.bar`` (e.g. ``capsize``)."""
    width = 0.8 / max(len(bars), 1)
    for j, (label, (means, ses)) in enumerate(bars.items()):
        positions = np.arange(len(means)) + (j - (len(bars) - 1) / 2) * width
        errors = Z95 * np.nan_to_num(np.asarray(ses, dtype=float))
        ax.bar(positions, means, width, yerr=errors, label=label, **options)


def band(ax: Axes, mean: pd.Series, half: pd.Series | np.ndarray, **options: Any) -> None:
    """``mean`` against its index as a line (``options``: of ``Axes.plot``, e.g. ``label``)
    within a shaded band of ``mean ± half`` of its colour."""
    line = ax.plot(mean.index, mean, **options)[0]
    ax.fill_between(mean.index, mean - half, mean + half, facecolor=line.get_color(), alpha=0.2)


def error_lines(ax: Axes, lines: Mapping[str, pd.DataFrame], x: str, metric: str) -> None:
    """Per label of ``lines`` (its rows of a :func:`~causalbandits.experiments.metrics.
    summarise` table), ``<metric>_mean`` against column ``x`` with markers and 95% error bars
    from ``<metric>_se`` (a NaN se as none)."""
    for label, rows in lines.items():
        rows = rows.sort_values(x, kind="stable")
        errors = Z95 * np.nan_to_num(rows[f"{metric}_se"].to_numpy(dtype=float))
        ax.errorbar(rows[x], rows[f"{metric}_mean"], errors, marker="o", capsize=3, label=label)


def plot_choices(ax: Axes, chosen: np.ndarray, names: Sequence[str], fontsize: float) -> None:
    """The arms chosen in each round as a grey-scale image: ``chosen`` is ``(rounds, arms)``
    (1 or ``True``: chosen), round 1 on the left, arm 0 on top, the arms' ``names`` on the y
    axis."""
    rounds, arms = chosen.shape
    extent = (0.5, rounds + 0.5, arms - 0.5, -0.5)
    ax.imshow(chosen.T, aspect="auto", cmap="Greys", interpolation="nearest", extent=extent)
    ax.set_yticks(range(arms), names, fontsize=fontsize)


def _panel_title(rows: pd.DataFrame, parameters: list[str], keys: list[str]) -> str:
    """The parameters of the panel's first row (an index-like panel key only without them)."""
    first = rows.iloc[0]
    parts = [f"{p} = {first[p]}" for p in parameters if p not in keys and pd.notna(first[p])]
    return ", ".join(parts) or ", ".join(f"{k} = {first[k]}" for k in keys)


def plot_regret_curves(
    df: pd.DataFrame,
    out_path: str | Path,
    metric: str = "cum_regret",
    title: str | None = None,
    change_points: Sequence[int] = (),
    dashed: Sequence[str] = (),
    panel_by: str | Sequence[str] | None = "setting",
) -> Path:
    """``metric`` vs round with its 95% band, one line per algorithm, one panel per value of
    ``panel_by`` (a column or columns, e.g. ``"delay"``; default: the grid point ``setting``
    of a spec run; ``None``: one panel); dotted vertical lines mark the ``change_points``; the
    algorithms in ``dashed`` (e.g. diagnostics beside the learners) are drawn dashed."""
    summary = summarise(df)
    parameters = parameter_columns(df)
    keys = [] if panel_by is None else [panel_by] if isinstance(panel_by, str) else list(panel_by)
    panels = (
        [rows for _, rows in summary.groupby(keys, sort=False, dropna=False)] if keys else [summary]
    )
    ncols = min(len(panels), 4)
    figure, axes = panel_figure(math.ceil(len(panels) / ncols), ncols, (4.2, 3.4))
    for ax, rows in zip(axes, panels, strict=False):
        for label, curve in rows.groupby("algorithm", sort=False):
            style = "--" if label in dashed else "-"
            line = ax.plot(curve["t"], curve[f"{metric}_mean"], style, label=label)[0]
            ax.fill_between(
                curve["t"],
                curve[f"{metric}_low"],
                curve[f"{metric}_high"],
                color=line.get_color(),
                alpha=0.2,
                linewidth=0,
            )
        for point in change_points:
            ax.axvline(point, color="grey", linestyle=":", linewidth=1)
        ax.set_title(_panel_title(rows, parameters, keys), fontsize="medium")
        ax.set_xlabel("round t")
        ax.set_ylabel(LABELS.get(metric, metric))
    for ax in axes[len(panels) :]:
        ax.set_visible(False)
    axes[0].legend(fontsize="small")
    if title:
        figure.suptitle(title)
    return save_figure(figure, out_path)


def plot_final_vs_parameter(
    df: pd.DataFrame,
    parameter: str,
    out_path: str | Path,
    logx: bool = True,
    metric: str = "cum_regret",
    title: str | None = None,
) -> Path:
    """``metric`` at the horizon vs a swept setting ``parameter``, 95% error bars per algorithm.

    ``logx`` uses a log axis (symlog if a value is <= 0). The other setting parameters must
    be the same in every setting.
    """
    if parameter not in df.columns:
        raise ValueError(f"no column {parameter!r} in the results")
    others = [p for p in parameter_columns(df) if p != parameter]
    varying = [p for p in others if df[p].nunique(dropna=False) > 1]
    if varying:
        raise ValueError(f"settings also vary in {varying}; select rows with one value first")
    summary = summarise(final(df), by=["algorithm", parameter])
    figure = Figure(figsize=(5.5, 4.0), layout="constrained")
    ax = figure.subplots()
    error_lines(ax, dict(tuple(summary.groupby("algorithm", sort=False))), parameter, metric)
    if logx:
        ax.set_xscale("log" if (summary[parameter] > 0).all() else "symlog")
    ax.set_xlabel(parameter)
    ax.set_ylabel(f"{LABELS.get(metric, metric)} at T")
    ax.legend(fontsize="small")
    if title:
        ax.set_title(title)
    return save_figure(figure, out_path)


def standard_plots(df: pd.DataFrame, out_dir: str | Path, sweep: str | None = None) -> list[Path]:
    """Regret curves, and final regret vs ``sweep`` when the settings sweep a parameter."""
    out_dir = Path(out_dir)
    paths = [plot_regret_curves(df, out_dir / "regret_curves.png")]
    if sweep is not None:
        paths.append(plot_final_vs_parameter(df, sweep, out_dir / f"final_vs_{sweep}.png"))
    return paths
