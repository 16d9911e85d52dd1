"""The papers site's Starlette app: home, the search results (GET, server-rendered), the advanced-search form that
builds a query, article pages with their tables, and the query-syntax help."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp

from rig.sites.pages import Pages, mount_base
from rig.sites.papers.data import FIRST_YEAR, LAST_YEAR, TYPES, by_id, fetch
from rig.sites.papers.query import SORTS, SearchError, parse_search, run_search, scope_params, with_clause
from rig.sites.querylang import canonical

_HERE = Path(__file__).parent
PAGES = Pages(_HERE / "templates")
RESULT_COLUMNS = ("Title", "Authors", "Journal", "Year", "Type", "Open access", "Cited by", "ID")


async def home(request: Request) -> Response:
    """The start page: what the archive holds and how to search it."""
    total, open_access = fetch("SELECT COUNT(*), SUM(open_access = 'y') FROM articles")[0]
    journals = [r[0] for r in fetch("SELECT DISTINCT journal FROM articles ORDER BY 1")]
    return PAGES.render(request, "home.html", total=total, open_access=open_access, journals=journals,
                        first=FIRST_YEAR, last=LAST_YEAR)


async def search(request: Request) -> Response:
    """GET /search?query=...&sort=...&page=...: one page of results, or the query's error."""
    qp = request.query_params
    query, sort = qp.get("query", ""), qp.get("sort", "")
    ctx: dict[str, Any] = {"query": query, "sorts": SORTS, "columns": RESULT_COLUMNS}
    try:
        s = parse_search(query, sort, qp.get("page", ""))
    except SearchError as exc:
        return PAGES.render(request, "search.html", status_code=400, error=str(exc), sort=sort or "relevance", **ctx)
    res = run_search(s)
    base = f"{mount_base(request)}/search?"

    def link(**over: Any) -> str:
        params = {"query": s.query, "sort": s.sort, "page": res.page, **over}
        return base + urlencode(params)

    ctx.update(sort=s.sort, results=res, read_as=canonical(s.tree), scope=scope_params(res.search) if s.tree else "",
               sort_links={key: link(sort=key, page=1) for key in SORTS},
               prev=link(page=res.page - 1) if res.page > 1 else None,
               next=link(page=res.page + 1) if res.page < res.pages else None,
               type_links=[(t, n, base + urlencode({"query": with_clause(s, f"PUB_TYPE:{t}"), "sort": s.sort}))
                           for t, n in res.types],
               access_links=[(a, n, base + urlencode({"query": with_clause(s, f"OPEN_ACCESS:{a}"), "sort": s.sort}))
                             for a, n in res.access])
    return PAGES.render(request, "search.html", **ctx)


async def advanced(request: Request) -> Response:
    """The advanced-search form: its fields build the query in the query box."""
    return PAGES.render(request, "advanced.html", types=TYPES, sorts=SORTS, first=FIRST_YEAR, last=LAST_YEAR)


async def help_page(request: Request) -> Response:
    """The query syntax."""
    return PAGES.render(request, "help.html", types=TYPES)


async def article(request: Request) -> Response:
    """One article: its record and abstract, and for an open-access article the full text with its tables."""
    a = by_id().get(request.path_params["id"])
    if a is None:
        return PAGES.not_found(request, f"article {request.path_params['id']}")
    return PAGES.render(request, "article.html", a=a)


def build_app() -> ASGIApp:
    """The papers site as a Starlette app (mounted at /papers by the registry)."""
    return PAGES.app([
        Route("/", home),
        Route("/search", search),
        Route("/advanced", advanced),
        Route("/help", help_page),
        Route("/article/{id}", article),
    ], static=_HERE / "static")
