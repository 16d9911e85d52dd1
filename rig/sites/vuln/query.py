"""VulnDB's searches as SQL: the search form's state, its batches ("load more" cursors), products per vendor, records.

`Search.scope()` is the search the rows were computed under, as URL parameters (what the results table says in
`data-scope`): empty filters left out, the score range only with the CVSS version it applies to.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from rig.sites.vuln.data import VENDORS, query

BATCH = 8
VERSIONS = ("4.0", "3.1", "2.0")
DATE_TYPES = {"published": "Publish date", "modified": "Last modified date"}
SORTS = {"published-desc": "Published, newest first", "published-asc": "Published, oldest first",
         "modified-desc": "Last modified, newest first", "score-desc": "Base score, highest first"}
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


class SearchError(ValueError):
    """A search the catalogue cannot run; the message says what to change."""


@dataclass(frozen=True)
class Search:
    """The search form's state, validated."""

    keyword: str = ""
    vendor: str = ""
    product: str = ""
    version: str = "3.1"
    score_min: float | None = None
    score_max: float | None = None
    date_type: str = "published"
    date_from: str = ""
    date_to: str = ""
    sort: str = "published-desc"

    def scope(self) -> str:
        """The applied search as URL parameters."""
        pairs = [("keyword", self.keyword), ("vendor", self.vendor), ("product", self.product),
                 ("cvss_version", self.version)]
        if self.score_min is not None or self.score_max is not None:
            lo, hi = 0.0 if self.score_min is None else self.score_min, 10.0 if self.score_max is None else self.score_max
            pairs.append(("score", f"{lo:.1f}-{hi:.1f}"))
        if self.date_from or self.date_to:
            pairs += [("date_type", self.date_type), ("window", f"{self.date_from}..{self.date_to}")]
        pairs.append(("sort", self.sort))
        return urlencode([(k, v) for k, v in pairs if v])


def _score(raw: Any, name: str) -> float | None:
    if raw in (None, ""):
        return None
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise SearchError(f"The {name} must be a number from 0 to 10.") from None
    if not 0 <= value <= 10:
        raise SearchError(f"The {name} must be a number from 0 to 10.")
    return value


def parse(state: dict[str, Any]) -> Search:
    """A search from the form's JSON state; SearchError naming the field that is wrong."""
    vendor, product = str(state.get("vendor") or ""), str(state.get("product") or "")
    if vendor and vendor not in VENDORS:
        raise SearchError(f"Unknown vendor {vendor!r}.")
    if product and (not vendor or product not in VENDORS[vendor]):
        raise SearchError(f"{product!r} is not a product of {vendor or 'the chosen vendor'}: choose the vendor first.")
    version = str(state.get("cvss_version") or "3.1")
    if version not in VERSIONS:
        raise SearchError(f"Unknown CVSS version {version!r}; choose one of {', '.join(VERSIONS)}.")
    lo, hi = _score(state.get("score_min"), "minimum score"), _score(state.get("score_max"), "maximum score")
    if lo is not None and hi is not None and lo > hi:
        raise SearchError("The minimum score is above the maximum score.")
    date_type = str(state.get("date_type") or "published")
    if date_type not in DATE_TYPES:
        raise SearchError(f"Unknown date type {date_type!r}.")
    dates = [str(state.get(k) or "") for k in ("date_from", "date_to")]
    for d in dates:
        if d and not _DATE.match(d):
            raise SearchError(f"Dates are YYYY-MM-DD, not {d!r}.")
    if all(dates) and dates[0] > dates[1]:
        raise SearchError("The start date is after the end date.")
    sort = str(state.get("sort") or "published-desc")
    if sort not in SORTS:
        raise SearchError(f"Unknown order {sort!r}.")
    return Search(str(state.get("keyword") or "").strip(), vendor, product, version, lo, hi, date_type, *dates, sort)


