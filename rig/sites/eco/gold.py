"""Gold rows of the eco tasks, computed from the raw vega_datasets DataFrames with pandas (never the site's SQL)."""

from __future__ import annotations

from typing import Callable

import pandas as pd


def _f1(x: float) -> str:
    return f"{x:.1f}"


def _unique_top(s: pd.Series, largest: bool = True) -> str:
    """The index label of the largest (or smallest) value; a tie would make the task ambiguous."""
    best = s.max() if largest else s.min()
    winners = s[s == best]
    if len(winners) != 1:
        raise ValueError(f"tie for the {'largest' if largest else 'smallest'} value: {list(winners.index)}")
    return str(winners.index[0])


def _weather() -> pd.DataFrame:
    from vega_datasets import local_data

    df = local_data.seattle_weather()
    df["day"] = df["date"].dt.strftime("%Y-%m-%d")
    df["month"] = df["date"].dt.strftime("%Y-%m")
    df["year"] = df["date"].dt.strftime("%Y")
    return df


def eco_01() -> list[list[str]]:
    """The wettest month of 2014 in Seattle; its days with at least 10 mm of precipitation."""
    w = _weather()
    month = _unique_top(w[w["year"] == "2014"].groupby("month")["precipitation"].sum())
    days = w[(w["month"] == month) & (w["precipitation"] >= 10)].sort_values("day")
    return [[r.day, _f1(r.precipitation), _f1(r.temp_max)] for r in days.itertuples()]


def eco_02() -> list[list[str]]:
    """The Iowa source with the smallest 2001 net generation; its 2010-2017 values, largest first."""
    from vega_datasets import local_data

    e = local_data.iowa_electricity()
    e["y"] = e["year"].dt.year
    source = _unique_top(e[e["y"] == 2001].set_index("source")["net_generation"], largest=False)
    rows = e[(e["source"] == source) & e["y"].between(2010, 2017)].sort_values(["net_generation", "y"],
                                                                             ascending=[False, True])
    return [[str(r.y), str(int(r.net_generation))] for r in rows.itertuples()]


def eco_03() -> list[list[str]]:
    """The year with the most snow days in Seattle; its snow days with at least 5 mm of precipitation."""
    w = _weather()
    snow = w[w["weather"] == "snow"]
    year = _unique_top(snow.groupby("year").size())
    days = snow[(snow["year"] == year) & (snow["precipitation"] >= 5)].sort_values("day")
    return [[r.day, _f1(r.precipitation), _f1(r.temp_min)] for r in days.itertuples()]


def eco_04() -> list[list[str]]:
    """San Francisco's warmest month of 2010; Seattle's days of that month with a max of at least 70 °F."""
    from vega_datasets import local_data

    sf = local_data.sf_temps()
    month = _unique_top(sf.groupby(sf["date"].dt.strftime("%Y-%m"))["temp"].mean())
    sea = local_data.seattle_temps()
    sea = sea[sea["date"].dt.strftime("%Y-%m") == month]
    daily = sea.groupby(sea["date"].dt.strftime("%Y-%m-%d"))["temp"].agg(["max", "min"])
    daily = daily[daily["max"] >= 70].reset_index(names="day").sort_values(["max", "day"], ascending=[False, True])
    return [[r.day, _f1(r.max), _f1(r.min)] for r in daily.itertuples()]


def eco_05() -> list[list[str]]:
    """Seattle's month with the highest mean daily max temperature; its fog or drizzle days, hottest first."""
    w = _weather()
    month = _unique_top(w.groupby("month")["temp_max"].mean())
    days = w[(w["month"] == month) & w["weather"].isin(["fog", "drizzle"])]
    days = days.sort_values(["temp_max", "day"], ascending=[False, True])
    return [[r.day, str(r.weather), _f1(r.temp_max), _f1(r.temp_min)] for r in days.itertuples()]


GOLD: dict[str, Callable[[], list[list[str]]]] = {
    "eco-01": eco_01, "eco-02": eco_02, "eco-03": eco_03, "eco-04": eco_04, "eco-05": eco_05,
}
