"""Bad data are refused with one line naming the file, column, row and value (issue 27, items
3, 6, 7, 9): impossible train delays, missing delays (a notice), negative or collapsing COVID
counts, swapped identifiers, an empty file, a download that is not the pinned snapshot, and
figures drawn from other data than the results'."""

from __future__ import annotations

import gzip
import io
import shutil
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

from causalbandits.cli import main
from causalbandits.data import DataError, load_italy_covid, load_train_delays
from causalbandits.data.italy_covid import (
    COLUMNS,
    PINNED_CONTENT_SHA256,
    REGIONS,
    URL,
    content_sha256,
    download_italy_covid,
)
from causalbandits.data.train_delays import DATA_ENV, FILES, TABLE_FILE
from causalbandits.papers.catalogue import EXPERIMENTS
from causalbandits.papers.ssem_ucb.train_delays import TrainDelayRun

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
DELAYS = DATA / "train_delays"
BULLETINS = DATA / "italy_covid" / "dpc-covid19-ita-regioni.csv.gz"
needs_delays = pytest.mark.skipif(
    not DELAYS.is_dir(), reason=f"the train-delay data are not available at {DELAYS}"
)
needs_bulletins = pytest.mark.skipif(
    not BULLETINS.is_file(), reason=f"the Italian bulletins are not available at {BULLETINS}"
)


def one_line(error: pytest.ExceptionInfo) -> str:
    message = str(error.value)
    assert "\n" not in message
    return message


# --- train delays: copies of the shared folder with one change --------------------------------


def delay_copy(folder: Path, edit: Callable[[pd.DataFrame], None] | None = None) -> Path:
    """A writable copy of the shared train-delay folder, its hourly table changed by ``edit``
    (cells as text: an empty string is a missing value)."""
    folder.mkdir(parents=True)
    for name in FILES:
        shutil.copyfile(DELAYS / name, folder / name)
    if edit is not None:
        table = pd.read_csv(folder / TABLE_FILE, dtype=str, keep_default_na=False)
        edit(table)
        table.to_csv(folder / TABLE_FILE, index=False)
    return folder


def set_cell(column: str, row: int, value: str) -> Callable[[pd.DataFrame], None]:
    def edit(table: pd.DataFrame) -> None:
        table.loc[row, column] = value

    return edit


@needs_delays
@pytest.mark.parametrize(
    ("value", "shown", "what"),
    [("-99999", "-99999", "outside"), ("1e300", "1e+300", "outside"), ("inf", "inf", "not finite")],
)
def test_impossible_delays_are_refused(tmp_path: Path, value: str, shown: str, what: str) -> None:
    folder = delay_copy(tmp_path / "delays", set_cell("arrival_delay_m", 99, value))
    with pytest.raises(DataError) as error:
        load_train_delays(folder)
    assert f"{TABLE_FILE}: column 'arrival_delay_m', data row 100: {shown} is {what}" in one_line(
        error
    )


@needs_delays
def test_missing_delays_are_counted_in_a_notice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def blank(table: pd.DataFrame) -> None:
        table.loc[:119, "arrival_delay_m"] = ""
        table.loc[200:279, "depature_delay_m"] = ""

    folder = delay_copy(tmp_path / "delays", blank)
    assert load_train_delays(folder).n_stations == 20
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1
    assert str(folder / TABLE_FILE) in lines[0]
    assert "arrival_delay_m 120, depature_delay_m 80 of 3380 rows" in lines[0]


@needs_delays
def test_a_row_with_another_stations_number_is_refused(tmp_path: Path) -> None:
    table = pd.read_csv(DELAYS / TABLE_FILE, dtype=str)
    row = int((table["name"] == "Gotha").to_numpy().argmax())
    eisenach = table.loc[table["name"] == "Eisenach", "eva_nr"].iloc[0]
    folder = delay_copy(tmp_path / "delays", set_cell("eva_nr", row, eisenach))
    with pytest.raises(DataError) as error:
        load_train_delays(folder)
    message = one_line(error)
    assert f"data row {row + 1}: eva_nr {eisenach} with name 'Gotha' contradicts" in message


