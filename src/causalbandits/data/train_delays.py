"""German train delays (SSEM-UCB Sec. V-B, App. G2, Table II): where the files are, reading and
checking them, and the per-station hourly signals and the track-record graph built from them.

Source
------
"DBNokkyuu (Ed.) (2024) API marketplace data", GitHub repository
``Nokkyuu/Fantastic_trains_and_when_to_find_them`` (MIT licence, copyright 2024 Nokkyuu):
hourly snapshots of the Deutsche Bahn Timetables API on 16 days between 2024-06-23 and
2024-07-14. Never committed to this project: :func:`resolve_data_dir` finds a local folder
(``path`` argument, else ``$CAUSALBANDITS_TRAIN_DELAYS``, else ``../shared/data/train_delays``
relative to the working directory, the project root) holding

- ``stations.csv``: the 21 stations of category <= 3 nearest to 51.2 N, 10.5 E (eva_nr, name,
  long, lat, distance_km, ...);
- ``hourly_20_stations.csv.gz``: every row of the available hourly files at those stations, one
  row per train and station (``hour_file``, ``ID``, ``path``, ``eva_nr``, planned and changed
  arrival and departure times, ``arrival_delay_m``, ``depature_delay_m`` -- spelled as in the
  source);
- ``hours_listed.txt``: the source's 342 hourly files (the paper's horizon T = 342);
- ``hours_present.txt``: the 80 of them available (mostly night hours).

:func:`load_train_delays` reads and checks them and returns a :class:`TrainDelayData`.

Derived quantities (time t = a present hour, in the listed order; station i)
---------------------------------------------------------------------------
- **Stations.** The paper's 20 (Table II) are ``stations.csv`` minus Naumburg (Saale) Hbf
  (``exclude``, default :data:`EXCLUDED`); they are ordered as in Table II and keep its
  abbreviations (:data:`TABLE_II`). Any other station a caller keeps follows in the order of
  ``stations.csv``, with the abbreviation of :data:`SHORT_NAMES` (``NAUM`` is ours) or its
  first four letters. Rows are matched to stations by ``eva_nr``.
- **Exogenous signal** ``b[t, i]`` ("time difference between planned and actual stay, averaged
  over all trains at a stop per hour"): the mean over the station-hour's *through* trains (a
  planned arrival and a planned departure) of ``depature_delay_m - arrival_delay_m``, the
  minutes the stay added to the train's delay. NaN when the station-hour has no through train.
- **Endogenous signal** ``y[t, i]`` ("train-averaged total delay per station accumulated over the
  course of each hour"), the mean over the station-hour's trains of, per train,

  - ``endogenous="departure"`` (default, the spec's recommended resolution): the delay with
    which the train leaves the station: its departure delay, or its arrival delay when it
    terminates here (no planned departure). For a through train this is its arrival delay plus
    its exogenous stay delay, so ``y = b + (delay brought in)``, the separable SEM's shape;
  - ``endogenous="max"``: the larger of its arrival and departure delay, an event the train
    does not have (no planned arrival or departure) counting 0 as the source records it. This
    is the definition that reproduces the spec's calibration table (Sec. 5.4) to its two
    decimals; it differs from ``"departure"`` for trains that are early on arrival at their
    terminus, leave their origin early, or make up time during their stay.

  Per train ``departure <= max``, so the ``"departure"`` signal is never above the ``"max"``
  one. NaN when the station has no train in that hour.
- **Missing values.** A station-hour without trains is NaN in both signals; ``observed`` marks
  finite ``y`` and ``exogenous_observed`` finite ``b``. The source writes 0 minutes for an event
  whose time did not change and for an event the train does not have; the shared file has no
  empty delay cell. An empty delay cell (other copies) is missing: the train leaves out of every
  average that needs that value (the ``"max"`` value needs every delay the train has), and a
  one-line notice on standard error counts the missing cells per column.
- **Value checks.** Every refusal is one :class:`~causalbandits.data.checks.DataError` line
  naming the file, column, data row and value. A delay that is not a number, infinite, or
  outside :data:`DELAY_RANGE` (at most an hour early, at most a day late; the shared rows
  range from -19 to 111 minutes for arrivals and -3 to 110 for departures) is refused, as are
  station coordinates off the globe or a negative distance. ``eva_nr`` and ``name`` pair one to
  one: ``stations.csv`` may repeat neither, and a row of the hourly table whose ``name``
  differs from the one ``stations.csv`` gives its ``eva_nr`` is refused (a swapped station
  number or name).
- **Termini.** A kept station with no through train in any present hour (Kassel Hbf, a stub
  terminus) has no exogenous signal under the per-train definition. ``terminus_exogenous``
  chooses its fallback:

  - ``"origin"`` (default): the mean departure delay of the trains that *start* there (a planned
    departure, no planned arrival). Such a train brings no delay in, so its departure delay is
    the station's own contribution -- the per-train definition ``depature_delay_m -
    arrival_delay_m`` with the missing arrival counting 0 as the source records it. NaN in hours
    without a starting train (Kassel Hbf: 59 of its 63 hours are covered);
  - ``"zero"``: 0 in every hour the station is observed (it adds no delay of its own).

  Other stations keep the per-train definition in every hour.
- **Hours.** Every present hour is a time step; ``positions`` gives its index among the 342
  listed ones. A present hour whose source file holds no row for the stations must be named in
  ``empty_hours`` (default :data:`EMPTY_HOURS`: ``hourly2/240706_13.csv``, which is header-only
  in the source); it stays in the table as an unobserved row.
- **Track-record graph.** For every row of a kept station, its ``path`` (the ``|``-separated
  previous stops) is restricted to the kept stations other than the row's own one; the last
  listed of them -> this station is a directed edge (``adjacency[i, j]``: i -> j, the project's
  ``W[i, j]`` convention), counted in ``edge_counts``. Cycles are allowed, self-loops are not.
  Stop names are matched ignoring white space: ``path`` spells "Northeim(Han)",
  "Saalfeld(Saale)" and "Naumburg(Saale)Hbf" where ``stations.csv`` has a space before the
  parenthesis. With the 20 paper stations this gives 60 directed edges (15.8 % of 380) on 34
  undirected pairs (17.9 % of 190). Matching names exactly loses every Northeim and Saalfeld
  stop, which gives the spec's 58 directed edges (still 34 pairs) including a spurious
  Goslar -> Göttingen edge that skips Northeim.
- **Normalisation.** :meth:`TrainDelayData.standardised` z-scores each signal per station over
  that station's observed hours (population standard deviation); a station with a constant
  signal is centred only.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Literal

import networkx as nx
import numpy as np
import pandas as pd

from causalbandits.data.checks import (
    DataError,
    check_pairing,
    check_range,
    missing_counts,
)
from causalbandits.notices import notice

#: Environment variable naming the folder that holds the four files.
DATA_ENV = "CAUSALBANDITS_TRAIN_DELAYS"
#: Default folder, relative to the working directory (the project root).
DEFAULT_DATA = Path("..") / "shared" / "data" / "train_delays"

STATIONS_FILE = "stations.csv"
TABLE_FILE = "hourly_20_stations.csv.gz"
LISTED_FILE = "hours_listed.txt"
PRESENT_FILE = "hours_present.txt"
FILES: tuple[str, ...] = (STATIONS_FILE, TABLE_FILE, LISTED_FILE, PRESENT_FILE)

STATION_COLUMNS: tuple[str, ...] = ("eva_nr", "name", "long", "lat", "distance_km")
TABLE_COLUMNS: tuple[str, ...] = (
    "hour_file",
    "path",
    "eva_nr",
    "arrival_plan",
    "departure_plan",
    "arrival_delay_m",
    "depature_delay_m",
)
DELAY_COLUMNS: tuple[str, ...] = ("arrival_delay_m", "depature_delay_m")
#: Plausible delays in minutes: at most an hour early, at most a day late (a train later than
#: that is another day's train). The shared rows lie within [-19, 111].
DELAY_RANGE: tuple[float, float] = (-60.0, 1440.0)
#: ``[low, high]`` of the numeric columns of ``stations.csv`` (``eva_nr``: seven-digit station
#: numbers, in the hourly table too).
STATION_BOUNDS: dict[str, tuple[float, float]] = {
    "eva_nr": (1.0, 9_999_999.0),
    "long": (-180.0, 180.0),
    "lat": (-90.0, 90.0),
    "distance_km": (0.0, 20_037.5),  # half the Earth's circumference
}

#: Table II of the paper: (abbreviation, station), in the paper's order.
TABLE_II: tuple[tuple[str, str], ...] = (
    ("EISN", "Eisenach"),
    ("GOTH", "Gotha"),
    ("LEIN", "Leinefelde"),
    ("NEUD", "Neudietendorf"),
    ("NORD", "Nordhausen"),
    ("ERFU", "Erfurt Hbf"),
    ("BEBR", "Bebra"),
    ("GÖTT", "Göttingen"),
    ("WEIM", "Weimar"),
    ("BADH", "Bad Hersfeld"),
    ("NORT", "Northeim (Han)"),
    ("GOSL", "Goslar"),
    ("KASH", "Kassel Hbf"),
    ("JENW", "Jena West"),
    ("JENP", "Jena Paradies"),
    ("SAAL", "Saalfeld (Saale)"),
    ("KASW", "Kassel-Wilhelmshöhe"),
    ("JENG", "Jena-Göschwitz"),
    ("HALB", "Halberstadt"),
    ("FULD", "Fulda"),
)
#: Station name -> abbreviation: Table II's, plus ``NAUM`` (ours) for the excluded station.
SHORT_NAMES: dict[str, str] = {name: short for short, name in TABLE_II} | {
    "Naumburg (Saale) Hbf": "NAUM"
}
#: The station of ``stations.csv`` the paper leaves out (the 21st nearest is not in Table II).
EXCLUDED: tuple[str, ...] = ("Naumburg (Saale) Hbf",)
#: Present hours whose source file holds no row for the stations (header-only in the source).
EMPTY_HOURS: tuple[str, ...] = ("hourly2/240706_13.csv",)

Endogenous = Literal["departure", "max"]
TerminusExogenous = Literal["origin", "zero"]
ENDOGENOUS: tuple[str, ...] = ("departure", "max")
TERMINUS_EXOGENOUS: tuple[str, ...] = ("origin", "zero")


@dataclass(frozen=True)
class TrainDelayData:
    """Per station (N, Table II order) and present hour (T, listed order): the signals, their
    masks and the track-record graph (see the module docstring for every definition).

    Arrays are read-only. ``exogenous``, ``endogenous``, ``observed``, ``exogenous_observed``
    and ``trains`` are (T, N); ``adjacency`` (bool) and ``edge_counts`` (int) are (N, N) with
    ``[i, j]`` for the edge i -> j.
    """

    names: tuple[str, ...]
    short_names: tuple[str, ...]
    eva_nr: np.ndarray
    lat: np.ndarray
    long: np.ndarray
    distance_km: np.ndarray
    hours: tuple[str, ...]
    listed_hours: tuple[str, ...]
    positions: np.ndarray
    exogenous: np.ndarray
    endogenous: np.ndarray
    observed: np.ndarray
    exogenous_observed: np.ndarray
    trains: np.ndarray
    adjacency: np.ndarray
    edge_counts: np.ndarray
    endogenous_definition: str = "departure"
    terminus_exogenous: str = "origin"
    termini: tuple[str, ...] = ()
    excluded: tuple[str, ...] = EXCLUDED
    standardised_signals: bool = field(default=False)

    def __post_init__(self) -> None:
        for item in fields(self):
            value = getattr(self, item.name)
            if isinstance(value, np.ndarray):
                value.setflags(write=False)

    @property
    def n_stations(self) -> int:
        return len(self.names)

    @property
    def n_hours(self) -> int:
        return len(self.hours)

    @property
    def undirected_pairs(self) -> int:
        """Station pairs joined by an edge in either direction."""
        return int(np.triu(self.adjacency | self.adjacency.T, 1).sum())

    def signal_statistics(self) -> pd.DataFrame:
        """Per station: hours observed, hours with an exogenous value, and the mean and
        population standard deviation over those hours of each signal (the spec's calibration
        table, Sec. 5.4)."""
        return pd.DataFrame(
            {
                "short_name": self.short_names,
                "hours": self.observed.sum(axis=0),
                "exogenous_hours": self.exogenous_observed.sum(axis=0),
                "exogenous_mean": _masked_mean(self.exogenous),
                "exogenous_sd": _masked_sd(self.exogenous),
                "endogenous_mean": _masked_mean(self.endogenous),
                "endogenous_sd": _masked_sd(self.endogenous),
            },
            index=pd.Index(self.names, name="station"),
        )

    def standardised(self) -> TrainDelayData:
        """A copy whose signals are z-scored per station over its observed hours (population
        standard deviation; a constant signal is only centred). NaN stays NaN."""
        return replace(
            self,
            exogenous=_zscore(self.exogenous),
            endogenous=_zscore(self.endogenous),
            standardised_signals=True,
        )

    def graph(self) -> nx.DiGraph:
        """The track-record graph: nodes 0..N-1 with ``name`` and ``short_name``, edges with
        ``count`` (rows that give the edge)."""
        graph = nx.DiGraph()
        for i, (name, short) in enumerate(zip(self.names, self.short_names, strict=True)):
            graph.add_node(i, name=name, short_name=short)
        for i, j in zip(*np.nonzero(self.adjacency), strict=True):
            graph.add_edge(int(i), int(j), count=int(self.edge_counts[i, j]))
        return graph


def resolve_data_dir(path: str | Path | None = None) -> Path:
    """The data folder: ``path``, else ``$CAUSALBANDITS_TRAIN_DELAYS``, else
    :data:`DEFAULT_DATA` (relative to the working directory); raise ``FileNotFoundError`` if it
    or one of :data:`FILES` does not exist, naming it."""
    folder = Path(path or os.environ.get(DATA_ENV) or DEFAULT_DATA)
    hint = (
        f"pass path= or set {DATA_ENV} to the folder holding {', '.join(FILES)} (from "
        "github.com/Nokkyuu/Fantastic_trains_and_when_to_find_them, MIT licence)"
    )
    if not folder.is_dir():
        raise FileNotFoundError(f"the train-delay data are not at {folder.resolve()}; {hint}")
    for name in FILES:
        if not (folder / name).is_file():
            raise FileNotFoundError(
                f"the train-delay file {name} is missing from {folder.resolve()}; {hint}"
            )
    return folder


def load_train_delays(
    path: str | Path | None = None,
    *,
    exclude: Sequence[str] = EXCLUDED,
    endogenous: Endogenous = "departure",
    terminus_exogenous: TerminusExogenous = "origin",
    empty_hours: Sequence[str] = EMPTY_HOURS,
) -> TrainDelayData:
    """Read the four files of the folder :func:`resolve_data_dir` finds, check them and build
    the signals and the graph.

    Raises ``FileNotFoundError`` for a missing folder or file, ``ValueError`` for a bad option
    and :class:`~causalbandits.data.checks.DataError` (a ``ValueError``) naming the file for:
    an empty or unreadable file, missing columns, a delay that is not a number, infinite or
    outside :data:`DELAY_RANGE`, bad station coordinates, a duplicated ``eva_nr`` or station
    name, a table row whose station name contradicts its ``eva_nr``, an
    excluded station that ``stations.csv`` lacks, rows of stations ``stations.csv`` lacks, kept
    stations without any row, duplicated hours, present hours that are not listed, hours of the
    table that are not present, and present hours without rows that ``empty_hours`` does not
    name.
    """
    if endogenous not in ENDOGENOUS:
        raise ValueError(f"endogenous must be one of {ENDOGENOUS}, not {endogenous!r}")
    if terminus_exogenous not in TERMINUS_EXOGENOUS:
        raise ValueError(
            f"terminus_exogenous must be one of {TERMINUS_EXOGENOUS}, not {terminus_exogenous!r}"
        )
    folder = resolve_data_dir(path)
    stations = _read_stations(folder / STATIONS_FILE, exclude)
    table = _read_table(folder / TABLE_FILE)
    listed, present = _read_hours(folder, table, empty_hours)

    unknown = sorted(set(table["eva_nr"]) - set(stations["eva_nr"]))
    if unknown:
        raise DataError(
            f"{folder / TABLE_FILE}: rows of eva_nr {_preview([str(e) for e in unknown])} that "
            f"{STATIONS_FILE} does not list"
        )
    _check_station_names(folder / TABLE_FILE, table, stations)
    kept = stations[~stations["name"].isin(exclude)]
    kept = kept.assign(
        _order=[_table_ii_rank(name, k) for k, name in enumerate(kept["name"])]
    ).sort_values("_order")
    with_rows = set(table["eva_nr"])
    absent = [n for n, e in zip(kept["name"], kept["eva_nr"], strict=True) if e not in with_rows]
    if absent:
        raise DataError(
            f"{folder / TABLE_FILE}: no row for station(s) {', '.join(absent)} of "
            f"{STATIONS_FILE}; pass exclude= to leave them out"
        )
    names = tuple(kept["name"])
    station_index = {e: i for i, e in enumerate(kept["eva_nr"])}
    hour_index = {h: t for t, h in enumerate(present)}
    rows = table[table["eva_nr"].isin(station_index)].reset_index(drop=True)
    t = rows["hour_file"].map(hour_index).to_numpy()
    i = rows["eva_nr"].map(station_index).to_numpy()
    shape = (len(present), len(names))

    arrives = rows["arrival_plan"].notna().to_numpy()
    departs = rows["departure_plan"].notna().to_numpy()
    arrival = rows["arrival_delay_m"].to_numpy(dtype=float)
    departure = rows["depature_delay_m"].to_numpy(dtype=float)
    through = arrives & departs
    stay, _ = _cell_means(t, i, np.where(through, departure - arrival, np.nan), shape)
    if endogenous == "departure":
        leaving = np.where(departs, departure, np.where(arrives, arrival, np.nan))
    else:
        larger = np.maximum(np.where(arrives, arrival, 0.0), np.where(departs, departure, 0.0))
        leaving = np.where(arrives | departs, larger, np.nan)
    endo, _ = _cell_means(t, i, leaving, shape)
    trains = np.zeros(shape, dtype=int)
    np.add.at(trains, (t, i), 1)

    has_through = np.zeros(len(names), dtype=bool)
    has_through[i[through]] = True
    termini = tuple(name for name, flag in zip(names, has_through, strict=True) if not flag)
    if not has_through.all():
        if terminus_exogenous == "origin":
            origin, _ = _cell_means(t, i, np.where(departs & ~arrives, departure, np.nan), shape)
            stay[:, ~has_through] = origin[:, ~has_through]
        else:
            stay[:, ~has_through] = np.where(np.isfinite(endo[:, ~has_through]), 0.0, np.nan)

    counts = _track_record_counts(rows["path"], i, names)
    return TrainDelayData(
        names=names,
        short_names=tuple(SHORT_NAMES.get(n) or _abbreviate(n) for n in names),
        eva_nr=kept["eva_nr"].to_numpy(dtype=np.int64),
        lat=kept["lat"].to_numpy(dtype=float),
        long=kept["long"].to_numpy(dtype=float),
        distance_km=kept["distance_km"].to_numpy(dtype=float),
        hours=tuple(present),
        listed_hours=tuple(listed),
        positions=np.array([listed.index(h) for h in present], dtype=np.int64),
        exogenous=stay,
        endogenous=endo,
        observed=np.isfinite(endo),
        exogenous_observed=np.isfinite(stay),
        trains=trains,
        adjacency=counts > 0,
        edge_counts=counts,
        endogenous_definition=endogenous,
        terminus_exogenous=terminus_exogenous,
        termini=termini,
        excluded=tuple(exclude),
    )


def _preview(items: Sequence[str], count: int = 5) -> str:
    shown = ", ".join(items[:count])
    return shown + (f", ... ({len(items)} in all)" if len(items) > count else "")


def _read_csv(path: Path) -> pd.DataFrame:
    try:
        return pd.read_csv(path, dtype={"hour_file": str, "path": str, "name": str})
    except (OSError, EOFError, UnicodeDecodeError, pd.errors.ParserError) as error:
        raise DataError(f"{path} cannot be read as a CSV file: {error}") from error
    except pd.errors.EmptyDataError as error:
        raise DataError(f"{path} is empty: {error}") from error


def _require_columns(frame: pd.DataFrame, columns: Sequence[str], path: Path) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise DataError(f"{path}: missing column(s) {', '.join(missing)}")


def _read_stations(path: Path, exclude: Sequence[str]) -> pd.DataFrame:
    frame = _read_csv(path)
    _require_columns(frame, STATION_COLUMNS, path)
    for column in STATION_BOUNDS:
        values = pd.to_numeric(frame[column], errors="coerce")
        if values.isna().any():
            row = int(np.flatnonzero(values.isna().to_numpy())[0])
            raise DataError(
                f"{path}: column {column!r} holds a value that is not a number: "
                f"{frame[column].iloc[row]!r} in data row {row + 1}"
            )
        check_range(path, column, values, *STATION_BOUNDS[column])
        frame[column] = values
    frame["eva_nr"] = frame["eva_nr"].astype(np.int64)
    for column in ("eva_nr", "name"):
        duplicated = frame[column].duplicated()
        if duplicated.any():
            repeated = _preview([str(e) for e in frame[column][duplicated]])
            raise DataError(f"{path}: duplicated {column} {repeated}")
    unknown = [name for name in exclude if name not in set(frame["name"])]
    if unknown:
        raise DataError(f"{path}: excluded station(s) {', '.join(unknown)} are not listed")
    return frame


def _read_table(path: Path) -> pd.DataFrame:
    frame = _read_csv(path)
    _require_columns(frame, TABLE_COLUMNS, path)
    eva = pd.to_numeric(frame["eva_nr"], errors="coerce")
    if eva.isna().any():
        row = int(np.flatnonzero(eva.isna().to_numpy())[0])
        raise DataError(f"{path}: eva_nr {frame['eva_nr'].iloc[row]!r} in data row {row + 1}")
    check_range(path, "eva_nr", eva, *STATION_BOUNDS["eva_nr"])
    frame["eva_nr"] = eva.astype(np.int64)
    for column in DELAY_COLUMNS:
        values = pd.to_numeric(frame[column], errors="coerce")
        bad = values.isna() & frame[column].notna()
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise DataError(
                f"{path}: column {column!r} holds {int(bad.sum())} value(s) that are not "
                f"numbers, e.g. {frame[column].iloc[row]!r} in data row {row + 1}"
            )
        check_range(path, column, values, *DELAY_RANGE)
        frame[column] = values.astype(float)
    missing = missing_counts(frame, DELAY_COLUMNS)
    if missing:
        counts = ", ".join(f"{column} {count}" for column, count in missing.items())
        notice(
            f"{path}: missing delays ({counts} of {len(frame)} rows); those trains leave the "
            "averages that need them"
        )
    return frame


def _check_station_names(path: Path, table: pd.DataFrame, stations: pd.DataFrame) -> None:
    """Each row's ``name`` (when the table has the column) pairs with its ``eva_nr`` as in
    the other rows and as in ``stations.csv``."""
    if "name" not in table.columns:
        return
    check_pairing(path, table, "eva_nr", "name")
    listed = dict(zip(stations["eva_nr"], stations["name"], strict=True))
    differing = table["name"].to_numpy() != table["eva_nr"].map(listed).to_numpy()
    if differing.any():
        row = int(np.flatnonzero(differing)[0])
        eva, name = table["eva_nr"].iloc[row], table["name"].iloc[row]
        raise DataError(
            f"{path}: data row {row + 1}: eva_nr {eva} is named {name!r} here and "
            f"{listed[eva]!r} in {STATIONS_FILE} ({int(differing.sum())} such row(s))"
        )


def _read_lines(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise DataError(f"{path} cannot be read as UTF-8 text: {error}") from error
    lines = [line.strip() for line in text.splitlines()]
    lines = [line for line in lines if line]
    counted = pd.Series(lines, dtype=object).value_counts(sort=False)
    repeated = list(counted.index[counted > 1])
    if repeated:
        raise DataError(f"{path}: duplicated hour(s) {_preview(repeated)}")
    return lines


def _read_hours(
    folder: Path, table: pd.DataFrame, empty_hours: Sequence[str]
) -> tuple[list[str], list[str]]:
    """The listed hours and the present ones in the listed order, checked against the table."""
    listed = _read_lines(folder / LISTED_FILE)
    present = _read_lines(folder / PRESENT_FILE)
    unlisted = [h for h in present if h not in set(listed)]
    if unlisted:
        raise DataError(
            f"{folder / PRESENT_FILE}: hour(s) {_preview(unlisted)} are not in {LISTED_FILE}"
        )
    in_table = set(table["hour_file"])
    extra = sorted(in_table - set(present))
    if extra:
        raise DataError(
            f"{folder / TABLE_FILE}: rows of hour(s) {_preview(extra)} that {PRESENT_FILE} "
            "does not list"
        )
    empty = [h for h in present if h not in in_table and h not in set(empty_hours)]
    if empty:
        raise DataError(
            f"{folder / PRESENT_FILE}: present hour(s) {_preview(empty)} have no row in "
            f"{TABLE_FILE}; pass empty_hours= to accept hours without rows"
        )
    order = {h: k for k, h in enumerate(listed)}
    return listed, sorted(present, key=order.__getitem__)


_TABLE_II_RANK = {station: k for k, (_, station) in enumerate(TABLE_II)}


def _table_ii_rank(name: str, position: int) -> int:
    """Table II stations first in the paper's order, then the rest in file order."""
    return _TABLE_II_RANK.get(name, len(TABLE_II) + position)


