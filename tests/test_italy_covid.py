from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from causalbandits.data.italy_covid import (
    COLUMNS,
    DATA_ENV,
    REGIONS,
    daily_new_cases,
    download_italy_covid,
    load_italy_covid,
    resolve_data_path,
)
from causalbandits.envs.delay import FeedbackDelay
from causalbandits.envs.italy_covid import (
    CovidFeedback,
    CovidPreprocessing,
    ItalyCovidBandit,
    clipped_kde_mean,
    italy_covid_instance,
    scott_bandwidths,
)

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
BULLETINS = DATA / "italy_covid" / "dpc-covid19-ita-regioni.csv.gz"
needs_data = pytest.mark.skipif(
    not BULLETINS.exists(), reason=f"the Italian bulletins are not available at {BULLETINS}"
)


@pytest.fixture(scope="module")
def bulletins() -> pd.DataFrame:
    if not BULLETINS.exists():
        pytest.skip(f"the Italian bulletins are not available at {BULLETINS}")
    return load_italy_covid(BULLETINS)


@pytest.fixture(scope="module")
def instance(bulletins):
    return italy_covid_instance(bulletins, rng=3)


def _small_frame(days: int = 3, suffix: str = "") -> pd.DataFrame:
    """A tiny well-formed bulletin: every region on ``days`` consecutive days (in Italy, with
    100 cases so far; the new cases are corrections on the first day)."""
    dates = pd.date_range("2020-03-01", periods=days, freq="D")
    rows = [
        {c: 0 for c in COLUMNS}
        | {
            "data": f"{d.date()}{suffix}",
            "denominazione_regione": r,
            "codice_regione": i,
            "lat": 42.0,
            "long": 12.0,
            "totale_casi": 100,
            "nuovi_positivi": i * (k - 1),
        }
        for k, d in enumerate(dates)
        for i, r in enumerate(REGIONS)
    ]
    return pd.DataFrame(rows, columns=list(COLUMNS))


@needs_data
def test_the_bulletins_hold_21_regions_and_37401_rows(bulletins):
    assert len(bulletins) == 37_401
    assert bulletins["denominazione_regione"].nunique() == 21
    assert tuple(bulletins["denominazione_regione"].iloc[:21]) == REGIONS
    assert bulletins["data"].nunique() == 1_781
    assert bulletins["data"].min() == pd.Timestamp("2020-02-24")
    assert bulletins["data"].is_monotonic_increasing


@needs_data
def test_preprocessing_follows_appendix_vii_d3(bulletins, instance):
    assert (instance.horizon, instance.n_arms) == (80, 21)
    assert str(instance.dates[0]) == "2020-07-31" and str(instance.dates[-1]) == "2020-10-18"
    k, day = instance.shift, instance.change_point
    assert 1 <= k <= 20 and day == 40
    # y: trailing 7-day mean of the clipped new cases, computed independently with pandas
    table = bulletins.pivot(index="data", columns="denominazione_regione", values="nuovi_positivi")
    rolled = table[list(REGIONS)].clip(lower=0).rolling(7).mean().loc["2020-07-31":"2020-10-18"]
    raw = rolled.to_numpy() / instance.scale
    assert raw.max() == pytest.approx(1.0)
    np.testing.assert_allclose(instance.overall[: day - 1], raw[: day - 1])
    np.testing.assert_allclose(instance.overall[day - 1 :], np.roll(raw[day - 1 :], -k, axis=1))
    # the region indexed i takes region (i + k) mod N's values from day 40 on
    lombardia = REGIONS.index("Lombardia")
    np.testing.assert_allclose(instance.overall[50, (lombardia - k) % 21], raw[50, lombardia])
    np.testing.assert_allclose(instance.means[1], np.roll(instance.means[0], -k))
    # the KDE window 20 Apr - 3 Jun 2020: 45 days
    assert instance.kde_data.shape == (45, 21)
    # 90:10 split: one validation day in each block of 10
    assert instance.validation.sum() == 8
    np.testing.assert_array_equal(instance.validation.reshape(8, 10).sum(axis=1), 1)
    again = italy_covid_instance(bulletins, rng=3)
    np.testing.assert_array_equal(again.validation, instance.validation)
    assert again.shift == k


@needs_data
def test_kde_means_match_monte_carlo_draws(instance):
    env = ItalyCovidBandit(instance)
    replicates = 3000
    env.reset(1, replicates)
    b = env.instantaneous
    assert b.shape == (80, replicates, 21) and np.all(b >= 0)
    for day, period in ((0, 0), (38, 0), (39, 1), (79, 1)):
        sample = b[day]
        error = sample.std(axis=0, ddof=1) / np.sqrt(replicates)
        assert np.all(np.abs(sample.mean(axis=0) - instance.means[period]) <= 4 * error + 1e-12)


