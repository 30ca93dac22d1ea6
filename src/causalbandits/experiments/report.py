"""The report kit: paper claims with our value and a computed verdict, markdown tables,
mean ± standard error. A paper's report is a list of :class:`Claim` and a few tables; any
interpretation that depends on numbers is computed here or in the paper's checks, never
written into the code as prose."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import pandas as pd

from causalbandits.experiments.evidence import PairedComparison, Verdict, against_best_other
from causalbandits.experiments.metrics import Z95

Item = TypeVar("Item")


@dataclass(frozen=True)
class Claim:
    """A statement of a paper, our measured value and its verdict (:mod:`~causalbandits.
    experiments.evidence`). ``paper`` is the paper's own number where it gives one, ``test``
    how the verdict was decided (for a comparison: the paired test, its threshold and how many
    replicates agree), ``label`` the verdict as printed (a tie says which way it points).

    Build one with :meth:`check` (a property), :meth:`compare` (a paired comparison) or
    :meth:`not_checkable`."""

    text: str
    ours: str
    verdict: Verdict
    paper: str = ""
    test: str = ""
    label: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.verdict, Verdict):
            raise TypeError(f"verdict must be a Verdict, got {self.verdict!r}")
        if not self.label:
            object.__setattr__(self, "label", self.verdict.value)

    @classmethod
    def check(cls, text: str, ours: str, holds: bool | None, paper: str = "", test: str = ""):
        """A property claim: ``holds``, ``not reproduced`` or (``None``) ``n/a``."""
        return cls(text, ours, Verdict.of_property(holds), paper=paper, test=test)

    @classmethod
    def compare(
        cls,
        text: str,
        comparison: PairedComparison,
        paper: str = "",
        digits: int = 3,
        ours: str | None = None,
        test_prefix: str = "",
    ) -> Claim:
        """A comparison claim decided by ``comparison`` (``ours`` defaults to its mean
        difference ± se with ``digits`` decimals; ``test_prefix`` goes before its test, e.g.
        which of several comparisons decided, :func:`~causalbandits.experiments.evidence.
        weakest`)."""
        return cls(
            text,
            comparison.describe(digits) if ours is None else ours,
            comparison.verdict,
            paper=paper,
            test=test_prefix + comparison.test(),
            label=comparison.label,
        )

    @classmethod
    def not_checkable(cls, text: str, ours: str = "not run", paper: str = "") -> Claim:
        """A claim these results cannot check (``n/a``)."""
        return cls(text, ours, Verdict.NA, paper=paper)

    @property
    def holds(self) -> bool:
        """Whether the verdict is ``holds``."""
        return self.verdict is Verdict.HOLDS


def lowest_claim(text: str, values: Mapping[Hashable, pd.Series], label: Hashable) -> Claim:
    """The claim ``text`` that ``label`` ends lowest, decided against the other of lowest mean
    (:func:`~causalbandits.experiments.evidence.against_best_other`; ``values``: per label, a
    value per replicate); ours names the lowest mean and the paired difference."""
    other, comparison = against_best_other(values, label)
    lowest = min(values, key=lambda name: float(values[name].mean()))
    ours = f"lowest: {lowest}; {label} - {other}: {comparison.describe(0)}"
    return Claim.compare(text, comparison, ours=ours)


_COLLECTED: ContextVar[list[Claim] | None] = ContextVar("collected_claims", default=None)


@contextmanager
def collecting_claims() -> Iterator[list[Claim]]:
    """Collect every claim that :func:`claims_table` renders inside the ``with`` block, in
    order (how a written report also saves its claims for the scoreboard)."""
    collected: list[Claim] = []
    token = _COLLECTED.set(collected)
    try:
        yield collected
    finally:
        _COLLECTED.reset(token)


def claims_table(claims: Iterable[Claim], subject: str = "paper's claim") -> str:
    """The "claim | paper | ours | verdict | test" markdown table (``subject`` names the first
    column; the paper and test columns appear when a claim fills them)."""
    claims = list(claims)
    collected = _COLLECTED.get()
    if collected is not None:
        collected.extend(claims)
    with_paper = any(c.paper for c in claims)
    with_test = any(c.test for c in claims)
    header = [subject, *(["paper"] if with_paper else []), "ours", "verdict"]
    header += ["test"] if with_test else []
    rows = [
        [
            c.text,
            *([c.paper or "-"] if with_paper else []),
            c.ours,
            c.label,
            *([c.test or "-"] if with_test else []),
        ]
        for c in claims
    ]
    return markdown_table(header, rows)


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A markdown table from a header and rows of cells (cells are formatted with ``str``;
    a ``|`` inside a cell, as in ``E[y | a]``, is escaped so that it does not split it)."""

    def line(cells: Iterable[object]) -> str:
        return "| " + " | ".join(str(cell).replace("|", "\\|") for cell in cells) + " |"

    return "\n".join([line(header), "|" + "---|" * len(header), *map(line, rows)])


def in_order(order: Iterable[Item], present: Iterable[Item]) -> list[Item]:
    """The items of ``order`` that are in ``present``, in ``order``'s order (e.g. the paper's
    methods that a results table holds)."""
    found = set(present)
    return [item for item in order if item in found]


def markdown_document(*blocks: str | None) -> str:
    """A markdown document from its blocks (a title, paragraphs, tables, :func:`section`),
    separated by blank lines and ending in a newline; empty blocks and ``None`` (an optional
    part that is absent) are left out. :func:`claims_table` collects claims when it is called:
    build the blocks in the document's order."""
    return "\n\n".join(block for block in blocks if block) + "\n"


def section(heading: str, *blocks: str | None) -> str:
    """A ``## heading`` section: the heading and its blocks separated by blank lines (empty
    blocks and ``None`` left out), a block of :func:`markdown_document`."""
    return "\n\n".join([f"## {heading}", *(block for block in blocks if block)])


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


def pm(mean: float, se: float, digits: int = 0) -> str:
    """``mean ± se`` with thousands separators and ``digits`` decimals."""
    return f"{mean:,.{digits}f} ± {se:,.{digits}f}"


def mean_pm(values: Sequence[float] | np.ndarray | pd.Series, digits: int = 0) -> str:
    """``mean ± se`` of ``values``."""
    return pm(*mean_se(values), digits=digits)


def pm_table(
    rows: pd.DataFrame, index: str | Sequence[str], columns: str, value: str, digits: int = 0
) -> pd.DataFrame:
    """``mean ± se`` of ``value`` per ``index`` (rows: a column or columns) and value of
    ``columns`` (columns), both sorted; ``-`` where a pair has no rows."""
    keys = [index] if isinstance(index, str) else list(index)
    cells = rows.groupby([*keys, columns])[value].apply(mean_pm, digits=digits)
    return cells.unstack(columns).fillna("-")


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
    table = pm_table(last, by, "algorithm", metric, 3)
    table["mean over algorithms"] = last.groupby(list(by))[metric].mean().map("{:.3f}".format)
    return frame_table(table, index=True)
