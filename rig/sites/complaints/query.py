"""The complaint search API's query: parameters validated into a `Query`, the search term compiled to SQL over the
FTS5 index, and the three answers of one query (the list page, the trend table by period, the facet counts)."""

from __future__ import annotations

import calendar
import math
from dataclasses import dataclass, replace
from datetime import date
from typing import Any
from urllib.parse import urlencode

from rig.sites.complaints.data import COMPANIES, FIRST_DAY, LAST_DAY, PRODUCTS, STATES, fetch
from rig.sites.querylang import Leaf, Node, QuerySyntaxError, canonical, fts_phrase, leaves, parse, to_sql

TABS = ("list", "trends")
SORTS = {"created_date_desc": "Newest first", "created_date_asc": "Oldest first", "relevance_desc": "Relevance"}
SIZES = (10, 25, 50)
INTERVALS = ("month", "quarter", "year")
TREND_ORDERS = {"period": "Chronological", "count": "Most complaints first"}
#: The search term's field qualifiers (any case) and the index column each searches; unqualified terms search the
#: narrative, as the register's search does.
FIELDS = {"narrative": "narrative", "complaint_what_happened": "narrative", "issue": "issue", "company": "company"}
LIST_COLUMNS = ("Complaint ID", "Date received", "Product", "Sub-product", "Issue", "Company", "State", "Narrative")
TREND_COLUMNS = ("Period", "From", "To", "Complaints")
CSV_LIST_COLUMNS = (*LIST_COLUMNS[:-1], "Submitted via", "Company response", "Timely response",
                    "Consumer complaint narrative")
FACET_LIMIT = 10


class QueryError(ValueError):
    """The query cannot be answered; the message tells the user what to change."""


@dataclass(frozen=True)
class Query:
    """A validated query: the filters (the cohort) and the view (tab, order, page or interval)."""

    search_term: str = ""
    product: str = ""
    sub_product: str = ""
    company: str = ""
    state: str = ""
    date_received_min: str = ""
    date_received_max: str = ""
    has_narrative: bool = False
    tab: str = "list"
    sort: str = "created_date_desc"
    page: int = 1
    size: int = 25
    interval: str = "month"
    trend_order: str = "period"
    tree: Node | None = None

    @property
    def interpreted(self) -> str:
        """The search term as the register reads it (normal form)."""
        return canonical(self.tree)

    def params(self) -> str:
        """The query as URL parameters (empty filters left out, the view's own settings in): what the search page's
        URL shows once the results of this query are on it."""
        pairs = [("search_term", self.search_term), ("product", self.product), ("sub_product", self.sub_product),
                 ("company", self.company), ("state", self.state), ("date_received_min", self.date_received_min),
                 ("date_received_max", self.date_received_max),
                 ("has_narrative", "true" if self.has_narrative else ""), ("tab", self.tab)]
        if self.tab == "list":
            pairs += [("sort", self.sort), ("page", str(self.page)), ("size", str(self.size))]
        else:
            pairs += [("interval", self.interval), ("trend_order", self.trend_order)]
        return urlencode([(k, v) for k, v in pairs if v != ""])


def _date(raw: str, name: str) -> str:
    if not raw:
        return ""
    try:
        return date.fromisoformat(raw).isoformat()
    except ValueError:
        raise QueryError(f"{name} must be a date like 2022-01-31, got {raw!r}.") from None


def _choice(raw: str, allowed: Any, name: str, default: str) -> str:
    value = raw or default
    if value not in allowed:
        raise QueryError(f"{name} must be one of {', '.join(allowed)}, got {value!r}.")
    return value


def parse_query(params: dict[str, str]) -> Query:
    """Validate the API's parameters; raise QueryError with a message for the user."""
    get = lambda name: (params.get(name) or "").strip()  # noqa: E731
    product, sub = get("product"), get("sub_product")
    if product and product not in PRODUCTS:
        raise QueryError(f"Unknown product {product!r}.")
    if sub and not product:
        raise QueryError("Choose a product before a sub-product.")
    if sub and sub not in PRODUCTS[product]["sub"]:
        raise QueryError(f"{sub!r} is not a sub-product of {product}.")
    company, state = get("company"), get("state")
    if company and company not in COMPANIES:
        raise QueryError(f"Unknown company {company!r}: choose one from the list.")
    if state and state not in STATES:
        raise QueryError(f"Unknown state {state!r}.")
    first = _date(get("date_received_min"), "Date received from")
    last = _date(get("date_received_max"), "Date received to")
    if first and last and first > last:
        raise QueryError("The date range is empty: 'from' is after 'to'.")
    term = " ".join(get("search_term").split())
    try:
        tree = parse(term, FIELDS)
    except QuerySyntaxError as exc:
        raise QueryError(f"Search term: {exc}.") from None
    if any(leaf.kind == "range" for leaf, _ in leaves(tree)):
        raise QueryError("Search term: ranges ([a TO b]) are not supported; use the date filters.")
    try:
        page, size = int(get("page") or 1), int(get("size") or SIZES[1])
    except ValueError:
        raise QueryError("page and size must be whole numbers.") from None
    if size not in SIZES:
        raise QueryError(f"size must be one of {', '.join(map(str, SIZES))}.")
    return Query(
        search_term=term, product=product, sub_product=sub, company=company, state=state, date_received_min=first,
        date_received_max=last, has_narrative=get("has_narrative") in ("true", "on", "1", "yes"),
        tab=_choice(get("tab"), TABS, "tab", "list"), sort=_choice(get("sort"), SORTS, "sort", "created_date_desc"),
        page=max(1, page), size=size, interval=_choice(get("interval"), INTERVALS, "interval", "month"),
        trend_order=_choice(get("trend_order"), TREND_ORDERS, "trend_order", "period"), tree=tree,
    )


