"""Italian regional COVID-19 bulletins (NDC-SEM Sec. V-B, App. VII-D): where the file is,
reading and checking it, and the daily new cases per region.

Data: the Civil Protection Department's daily regional bulletins (pcm-dpc/COVID-19, folder
``dati-regioni/``, CC BY 4.0, attribution: Dipartimento della Protezione Civile). Never
committed: :func:`resolve_data_path` finds a local file, :func:`load_italy_covid` reads and
checks it, :func:`download_italy_covid` fetches the public aggregate file into a cache. The
bandit built from them is :mod:`causalbandits.envs.italy_covid`.

Value checks (:func:`load_italy_covid`; every refusal is one :class:`DataError` line naming the
file, column, data row and value). The shared snapshot's observed ranges are in brackets.

- Every count is a finite number of :data:`COUNT_BOUNDS`: counts of people within
  ``[0, ITALY_POPULATION]`` (largest: 4,391,944 cases in Lombardia), ``tamponi`` within
  ``[0, 1e9]`` (tests, several per person: up to 47,797,178 in Veneto), and
  ``nuovi_positivi``, negative after corrections [-229, 52,693], never larger in size than the
  same day's ``totale_casi`` (a correction cannot remove more cases than were ever counted);
  ``lat`` and ``long`` lie in Italy's bounding box. Missing counts are refused.
- :data:`CUMULATIVE` columns never fall to less than half of the previous day's value of
  their region: the Department corrects them, so they may fall, but the snapshot's largest
  falls are 50 % (``dimessi_guariti``, Calabria, 2 -> 1 on 2020-03-12), 41 % (``totale_casi``,
  Liguria, 42 -> 25 on 2020-03-01) and 13 % (``deceduti``, P.A. Trento, 466 -> 405 on
  2020-06-24). The one exception, ``tamponi`` of Veneto on 2024-11-05 (12,298,448 between
  39,679,445 and 39,684,214), is listed in :data:`KNOWN_FALLS`. A corrupted cell shows as such
  a fall (a value too low, or the day after a value too high).
- ``codice_regione`` and ``denominazione_regione`` pair one to one: a code always names the
  same region and a region always has the same code (the pairing most rows give).
"""

from __future__ import annotations

import hashlib
import os
import urllib.request
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from causalbandits.data.checks import DataError, check_pairing, check_range, number

#: Regions in Table II order (alphabetical by ``denominazione_regione``), N = 21.
REGIONS: tuple[str, ...] = (
    "Abruzzo",
    "Basilicata",
    "Calabria",
    "Campania",
    "Emilia-Romagna",
    "Friuli Venezia Giulia",
    "Lazio",
    "Liguria",
    "Lombardia",
    "Marche",
    "Molise",
    "P.A. Bolzano",
    "P.A. Trento",
    "Piemonte",
    "Puglia",
    "Sardegna",
    "Sicilia",
    "Toscana",
    "Umbria",
    "Valle d'Aosta",
    "Veneto",
)
#: Table II abbreviations, in the order of :data:`REGIONS`.
ABBREVIATIONS: tuple[str, ...] = (
    "ABR",
    "BAS",
    "CAL",
    "CAM",
    "EMR",
    "FVG",
    "LAZ",
    "LIG",
    "LOM",
    "MAR",
    "MOL",
    "PAB",
    "PAT",
    "PIE",
    "PUG",
    "SAR",
    "SIC",
    "TOS",
    "UMB",
    "VDA",
    "VEN",
)
#: The upstream commit the downloader reads (the snapshot of 2025-01-10 behind the shared
#: copy), so that a download always returns the same bytes.
PINNED_COMMIT = "fc82987b9ebda01fe8e5b59d5667e3e00721edb9"
URL = (
    f"https://raw.githubusercontent.com/pcm-dpc/COVID-19/{PINNED_COMMIT}/dati-regioni/"
    "dpc-covid19-ita-regioni.csv"
)

#: :func:`content_sha256` of the pinned snapshot, computed from the shared copy of that commit
#: (``../shared/data/italy_covid``: the aggregate file's :data:`COLUMNS`, dates without the time
#: of day). A digest of the content, not of the bytes: the shared copy is not the aggregate
#: file byte for byte, and the digest must hold for both.
PINNED_CONTENT_SHA256 = "78bbc34cfc766132713c1c78cdde710621569651efd794fc5f6b5b9bc30e34d2"

