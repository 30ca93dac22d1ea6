import csv
import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from causalbandits.data.train_delays import (
    DATA_ENV,
    TABLE_II,
    TrainDelayData,
    load_train_delays,
    resolve_data_dir,
)

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
FOLDER = DATA / "train_delays"
needs_data = pytest.mark.skipif(
    not FOLDER.is_dir(), reason=f"the train-delay data are not available at {FOLDER}"
)

#: The spec's calibration statistics (Sec. 5.4): hours, exo mean (sd), endo mean (sd);
#: Kassel Hbf has no exogenous value under the per-train definition.
SPEC_TABLE = {
    "Eisenach": (62, 1.74, 2.37, 3.79, 11.00),
    "Gotha": (41, 0.24, 0.72, 4.96, 11.67),
    "Leinefelde": (34, 0.05, 0.18, 1.65, 3.53),
    "Neudietendorf": (40, 0.20, 0.25, 0.17, 0.37),
    "Nordhausen": (36, -0.24, 0.64, 1.15, 2.36),
    "Erfurt Hbf": (79, 0.65, 1.99, 4.50, 8.53),
    "Bebra": (49, -0.10, 0.27, 0.73, 2.69),
    "Göttingen": (77, 0.50, 2.18, 9.92, 15.89),
    "Weimar": (46, 0.82, 2.29, 1.60, 6.57),
    "Bad Hersfeld": (65, 0.01, 0.86, 4.55, 7.60),
    "Northeim (Han)": (39, -0.02, 0.09, 1.81, 4.12),
    "Goslar": (35, 0.02, 0.29, 0.71, 1.75),
    "Kassel Hbf": (63, None, None, 3.43, 10.23),
    "Jena West": (54, -0.06, 0.19, 1.30, 4.29),
    "Jena Paradies": (51, 0.66, 1.66, 1.62, 4.71),
    "Saalfeld (Saale)": (55, -3.86, 2.33, 3.68, 5.46),
    "Kassel-Wilhelmshöhe": (63, 0.07, 0.31, 3.66, 10.13),
    "Jena-Göschwitz": (79, -0.32, 0.58, 1.69, 4.37),
    "Halberstadt": (65, -1.05, 2.14, 0.77, 2.07),
    "Fulda": (78, 0.61, 1.31, 5.11, 12.45),
}
HALF_CENT = 0.005 + 1e-9  # the spec prints two decimals


@pytest.fixture(scope="module")
def delays() -> TrainDelayData:
    if not FOLDER.is_dir():
        pytest.skip(f"the train-delay data are not available at {FOLDER}")
    return load_train_delays(FOLDER)


@pytest.fixture(scope="module")
def delays_max() -> TrainDelayData:
    if not FOLDER.is_dir():
        pytest.skip(f"the train-delay data are not available at {FOLDER}")
    return load_train_delays(FOLDER, endogenous="max")


