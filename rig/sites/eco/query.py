"""Turning the browser's query state into SQL over the eco database, and formatting the result rows."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlencode

from rig.sites.eco.data import DATASETS, SOURCES, WEATHER_TYPES, fetch

AGGS = ("daily", "monthly", "yearly")
LIMITS = (10, 25, 50)
_MONTH = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")
_PERIOD_LABEL = {"daily": "Date", "monthly": "Month", "yearly": "Year"}
_PERIOD_LEN = {"daily": 10, "monthly": 7, "yearly": 4}


class QueryError(ValueError):
    """The query state cannot be answered; the message tells the user what to change."""


@dataclass(frozen=True)
class Column:
    """One result column: its key (the sort field), header label, SQL expression and number format."""

    key: str
    label: str
    sql: str
    fmt: str = "text"  # text, int, 1f


@dataclass
class Query:
    """A validated query state (the POST body of /api/query, or the export's URL parameters)."""

    dataset: str
    start: str = ""
    end: str = ""
    weather: list[str] = field(default_factory=list)
    source: list[str] = field(default_factory=list)
    min_precip: float | None = None
    min_temp: float | None = None
    agg: str = "daily"
    sort: str = "period"
    dir: str = "asc"


@dataclass
class Result:
    """One batch of result rows, with the total row count of the whole scope and the query they were computed under."""

    columns: list[Column]
    rows: list[list[str]]
    total: int
    notes: list[str]
    sort: str
    dir: str
    applied: Query


def _number(raw: Any, name: str) -> float | None:
    if raw in (None, ""):
        return None
    try:
        return float(raw)
    except (TypeError, ValueError):
        raise QueryError(f"{name} must be a number, got {raw!r}.") from None


def _strings(raw: Any) -> list[str]:
    if raw in (None, ""):
        return []
    return [str(v) for v in raw] if isinstance(raw, list) else [str(raw)]


def parse_query(state: dict[str, Any]) -> Query:
    """Validate a raw query state; raise QueryError with a message for the user."""
    dataset = str(state.get("dataset") or "")
    if not dataset:
        raise QueryError("Choose a dataset.")
    if dataset not in DATASETS:
        raise QueryError(f"Unknown dataset {dataset!r}.")
    start, end = str(state.get("start") or ""), str(state.get("end") or "")
    for name, value in (("start", start), ("end", end)):
        if value and not _MONTH.match(value):
            raise QueryError(f"The {name} month must look like 2014-03, got {value!r}.")
    if start and end and start > end:
        raise QueryError("The start month is after the end month.")
    weather, source = _strings(state.get("weather")), _strings(state.get("source"))
    if bad := [w for w in weather if w not in WEATHER_TYPES]:
        raise QueryError(f"Unknown weather type {bad[0]!r}.")
    if bad := [s for s in source if s not in SOURCES]:
        raise QueryError(f"Unknown source {bad[0]!r}.")
    agg = str(state.get("agg") or "daily")
    if agg not in AGGS:
        raise QueryError(f"Aggregation must be one of {', '.join(AGGS)}.")
    if DATASETS[dataset].kind == "generation" and agg != "yearly":
        raise QueryError(f"{DATASETS[dataset].title} has yearly values only: choose the yearly aggregation.")
    direction = str(state.get("dir") or "asc")
    if direction not in ("asc", "desc"):
        raise QueryError("Sort direction must be asc or desc.")
    return Query(
        dataset=dataset, start=start, end=end, weather=sorted(set(weather)), source=sorted(set(source)),
        min_precip=_number(state.get("min_precip"), "Minimum precipitation"),
        min_temp=_number(state.get("min_temp"), "Minimum max temperature"),
        agg=agg, sort=str(state.get("sort") or "period"), dir=direction,
    )


def columns_for(q: Query) -> list[Column]:
    """The result columns of a query (they depend on the dataset kind and the aggregation)."""
    kind, agg = DATASETS[q.dataset].kind, q.agg
    if kind == "generation":
        return [Column("period", "Year", "CAST(year AS TEXT)"), Column("source", "Source", "source"),
                Column("net_generation", "Net generation (GWh)", "net_generation", "int")]
    n = _PERIOD_LEN[agg]
    if kind == "weather":
        period = Column("period", _PERIOD_LABEL[agg], f"substr(date, 1, {n})")
        if agg == "daily":
            return [period, Column("weather", "Weather", "weather"),
                    Column("precipitation", "Precipitation (mm)", "precipitation", "1f"),
                    Column("temp_max", "Max temp (°C)", "temp_max", "1f"),
                    Column("temp_min", "Min temp (°C)", "temp_min", "1f"),
                    Column("wind", "Wind (m/s)", "wind", "1f")]
        return [period, Column("count", "Days", "COUNT(*)", "int"),
                Column("precipitation", "Precipitation (mm)", "SUM(precipitation)", "1f"),
                Column("temp_max", "Mean max temp (°C)", "AVG(temp_max)", "1f"),
                Column("temp_min", "Mean min temp (°C)", "AVG(temp_min)", "1f"),
                Column("wind", "Mean wind (m/s)", "AVG(wind)", "1f")]
    return [Column("period", _PERIOD_LABEL[agg], f"substr(ts, 1, {n})"),
            Column("count", "Hours", "COUNT(*)", "int"),
            Column("temp_mean", "Mean temp (°F)", "AVG(temp)", "1f"),
            Column("temp_min", "Min temp (°F)", "MIN(temp)", "1f"),
            Column("temp_max", "Max temp (°F)", "MAX(temp)", "1f")]


def applied(q: Query) -> tuple[Query, list[str]]:
    """The query its results are computed under (filters that do not apply to the dataset dropped, the sort column
    actually used), and a note for the user about each difference."""
    ds = DATASETS[q.dataset]
    notes: list[str] = []
    changes: dict[str, Any] = {}
    if q.weather and ds.kind != "weather":
        notes.append(f"The weather-type filter does not apply to {ds.title}; it was ignored.")
        changes["weather"] = []
    if q.source and ds.kind != "generation":
        notes.append(f"The source filter does not apply to {ds.title}; it was ignored.")
        changes["source"] = []
    if q.min_precip is not None and ds.kind != "weather":
        notes.append("The precipitation threshold applies to Seattle daily weather only; it was ignored.")
        changes["min_precip"] = None
    if q.min_temp is not None and ds.kind == "generation":
        notes.append("The temperature threshold does not apply to electricity generation; it was ignored.")
        changes["min_temp"] = None
    cols = columns_for(q)
    if q.sort not in [c.key for c in cols]:
        notes.append(f"This result has no {q.sort!r} column; sorted by {cols[0].label} instead.")
        changes["sort"] = "period"
    return replace(q, **changes), notes


def _num(x: float | None) -> str:
    return "" if x is None else str(int(x)) if x.is_integer() else repr(x)


def scope_params(q: Query) -> str:
    """A query as URL parameters (empty values left out): the results table's `data-scope`, the export's query."""
    pairs = [("dataset", q.dataset), ("start", q.start), ("end", q.end), ("min_precip", _num(q.min_precip)),
             ("min_temp", _num(q.min_temp)), ("agg", q.agg), ("sort", q.sort), ("dir", q.dir)]
    pairs += [("weather", w) for w in q.weather] + [("source", v) for v in q.source]
    return urlencode([(k, v) for k, v in pairs if v != ""])


def _scope_sql(q: Query) -> tuple[str, list[object]]:
    """FROM and WHERE (record level: dataset, window, categories) and the GROUP BY of an applied query."""
    ds = DATASETS[q.dataset]
    where: list[str] = []
    params: list[object] = []
    if ds.kind == "generation":
        table, month = "generation", None
        if q.start:
            where.append("year >= ?")
            params.append(int(q.start[:4]))
        if q.end:
            where.append("year <= ?")
            params.append(int(q.end[:4]))
    else:
        table = "weather" if ds.kind == "weather" else "temps"
        month = "substr(date, 1, 7)" if ds.kind == "weather" else "substr(ts, 1, 7)"
        if ds.kind == "temps":
            where.append("station = ?")
            params.append(ds.id)
        if q.start:
            where.append(f"{month} >= ?")
            params.append(q.start)
        if q.end:
            where.append(f"{month} <= ?")
            params.append(q.end)
    if q.weather:
        where.append(f"weather IN ({', '.join('?' * len(q.weather))})")
        params += q.weather
    if q.source:
        where.append(f"source IN ({', '.join('?' * len(q.source))})")
        params += q.source
    sql = f" FROM {table}" + (f" WHERE {' AND '.join(where)}" if where else "")
    if ds.kind != "generation" and not (ds.kind == "weather" and q.agg == "daily"):
        sql += " GROUP BY 1"
    return sql, params


def _format(col: Column, value: Any) -> str:
    if value is None:
        return ""
    if col.fmt == "int":
        return str(int(value))
    if col.fmt == "1f":
        return f"{float(value):.1f}"
    return str(value)


def run_query(q: Query, offset: int = 0, limit: int | None = None) -> Result:
    """Rows [offset, offset+limit) of a query's scope (all rows when limit is None), formatted for display."""
    q, notes = applied(q)
    cols = columns_for(q)
    keys = [c.key for c in cols]
    scope, params = _scope_sql(q)
    inner = "SELECT " + ", ".join(f"{c.sql} AS {c.key}" for c in cols) + scope
    having: list[str] = []
    if q.min_precip is not None:
        having.append("precipitation >= ?")
        params.append(q.min_precip)
    if q.min_temp is not None:
        having.append("temp_max >= ?")
        params.append(q.min_temp)
    order = f"{q.sort} {q.dir.upper()}" + (", period ASC" if q.sort != "period" else "")
    order += ", source ASC" if "source" in keys and q.sort != "source" else ""
    outer = f"FROM ({inner}) AS r" + (f" WHERE {' AND '.join(having)}" if having else "")
    total = fetch(f"SELECT COUNT(*) {outer}", params)[0][0]
    page = f" LIMIT {int(limit)} OFFSET {int(offset)}" if limit is not None else ""
    raw = fetch(f"SELECT * {outer} ORDER BY {order}{page}", params)
    rows = [[_format(c, v) for c, v in zip(cols, r)] for r in raw]
    return Result(cols, rows, total, notes, q.sort, q.dir, q)
