"""SQL behind every page of the stats portal: scopes, the three result views, tree children, country series."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, Mapping

from rig.sites.stats.data import (
    INDICATORS,
    WORLD,
    YEARS,
    continent_of,
    continents,
    countries,
    query,
)

View = Literal["table", "summary", "aggregate"]
VIEWS: tuple[View, ...] = ("table", "summary", "aggregate")
Kind = Literal["country", "text", "year", "count", "value", "total", "change", "pct"]
PAGE_SIZE = 25


class ScopeError(ValueError):
    """A request names a node, indicator, year or view the portal does not have."""


@dataclass(frozen=True)
class Scope:
    """What slice of data is selected: a geography node, an indicator and a year window."""

    node: str
    indicator: str
    year_from: int
    year_to: int

    @property
    def parts(self) -> list[str]:
        """The node path below World: [] for World, [continent] or [continent, country]."""
        return [] if self.node == WORLD else self.node.split("/")

    @property
    def label(self) -> str:
        """The node's display name (World, a continent or a country)."""
        return self.parts[-1] if self.parts else WORLD

    def filter(self) -> tuple[str, dict[str, object]]:
        """A SQL condition selecting the node's countries inside the year window."""
        params: dict[str, object] = {"y0": self.year_from, "y1": self.year_to}
        cond = "year BETWEEN :y0 AND :y1"
        if len(self.parts) == 1:
            cond += " AND continent = :continent"
            params["continent"] = self.parts[0]
        elif len(self.parts) == 2:
            cond += " AND country = :country"
            params["country"] = self.parts[1]
        return cond, params


@dataclass(frozen=True)
class Column:
    """One result column: its sort key, header label and how its cells are formatted."""

    key: str
    label: str
    kind: Kind


@dataclass
class ViewResult:
    """One page of a result view."""

    view: View
    columns: list[Column]
    rows: list[tuple]
    total: int
    page: int
    pages: int
    sort: str | None
    desc: bool

    @property
    def sort_label(self) -> str | None:
        """The header label of the sorted column, if sorted."""
        return next((c.label for c in self.columns if c.key == self.sort), None)


def valid_node(node: str) -> bool:
    """Whether a node id (World, Continent or Continent/Country) exists."""
    if node == WORLD:
        return True
    parts = node.split("/")
    if len(parts) == 1:
        return parts[0] in continents()
    return len(parts) == 2 and continent_of(parts[1]) == parts[0]


def parse_scope(params: Mapping[str, str], require_node: bool = True) -> Scope:
    """The scope named by request parameters (node, indicator, year_from, year_to); ScopeError if invalid."""
    node = params.get("node", "")
    if require_node and not valid_node(node):
        raise ScopeError(f"unknown geography node {node!r}")
    indicator = params.get("indicator") or "lifeExp"
    if indicator not in INDICATORS:
        raise ScopeError(f"unknown indicator {indicator!r}")
    try:
        y0, y1 = int(params.get("year_from") or YEARS[0]), int(params.get("year_to") or YEARS[-1])
    except ValueError:
        raise ScopeError("years must be numbers") from None
    if y0 not in YEARS or y1 not in YEARS:
        raise ScopeError(f"years must be one of {YEARS[0]}, {YEARS[1]}, ..., {YEARS[-1]}")
    if y0 > y1:
        raise ScopeError(f"the start year {y0} is after the end year {y1}")
    return Scope(node, indicator, y0, y1)


def columns(view: View, scope: Scope) -> list[Column]:
    """The columns a view shows for a scope."""
    if view == "table":
        years = [Column(str(y), str(y), "value") for y in YEARS if scope.year_from <= y <= scope.year_to]
        return [Column("country", "Country", "country"), Column("continent", "Continent", "text"), *years]
    if view == "summary":
        return [Column("country", "Country", "country"), Column("continent", "Continent", "text"),
                Column("first", "First", "value"), Column("last", "Last", "value"),
                Column("change", "Change", "change"), Column("change_pct", "Change (%)", "pct")]
    stat = ([Column("total", "Total", "total"), Column("mean", "Mean", "value")] if scope.indicator == "pop"
            else [Column("mean", "Mean", "value"), Column("wmean", "Population-weighted mean", "value")])
    return [Column("region", "Region", "text"), Column("year", "Year", "year"),
            Column("countries", "Countries", "count"), *stat, Column("min", "Minimum", "value"), Column("max", "Maximum", "value")]