def _abbreviate(name: str) -> str:
    return "".join(c for c in name if c.isalnum())[:4].upper()


def _cell_means(
    t: np.ndarray, i: np.ndarray, values: np.ndarray, shape: tuple[int, int]
) -> tuple[np.ndarray, np.ndarray]:
    """Mean of the finite ``values`` per (t, i) cell (NaN for none) and their count."""
    finite = np.isfinite(values)
    sums = np.zeros(shape)
    counts = np.zeros(shape, dtype=int)
    np.add.at(sums, (t[finite], i[finite]), values[finite])
    np.add.at(counts, (t[finite], i[finite]), 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / counts, np.nan), counts


def _stop_key(name: str) -> str:
    """Stop names compared without white space ("Northeim(Han)" = "Northeim (Han)")."""
    return "".join(name.split())


def _track_record_counts(paths: pd.Series, targets: np.ndarray, names: Sequence[str]) -> np.ndarray:
    """``counts[i, j]``: rows at station j whose last previous stop among the stations is i."""
    index = {_stop_key(name): k for k, name in enumerate(names)}
    counts = np.zeros((len(names), len(names)), dtype=np.int64)
    for path, j in zip(paths, targets, strict=True):
        if not isinstance(path, str):
            continue
        for stop in reversed(path.split("|")):
            k = index.get(_stop_key(stop))
            if k is not None and k != j:
                counts[k, j] += 1
                break
    return counts


def _masked_mean(values: np.ndarray) -> np.ndarray:
    finite = np.isfinite(values)
    total = np.where(finite, values, 0.0).sum(axis=0)
    count = finite.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / count, np.nan)


def _masked_sd(values: np.ndarray) -> np.ndarray:
    centred = values - _masked_mean(values)
    return np.sqrt(_masked_mean(centred**2))


def _zscore(values: np.ndarray) -> np.ndarray:
    scale = _masked_sd(values)
    scale = np.where(np.isfinite(scale) & (scale > 0), scale, 1.0)
    return (values - _masked_mean(values)) / scale