@pytest.fixture(scope="module")
def raw_rows() -> list[dict[str, str]]:
    if not FOLDER.is_dir():
        pytest.skip(f"the train-delay data are not available at {FOLDER}")
    with gzip.open(FOLDER / "hourly_20_stations.csv.gz", "rt", encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


# --- the shared data -------------------------------------------------------------------------


@needs_data
def test_21_stations_listed_20_used_and_80_of_342_hours(delays):
    assert len(pd.read_csv(FOLDER / "stations.csv")) == 21
    assert delays.n_stations == 20 and "Naumburg (Saale) Hbf" not in delays.names
    assert delays.names == tuple(name for _, name in TABLE_II)
    assert delays.short_names[:3] == ("EISN", "GOTH", "LEIN") and delays.short_names[7] == "GÖTT"
    assert delays.eva_nr[delays.names.index("Göttingen")] == 8000128
    assert delays.distance_km.max() == pytest.approx(91.79)  # Fulda, the farthest of the 20
    assert (delays.n_hours, len(delays.listed_hours)) == (80, 342)
    assert np.all(np.diff(delays.positions) > 0)
    assert [delays.listed_hours[p] for p in delays.positions] == list(delays.hours)
    assert delays.positions[0] == 11 and delays.positions[-1] == 325
    for name in ("exogenous", "endogenous", "observed", "exogenous_observed", "trains"):
        assert getattr(delays, name).shape == (80, 20)
    np.testing.assert_array_equal(delays.observed, delays.trains > 0)
    # the source's hourly2/240706_13.csv is header-only: an unobserved hour
    empty = delays.hours.index("hourly2/240706_13.csv")
    assert not delays.observed[empty].any() and np.isnan(delays.exogenous[empty]).all()
    assert delays.trains.sum() == 3380 - 206  # every row but Naumburg's
    with pytest.raises(ValueError, match="read-only"):
        delays.exogenous[0, 0] = 1.0


@needs_data
def test_one_station_hour_by_hand(delays, delays_max, raw_rows):
    hour, station = "hourly3/240713_04.csv", "Göttingen"
    rows = [r for r in raw_rows if r["hour_file"] == hour and r["name"] == station]
    assert len(rows) == 4  # three through trains, one starting here (RE2)
    stays, leaving, larger = [], [], []
    for r in rows:
        arrival, departure = int(r["arrival_delay_m"]), int(r["depature_delay_m"])
        if r["arrival_plan"] and r["departure_plan"]:
            stays.append(departure - arrival)
        leaving.append(departure if r["departure_plan"] else arrival)
        larger.append(max(arrival, departure))
    t, i = delays.hours.index(hour), delays.names.index(station)
    assert delays.exogenous[t, i] == pytest.approx(sum(stays) / len(stays))
    assert delays.exogenous[t, i] == pytest.approx(-1 / 3)  # (4-5, 4-5, 2-1) / 3
    assert delays.endogenous[t, i] == pytest.approx(sum(leaving) / len(leaving))
    assert delays.endogenous[t, i] == pytest.approx(2.5)  # (4 + 4 + 0 + 2) / 4
    assert delays_max.endogenous[t, i] == pytest.approx(3.0)  # (5 + 5 + 0 + 2) / 4
    assert delays.trains[t, i] == 4


@needs_data
def test_track_record_graph_density(delays, raw_rows):
    n = delays.n_stations
    assert delays.adjacency.shape == delays.edge_counts.shape == (n, n)
    np.testing.assert_array_equal(delays.adjacency, delays.edge_counts > 0)
    assert not np.diag(delays.adjacency).any()
    assert delays.undirected_pairs == 34 and n * (n - 1) // 2 == 190  # 17.9 %, as the spec
    assert int(delays.adjacency.sum()) == 60  # the spec's 58 misses Northeim and Saalfeld
    graph = delays.graph()
    assert graph.number_of_edges() == 60 and len(list(graph.nodes)) == 20

    def edge(a: str, b: str) -> bool:
        return bool(delays.adjacency[delays.names.index(a), delays.names.index(b)])

    assert edge("Northeim (Han)", "Göttingen") and edge("Saalfeld (Saale)", "Jena-Göschwitz")
    assert not edge("Goslar", "Göttingen")  # Northeim lies between
    assert edge("Kassel-Wilhelmshöhe", "Kassel Hbf") and edge("Kassel Hbf", "Kassel-Wilhelmshöhe")
    # the spec's numbers, recomputed with exact stop names (the source's path writes
    # "Northeim(Han)" and "Saalfeld(Saale)", so these two never match)
    names = set(delays.names)
    exact = set()
    for r in raw_rows:
        if r["name"] in names and r["path"]:
            previous = [s for s in r["path"].split("|") if s in names and s != r["name"]]
            if previous:
                exact.add((previous[-1], r["name"]))
    pairs = {frozenset(e) for e in exact}
    assert (len(exact), len(pairs)) == (58, 34)
    assert ("Goslar", "Göttingen") in exact
    assert not any("Northeim" in a or "Saalfeld" in a for a, _ in exact)


@needs_data
def test_the_spec_calibration_table_is_the_max_definition(delays, delays_max):
    table = delays_max.signal_statistics()
    for name, (hours, exo, exo_sd, endo, endo_sd) in SPEC_TABLE.items():
        row = table.loc[name]
        assert row["hours"] == hours, name
        assert row["endogenous_mean"] == pytest.approx(endo, abs=HALF_CENT), name
        assert row["endogenous_sd"] == pytest.approx(endo_sd, abs=HALF_CENT), name
        if exo is not None:
            assert row["exogenous_mean"] == pytest.approx(exo, abs=HALF_CENT), name
            assert row["exogenous_sd"] == pytest.approx(exo_sd, abs=HALF_CENT), name
    assert table.loc["Eisenach", "exogenous_hours"] == 47
    # the default ("departure") has the same hours and exogenous signal, a lower endogenous one
    default = delays.signal_statistics()
    np.testing.assert_array_equal(default["hours"], table["hours"])
    np.testing.assert_array_equal(delays.exogenous_observed, delays_max.exogenous_observed)
    np.testing.assert_allclose(delays.exogenous, delays_max.exogenous, equal_nan=True)
    assert default.loc["Göttingen", "endogenous_mean"] == pytest.approx(9.63, abs=HALF_CENT)
    assert default.loc["Eisenach", "endogenous_mean"] == pytest.approx(3.69, abs=HALF_CENT)
    seen = delays.observed
    assert np.all(delays.endogenous[seen] <= delays_max.endogenous[seen])
    assert np.any(delays.endogenous[seen] < delays_max.endogenous[seen])


@needs_data
def test_kassel_hbf_fallbacks(delays, raw_rows):
    assert delays.termini == ("Kassel Hbf",) and delays.terminus_exogenous == "origin"
    k = delays.names.index("Kassel Hbf")
    starting: dict[str, list[int]] = {}
    for r in raw_rows:
        if r["name"] == "Kassel Hbf":
            assert not (r["arrival_plan"] and r["departure_plan"])  # no through train
            if r["departure_plan"]:
                starting.setdefault(r["hour_file"], []).append(int(r["depature_delay_m"]))
    assert len(starting) == 59 == delays.exogenous_observed[:, k].sum()
    for hour, values in starting.items():
        t = delays.hours.index(hour)
        assert delays.exogenous[t, k] == pytest.approx(sum(values) / len(values))
    zero = load_train_delays(FOLDER, terminus_exogenous="zero")
    np.testing.assert_array_equal(zero.exogenous_observed[:, k], zero.observed[:, k])
    assert zero.observed[:, k].sum() == 63
    np.testing.assert_array_equal(zero.exogenous[zero.observed[:, k], k], 0.0)
    others = np.arange(20) != k
    np.testing.assert_array_equal(zero.exogenous[:, others], delays.exogenous[:, others])


@needs_data
def test_standardised_signals(delays):
    z = delays.standardised()
    assert z.standardised_signals and not delays.standardised_signals
    stats = z.signal_statistics()
    np.testing.assert_allclose(stats["exogenous_mean"], 0.0, atol=1e-12)
    np.testing.assert_allclose(stats["endogenous_sd"], 1.0)
    np.testing.assert_array_equal(np.isnan(z.exogenous), np.isnan(delays.exogenous))
    raw = delays.signal_statistics()
    i = delays.names.index("Fulda")
    t = int(np.flatnonzero(delays.observed[:, i])[0])
    expected = (delays.endogenous[t, i] - raw.loc["Fulda", "endogenous_mean"]) / raw.loc[
        "Fulda", "endogenous_sd"
    ]
    assert z.endogenous[t, i] == pytest.approx(expected)
    # a constant signal (Kassel Hbf's zero fallback) is only centred
    zero = load_train_delays(FOLDER, terminus_exogenous="zero").standardised()
    k = delays.names.index("Kassel Hbf")
    np.testing.assert_array_equal(zero.exogenous[zero.observed[:, k], k], 0.0)


# --- small copies: the signals' arithmetic and bad input --------------------------------------

PLAN = "2024-06-24 00:10:00"
HOURS = ("h/01.csv", "h/02.csv", "h/03.csv", "h/04.csv")


def _row(hour, eva, path, arrival, departure):
    """A train at station ``eva``: (planned?, delay) for arrival and departure."""
    return {
        "hour_file": hour,
        "ID": f"{hour}-{eva}-{path}",
        "path": path,
        "eva_nr": eva,
        "arrival_plan": PLAN if arrival is not None else None,
        "departure_plan": PLAN if departure is not None else None,
        "arrival_delay_m": 0 if arrival is None else arrival,
        "depature_delay_m": 0 if departure is None else departure,
    }


def _write_small(folder: Path) -> Path:
    """Stations Alpha (1), Beta (Ost) (2), Gamma (3, a terminus) and Delta (4, excluded);
    hours 01 and 03 of four listed."""
    folder.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(
        {
            "eva_nr": [1, 2, 3, 4],
            "name": ["Alpha", "Beta (Ost)", "Gamma", "Delta"],
            "long": [10.0, 10.1, 10.2, 10.3],
            "lat": [51.0, 51.1, 51.2, 51.3],
            "distance_km": [5.0, 6.0, 7.0, 8.0],
        }
    ).to_csv(folder / "stations.csv", index=False)
    rows = [
        _row("h/01.csv", 1, "X|Gamma", 2, 5),  # stay 3, leaves 5, larger 5
        _row("h/01.csv", 1, "Beta(Ost)|Y", 4, 3),  # stay -1, leaves 3, larger 4
        _row("h/01.csv", 1, "Gamma|Beta (Ost)", -2, None),  # terminates: leaves -2, larger 0
        _row("h/01.csv", 3, None, None, 4),  # starts at the terminus Gamma
        _row("h/01.csv", 3, "Alpha", 6, None),
        _row("h/01.csv", 4, "Alpha", 1, 1),  # Delta: excluded
        _row("h/03.csv", 2, "Gamma|Alpha|Delta", 0, 2),
        _row("h/03.csv", 2, "Gamma|Beta (Ost)", 1, 1),  # its own name is skipped
        _row("h/03.csv", 1, "Gamma", None, 7) | {"arrival_plan": PLAN, "arrival_delay_m": None},
    ]
    pd.DataFrame(rows).to_csv(folder / "hourly_20_stations.csv.gz", index=False)
    (folder / "hours_listed.txt").write_text("\n".join(HOURS) + "\n", encoding="utf-8")
    (folder / "hours_present.txt").write_text("h/03.csv\nh/01.csv\n", encoding="utf-8")
    return folder


def _small(folder: Path, **options) -> TrainDelayData:
    return load_train_delays(folder, **({"exclude": ("Delta",), "empty_hours": ()} | options))


def test_small_copy_signals_and_graph(tmp_path):
    folder = _write_small(tmp_path / "small")
    data = _small(folder)
    assert data.names == ("Alpha", "Beta (Ost)", "Gamma")
    assert data.short_names == ("ALPH", "BETA", "GAMM")
    assert data.hours == ("h/01.csv", "h/03.csv") and data.positions.tolist() == [0, 2]
    assert data.termini == ("Gamma",)
    nan = np.nan
    np.testing.assert_allclose(data.exogenous, [[1.0, nan, 4.0], [nan, 1.0, nan]])
    np.testing.assert_allclose(data.endogenous, [[2.0, nan, 5.0], [7.0, 1.5, nan]])
    np.testing.assert_array_equal(data.trains, [[3, 0, 2], [1, 2, 0]])
    larger = _small(folder, endogenous="max")
    # Alpha's train of hour 03 lacks its arrival delay: it leaves the "max" average
    np.testing.assert_allclose(larger.endogenous, [[3.0, nan, 5.0], [nan, 1.5, nan]])
    np.testing.assert_array_equal(larger.observed, [[True, False, True], [False, True, False]])
    zero = _small(folder, terminus_exogenous="zero")
    np.testing.assert_allclose(zero.exogenous, [[1.0, nan, 0.0], [nan, 1.0, nan]])
    counts = np.zeros((3, 3), dtype=int)
    counts[2, 0] = 2  # Gamma -> Alpha (hours 01 and 03)
    counts[1, 0] = 2  # Beta -> Alpha, "Beta(Ost)" matched
    counts[0, 2] = 1  # Alpha -> Gamma
    counts[0, 1] = 1  # Alpha -> Beta, the excluded Delta skipped
    counts[2, 1] = 1  # Gamma -> Beta, Beta's own name skipped
    np.testing.assert_array_equal(data.edge_counts, counts)
    assert data.undirected_pairs == 3
    z = data.standardised()
    np.testing.assert_allclose(z.endogenous[:, 0], [-1.0, 1.0])
    np.testing.assert_allclose(z.exogenous[:, 2], [0.0, nan])  # one hour: centred only


def test_the_folder_comes_from_the_argument_the_environment_or_the_default(tmp_path, monkeypatch):
    folder = _write_small(tmp_path / "small")
    monkeypatch.setenv(DATA_ENV, str(folder))
    assert resolve_data_dir() == folder
    assert _small(None).n_stations == 3
    monkeypatch.setenv(DATA_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(FileNotFoundError, match="nowhere.*" + DATA_ENV):
        resolve_data_dir()
    assert resolve_data_dir(folder) == folder  # the argument wins
    monkeypatch.delenv(DATA_ENV)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match="shared/data/train_delays"):
        resolve_data_dir()


def test_a_missing_file_is_named(tmp_path):
    folder = _write_small(tmp_path / "small")
    (folder / "hours_present.txt").unlink()
    with pytest.raises(FileNotFoundError, match=f"hours_present.txt is missing.*{DATA_ENV}"):
        _small(folder)


def test_missing_columns_are_named(tmp_path):
    folder = _write_small(tmp_path / "small")
    table = pd.read_csv(folder / "hourly_20_stations.csv.gz")
    table.drop(columns=["path", "depature_delay_m"]).to_csv(
        folder / "hourly_20_stations.csv.gz", index=False
    )
    with pytest.raises(ValueError, match=r"missing column\(s\) path, depature_delay_m"):
        _small(folder)
    folder = _write_small(tmp_path / "other")
    stations = pd.read_csv(folder / "stations.csv")
    stations.drop(columns="distance_km").to_csv(folder / "stations.csv", index=False)
    with pytest.raises(ValueError, match=r"stations.csv: missing column\(s\) distance_km"):
        _small(folder)


def test_stations_absent_from_the_data_are_named(tmp_path):
    folder = _write_small(tmp_path / "small")
    table = pd.read_csv(folder / "hourly_20_stations.csv.gz")
    table[table["eva_nr"] != 3].to_csv(folder / "hourly_20_stations.csv.gz", index=False)
    with pytest.raises(ValueError, match=r"no row for station\(s\) Gamma of stations.csv"):
        _small(folder)
    assert _small(folder, exclude=("Delta", "Gamma")).names == ("Alpha", "Beta (Ost)")
    with pytest.raises(ValueError, match=r"excluded station\(s\) Omega are not listed"):
        load_train_delays(folder, exclude=("Omega",), empty_hours=())
    table.replace({"eva_nr": {4: 9}}).to_csv(folder / "hourly_20_stations.csv.gz", index=False)
    with pytest.raises(ValueError, match="eva_nr 9 that stations.csv does not list"):
        _small(folder)


def test_hour_lists_that_do_not_match_are_named(tmp_path):
    folder = _write_small(tmp_path / "small")
    present = folder / "hours_present.txt"
    present.write_text("h/01.csv\n", encoding="utf-8")  # the table has rows of h/03
    with pytest.raises(ValueError, match="rows of hour.*h/03.csv.*hours_present.txt"):
        _small(folder)
    present.write_text("h/01.csv\nh/03.csv\nh/04.csv\n", encoding="utf-8")  # h/04 has no rows
    with pytest.raises(ValueError, match="h/04.csv have no row.*empty_hours="):
        _small(folder)
    accepted = load_train_delays(folder, exclude=("Delta",), empty_hours=("h/04.csv",))
    assert accepted.n_hours == 3 and not accepted.observed[2].any()
    present.write_text("h/01.csv\nh/03.csv\nh/09.csv\n", encoding="utf-8")
    with pytest.raises(ValueError, match="h/09.csv are not in hours_listed.txt"):
        _small(folder)
    present.write_text("h/01.csv\nh/03.csv\nh/01.csv\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"duplicated hour\(s\) h/01.csv"):
        _small(folder)


def test_bad_values_and_options(tmp_path):
    folder = _write_small(tmp_path / "small")
    table = pd.read_csv(folder / "hourly_20_stations.csv.gz")
    table["depature_delay_m"] = table["depature_delay_m"].astype(object)
    table.loc[2, "depature_delay_m"] = "late"
    table.to_csv(folder / "hourly_20_stations.csv.gz", index=False)
    with pytest.raises(ValueError, match="'depature_delay_m'.*'late' in data row 3"):
        _small(folder)
    with pytest.raises(ValueError, match="endogenous must be one of"):
        _small(folder, endogenous="sum")
    with pytest.raises(ValueError, match="terminus_exogenous must be one of"):
        _small(folder, terminus_exogenous="mean")