def test_clipped_kde_mean_and_bandwidths():
    rng = np.random.default_rng(0)
    data = np.column_stack([rng.poisson(3, 40), np.full(40, 2.0)]).astype(float)
    bandwidths = scott_bandwidths(data)
    assert bandwidths[1] == 0
    std = data[:, 0].std(ddof=1)
    assert bandwidths[0] == pytest.approx(std * 40 ** (-1 / 5))  # Scott's rule
    draws = data[rng.integers(40, size=400_000), 0] + bandwidths[0] * rng.standard_normal(400_000)
    draws = np.maximum(draws, 0)
    mean = clipped_kde_mean(data, bandwidths)
    assert abs(mean[0] - draws.mean()) < 4 * draws.std() / np.sqrt(draws.size)
    assert mean[1] == 2.0


@needs_data
def test_the_environment_replays_the_data(instance):
    env = ItalyCovidBandit(instance, super_arm_size=5)
    assert (
        env.problem.n_arms == 21 and env.problem.super_arm_size == 5 and env.problem.horizon == 80
    )
    assert not env.problem.upper_triangular and env.problem.regions == REGIONS
    env.reset(0, 3)
    x = np.zeros((3, 21), dtype=bool)
    x[:, :5] = True
    for t in range(80):
        fb = env.step(x)
        assert isinstance(fb, CovidFeedback)
        np.testing.assert_array_equal(fb.b, env.instantaneous[t])
        np.testing.assert_array_equal(fb.z, fb.b * x)
        np.testing.assert_array_equal(fb.y, np.tile(instance.overall[t], (3, 1)))
    with pytest.raises(RuntimeError, match="horizon"):
        env.step(x)
    with pytest.raises(RuntimeError, match="reference_adjacency"):
        env.pseudo_regret(x)
    env.reset(0, 1)
    with pytest.raises(ValueError, match="at most s = 5"):
        env.step(np.ones((1, 21), dtype=bool))


@needs_data
def test_regret_with_a_reference_graph_and_the_estimated_reward(instance):
    env = ItalyCovidBandit(instance, super_arm_size=5, reference_adjacency=np.zeros((21, 21)))
    env.reset(0, 2)
    x = np.zeros((2, 21), dtype=bool)
    x[0, np.argsort(-instance.means[0])[:5]] = True
    x[1, :5] = True
    regret = env.pseudo_regret(x)
    assert regret[0] == pytest.approx(0)
    assert regret[1] == pytest.approx(
        np.sort(instance.means[0])[-5:].sum() - instance.means[0, :5].sum()
    )
    env.t = 39  # day 40: the shifted means
    assert env.period == 1 and env.pseudo_regret(x)[0] > 0
    actions = np.stack([x] * 4)
    a_hat = np.zeros((21, 21))
    a_hat[0, 1] = 0.5  # region 1 drives region 0
    rewards = env.estimated_overall_rewards(actions, a_hat)
    weights = np.ones(21)
    weights[1] = 1.5
    np.testing.assert_allclose(rewards, (env.instantaneous[:4] * x) @ weights)


@needs_data
def test_a_three_day_delay_delivers_b_for_the_graph_learner(instance):
    env = FeedbackDelay(ItalyCovidBandit(instance), delay=3)
    env.reset(0, 2)
    x = np.zeros((2, 21), dtype=bool)
    for t in range(1, 6):
        out = env.step(x)
        if t <= 3:
            assert len(out) == 0
        else:
            np.testing.assert_array_equal(out.rounds, [t - 3] * 2)
            np.testing.assert_array_equal(out.feedback.b, env.instantaneous[t - 4])
            assert np.all(out.feedback.z == 0)


def test_small_files_load_with_a_time_of_day_suffix(tmp_path):
    path = tmp_path / "small.csv.gz"
    _small_frame(suffix="T18:00:00").to_csv(path, index=False)
    frame = load_italy_covid(path)
    assert len(frame) == 63 and frame["data"].nunique() == 3
    assert str(frame["data"].iloc[0].date()) == "2020-03-01"
    cases = daily_new_cases(frame, "2020-03-01", "2020-03-03")
    assert cases.shape == (3, 21) and cases[2, 20] == 20
    np.testing.assert_array_equal(cases[0], 0)  # negative corrections are clipped at 0
    with pytest.raises(ValueError, match="lack 1 day"):
        daily_new_cases(frame, "2020-03-01", "2020-03-04")


