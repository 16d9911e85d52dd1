"""The eco site's data: four vega_datasets local files loaded once into an in-memory sqlite3 database."""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass
from functools import lru_cache

WEATHER_TYPES = ("drizzle", "fog", "rain", "snow", "sun")
SOURCES = ("Fossil Fuels", "Nuclear Energy", "Renewables")


@dataclass(frozen=True)
class Dataset:
    """One dataset (station) of the browser and its metadata."""

    id: str
    title: str
    kind: str  # "weather" (daily), "temps" (hourly), "generation" (yearly)
    frequency: str
    location: str
    source: str
    description: str
    units: tuple[tuple[str, str, str], ...]  # (field, unit, meaning)


DATASETS: dict[str, Dataset] = {
    d.id: d
    for d in (
        Dataset(
            "seattle-weather", "Seattle daily weather", "weather", "daily", "Seattle, WA",
            "public-domain NOAA data (via vega-datasets 0.9.0)",
            "Daily precipitation, maximum and minimum temperature, mean wind speed and the observed weather type.",
            (("precipitation", "mm", "precipitation of the day"),
             ("temp_max", "°C", "maximum temperature of the day"),
             ("temp_min", "°C", "minimum temperature of the day"),
             ("wind", "m/s", "mean wind speed of the day"),
             ("weather", "category", "drizzle, fog, rain, snow or sun")),
        ),
        Dataset(
            "seattle-temps", "Seattle hourly temperatures", "temps", "hourly", "Seattle, WA",
            "public-domain NOAA data (via vega-datasets 0.9.0)",
            "Hourly air temperature for every hour of 2010.",
            (("temp", "°F", "air temperature of the hour"),),
        ),
        Dataset(
            "sf-temps", "San Francisco hourly temperatures", "temps", "hourly", "San Francisco, CA",
            "public-domain NOAA data (via vega-datasets 0.9.0)",
            "Hourly air temperature for every hour of 2010.",
            (("temp", "°F", "air temperature of the hour"),),
        ),
        Dataset(
            "iowa-electricity", "Iowa net electricity generation", "generation", "yearly", "Iowa (state total)",
            "U.S. Energy Information Administration, Electricity Data Browser, downloaded 2018-05-06"
            " (via vega-datasets 0.9.0)",
            "Yearly net generation of electricity in Iowa by source: fossil fuels, nuclear energy, renewables.",
            (("net_generation", "GWh (thousand MWh)", "net generation of the year"),
             ("source", "category", "Fossil Fuels, Nuclear Energy or Renewables")),
        ),
    )
}

_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def _connection() -> sqlite3.Connection:
    from vega_datasets import (
        local_data,  # imported lazily: nothing happens at import time
    )

    db = sqlite3.connect(":memory:", check_same_thread=False)
    db.executescript(
        "CREATE TABLE weather (date TEXT PRIMARY KEY, precipitation REAL, temp_max REAL, temp_min REAL,"
        " wind REAL, weather TEXT);"
        "CREATE TABLE temps (station TEXT, ts TEXT, temp REAL);"
        "CREATE TABLE generation (year INTEGER, source TEXT, net_generation INTEGER);"
        "CREATE INDEX temps_station ON temps (station, ts);"
    )
    w = local_data.seattle_weather()
    db.executemany(
        "INSERT INTO weather VALUES (?, ?, ?, ?, ?, ?)",
        zip(w["date"].dt.strftime("%Y-%m-%d"), w["precipitation"], w["temp_max"], w["temp_min"], w["wind"],
            w["weather"].astype(str)),
    )
    for station, df in (("seattle-temps", local_data.seattle_temps()), ("sf-temps", local_data.sf_temps())):
        db.executemany(
            "INSERT INTO temps VALUES (?, ?, ?)",
            ((station, ts, t) for ts, t in zip(df["date"].dt.strftime("%Y-%m-%d %H:%M"), df["temp"])),
        )
    e = local_data.iowa_electricity()
    db.executemany(
        "INSERT INTO generation VALUES (?, ?, ?)",
        zip(e["year"].dt.year.astype(int).tolist(), e["source"].astype(str), e["net_generation"].astype(int).tolist()),
    )
    db.commit()
    return db


def fetch(sql: str, params: list[object] | tuple[object, ...] = ()) -> list[tuple]:
    """Run one read-only query on the (lazily built) database."""
    with _LOCK:
        return _connection().execute(sql, params).fetchall()
