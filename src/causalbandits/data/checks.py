"""What the data loaders share: the error they raise and the value checks.

Every refusal is one :class:`DataError` line naming the file and, for a bad value, its column,
data row (the row's position after the header, counting from 1) and value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd


class DataError(ValueError):
    """A data file a loader refuses; the message names the file (and the column, data row and
    value of a bad cell)."""


def number(value: float) -> str:
    """A cell's value as the file would spell it (``-99999``, ``1e+300``, ``inf``)."""
    return f"{value:.15g}"


def check_range(path: Path, column: str, values: pd.Series, low: float, high: float) -> None:
    """Refuse the first value of ``column`` that is infinite or outside ``[low, high]``,
    naming the file, column, data row and value; NaN (missing) is left to the caller."""
    array = values.to_numpy(dtype=float)
    bad = ~np.isnan(array) & ~((array >= low) & (array <= high))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        value = array[row]
        what = "not finite" if np.isinf(value) else f"outside [{number(low)}, {number(high)}]"
        raise DataError(
            f"{path}: column {column!r}, data row {row + 1}: {number(value)} is {what} "
            f"({int(bad.sum())} such value(s) in the column)"
        )


def missing_counts(frame: pd.DataFrame, columns: Sequence[str]) -> dict[str, int]:
    """Missing (NaN) cells per column, for the columns that have any."""
    counts = {column: int(frame[column].isna().sum()) for column in columns}
    return {column: count for column, count in counts.items() if count}


def check_pairing(path: Path, frame: pd.DataFrame, code: str, name: str) -> None:
    """Refuse a row whose ``code`` and ``name`` contradict the rest of the file: a code must
    always carry the same name and a name the same code. The expected partner of each is
    the one most rows give it. A row without a code or a name is refused too."""
    absent = frame[code].isna() | frame[name].isna()
    if absent.any():
        row = int(np.flatnonzero(absent.to_numpy())[0])
        raise DataError(f"{path}: data row {row + 1}: missing {code} or {name}")
    pairs = frame.groupby([code, name], sort=False).size()
    expected_name = _majority(pairs, level=0)
    expected_code = _majority(pairs, level=1)
    codes, names = frame[code].to_numpy(), frame[name].to_numpy()
    wrong_name = names != np.array([expected_name[c] for c in codes], dtype=object)
    wrong_code = codes != np.array([expected_code[n] for n in names], dtype=object)
    bad = wrong_name | wrong_code
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        c, n = codes[row], names[row]
        if wrong_name[row]:
            usual = f"{code} {c} is {expected_name[c]!r} in {pairs[(c, expected_name[c])]} rows"
        else:
            usual = f"{n!r} has {code} {expected_code[n]} in {pairs[(expected_code[n], n)]} rows"
        raise DataError(
            f"{path}: data row {row + 1}: {code} {c} with {name} {n!r} contradicts the other "
            f"rows ({usual}; {int(bad.sum())} contradicting row(s) in all)"
        )


def _majority(pairs: pd.Series, level: int) -> Mapping:
    """For each key at ``level`` of the (code, name) counts, its most frequent partner."""
    other = 1 - level
    best = pairs.sort_values(ascending=False, kind="stable").groupby(level=level).head(1)
    return dict(
        zip(
            best.index.get_level_values(level),
            best.index.get_level_values(other),
            strict=True,
        )
    )
