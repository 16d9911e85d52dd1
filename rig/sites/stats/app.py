"""The stats portal's Starlette app: home, explorer, tree and results APIs, country pages, CSV export."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from urllib.parse import quote, urlencode

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from rig.sites.stats import queries
from rig.sites.stats.data import INDICATORS, WORLD, YEARS, continent_of, continents
from rig.sites.stats.formatting import cell

_HERE = Path(__file__).parent
templates = Jinja2Templates(directory=str(_HERE / "templates"))
templates.env.filters["urlpart"] = lambda s: quote(str(s), safe="")


def _ctx(request: Request, **extra: object) -> dict[str, object]:
    return {"root": request.scope.get("root_path", ""), "indicators": INDICATORS, "years": YEARS, **extra}


async def home(request: Request) -> HTMLResponse:
    """The portal's landing page: what the data are and where to browse them."""
    return templates.TemplateResponse(request, "home.html", _ctx(request, continents=continents()))


def _year(text: str | None, default: int) -> int:
    return int(text) if text and text.isdigit() and int(text) in YEARS else default


async def explore(request: Request) -> HTMLResponse:
    """The data explorer: geography tree, indicator and year window, and three result tabs."""
    q = request.query_params
    state = {
        "indicator": q.get("indicator") if q.get("indicator") in INDICATORS else "lifeExp",
        "year_from": _year(q.get("year_from"), YEARS[0]),
        "year_to": _year(q.get("year_to"), YEARS[-1]),
    }
    return templates.TemplateResponse(request, "explore.html", _ctx(request, state=state, world=WORLD))


async def api_children(request: Request) -> JSONResponse:
    """JSON: the children of one tree node (`?node=World`, `?node=Asia`)."""
    node = request.query_params.get("node", WORLD)
    if not queries.valid_node(node):
        return JSONResponse({"error": f"unknown node {node!r}"}, status_code=404)
    return JSONResponse({"node": node, "children": queries.children(node)})


def _view_args(request: Request) -> tuple[queries.View, str | None, bool, int]:
    q = request.query_params
    view = q.get("view") or "table"
    if view not in queries.VIEWS:
        raise queries.ScopeError(f"unknown view {view!r}")
    page = int(q["page"]) if q.get("page", "").isdigit() else 1
    return view, q.get("sort") or None, q.get("dir") == "desc", page  # type: ignore[return-value]


def _export_href(root: str, scope: queries.Scope, result: queries.ViewResult) -> str:
    params = {"node": scope.node, "indicator": scope.indicator, "year_from": scope.year_from,
              "year_to": scope.year_to, "view": result.view}
    if result.sort:
        params.update(sort=result.sort, dir="desc" if result.desc else "asc")
    return f"{root}/export.csv?{urlencode(params)}"


async def api_results(request: Request) -> HTMLResponse:
    """HTML fragment: one page of the Table, Summary or Aggregate view of the current scope."""
    root = request.scope.get("root_path", "")
    try:
        scope = queries.parse_scope(request.query_params)
        view, sort, desc, page = _view_args(request)
        result = queries.run_view(view, scope, sort, desc, page)
    except queries.ScopeError as exc:
        return templates.TemplateResponse(request, "error_fragment.html", _ctx(request, message=str(exc)),
                                          status_code=400)
    rows = [[(c, cell(c.kind, scope.indicator, v)) for c, v in zip(result.columns, row)] for row in result.rows]
    return templates.TemplateResponse(request, "results.html", _ctx(
        request, scope=scope, result=result, rows=rows, unit=INDICATORS[scope.indicator],
        export_href=_export_href(root, scope, result)))


async def country(request: Request) -> HTMLResponse:
    """A country's page: every year of every indicator."""
    name = request.path_params["name"]
    continent = continent_of(name)
    if continent is None:
        return templates.TemplateResponse(request, "not_found.html", _ctx(request, what=f"country {name!r}"),
                                          status_code=404)
    rows = [(str(y), cell("value", "lifeExp", le), cell("value", "pop", p), cell("value", "gdpPercap", g))
            for y, le, p, g in queries.country_series(name)]
    return templates.TemplateResponse(request, "country.html", _ctx(request, name=name, continent=continent, rows=rows))


async def export_csv(request: Request) -> Response:
    """CSV of every row of the current view of the current scope (all pages)."""
    try:
        scope = queries.parse_scope(request.query_params)
        view, sort, desc, _ = _view_args(request)
        result = queries.run_view(view, scope, sort, desc, page=None)
    except queries.ScopeError as exc:
        return Response(f"{exc}\n", status_code=400, media_type="text/plain")
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([c.label for c in result.columns])
    for row in result.rows:
        writer.writerow([cell(c.kind, scope.indicator, v, csv=True) for c, v in zip(result.columns, row)])
    name = f"{scope.label}-{scope.indicator}-{scope.year_from}-{scope.year_to}-{view}.csv".replace(" ", "_")
    return Response(buf.getvalue(), media_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition": f"attachment; filename=\"{quote(name, safe=',-_.')}\""})


def build_app() -> Starlette:
    """The portal as an ASGI app, to be mounted at /stats."""
    return Starlette(routes=[
        Route("/", home),
        Route("/explore", explore),
        Route("/api/children", api_children),
        Route("/api/results", api_results),
        Route("/country/{name}", country),
        Route("/export.csv", export_csv),
        Mount("/static", StaticFiles(directory=str(_HERE / "static")), name="static"),
    ])
