"""The train-delay loader on a small hand-written copy (issue 32, mutation testing): every signal,
count and attribute against values worked out by hand from the module docstring's definitions,
and each refusal's one line naming the file, column, data row and value (the loaders' contract,
:mod:`causalbandits.data.checks`)."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from causalbandits.data.checks import DataError
from causalbandits.data.train_delays import load_train_delays, resolve_data_dir

from .test_train_delays import _row as row

#: Listed hours, not in alphabetical order, and named like numbers (read as text).
LISTED = ("02", "10", "01", "05")
STATIONS = pd.DataFrame(
    {
        "eva_nr": [1, 2, 3, 4, 5],
        "name": ["Zeta", "Gotha", "1860", "Eisenach", "Delta"],
        "long": [10.0, 10.7, 10.2, 10.3, 10.4],
        "lat": [51.0, 50.9, 51.2, 50.97, 51.4],
        "distance_km": [5.0, 6.0, 7.0, 8.0, 9.0],
    }
)


ROWS = [
    row("10", 1, "Gotha", 2, 5),  # Zeta, through: stay 3, leaves 5
    row("10", 2, "Eisenach|1860", None, 4),  # starts at Gotha: leaves 4
    row("10", 3, "Zeta", 6, None),  # terminates at 1860: leaves 6
    row("10", 3, None, None, 7),  # starts at 1860 (a terminus): its origin delay 7
    row("10", 3, None, None, None),  # neither planned: no delay of its own
    row("01", 4, "Gotha|Zeta", 1, 1),  # Eisenach, through: stay 0
    row("01", 1, "Eisenach", 0, 3),  # Zeta, through: stay 3
    row("01", 2, "Zeta", 2, 2),  # Gotha, through: stay 0
    row("01", 5, "Zeta", 1, 1),  # Delta: excluded
]


def write(folder: Path, stations=STATIONS, rows=ROWS, present: str = "01\n10\n") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    stations.to_csv(folder / "stations.csv", index=False)
    pd.DataFrame(rows).to_csv(folder / "hourly_20_stations.csv.gz", index=False)
    (folder / "hours_listed.txt").write_text("\n".join(LISTED) + "\n", encoding="utf-8")
    (folder / "hours_present.txt").write_text(present, encoding="utf-8")
    return folder


def load(folder: Path, **options):
    return load_train_delays(folder, **({"exclude": ("Delta",), "empty_hours": ()} | options))


def test_signals_counts_and_attributes_by_hand(tmp_path) -> None:
    """Table II stations first in its order, then the others in file order; hours in the
    listed order; the stay (exogenous), leaving (endogenous) delays, trains, track-record
    edges and every attribute worked out by hand. The terminus 1860's exogenous value is the
    mean departure delay of the trains *starting* there (not of a row with neither event)."""
    data = load(write(tmp_path / "copy"))
    assert data.names == ("Eisenach", "Gotha", "Zeta", "1860")
    assert data.short_names == ("EISN", "GOTH", "ZETA", "1860")
    assert data.hours == ("10", "01") and data.listed_hours == LISTED
    assert data.positions.tolist() == [1, 2] and data.positions.dtype == np.int64
    assert data.termini == ("1860",) and data.excluded == ("Delta",)
    assert data.endogenous_definition == "departure" and data.terminus_exogenous == "origin"
    np.testing.assert_array_equal(data.eva_nr, [4, 2, 1, 3])
    np.testing.assert_array_equal(data.lat, [50.97, 50.9, 51.0, 51.2])
    np.testing.assert_array_equal(data.long, [10.3, 10.7, 10.0, 10.2])
    np.testing.assert_array_equal(data.distance_km, [8.0, 6.0, 5.0, 7.0])
    nan = np.nan
    np.testing.assert_array_equal(data.exogenous, [[nan, nan, 3.0, 7.0], [0.0, 0.0, 3.0, nan]])
    np.testing.assert_array_equal(data.endogenous, [[nan, 4.0, 5.0, 6.5], [1.0, 2.0, 3.0, nan]])
    np.testing.assert_array_equal(data.trains, [[0, 1, 1, 3], [1, 1, 1, 0]])
    counts = np.zeros((4, 4), dtype=np.int64)
    for i, j in [(1, 2), (3, 1), (2, 3), (2, 0), (0, 2), (2, 1)]:  # i -> j
        counts[i, j] = 1
    np.testing.assert_array_equal(data.edge_counts, counts)
    assert data.edge_counts.dtype.kind == "i"
    np.testing.assert_array_equal(data.adjacency, counts > 0)
    graph = data.graph()
    assert dict(graph.nodes(data=True))[3] == {"name": "1860", "short_name": "1860"}
    edges = sorted((int(i), int(j), 1) for i, j in np.argwhere(counts))
    assert sorted(graph.edges(data="count")) == edges
    stats = data.signal_statistics()
    assert list(stats.columns) == [
        "short_name",
        "hours",
        "exogenous_hours",
        "exogenous_mean",
        "exogenous_sd",
        "endogenous_mean",
        "endogenous_sd",
    ]
    assert stats.index.name == "station" and list(stats.index) == list(data.names)
    np.testing.assert_array_equal(stats["exogenous_hours"], [1, 1, 2, 1])
    larger = load(tmp_path / "copy", endogenous="max", terminus_exogenous="zero")
    assert larger.endogenous_definition == "max" and larger.terminus_exogenous == "zero"
    np.testing.assert_array_equal(larger.exogenous[:, 3], [0.0, nan])


def message(path: Path) -> str:
    return str(path).replace(".", r"\.")


def test_station_file_refusals_name_the_file_column_row_and_value(tmp_path) -> None:
    stations = tmp_path / "s" / "stations.csv"
    bad = STATIONS.astype({"lat": object})
    bad.loc[1, "lat"] = "north"
    write(tmp_path / "s", stations=bad)
    with pytest.raises(
        DataError,
        match=rf"^{message(stations)}: column 'lat' holds a value that is not a number: "
        r"'north' in data row 2$",
    ):
        load(tmp_path / "s")
    write(tmp_path / "s", stations=STATIONS.assign(lat=[51.0, 95.0, 51.2, 51.0, 51.4]))
    with pytest.raises(DataError, match=rf"^{message(stations)}: column 'lat', data row 2: 95 is"):
        load(tmp_path / "s")
    five = pd.concat([STATIONS] + [STATIONS.iloc[[0]]] * 5, ignore_index=True)
    write(tmp_path / "s", stations=five)
    with pytest.raises(DataError, match=rf"^{message(stations)}: duplicated eva_nr 1, 1, 1, 1, 1$"):
        load(tmp_path / "s")
    six = pd.concat([STATIONS] + [STATIONS.iloc[[1]]] * 6, ignore_index=True)
    write(tmp_path / "s", stations=six)
    with pytest.raises(DataError, match=r"duplicated eva_nr 2, 2, 2, 2, 2, \.\.\. \(6 in all\)$"):
        load(tmp_path / "s")
    write(tmp_path / "s")
    with pytest.raises(DataError, match=r"excluded station\(s\) Omega, Psi are not listed$"):
        load(tmp_path / "s", exclude=("Omega", "Psi"))
    stations.write_text("", encoding="utf-8")
    with pytest.raises(DataError, match=rf"^{message(stations)} is empty: "):
        load(tmp_path / "s")


def test_table_refusals_name_the_file_column_row_and_value(tmp_path) -> None:
    table = tmp_path / "t" / "hourly_20_stations.csv.gz"
    rows = [dict(r) for r in ROWS]
    rows[2]["eva_nr"] = "x"
    write(tmp_path / "t", rows=rows)
    with pytest.raises(DataError, match=rf"^{message(table)}: eva_nr 'x' in data row 3$"):
        load(tmp_path / "t")
    rows[2]["eva_nr"] = 0
    write(tmp_path / "t", rows=rows)
    with pytest.raises(DataError, match=rf"^{message(table)}: column 'eva_nr', data row 3: 0 is"):
        load(tmp_path / "t")
    rows = [dict(r) for r in ROWS]
    rows[1]["arrival_delay_m"] = -61
    write(tmp_path / "t", rows=rows)
    with pytest.raises(
        DataError, match=rf"^{message(table)}: column 'arrival_delay_m', data row 2: -61 is"
    ):
        load(tmp_path / "t")
    write(tmp_path / "t", rows=[{k: v for k, v in r.items() if k != "path"} for r in ROWS])
    with pytest.raises(DataError, match=rf"^{message(table)}: missing column\(s\) path$"):
        load(tmp_path / "t")
    write(tmp_path / "t", rows=[r for r in ROWS if r["eva_nr"] not in (1, 3)])
    with pytest.raises(DataError, match=r"no row for station\(s\) Zeta, 1860 of stations\.csv"):
        load(tmp_path / "t")
    write(tmp_path / "t", present="01\n")
    with pytest.raises(
        DataError,
        match=rf"^{message(table)}: rows of hour\(s\) 10 that hours_present\.txt does not list$",
    ):
        load(tmp_path / "t")
    write(tmp_path / "t")
    table.write_bytes(gzip.compress(b"\xff\xfe\x00\x01garbage\n\x00\x00"))
    with pytest.raises(DataError, match=rf"^{message(table)} cannot be read as a CSV file: "):
        load(tmp_path / "t")


def test_missing_delays_are_counted_in_one_notice(tmp_path, capsys) -> None:
    """Empty delay cells: one notice per load counting them per column, and the trains leave
    the averages that need them."""
    rows = [dict(r) for r in ROWS]
    rows[0]["arrival_delay_m"] = None
    rows[5]["arrival_delay_m"] = None
    rows[6]["depature_delay_m"] = None
    data = load(write(tmp_path / "m", rows=rows))
    table = tmp_path / "m" / "hourly_20_stations.csv.gz"
    assert capsys.readouterr().err == (
        f"causalbandits: {table}: missing delays (arrival_delay_m 2, depature_delay_m 1 of 9 "
        "rows); those trains leave the averages that need them\n"
    )
    assert np.isnan([data.exogenous[0, 2], data.exogenous[1, 0], data.endogenous[1, 2]]).all()
    assert data.endogenous[0, 2] == 5.0  # the departure delay is there


def test_station_names_of_the_table_must_match_the_station_file(tmp_path) -> None:
    """A table with a ``name`` column: a station number named consistently but differently from
    ``stations.csv`` is refused at its first row with the count of such rows; a number with two
    names in the table is refused by the pairing check, naming the file."""
    table = tmp_path / "n" / "hourly_20_stations.csv.gz"
    names = {1: "Zeta", 2: "Gotha", 3: "1860", 4: "Eisenach", 5: "Delta"}
    rows = [r | {"name": names[r["eva_nr"]]} for r in ROWS]
    assert load(write(tmp_path / "n", rows=rows)).names[0] == "Eisenach"
    renamed = [r | {"name": "Gotha Hbf"} if r["eva_nr"] == 2 else r for r in rows]
    write(tmp_path / "n", rows=renamed)
    with pytest.raises(
        DataError,
        match=rf"^{message(table)}: data row 2: eva_nr 2 is named 'Gotha Hbf' here and "
        r"'Gotha' in stations\.csv \(2 such row\(s\)\)$",
    ):
        load(tmp_path / "n")
    contradicting = [dict(r) for r in rows]
    contradicting[7]["name"] = "Zeta"
    write(tmp_path / "n", rows=contradicting)
    with pytest.raises(DataError, match=rf"^{message(table)}: data row 8: eva_nr 2 with name"):
        load(tmp_path / "n")


def test_hour_files_must_be_utf8_and_their_duplicates_are_named_in_order(tmp_path) -> None:
    folder = write(tmp_path / "h")
    present = folder / "hours_present.txt"
    present.write_text("01\n10\n01\n10\n10\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"duplicated hour\(s\) 01, 10$"):
        load(folder)
    present.write_bytes(b"01\n\xff\xfe\n")
    with pytest.raises(DataError, match=rf"^{message(present)} cannot be read as UTF-8 text: "):
        load(folder)


def test_a_missing_folder_names_where_to_get_the_files(tmp_path) -> None:
    with pytest.raises(FileNotFoundError) as error:
        resolve_data_dir(tmp_path / "nowhere")
    assert str(error.value).endswith(
        "folder holding stations.csv, hourly_20_stations.csv.gz, hours_listed.txt, "
        "hours_present.txt (from github.com/Nokkyuu/Fantastic_trains_and_when_to_find_them, "
        "MIT licence)"
    )