def _clause_sql(leaf: Leaf) -> tuple[str, list[object]]:
    """One clause of the search term as a lookup of `c.id` in the FTS5 index."""
    return ("c.id IN (SELECT rowid FROM complaints_fts WHERE complaints_fts MATCH ?)",
            [f"{FIELDS[leaf.field or 'narrative']} : {fts_phrase(leaf)}"])


def _where(q: Query) -> tuple[str, list[object]]:
    where, params = [], []
    for column in ("product", "sub_product", "company", "state"):
        if getattr(q, column):
            where.append(f"c.{column} = ?")
            params.append(getattr(q, column))
    if q.date_received_min:
        where.append("c.date_received >= ?")
        params.append(q.date_received_min)
    if q.date_received_max:
        where.append("c.date_received <= ?")
        params.append(q.date_received_max)
    if q.has_narrative:
        where.append("c.narrative != ''")
    if q.tree is not None:
        sql, ps = to_sql(q.tree, _clause_sql)
        where.append(sql)
        params += ps
    return (" WHERE " + " AND ".join(where)) if where else "", params


def _relevance(q: Query) -> tuple[str, list[object]]:
    """How many of the search term's (not negated) clauses a complaint matches (a term of NOT only: none)."""
    hits = [_clause_sql(leaf) for leaf, negated in leaves(q.tree) if not negated] or [("0 + 0", [])]
    return " + ".join(f"({sql})" for sql, _ in hits), [p for _, ps in hits for p in ps]


@dataclass
class ListPage:
    """One page of the complaint list."""

    rows: list[list[str]]
    total: int
    page: int
    pages: int
    applied: Query


def list_page(q: Query, everything: bool = False) -> ListPage:
    """The complaints of the query on its page (every one with `everything`), in its order."""
    where, params = _where(q)
    total = fetch(f"SELECT COUNT(*) FROM complaints c{where}", params)[0][0]
    pages = max(1, math.ceil(total / q.size))
    q = replace(q, page=min(q.page, pages))
    if q.sort == "relevance_desc" and q.tree is not None:
        score, sparams = _relevance(q)
        order, params = f"({score}) DESC, c.date_received DESC, c.id DESC", params + sparams
    else:
        order = "c.date_received, c.id" if q.sort == "created_date_asc" else "c.date_received DESC, c.id DESC"
    limit = "" if everything else f" LIMIT {q.size} OFFSET {(q.page - 1) * q.size}"
    columns = ("c.id, c.date_received, c.product, c.sub_product, c.issue, c.company, c.state, "
               + ("c.submitted_via, c.company_response, c.timely, c.narrative" if everything else "c.narrative != ''"))
    raw = fetch(f"SELECT {columns} FROM complaints c{where} ORDER BY {order}{limit}", params)
    if everything:
        rows = [[str(v) for v in r] for r in raw]
    else:
        rows = [[str(v) for v in r[:-1]] + ["Yes" if r[-1] else "No"] for r in raw]
    return ListPage(rows, total, q.page, pages, q)


def _buckets(q: Query) -> list[tuple[str, str, str]]:
    """Every period of the query's date range (the register's whole span when open): label, from, to."""
    first = date.fromisoformat(q.date_received_min) if q.date_received_min else FIRST_DAY
    last = date.fromisoformat(q.date_received_max) if q.date_received_max else LAST_DAY
    first, last = max(first, FIRST_DAY), min(last, LAST_DAY)
    out = []
    months = {"month": 1, "quarter": 3, "year": 12}[q.interval]
    y, m = first.year, (first.month - 1) // months * months + 1
    while date(y, m, 1) <= last:
        end_m = m + months - 1
        start, end = date(y, m, 1), date(y, end_m, calendar.monthrange(y, end_m)[1])
        label = {"month": f"{y}-{m:02d}", "quarter": f"{y}-Q{(m + 2) // 3}", "year": str(y)}[q.interval]
        out.append((label, max(start, first).isoformat(), min(end, last).isoformat()))
        y, m = (y + 1, 1) if end_m == 12 else (y, end_m + 1)
    return out


_PERIOD_SQL = {
    "month": "substr(c.date_received, 1, 7)",
    "quarter": "substr(c.date_received, 1, 4) || '-Q' || ((CAST(substr(c.date_received, 6, 2) AS INTEGER) + 2) / 3)",
    "year": "substr(c.date_received, 1, 4)",
}


def trend_rows(q: Query) -> list[list[str]]:
    """The number of complaints per period of the query's interval, every period of its range, in its order."""
    where, params = _where(q)
    counts = dict(fetch(f"SELECT {_PERIOD_SQL[q.interval]}, COUNT(*) FROM complaints c{where} GROUP BY 1", params))
    rows = [[label, start, end, str(counts.get(label, 0))] for label, start, end in _buckets(q)]
    if q.trend_order == "count":
        rows.sort(key=lambda r: (-int(r[3]), r[0]))
    return rows


def facets(q: Query) -> dict[str, list[list[str]]]:
    """The companies and states with most complaints in the query's cohort (at most FACET_LIMIT each)."""
    where, params = _where(q)
    out = {}
    for column in ("company", "state"):
        raw = fetch(f"SELECT c.{column}, COUNT(*) AS n FROM complaints c{where} GROUP BY 1 ORDER BY n DESC, 1 "
                    f"LIMIT {FACET_LIMIT}", params)
        out[column] = [[str(name), str(n)] for name, n in raw]
    return out
