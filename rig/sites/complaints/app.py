"""The complaints site's Starlette app: home, the search page (driven by its script), the search API (JSON, or CSV
of the current view), the sub-product lookup, complaint pages and the search-syntax help."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp

from rig.sites.complaints.data import COMPANIES, FIRST_DAY, LAST_DAY, PRODUCTS, STATES, fetch
from rig.sites.complaints.query import (
    CSV_LIST_COLUMNS,
    INTERVALS,
    LIST_COLUMNS,
    SIZES,
    SORTS,
    TREND_COLUMNS,
    TREND_ORDERS,
    Query,
    QueryError,
    facets,
    list_page,
    parse_query,
    trend_rows,
)
from rig.sites.pages import Pages

_HERE = Path(__file__).parent
PAGES = Pages(_HERE / "templates")
_DETAIL_FIELDS = ("date_received", "product", "sub_product", "issue", "company", "state", "submitted_via",
                  "company_response", "timely", "narrative")


async def home(request: Request) -> Response:
    """The start page: what the register holds, its products and sub-products."""
    span = fetch("SELECT COUNT(*), SUM(narrative != '') FROM complaints")[0]
    return PAGES.render(request, "home.html", products=PRODUCTS, total=span[0], narratives=span[1],
                        first=FIRST_DAY.isoformat(), last=LAST_DAY.isoformat())


async def search(request: Request) -> Response:
    """The search page: an empty form; its script fetches the results and writes the query into the URL."""
    return PAGES.render(request, "search.html", products=sorted(PRODUCTS), companies=sorted(COMPANIES),
                        states=sorted(STATES), sorts=SORTS, sizes=SIZES, intervals=INTERVALS, trend_orders=TREND_ORDERS,
                        first=FIRST_DAY.isoformat(), last=LAST_DAY.isoformat(), list_columns=LIST_COLUMNS,
                        trend_columns=TREND_COLUMNS)


async def help_page(request: Request) -> Response:
    """How the search term is read."""
    return PAGES.render(request, "help.html")


async def detail(request: Request) -> Response:
    """One complaint with every field and its narrative."""
    try:
        ident = int(request.path_params["id"])
    except ValueError:
        return PAGES.not_found(request, f"complaint {request.path_params['id']}")
    row = fetch(f"SELECT {', '.join(_DETAIL_FIELDS)} FROM complaints WHERE id = ?", [ident])
    if not row:
        return PAGES.not_found(request, f"complaint {ident}")
    return PAGES.render(request, "detail.html", id=ident, c=dict(zip(_DETAIL_FIELDS, row[0])))


async def subproducts(request: Request) -> JSONResponse:
    """GET /api/subproducts?product=...: the sub-products of one product, for the search form's second select."""
    product = request.query_params.get("product", "")
    if product not in PRODUCTS:
        return JSONResponse({"error": f"Unknown product {product!r}."}, status_code=400)
    return JSONResponse({"product": product, "sub_products": list(PRODUCTS[product]["sub"])})


async def api_search(request: Request) -> Response:
    """GET /api/search?...: the results of one query in its view (tab) as JSON, or with `format=csv` the whole
    current view as CSV: every complaint of the list (all pages), or every period of the trend table."""
    params = dict(request.query_params)
    try:
        q = parse_query(params)
    except QueryError as exc:
        return JSONResponse({"error": str(exc)}, status_code=400)
    if params.get("format") == "csv":
        return _csv(q)
    body: dict[str, Any] = {"params": "", "interpreted": q.interpreted, "tab": q.tab, "facets": facets(q)}
    if q.tab == "list":
        page = list_page(q)
        q = page.applied
        body.update(total=page.total, list={"columns": LIST_COLUMNS, "rows": page.rows, "page": page.page,
                                           "pages": page.pages, "size": q.size, "sort": q.sort})
    else:
        rows = trend_rows(q)
        body.update(total=sum(int(r[3]) for r in rows), trends={"columns": TREND_COLUMNS, "rows": rows,
                                                                "interval": q.interval, "trend_order": q.trend_order})
    body["params"] = q.params()
    return JSONResponse(body)


def _csv(q: Query) -> Response:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    if q.tab == "list":
        writer.writerow(CSV_LIST_COLUMNS)
        writer.writerows(list_page(q, everything=True).rows)
    else:
        writer.writerow(TREND_COLUMNS)
        writer.writerows(trend_rows(q))
    headers = {"Content-Disposition": f'attachment; filename="complaints-{q.tab}.csv"'}
    return Response(buf.getvalue(), media_type="text/csv; charset=utf-8", headers=headers)


def build_app() -> ASGIApp:
    """The complaints site as a Starlette app (mounted at /complaints by the registry)."""
    return PAGES.app([
        Route("/", home),
        Route("/search", search),
        Route("/help", help_page),
        Route("/detail/{id}", detail),
        Route("/api/search", api_search),
        Route("/api/subproducts", subproducts),
    ], static=_HERE / "static")