def _where(s: Search) -> tuple[str, list[Any]]:
    conds, params = [], [s.version]
    if s.keyword:
        conds.append("(c.description LIKE ? OR c.cve LIKE ?)")
        params += [f"%{s.keyword}%"] * 2
    if s.vendor:
        sub = "SELECT cve FROM configs WHERE vendor = ?" + (" AND product = ?" if s.product else "")
        conds.append(f"c.cve IN ({sub})")
        params += [s.vendor, s.product] if s.product else [s.vendor]
    if s.score_min is not None:
        conds.append("m.score >= ?")
        params.append(s.score_min)
    if s.score_max is not None:
        conds.append("m.score <= ?")
        params.append(s.score_max)
    column = "c.published" if s.date_type == "published" else "c.modified"
    if s.date_from:
        conds.append(f"{column} >= ?")
        params.append(s.date_from)
    if s.date_to:
        conds.append(f"{column} <= ?")
        params.append(s.date_to)
    return " AND ".join(conds) or "1", params


_ORDER = {"published-desc": "c.published DESC", "published-asc": "c.published ASC",
          "modified-desc": "c.modified DESC", "score-desc": "m.score IS NULL, m.score DESC"}


def cursor_for(offset: int) -> str:
    """The opaque cursor of the batch starting at `offset`."""
    return base64.urlsafe_b64encode(f"offset={offset}".encode()).decode().rstrip("=")


def offset_of(cursor: str | None) -> int:
    """The offset a cursor stands for (0 for none); SearchError for one this catalogue did not hand out."""
    if not cursor:
        return 0
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        name, value = text.split("=")
        if name != "offset" or not value.isdigit():
            raise ValueError
        return int(value)
    except ValueError:
        raise SearchError("The results cursor is not valid; run the search again.") from None


@dataclass
class Batch:
    """One batch of results and where the next one starts."""

    rows: list[dict[str, Any]]
    total: int
    offset: int
    next_cursor: str | None


def search(s: Search, offset: int = 0, limit: int = BATCH) -> Batch:
    """Rows [offset, offset + limit) of the search, with the vendor and product each row is listed under."""
    where, params = _where(s)
    base = (f"FROM cves c LEFT JOIN metrics m ON m.cve = c.cve AND m.version = ? WHERE {where}")
    total = query(f"SELECT COUNT(*) AS n {base}", params)[0]["n"]
    listed = ("(SELECT product FROM configs WHERE cve = c.cve AND vendor = ? " +
              ("AND product = ? " if s.product else "") + "ORDER BY rowid LIMIT 1)") if s.vendor else "c.product"
    extra = ([s.vendor, s.product] if s.product else [s.vendor]) if s.vendor else []
    rows = query(f"SELECT c.cve, c.vendor, {listed} AS listed, c.published, c.modified, c.description, m.score,"
                 f" m.severity {base} ORDER BY {_ORDER[s.sort]}, c.cve LIMIT {int(limit)} OFFSET {int(offset)}",
                 [*extra, *params])
    nxt = offset + len(rows)
    return Batch([dict(r) for r in rows], total, offset, cursor_for(nxt) if nxt < total else None)


def products(vendor: str) -> list[dict[str, Any]]:
    """A vendor's products with the number of records affecting each, by name."""
    counts = {r["product"]: r["n"] for r in query(
        "SELECT product, COUNT(DISTINCT cve) AS n FROM configs WHERE vendor = ? GROUP BY product", (vendor,))}
    return [{"name": p, "records": counts.get(p, 0)} for p in sorted(VENDORS[vendor])]


def record(cve: str) -> dict[str, Any] | None:
    """One CVE record with its metrics (newest CVSS version first) and affected configurations."""
    rows = query("SELECT * FROM cves WHERE cve = ?", (cve,))
    if not rows:
        return None
    metrics = query("SELECT version, score, severity, vector FROM metrics WHERE cve = ? ORDER BY version DESC", (cve,))
    configs = query("SELECT vendor, product, start_incl, end_excl, end_incl FROM configs WHERE cve = ? ORDER BY rowid",
                    (cve,))
    return {**dict(rows[0]), "metrics": [dict(m) for m in metrics], "configs": [dict(c) for c in configs]}
