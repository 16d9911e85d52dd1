"""The search form's parameters, the SQL they select, and the result table they produce."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rig.sites.flights.data import MONTHS, ORIGINS, STATUSES, WEEKDAYS, query

PAGE_SIZE = 25
METRICS = {"arr_delay": "Arrival delay", "dep_delay": "Departure delay"}
#: Group-by choices: value -> (option label, noun for the result count, plural noun).
GROUPS = {
    "flight": ("Individual flights", "flight", "flights"),
    "carrier": ("By carrier", "carrier", "carriers"),
    "origin": ("By origin airport", "origin airport", "origin airports"),
    "dest": ("By destination", "destination", "destinations"),
    "tailnum": ("By tail number", "tail number", "tail numbers"),
    "month": ("By month", "month", "months"),
}
_KEY_LABEL = {"carrier": "Carrier", "origin": "Origin", "dest": "Destination", "tailnum": "Tail number",
              "month": "Month"}
_NAME = {"carrier": ("Airline", "(SELECT name FROM airlines WHERE carrier = g.k)"),
         "origin": ("Airport", "(SELECT name FROM airports WHERE faa = g.k)"),
         "dest": ("Airport", "(SELECT name FROM airports WHERE faa = g.k)")}
_LINK = {"carrier": "carrier", "origin": "airport", "dest": "airport", "tailnum": "plane"}


@dataclass(frozen=True)
class Column:
    """One result column: its sort key, header label, SQL sort expression and default direction."""

    key: str
    label: str
    sql: str
    numeric: bool = False
    link: str | None = None
    sortable: bool = True

    def next_dir(self, sort: str, direction: str) -> str:
        """The direction a click on this header asks for: flip when sorted by it, else its default."""
        if sort == self.key:
            return "asc" if direction == "desc" else "desc"
        return "desc" if self.numeric else "asc"


@dataclass
class Filters:
    """The search state read from the query string (invalid values dropped, with a message)."""

    origin: str = ""
    carriers: list[str] = field(default_factory=list)
    month_from: int = 1
    month_to: int = 12
    statuses: list[str] = field(default_factory=list)
    weekdays: list[str] = field(default_factory=list)
    metric: str = "arr_delay"
    dest_q: str = ""
    min_delay: int | None = None
    group: str = "flight"
    min_flights: int | None = None
    sort: str = ""
    dir: str = ""
    page: int = 1
    errors: list[str] = field(default_factory=list)


@dataclass
class Result:
    """One page of results plus what the page needs to render headers, count and pagination."""

    columns: list[Column]
    rows: list[list[dict[str, Any]]]
    groups: int
    flights: int
    page: int
    pages: int
    sort: str
    dir: str

    def count_text(self, group: str) -> str:
        """The visible result count, e.g. '12 destinations · 3,456 flights'."""
        flights = f"{self.flights:,} flight{'' if self.flights == 1 else 's'}"
        if group == "flight":
            return flights
        _, one, many = GROUPS[group]
        return f"{self.groups:,} {one if self.groups == 1 else many} · {flights}"


def carriers() -> list[tuple[str, str]]:
    """Every carrier as (code, name), by code."""
    return [(r["carrier"], r["name"]) for r in query("SELECT carrier, name FROM airlines ORDER BY carrier")]


def _int(params: Any, name: str, errors: list[str], lo: int | None = None, hi: int | None = None) -> int | None:
    """A whole-number parameter; a bad value is dropped with a message."""
    raw = (params.get(name) or "").strip()
    if not raw:
        return None
    try:
        value = int(raw)
    except ValueError:
        errors.append(f"{name} must be a whole number; {raw!r} was ignored.")
        return None
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        bounds = f"between {lo} and {hi}" if hi is not None else f"at least {lo}"
        errors.append(f"{name} must be {bounds}; {raw!r} was ignored.")
        return None
    return value


def parse(params: Any) -> Filters:
    """Read the search state from query parameters (a Starlette QueryParams or similar multi-dict)."""
    f = Filters()
    codes = {c for c, _ in carriers()}
    f.origin = params.get("origin", "") if params.get("origin", "") in ORIGINS else ""
    f.carriers = sorted({c for c in params.getlist("carrier") if c in codes})
    f.month_from = _int(params, "month_from", f.errors, 1, 12) or 1
    f.month_to = _int(params, "month_to", f.errors, 1, 12) or 12
    if f.month_from > f.month_to:
        f.errors.append(f"The month range is empty: {MONTHS[f.month_from - 1]} comes after {MONTHS[f.month_to - 1]}.")
    f.statuses = [s for s in STATUSES if s in params.getlist("status")]
    f.weekdays = [d for d in WEEKDAYS if d in params.getlist("weekday")]
    f.metric = params.get("metric") if params.get("metric") in METRICS else "arr_delay"
    f.dest_q = (params.get("dest_q") or "").strip()
    f.min_delay = _int(params, "min_delay", f.errors)
    f.group = params.get("group") if params.get("group") in GROUPS else "flight"
    f.min_flights = _int(params, "min_flights", f.errors, 1)
    f.sort = params.get("sort") or ""
    f.dir = params.get("dir") if params.get("dir") in ("asc", "desc") else ""
    f.page = _int(params, "page", f.errors, 1) or 1
    return f


def _where(f: Filters) -> tuple[str, dict[str, Any]]:
    clauses = ["f.month BETWEEN :month_from AND :month_to"]
    args: dict[str, Any] = {"month_from": f.month_from, "month_to": f.month_to}
    if f.origin:
        clauses.append("f.origin = :origin")
        args["origin"] = f.origin
    for name, values in (("carrier", f.carriers), ("status", f.statuses), ("weekday", f.weekdays)):
        if values:
            marks = ", ".join(f":{name}{i}" for i in range(len(values)))
            clauses.append(f"f.{name} IN ({marks})")
            args.update({f"{name}{i}": v for i, v in enumerate(values)})
    if f.dest_q:
        like = f.dest_q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        clauses.append("(f.dest = :dest_code OR f.dest_name LIKE :dest_like ESCAPE '\\')")
        args.update(dest_code=f.dest_q.upper(), dest_like=f"%{like}%")
    if f.min_delay is not None:
        clauses.append(f"f.{f.metric} >= :min_delay")
        args["min_delay"] = f.min_delay
    return " AND ".join(clauses), args


def columns(f: Filters) -> list[Column]:
    """The result columns of the current view."""
    if f.group == "flight":
        return [Column("date", "Date", "f.date"), Column("sched", "Sched. dep.", "f.sched_dep_time", sortable=False),
                Column("carrier", "Carrier", "f.carrier", link="carrier"),
                Column("flight", "Flight", "f.flight", True),
                Column("tailnum", "Tail number", "f.tailnum", link="plane"),
                Column("origin", "Origin", "f.origin", link="airport"),
                Column("dest", "Destination", "f.dest", link="airport"),
                Column("dep_delay", "Dep. delay (min)", "f.dep_delay", True),
                Column("arr_delay", "Arr. delay (min)", "f.arr_delay", True),
                Column("status", "Status", "f.status")]
    cols = [Column("key", _KEY_LABEL[f.group], "g.k", link=_LINK.get(f.group))]
    if f.group in _NAME:
        cols.append(Column("name", _NAME[f.group][0], "n"))
    avg = "Avg arr. delay (min)" if f.metric == "arr_delay" else "Avg dep. delay (min)"
    return cols + [Column("flights", "Flights", "g.flights", True), Column("delay", avg, "g.delay", True),
                   Column("cancelled", "Cancelled", "g.cancelled", True)]


def _order(f: Filters, cols: list[Column]) -> tuple[str, str, str]:
    """(sort key, direction, ORDER BY clause): missing values last, then a stable tie-break."""
    sortable = {c.key: c for c in cols if c.sortable}
    chosen = f.sort in sortable
    sort = f.sort if chosen else ("date" if f.group == "flight" else "flights")
    col = sortable[sort]
    direction = f.dir if chosen and f.dir else ("desc" if col.numeric else "asc")
    d = direction.upper()
    if f.group != "flight":
        tail = "g.k"
    elif sort == "date":
        tail = f"f.sched_dep_time {d}, f.id"
    else:
        tail = "f.date, f.sched_dep_time, f.id"
    return sort, direction, f"({col.sql} IS NULL), {col.sql} {d}, {tail}"


def _fmt_int(value: Any, csv: bool) -> str:
    if value is None:
        return "" if csv else "—"
    return str(value) if csv else f"{value:,}"


def _cells(f: Filters, row: Any, csv: bool) -> list[dict[str, Any]]:
    """Display cells (text and link target) of one result row."""
    dash = "" if csv else "—"
    if f.group == "flight":
        sched = f"{row['sched_dep_time'] // 100:02d}:{row['sched_dep_time'] % 100:02d}"
        tail = row["tailnum"]
        return [{"text": row["date"]}, {"text": sched},
                {"text": row["carrier"], "link": ("carrier", row["carrier"])}, {"text": str(row["flight"])},
                {"text": tail or dash, "link": ("plane", tail) if tail else None},
                {"text": row["origin"], "link": ("airport", row["origin"])},
                {"text": row["dest"], "link": ("airport", row["dest"])},
                {"text": dash if row["dep_delay"] is None else str(row["dep_delay"])},
                {"text": dash if row["arr_delay"] is None else str(row["arr_delay"])},
                {"text": STATUSES[row["status"]]}]
    k = row["k"]
    if f.group == "month":
        cells = [{"text": MONTHS[k - 1]}]
    else:
        cells = [{"text": k or "(none)", "link": (_LINK[f.group], k) if k else None}]
    if f.group in _NAME:
        cells.append({"text": row["n"] or dash})
    delay = dash if row["delay"] is None else f"{row['delay']:.1f}"
    return cells + [{"text": _fmt_int(row["flights"], csv)}, {"text": delay},
                    {"text": _fmt_int(row["cancelled"], csv)}]


def _sql(f: Filters, order: str) -> tuple[str, dict[str, Any]]:
    """(ordered rows SQL without LIMIT, arguments) for the current view."""
    where, args = _where(f)
    if f.group == "flight":
        return f"SELECT f.* FROM flights f WHERE {where} ORDER BY {order}", args
    having = ""
    if f.min_flights is not None:
        having = "HAVING COUNT(*) >= :min_flights"
        args["min_flights"] = f.min_flights
    inner = (f"SELECT f.{f.group} AS k, COUNT(*) AS flights, AVG(f.{f.metric}) AS delay, "
             f"SUM(f.status = 'cancelled') AS cancelled FROM flights f WHERE {where} GROUP BY f.{f.group} {having}")
    name = _NAME[f.group][1] if f.group in _NAME else "NULL"
    return f"SELECT g.k, {name} AS n, g.flights, g.delay, g.cancelled FROM ({inner}) g ORDER BY {order}", args


def search(f: Filters) -> Result:
    """One page of results for the filters (page clamped to the last page)."""
    cols = columns(f)
    sort, direction, order = _order(f, cols)
    if f.month_from > f.month_to:
        return Result(cols, [], 0, 0, 1, 1, sort, direction)
    rows_sql, args = _sql(f, order)
    if f.group == "flight":
        where, _ = _where(f)
        groups = flights = query(f"SELECT COUNT(*) FROM flights f WHERE {where}", args)[0][0]
    else:  # at most a few thousand groups: aggregate once, count and page in Python
        every = query(rows_sql, args)
        groups, flights = len(every), sum(r["flights"] for r in every)
    pages = max(1, -(-groups // PAGE_SIZE))
    page = min(f.page, pages)
    start = (page - 1) * PAGE_SIZE
    if f.group == "flight":
        rows = query(f"{rows_sql} LIMIT {PAGE_SIZE} OFFSET {start}", args)
    else:
        rows = every[start:start + PAGE_SIZE]
    return Result(cols, [_cells(f, r, False) for r in rows], groups, flights, page, pages, sort, direction)


def export_rows(f: Filters) -> tuple[list[str], list[list[str]]]:
    """Every row of the current (unpaginated) result, as CSV text cells with the table's headers."""
    cols = columns(f)
    if f.month_from > f.month_to:
        return [c.label for c in cols], []
    _, _, order = _order(f, cols)
    rows_sql, args = _sql(f, order)
    return [c.label for c in cols], [[c["text"] for c in _cells(f, r, True)] for r in query(rows_sql, args)]