COLUMNS: tuple[str, ...] = (
    "data",
    "codice_regione",
    "denominazione_regione",
    "lat",
    "long",
    "ricoverati_con_sintomi",
    "terapia_intensiva",
    "totale_ospedalizzati",
    "isolamento_domiciliare",
    "totale_positivi",
    "nuovi_positivi",
    "dimessi_guariti",
    "deceduti",
    "totale_casi",
    "tamponi",
)
#: Columns that must hold finite numbers (``nuovi_positivi`` may be negative: corrections).
NUMERIC_COLUMNS: tuple[str, ...] = ("codice_regione", *COLUMNS[3:])
#: An upper bound of any count of people (ISTAT, 1 January 2020: 59.6 million residents).
ITALY_POPULATION = 60_000_000
#: ``[low, high]`` of each numeric column but ``codice_regione``: counts of people, tests
#: (``tamponi``, several per person), new cases (negative after corrections), and Italy's
#: bounding box for the coordinates.
COUNT_BOUNDS: dict[str, tuple[float, float]] = {
    "lat": (35.0, 48.0),
    "long": (6.0, 19.0),
    **{c: (0.0, ITALY_POPULATION) for c in COLUMNS[5:] if c not in ("nuovi_positivi", "tamponi")},
    "nuovi_positivi": (-ITALY_POPULATION, ITALY_POPULATION),
    "tamponi": (0.0, 1e9),
}
#: Cumulative counts: they may fall in the Department's corrections, never below
#: ``MAX_FALL`` times the previous day's value.
CUMULATIVE: tuple[str, ...] = ("dimessi_guariti", "deceduti", "totale_casi", "tamponi")
MAX_FALL = 0.5
#: Falls of a cumulative count beyond ``MAX_FALL`` that the pinned snapshot holds: (column,
#: region, date). Veneto's tests drop to 12,298,448 for one day between 39.7 million on
#: either side.
KNOWN_FALLS: frozenset[tuple[str, str, str]] = frozenset({("tamponi", "Veneto", "2024-11-05")})
#: Environment variable naming the bulletins file (``dpc-covid19-ita-regioni.csv[.gz]``).
DATA_ENV = "CAUSALBANDITS_ITALY_COVID"
#: Default location, relative to the working directory (the project root).
DEFAULT_DATA = Path("..") / "shared" / "data" / "italy_covid" / "dpc-covid19-ita-regioni.csv.gz"


def resolve_data_path(path: str | Path | None = None) -> Path:
    """The bulletins file: ``path``, else ``$CAUSALBANDITS_ITALY_COVID``, else
    :data:`DEFAULT_DATA` (relative to the working directory); raise if it does not exist."""
    candidate = Path(path or os.environ.get(DATA_ENV) or DEFAULT_DATA)
    if not candidate.is_file():
        raise FileNotFoundError(
            f"the Italian Covid-19 bulletins are not at {candidate.resolve()}; pass data_path=, "
            f"set {DATA_ENV}, or fetch them with causalbandits.data.italy_covid."
            "download_italy_covid(cache_dir) (pcm-dpc/COVID-19, CC BY 4.0)"
        )
    return candidate


def _preview(items: Sequence[str], count: int = 5) -> str:
    shown = ", ".join(items[:count])
    return shown + (f", ... ({len(items)} in all)" if len(items) > count else "")


def load_italy_covid(path: str | Path) -> pd.DataFrame:
    """Read the regional bulletins (``.csv`` or ``.csv.gz``) and check them.

    ``data`` becomes a date (a time-of-day suffix is dropped). Raises :class:`DataError` (a
    ``ValueError``) naming the file for an empty, unreadable or truncated file, missing
    columns, counts that are not finite numbers or break the value checks of the module
    docstring (naming the column, the first bad data row and its value), bad dates, missing
    or unknown regions, a region code contradicting its name, duplicated (date, region) rows,
    and dates of the calendar range that a region lacks. Rows are sorted by date, then
    region order.
    """
    frame = _read(Path(path))
    for column in NUMERIC_COLUMNS:
        frame[column] = _finite(path, frame, column)
        if column in COUNT_BOUNDS:
            check_range(path, column, frame[column], *COUNT_BOUNDS[column])
    _check_new_cases(path, frame)
    try:
        days = frame["data"].astype(str).str.slice(0, 10)
        frame["data"] = pd.to_datetime(days, format="%Y-%m-%d")
    except ValueError as error:
        message = f"{path}: column 'data' holds a value that is not a date: {error}"
        raise DataError(message) from error
    _check_regions(path, frame)
    keys = ["data", "denominazione_regione"]
    duplicated = frame.duplicated(keys)
    if duplicated.any():
        first = frame.loc[duplicated, keys].iloc[0]
        raise DataError(
            f"{path}: {int(duplicated.sum())} duplicated (date, region) row(s), e.g. "
            f"{first['data'].date()} {first['denominazione_regione']}"
        )
    _check_calendar(path, frame)
    _check_cumulative(path, frame)
    order = pd.Categorical(frame["denominazione_regione"], categories=REGIONS, ordered=True)
    return (
        frame.assign(_order=order.codes)
        .sort_values(["data", "_order"])
        .drop(columns="_order")
        .reset_index(drop=True)
    )