@needs_delays
def test_swapped_station_names_are_refused(tmp_path: Path) -> None:
    folder = delay_copy(tmp_path / "delays")
    stations = pd.read_csv(folder / "stations.csv", dtype=str)
    stations["name"] = stations["name"].replace({"Gotha": "Eisenach", "Eisenach": "Gotha"})
    stations.to_csv(folder / "stations.csv", index=False)
    with pytest.raises(DataError) as error:
        load_train_delays(folder)
    assert "in stations.csv" in one_line(error) and TABLE_FILE in one_line(error)


# --- COVID bulletins: small files in the source's format --------------------------------------


def bulletins(days: int = 4) -> pd.DataFrame:
    """Every region on ``days`` days, with growing cumulative counts."""
    dates = pd.date_range("2020-10-01", periods=days, freq="D")
    rows = [
        {column: 1 for column in COLUMNS}
        | {
            "data": str(day.date()),
            "codice_regione": code,
            "denominazione_regione": region,
            "lat": 42.0,
            "long": 12.0,
            "nuovi_positivi": 10,
            "dimessi_guariti": 50 + 5 * k,
            "deceduti": 20 + k,
            "totale_casi": 100 * code + 10 * k,
            "tamponi": 1000 + 100 * k,
        }
        for k, day in enumerate(dates)
        for code, region in enumerate(REGIONS, start=1)
    ]
    return pd.DataFrame(rows, columns=list(COLUMNS))


def write(frame: pd.DataFrame, path: Path) -> Path:
    frame.to_csv(path, index=False)
    return path


#: Abruzzo's row of the third day (row 42 of the frame, data row 43).
ROW = 2 * len(REGIONS)


@pytest.mark.parametrize(
    ("column", "value", "fragment"),
    [
        ("terapia_intensiva", -3, "column 'terapia_intensiva', data row 43: -3 is outside [0,"),
        ("deceduti", -1, "column 'deceduti', data row 43: -1 is outside [0,"),
        ("totale_casi", 1e300, "column 'totale_casi', data row 43: 1e+300 is outside [0,"),
        ("nuovi_positivi", -99999, "'nuovi_positivi', data row 43: -99999 is larger in size"),
        ("totale_casi", 20, "'totale_casi', data row 43: 20 (Abruzzo, 2020-10-03) is less than"),
        ("tamponi", 3, "'tamponi', data row 43: 3 (Abruzzo, 2020-10-03) is less than half"),
    ],
)
def test_negative_and_collapsing_counts_are_refused(
    tmp_path: Path, column: str, value: float, fragment: str
) -> None:
    frame = bulletins()
    frame[column] = frame[column].astype(float)
    frame.loc[ROW, column] = value
    with pytest.raises(DataError) as error:
        load_italy_covid(write(frame, tmp_path / "bulletins.csv"))
    message = one_line(error)
    assert "bulletins.csv: " in message and fragment in message


def test_a_count_too_high_for_one_day_shows_as_the_next_days_fall(tmp_path: Path) -> None:
    frame = bulletins()
    frame.loc[ROW, "deceduti"] = 5000
    with pytest.raises(DataError, match=r"'deceduti', data row 64: 23 .* \(5000, data row 43\)"):
        load_italy_covid(write(frame, tmp_path / "bulletins.csv"))


def test_a_region_code_against_its_name_is_refused(tmp_path: Path) -> None:
    frame = bulletins()
    frame.loc[ROW, "codice_regione"] = 2  # Basilicata's code on Abruzzo's row
    with pytest.raises(DataError) as error:
        load_italy_covid(write(frame, tmp_path / "bulletins.csv"))
    assert (
        "data row 43: codice_regione 2 with denominazione_regione 'Abruzzo' contradicts"
        in one_line(error)
    )