def test_missing_regions_are_named(tmp_path):
    path = tmp_path / "bad.csv"
    frame = _small_frame()
    frame[~frame["denominazione_regione"].isin(["Molise", "Veneto"])].to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"missing region\(s\) \[Molise, Veneto\]"):
        load_italy_covid(path)
    frame.replace({"Lazio": "Atlantis"}).to_csv(path, index=False)
    with pytest.raises(ValueError, match="Atlantis"):
        load_italy_covid(path)


def test_missing_dates_and_columns_and_duplicates_are_named(tmp_path):
    path = tmp_path / "bad.csv"
    frame = _small_frame(days=4)
    gap = (frame["denominazione_regione"] == "Umbria") & (frame["data"] == "2020-03-02")
    frame[~gap].to_csv(path, index=False)
    with pytest.raises(ValueError, match="Umbria lacks 2020-03-02"):
        load_italy_covid(path)
    frame.drop(columns="nuovi_positivi").to_csv(path, index=False)
    with pytest.raises(ValueError, match="nuovi_positivi"):
        load_italy_covid(path)
    pd.concat([frame, frame.iloc[:1]]).to_csv(path, index=False)
    with pytest.raises(ValueError, match="duplicated"):
        load_italy_covid(path)


def test_download_verifies_the_file_without_network(tmp_path):
    source = tmp_path / "source.csv"
    _small_frame().to_csv(source, index=False)
    cached = download_italy_covid(tmp_path / "cache", url=source.as_uri())
    assert cached.exists() and len(load_italy_covid(cached)) == 63
    _small_frame().iloc[:-1].to_csv(source, index=False)  # Veneto lacks the last day
    with pytest.raises(ValueError, match="Veneto"):
        download_italy_covid(tmp_path / "other", url=source.as_uri())
    assert list((tmp_path / "other").iterdir()) == []


@needs_data
def test_invalid_preprocessing_arguments(bulletins):
    with pytest.raises(ValueError, match="shift k"):
        italy_covid_instance(bulletins, shift=21)
    with pytest.raises(ValueError, match="change point"):
        italy_covid_instance(bulletins, preprocessing=CovidPreprocessing(change_point=81))
    with pytest.raises(ValueError, match="lack"):
        italy_covid_instance(bulletins, preprocessing=CovidPreprocessing(end="2025-12-31"))
    with pytest.raises(ValueError, match="window"):
        CovidPreprocessing(window=0)


def test_the_data_path_is_the_argument_then_the_environment_variable(tmp_path, monkeypatch):
    monkeypatch.delenv(DATA_ENV, raising=False)
    missing = tmp_path / "nothing.csv.gz"
    with pytest.raises(FileNotFoundError, match="download_italy_covid"):
        resolve_data_path(missing)
    present, given = tmp_path / "bulletins.csv", tmp_path / "given.csv"
    present.write_text("x\n")
    given.write_text("x\n")
    monkeypatch.setenv(DATA_ENV, str(present))
    assert resolve_data_path() == present
    assert resolve_data_path(given) == given


@pytest.mark.parametrize("value", ["many", float("nan"), float("inf")])
def test_counts_must_be_finite_numbers(tmp_path, value):
    frame = _small_frame()
    frame["terapia_intensiva"] = frame["terapia_intensiva"].astype(object)
    frame.loc[5, "terapia_intensiva"] = value
    path = tmp_path / "bad.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"bad.csv: column 'terapia_intensiva' .* data row 6"):
        load_italy_covid(path)


def test_truncated_gzip_names_the_file(tmp_path):
    path = tmp_path / "cut.csv.gz"
    _small_frame().to_csv(path, index=False)
    path.write_bytes(path.read_bytes()[:200])
    with pytest.raises(ValueError, match="cut.csv.gz cannot be read"):
        load_italy_covid(path)


def test_download_checks_the_digest_and_revalidates_the_cache(tmp_path):
    source = tmp_path / "source.csv"
    _small_frame().to_csv(source, index=False)
    with pytest.raises(ValueError, match="SHA-256"):
        download_italy_covid(tmp_path / "a", url=source.as_uri(), sha256="0" * 64)
    cached = download_italy_covid(tmp_path / "b", url=source.as_uri())
    assert cached.with_name(cached.name + ".sha256").exists()
    cached.write_text(cached.read_text().replace("Veneto", "Venice"))  # tampered cache
    with pytest.raises(ValueError, match="SHA-256"):
        download_italy_covid(tmp_path / "b", url=source.as_uri())
