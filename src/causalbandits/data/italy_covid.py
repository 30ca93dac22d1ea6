"""Italian regional COVID-19 bulletins (NDC-SEM Sec. V-B, App. VII-D): where the file is,
reading and checking it, and the daily new cases per region.

Data: the Civil Protection Department's daily regional bulletins (pcm-dpc/COVID-19, folder
``dati-regioni/``, CC BY 4.0, attribution: Dipartimento della Protezione Civile). Never
committed: :func:`resolve_data_path` finds a local file, :func:`load_italy_covid` reads and
checks it, :func:`download_italy_covid` fetches the public aggregate file into a cache. The
bandit built from them is :mod:`causalbandits.envs.italy_covid`.
"""

from __future__ import annotations

import hashlib
import os
import urllib.request
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

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

    ``data`` becomes a date (a time-of-day suffix is dropped). Raises ``ValueError`` naming
    the file for an unreadable or truncated file, missing columns, counts that are not finite
    numbers (naming the column and the first bad row), bad dates, missing or unknown regions,
    duplicated (date, region) rows, and dates of the calendar range that a region lacks.
    Rows are sorted by date, then region order.
    """
    try:
        frame = pd.read_csv(path)
    except (OSError, EOFError, UnicodeDecodeError, pd.errors.ParserError) as error:
        raise ValueError(f"{path} cannot be read as a CSV file: {error}") from error
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"{path}: missing column(s) {', '.join(missing)}")
    for column in NUMERIC_COLUMNS:
        values = pd.to_numeric(frame[column], errors="coerce")
        bad = ~np.isfinite(values.to_numpy(dtype=float))
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"{path}: column {column!r} holds {int(bad.sum())} value(s) that are not finite "
                f"numbers, e.g. {frame[column].iloc[row]!r} in data row {row + 1}"
            )
        frame[column] = values
    try:
        days = frame["data"].astype(str).str.slice(0, 10)
        frame["data"] = pd.to_datetime(days, format="%Y-%m-%d")
    except ValueError as error:
        raise ValueError(
            f"{path}: column 'data' holds a value that is not a date: {error}"
        ) from error
    names = set(frame["denominazione_regione"])
    absent = [r for r in REGIONS if r not in names]
    unknown = sorted(names - set(REGIONS))
    if absent or unknown:
        raise ValueError(
            f"{path}: missing region(s) [{', '.join(absent)}], unknown region(s) "
            f"[{', '.join(unknown)}]; expected the 21 regions of Table II"
        )
    keys = ["data", "denominazione_regione"]
    duplicated = frame.duplicated(keys)
    if duplicated.any():
        first = frame.loc[duplicated, keys].iloc[0]
        raise ValueError(
            f"{path}: {int(duplicated.sum())} duplicated (date, region) row(s), e.g. "
            f"{first['data'].date()} {first['denominazione_regione']}"
        )
    calendar = pd.date_range(frame["data"].min(), frame["data"].max(), freq="D")
    present = frame.pivot(index="data", columns="denominazione_regione", values="codice_regione")
    present = present.reindex(index=calendar, columns=list(REGIONS)).notna()
    gaps = [
        f"{region} lacks {_preview([str(d.date()) for d in calendar[~present[region]]])}"
        for region in REGIONS
        if not present[region].all()
    ]
    if gaps:
        raise ValueError(f"{path}: missing dates: " + "; ".join(gaps))
    order = pd.Categorical(frame["denominazione_regione"], categories=REGIONS, ordered=True)
    return (
        frame.assign(_order=order.codes)
        .sort_values(["data", "_order"])
        .drop(columns="_order")
        .reset_index(drop=True)
    )


def download_italy_covid(
    cache_dir: str | Path, url: str = URL, sha256: str | None = None, force: bool = False
) -> Path:
    """Fetch the aggregate file of the pinned upstream commit into ``cache_dir`` (if absent or
    ``force``) and return its path.

    Every call checks the file, a cached one too: its SHA-256 against ``sha256`` when given,
    else against the digest recorded beside it at download (``<file>.sha256``), and its
    content with :func:`load_italy_covid` (columns, finite counts, 21 regions, dates).
    """
    target = Path(cache_dir) / "dpc-covid19-ita-regioni.csv"
    record = target.with_name(target.name + ".sha256")
    if force or not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + ".part")
        try:
            with urllib.request.urlopen(url, timeout=120) as response:
                partial.write_bytes(response.read())
            _check_digest(partial, sha256)
            load_italy_covid(partial)
            partial.replace(target)
            record.write_text(file_sha256(target) + "\n", encoding="utf-8")
        finally:
            partial.unlink(missing_ok=True)
    expected = sha256 or (record.read_text(encoding="utf-8").strip() if record.exists() else None)
    _check_digest(target, expected)
    load_italy_covid(target)
    return target


def file_sha256(path: str | Path) -> str:
    """The SHA-256 of a file, hex."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _check_digest(path: Path, expected: str | None) -> None:
    if expected is not None and file_sha256(path) != expected:
        raise ValueError(
            f"{path} has SHA-256 {file_sha256(path)}, expected {expected}; delete it and "
            "download again"
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
