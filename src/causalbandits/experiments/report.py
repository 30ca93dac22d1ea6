"""The report kit: paper claims with our value and a computed verdict, markdown tables,
mean ± standard error. A paper's report is a list of :class:`Claim` and a few tables; any
interpretation that depends on numbers is computed here or in the paper's checks, never
written into the code as prose."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from causalbandits.experiments.metrics import Z95


@dataclass(frozen=True)
class Claim:
    """A statement of a paper, our measured value, and whether it holds (``None``: not
    checkable on these results, e.g. a quick run without the needed setting)."""

    text: str
    ours: str
    holds: bool | None


def verdict(holds: bool | None) -> str:
    """``yes``, ``NO`` or ``n/a``."""
    if holds is None:
        return "n/a"
    return "yes" if holds else "NO"


def claims_table(claims: Iterable[Claim], subject: str = "paper's claim") -> str:
    """The "paper's claim | ours | holds" markdown table (``subject`` names the first column)."""
    rows = [[c.text, c.ours, verdict(c.holds)] for c in claims]
    return markdown_table([subject, "ours", "holds"], rows)


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A markdown table from a header and rows of cells (cells are formatted with ``str``;
    a ``|`` inside a cell, as in ``E[y | a]``, is escaped so that it does not split it)."""

    def line(cells: Iterable[object]) -> str:
        return "| " + " | ".join(str(cell).replace("|", "\\|") for cell in cells) + " |"

    return "\n".join([line(header), "|" + "---|" * len(header), *map(line, rows)])


def frame_table(frame: pd.DataFrame, index: bool = False) -> str:
    """A data frame as a markdown table."""
    if index:
        frame = frame.reset_index()
    return markdown_table([str(c) for c in frame.columns], frame.itertuples(index=False))


def standard_error(values: Sequence[float] | np.ndarray | pd.Series) -> float:
    """The standard error of the mean (NaN for fewer than two values)."""
    array = np.asarray(values, dtype=float)
    if array.size < 2:
        return float("nan")
    return float(array.std(ddof=1) / np.sqrt(array.size))


def mean_se(values: Sequence[float] | np.ndarray | pd.Series) -> tuple[float, float]:
    """Mean and standard error of ``values``."""
    array = np.asarray(values, dtype=float)
    return float(array.mean()), standard_error(array)


#: Standard errors a paired difference must clear to count as a difference (the project's).
PAIRED_SE = 2.0


def paired_sign(mean: float, se: float, multiple: float = PAIRED_SE) -> int:
    """``+1`` or ``-1`` when ``mean`` lies more than ``multiple`` standard errors above or
    below zero, else ``0`` (a tie)."""
    if mean - multiple * se > 0:
        return 1
    return -1 if mean + multiple * se < 0 else 0


def pm(mean: float, se: float, digits: int = 0) -> str:
    """``mean ± se`` with thousands separators and ``digits`` decimals."""
    return f"{mean:,.{digits}f} ± {se:,.{digits}f}"


def mean_pm(values: Sequence[float] | np.ndarray | pd.Series, digits: int = 0) -> str:
    """``mean ± se`` of ``values``."""
    return pm(*mean_se(values), digits=digits)


def paired_difference(first: pd.Series, second: pd.Series) -> tuple[float, float, int]:
    """Mean and standard error of ``first - second`` over the replicates both have (indexed by
    replicate), and its :func:`paired_sign`."""
    difference = (first - second).dropna()
    mean, se = mean_se(difference)
    return mean, se, paired_sign(mean, se)


def final_summary_table(
    last: pd.DataFrame, horizon: int, replicates_per_task: int, metric: str = "avg_regret"
) -> str:
    """Per algorithm, from the rows at the horizon: ``metric`` (mean ± se), its 95 % interval
    width, how often the action played at ``T`` was optimal and its regret (the ``current``
    recorder), and the wall milliseconds per round and replicate (the ``elapsed`` recorder of
    tasks that ran ``replicates_per_task`` replicates together)."""
    rows = []
    for label, group in last.groupby("algorithm", sort=False):
        mean, se = mean_se(group[metric])
        rows.append(
            [
                label,
                pm(mean, se, 3),
                f"{2 * Z95 * se:.3f}",
                f"{int(group['optimal_now'].sum())} of {len(group)}",
                f"{group['regret_now'].mean():.3f}",
                f"{1e3 * group['elapsed'].mean() / horizon / replicates_per_task:.2f}",
            ]
        )
    header = [
        "algorithm",
        f"{metric} at T",
        "95% CI width",
        "action at T optimal",
        "regret of the action at T",
        "ms per round and replicate",
    ]
    return markdown_table(header, rows)


def grid_table(last: pd.DataFrame, by: Sequence[str], metric: str) -> str:
    """``metric`` (mean ± se) per grid point ``by`` (rows) and algorithm (columns), with the
    mean over the algorithms (e.g. a tuning criterion), from the rows at the horizon."""
    grouped = last.groupby([*by, "algorithm"], sort=True)[metric]
    table = grouped.apply(lambda values: pm(*mean_se(values), 3)).unstack("algorithm")
    table["mean over algorithms"] = last.groupby(list(by))[metric].mean().map("{:.3f}".format)
    return frame_table(table, index=True)
