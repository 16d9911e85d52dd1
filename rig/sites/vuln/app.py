"""VulnDB's pages: the search page (its results arrive by XHR POST, in batches), the product list per vendor,
CVE records and the vendor index."""

from __future__ import annotations

import json
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from rig.sites.pages import Pages
from rig.sites.vuln import query as q
from rig.sites.vuln.data import VENDORS

_HERE = Path(__file__).parent
PAGES = Pages(_HERE / "templates")


def home(request: Request) -> HTMLResponse:
    """The catalogue's start page: what it holds and the vendors."""
    return PAGES.render(request, "home.html", vendors=list(VENDORS))


def search_page(request: Request) -> HTMLResponse:
    """The search form; results arrive by XHR POST to /api/search when it is submitted."""
    return PAGES.render(request, "search.html", vendors=list(VENDORS), versions=q.VERSIONS, date_types=q.DATE_TYPES,
                   sorts=q.SORTS)


def api_products(request: Request) -> JSONResponse:
    """JSON: the products of one vendor (`?vendor=`), for the product picker."""
    vendor = request.query_params.get("vendor", "")
    if vendor not in VENDORS:
        return JSONResponse({"error": f"unknown vendor {vendor!r}"}, status_code=404)
    return JSONResponse({"vendor": vendor, "products": q.products(vendor)})


async def api_search(request: Request) -> JSONResponse:
    """POST /api/search: one batch of records for the search in the JSON body (`cursor`: which batch), and `scope`,
    the search the rows were computed under, as URL parameters."""
    try:
        state = json.loads(await request.body() or b"{}")
        if not isinstance(state, dict):
            raise q.SearchError("The request body must be a JSON object.")
        search = q.parse(state)
        batch = q.search(search, q.offset_of(state.get("cursor")))
    except (q.SearchError, ValueError) as exc:
        msg = str(exc) if isinstance(exc, q.SearchError) else "The request body is not a valid search."
        return JSONResponse({"error": msg}, status_code=400)
    return JSONResponse({
        "rows": [{"cve": r["cve"], "vendor": r["vendor"] if not search.vendor else search.vendor,
                  "product": r["listed"], "published": r["published"], "modified": r["modified"],
                  "score": "" if r["score"] is None else f"{r['score']:.1f}", "severity": r["severity"] or "",
                  "summary": r["description"]} for r in batch.rows],
        "total": batch.total, "offset": batch.offset, "next_cursor": batch.next_cursor,
        "version": search.version, "scope": search.scope(),
    })


def cve_page(request: Request) -> HTMLResponse:
    """A CVE record: description, dates, metrics per CVSS version, weakness, affected version ranges."""
    rec = q.record(request.path_params["cve"].upper())
    if rec is None:
        return PAGES.not_found(request, f"record {request.path_params['cve']}")
    return PAGES.render(request, "cve.html", r=rec)


def vendors_page(request: Request) -> HTMLResponse:
    """Every vendor with its products and how many records affect each."""
    return PAGES.render(request, "vendors.html", vendors=[(v, q.products(v)) for v in VENDORS])


async def not_found(request: Request, exc: Exception) -> Response:
    """Any other path: a plain 404 inside the site's layout."""
    return PAGES.not_found(request, f"page {request.url.path}")


def build_app() -> Starlette:
    """VulnDB as an ASGI app (mounted at /vuln by the registry)."""
    return Starlette(routes=[
        Route("/", home), Route("/search", search_page), Route("/vendors", vendors_page),
        Route("/api/products", api_products), Route("/api/search", api_search, methods=["POST"]),
        Route("/cve/{cve}", cve_page),
        Mount("/static", StaticFiles(directory=str(_HERE / "static")), name="static"),
    ], exception_handlers={404: not_found})