def _source(view: View, scope: Scope) -> tuple[str, dict[str, object]]:
    """A SELECT producing every row of the view, with one output column per column key (plus `rank`)."""
    cond, params = scope.filter()
    v = scope.indicator  # whitelisted by parse_scope
    if view == "table":
        cells = ", ".join(f'MAX(CASE WHEN year = {y} THEN {v} END) AS "{y}"'
                          for y in YEARS if scope.year_from <= y <= scope.year_to)
        return f"SELECT country, continent, {cells} FROM obs WHERE {cond} GROUP BY country, continent", params
    if view == "summary":
        inner = (f"SELECT country, continent, MAX(CASE WHEN year = :y0 THEN {v} END) AS first,"
                 f" MAX(CASE WHEN year = :y1 THEN {v} END) AS last FROM obs WHERE {cond} GROUP BY country, continent")
        return (f"SELECT country, continent, first, last, last - first AS change,"
                f" (last - first) * 100.0 / first AS change_pct FROM ({inner})"), params
    wmean = "NULL" if v == "pop" else f"SUM({v} * pop) / SUM(pop * 1.0)"
    stats = (f"year, COUNT(*) AS countries, SUM(pop) AS total, AVG({v}) AS mean, {wmean} AS wmean,"
             f" MIN({v}) AS min, MAX({v}) AS max")
    params["label"] = scope.label
    sql = f"SELECT :label AS region, 0 AS rank, {stats} FROM obs WHERE {cond} GROUP BY year"
    if scope.node == WORLD:
        sql += (f" UNION ALL SELECT continent AS region, 1 AS rank, {stats} FROM obs WHERE {cond}"
                " GROUP BY continent, year")
    return sql, params


def _order(view: View, sort: str | None, desc: bool) -> str:
    ties = "rank, region, year" if view == "aggregate" else "country"
    if sort is None:
        return ties
    return f'"{sort}" {"DESC" if desc else "ASC"}, {ties}'


def run_view(view: View, scope: Scope, sort: str | None = None, desc: bool = False,
             page: int | None = 1, page_size: int = PAGE_SIZE) -> ViewResult:
    """One page of a view (every row when `page` is None), sorted by a column key or in the default order."""
    if view not in VIEWS:
        raise ScopeError(f"unknown view {view!r}; expected one of {', '.join(VIEWS)}")
    cols = columns(view, scope)
    if sort is not None and sort not in {c.key for c in cols}:
        sort, desc = None, False
    src, params = _source(view, scope)
    total = query(f"SELECT COUNT(*) FROM ({src})", params)[0][0]
    pages = max(1, math.ceil(total / page_size))
    names = ", ".join(f'"{c.key}"' for c in cols)
    sql = f"SELECT {names} FROM ({src}) ORDER BY {_order(view, sort, desc)}"
    if page is not None:
        page = min(max(1, page), pages)
        sql += f" LIMIT {page_size} OFFSET {(page - 1) * page_size}"
    return ViewResult(view, cols, query(sql, params), total, page or 1, pages, sort, desc)


def children(node: str) -> list[dict[str, object]]:
    """The child nodes of a tree node (continents of World, countries of a continent, none for a country)."""
    if node == WORLD:
        counts = dict(query("SELECT continent, COUNT(DISTINCT country) FROM obs GROUP BY continent"))
        return [{"id": c, "label": c, "level": 2, "has_children": True, "count": counts[c]} for c in continents()]
    if "/" not in node:
        return [{"id": f"{node}/{c}", "label": c, "level": 3, "has_children": False, "count": 1}
                for c in countries(node)]
    return []


def country_series(country: str) -> list[tuple]:
    """Every year of one country: (year, lifeExp, pop, gdpPercap)."""
    return query("SELECT year, lifeExp, pop, gdpPercap FROM obs WHERE country = ? ORDER BY year", (country,))
