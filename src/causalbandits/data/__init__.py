"""Loaders of the real data sets the papers use (never committed): where the file is, reading
and checking it."""

from causalbandits.data.checks import DataError
from causalbandits.data.italy_covid import (
    ABBREVIATIONS,
    DATA_ENV,
    REGIONS,
    daily_new_cases,
    download_italy_covid,
    load_italy_covid,
    resolve_data_path,
)
from causalbandits.data.train_delays import TrainDelayData, load_train_delays

__all__ = [
    "ABBREVIATIONS",
    "DATA_ENV",
    "DataError",
    "REGIONS",
    "TrainDelayData",
    "daily_new_cases",
    "download_italy_covid",
    "load_italy_covid",
    "load_train_delays",
    "resolve_data_path",
]
