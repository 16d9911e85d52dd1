"""The `eco` database of hybrid tasks: the vega_datasets files EcoData Online browses (the datasets' periods of
record are left to the site's dataset list: a hybrid task needs both)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rig.sites.database import Database, Table, frame_rows

if TYPE_CHECKING:
    import pandas as pd


def _vega(loader: str, columns: list[str], prep: Callable[[pd.DataFrame], pd.DataFrame] | None = None,
          ) -> Callable[[], list[tuple[Any, ...]]]:
    def rows() -> list[tuple[Any, ...]]:
        from vega_datasets import local_data

        df = getattr(local_data, loader)()
        return frame_rows(prep(df) if prep else df, columns)
    return rows


def _hourly(station: str) -> Callable[[pd.DataFrame], pd.DataFrame]:
    def prep(df: pd.DataFrame) -> pd.DataFrame:
        return df.assign(station=station, ts=df["date"].dt.strftime("%Y-%m-%d %H:%M"))
    return prep


def _hourly_rows() -> list[tuple[Any, ...]]:
    return (_vega("seattle_temps", ["station", "ts", "temp"], _hourly("seattle-temps"))()
            + _vega("sf_temps", ["station", "ts", "temp"], _hourly("sf-temps"))())


def _generation(df: pd.DataFrame) -> pd.DataFrame:
    return df.assign(year=df["year"].dt.year)


DATABASE = Database(
    "eco", "Seattle daily weather 2012-2015, Seattle and San Francisco hourly temperatures 2010, Iowa net "
           "electricity generation 2001-2017", "vega_datasets==0.9.0", "eco", (
        Table("daily_weather", "CREATE TABLE daily_weather (date TEXT PRIMARY KEY, precipitation REAL, "
                               "temp_max REAL, temp_min REAL, wind REAL, weather TEXT)",
              _vega("seattle_weather", ["date", "precipitation", "temp_max", "temp_min", "wind", "weather"])),
        Table("hourly_temps", "CREATE TABLE hourly_temps (station TEXT, ts TEXT, temp REAL)", _hourly_rows),
        Table("generation", "CREATE TABLE generation (year INTEGER, source TEXT, net_generation INTEGER)",
              _vega("iowa_electricity", ["year", "source", "net_generation"], _generation)),
    ), Path(__file__).parent / "eco_kb.jsonl")