def _read(path: Path) -> pd.DataFrame:
    """The file's rows with the :data:`COLUMNS` (an empty or unreadable file is named)."""
    try:
        frame = pd.read_csv(path)
    except pd.errors.EmptyDataError as error:
        raise DataError(f"{path} is empty: {error}") from error
    except (OSError, EOFError, UnicodeDecodeError, pd.errors.ParserError) as error:
        raise DataError(f"{path} cannot be read as a CSV file: {error}") from error
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise DataError(f"{path}: missing column(s) {', '.join(missing)}")
    return frame


def _finite(path: str | Path, frame: pd.DataFrame, column: str) -> pd.Series:
    """``column`` as numbers; refuse a cell that is not a finite number (missing included)."""
    values = pd.to_numeric(frame[column], errors="coerce")
    bad = ~np.isfinite(values.to_numpy(dtype=float))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise DataError(
            f"{path}: column {column!r} holds {int(bad.sum())} value(s) that are not finite "
            f"numbers, e.g. {frame[column].iloc[row]!r} in data row {row + 1}"
        )
    return values


def _check_new_cases(path: str | Path, frame: pd.DataFrame) -> None:
    """``nuovi_positivi`` never exceeds the day's ``totale_casi`` in size."""
    new, total = frame["nuovi_positivi"].to_numpy(), frame["totale_casi"].to_numpy()
    bad = np.abs(new) > total
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise DataError(
            f"{path}: column 'nuovi_positivi', data row {row + 1}: {number(new[row])} is larger "
            f"in size than the day's totale_casi {number(total[row])}"
        )


def _check_regions(path: str | Path, frame: pd.DataFrame) -> None:
    """The 21 regions of Table II, each code paired with one name and vice versa."""
    names = set(frame["denominazione_regione"].astype(str))
    absent = [r for r in REGIONS if r not in names]
    unknown = sorted(names - set(REGIONS))
    if absent or unknown:
        raise DataError(
            f"{path}: missing region(s) [{', '.join(absent)}], unknown region(s) "
            f"[{', '.join(unknown)}]; expected the 21 regions of Table II"
        )
    check_pairing(Path(path), frame, "codice_regione", "denominazione_regione")


def _check_calendar(path: str | Path, frame: pd.DataFrame) -> None:
    """Every region on every day of the file's calendar range."""
    calendar = pd.date_range(frame["data"].min(), frame["data"].max(), freq="D")
    present = frame.pivot(index="data", columns="denominazione_regione", values="codice_regione")
    present = present.reindex(index=calendar, columns=list(REGIONS)).notna()
    gaps = [
        f"{region} lacks {_preview([str(d.date()) for d in calendar[~present[region]]])}"
        for region in REGIONS
        if not present[region].all()
    ]
    if gaps:
        raise DataError(f"{path}: missing dates: " + "; ".join(gaps))


def _check_cumulative(path: str | Path, frame: pd.DataFrame) -> None:
    """No :data:`CUMULATIVE` count falls below ``MAX_FALL`` times the region's previous day
    (the falls of :data:`KNOWN_FALLS` aside)."""
    ordered = frame.sort_values(["denominazione_regione", "data"], kind="stable")
    regions = ordered["denominazione_regione"].to_numpy()
    days = ordered["data"].dt.strftime("%Y-%m-%d").to_numpy()
    rows = ordered.index.to_numpy() + 1
    same = regions[1:] == regions[:-1]
    for column in CUMULATIVE:
        values = ordered[column].to_numpy(dtype=float)
        falls = same & (values[1:] < MAX_FALL * values[:-1])
        for k in np.flatnonzero(falls):
            if (column, regions[k + 1], days[k + 1]) in KNOWN_FALLS:
                continue
            raise DataError(
                f"{path}: column {column!r}, data row {rows[k + 1]}: {number(values[k + 1])} "
                f"({regions[k + 1]}, {days[k + 1]}) is less than half of the day before "
                f"({number(values[k])}, data row {rows[k]}); a cumulative count falls only in "
                "small corrections"
            )


