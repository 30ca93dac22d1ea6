"""Loaders and pre-processing of the real data sets the papers use (never committed)."""

from causalbandits.data.italy_covid import (
    ABBREVIATIONS,
    REGIONS,
    CovidFeedback,
    CovidInstance,
    CovidProblem,
    ItalyCovidBandit,
    daily_new_cases,
    download_italy_covid,
    italy_covid_instance,
    load_italy_covid,
)

__all__ = [
    "ABBREVIATIONS",
    "REGIONS",
    "CovidFeedback",
    "CovidInstance",
    "CovidProblem",
    "ItalyCovidBandit",
    "daily_new_cases",
    "download_italy_covid",
    "italy_covid_instance",
    "load_italy_covid",
]