@pytest.mark.parametrize("name", ["empty.csv", "empty.csv.gz"])
def test_an_empty_file_is_named(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(gzip.compress(b"") if name.endswith(".gz") else b"")
    with pytest.raises(DataError, match=f"{name} is empty"):
        load_italy_covid(path)


def test_the_command_line_names_an_empty_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    argv = ["reproduce", "ndc-sem-covid", "--quick", "--no-progress", "--data", str(empty)]
    assert main([*argv, "--out", str(tmp_path / "out")]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert lines[-1].startswith("causalbandits: error: ") and f"{empty} is empty" in lines[-1]


# --- the downloader ---------------------------------------------------------------------------


def serve(monkeypatch: pytest.MonkeyPatch, payload: bytes) -> list[str]:
    """Answer every ``urlopen`` with ``payload``; return the URLs asked for."""
    asked: list[str] = []

    def urlopen(url: str, timeout: float) -> io.BytesIO:
        asked.append(url)
        return io.BytesIO(payload)

    monkeypatch.setattr(urllib.request, "urlopen", urlopen)
    return asked


def test_the_first_download_must_be_the_pinned_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = serve(monkeypatch, bulletins().to_csv(index=False).encode("utf-8"))
    cache = tmp_path / "cache"
    with pytest.raises(DataError) as error:
        download_italy_covid(cache)
    assert asked == [URL]
    assert f"the download of {URL} is not the pinned snapshot" in one_line(error)
    assert PINNED_CONTENT_SHA256 in one_line(error)
    assert list(cache.iterdir()) == []  # nothing kept, no digest recorded


# --- plot: the figures of a results folder come from its data ---------------------------------


@dataclass(frozen=True)
class DigestOnly(TrainDelayRun):
    """A train-delay grid whose tasks only record that they ran: its manifest carries the
    data's SHA-256 like the real one, without the seconds of fitting."""

    def run_chunk(self, point: dict, setting: int, replicates: range) -> pd.DataFrame:
        return pd.DataFrame({"algorithm": point["algorithm"], "replicate": list(replicates)})

    def plot(self, df: pd.DataFrame, out_dir: Path) -> list[Path]:
        return []

    def report(self, df: pd.DataFrame) -> str:
        return ""


@needs_delays
def test_plot_checks_the_data_against_the_manifest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(
        EXPERIMENTS, "digest-only", lambda quick: DigestOnly(algorithms=("Random",), name="d")
    )
    recorded = delay_copy(tmp_path / "recorded")
    out = str(tmp_path / "out")
    argv = ["reproduce", "digest-only", "--no-progress", "--data", str(recorded), "--out", out]
    assert main(argv) == 0
    other = delay_copy(tmp_path / "other", set_cell("arrival_delay_m", 99, "7"))
    capsys.readouterr()
    assert main(["plot", out, "--data", str(other)]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and f"{other / TABLE_FILE} is not the data {out}" in lines[0]
    monkeypatch.setenv(DATA_ENV, str(other))  # the default location holds other data
    monkeypatch.chdir(tmp_path)
    assert main(["plot", out]) == 1
    assert "is not the data" in capsys.readouterr().err
    assert main(["plot", out, "--data", str(delay_copy(tmp_path / "same"))]) == 0


# --- the genuine files pass -------------------------------------------------------------------


@needs_delays
def test_the_shared_train_delays_pass(capsys: pytest.CaptureFixture[str]) -> None:
    assert load_train_delays(DELAYS).n_stations == 20
    assert capsys.readouterr().err == ""  # no missing value


@needs_bulletins
def test_the_shared_bulletins_pass_and_are_the_pinned_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    frame = load_italy_covid(BULLETINS)
    assert len(frame) == 37401 and content_sha256(frame) == PINNED_CONTENT_SHA256
    serve(monkeypatch, gzip.decompress(BULLETINS.read_bytes()))
    cached = download_italy_covid(tmp_path / "cache")
    assert cached.with_name(cached.name + ".sha256").is_file()
    assert download_italy_covid(tmp_path / "cache") == cached  # the cached copy checks too