def download_italy_covid(
    cache_dir: str | Path, url: str = URL, sha256: str | None = None, force: bool = False
) -> Path:
    """Fetch the aggregate file of the pinned upstream commit into ``cache_dir`` (if absent or
    ``force``) and return its path; a file that fails a check is not kept.

    Every call checks the file, the first download as a cached file: its SHA-256 against
    ``sha256`` when given, else (a cached file) against the digest recorded beside it at
    download (``<file>.sha256``); its values with :func:`load_italy_covid`; and, for the
    pinned :data:`URL`, its content against the pinned snapshot's
    (:data:`PINNED_CONTENT_SHA256`). A file of another ``url`` is trusted on its first
    download unless ``sha256`` is given.
    """
    target = Path(cache_dir) / "dpc-covid19-ita-regioni.csv"
    record = target.with_name(target.name + ".sha256")
    content = PINNED_CONTENT_SHA256 if url == URL else None
    if force or not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + ".part")
        try:
            with urllib.request.urlopen(url, timeout=120) as response:
                partial.write_bytes(response.read())
            _check_file(partial, f"the download of {url}", sha256, content, "; nothing was saved")
            partial.replace(target)
            record.write_text(file_sha256(target) + "\n", encoding="utf-8")
        finally:
            partial.unlink(missing_ok=True)
        return target
    recorded = record.read_text(encoding="utf-8").strip() if record.exists() else None
    remedy = "; delete it and download again"
    _check_file(target, str(target), sha256 or recorded, content, remedy)
    return target


def file_sha256(path: str | Path) -> str:
    """The SHA-256 of a file, hex."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def content_sha256(frame: pd.DataFrame) -> str:
    """The SHA-256 of bulletins as :func:`load_italy_covid` returns them: dates as days,
    region names in UTF-8 and the numeric columns as float64, row by row. The file's format
    (compression, a time of day in ``data``, extra columns, number spelling) leaves it
    unchanged."""
    digest = hashlib.sha256()
    digest.update(frame["data"].dt.strftime("%Y-%m-%d").str.cat(sep="\n").encode("utf-8"))
    digest.update(b"\0" + frame["denominazione_regione"].str.cat(sep="\n").encode("utf-8"))
    digest.update(b"\0" + frame[list(NUMERIC_COLUMNS)].to_numpy(dtype="<f8").tobytes())
    return digest.hexdigest()


def _check_file(
    path: Path, label: str, sha256: str | None, content: str | None, remedy: str
) -> None:
    """The file's SHA-256 against ``sha256``, its values, and its content against
    ``content`` (:func:`content_sha256`); ``label`` names it in an error, ``remedy`` ends it."""
    digest = file_sha256(path)
    if sha256 is not None and digest != sha256:
        raise DataError(f"{label} has SHA-256 {digest}, expected {sha256}{remedy}")
    found = content_sha256(load_italy_covid(path))
    if content is not None and found != content:
        raise DataError(
            f"{label} is not the pinned snapshot (commit {PINNED_COMMIT}): its content has "
            f"SHA-256 {found}, expected {content}{remedy}"
        )


def daily_new_cases(frame: pd.DataFrame, start: str, end: str) -> np.ndarray:
    """``nuovi_positivi`` clipped at 0 (decisions: ndc-sem 16), days ``start..end`` x
    :data:`REGIONS`."""
    days = pd.date_range(start, end, freq="D")
    table = frame.pivot(index="data", columns="denominazione_regione", values="nuovi_positivi")
    lacking = days.difference(table.index)
    if lacking.size:
        raise ValueError(
            f"the data lack {lacking.size} day(s) of {start}..{end}: "
            f"{_preview([str(d.date()) for d in lacking])}"
        )
    return np.clip(table.loc[days, list(REGIONS)].to_numpy(dtype=float), 0, None)
