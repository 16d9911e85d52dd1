"""The eco site's Starlette app: home, dataset pages, the query browser, its JSON API and the CSV export."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import jinja2
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from rig.sites.eco.data import DATASETS, SOURCES, WEATHER_TYPES, fetch
from rig.sites.eco.query import (
    AGGS,
    LIMITS,
    QueryError,
    parse_query,
    run_query,
    scope_params,
)

_HERE = Path(__file__).parent
_TEMPLATES = Jinja2Templates(
    env=jinja2.Environment(loader=jinja2.FileSystemLoader(_HERE / "templates"), autoescape=True)
)
SORT_FIELDS = (
    ("period", "Date / period"), ("count", "Days or hours counted"), ("weather", "Weather type"),
    ("source", "Source"), ("precipitation", "Precipitation"), ("temp_max", "Max temperature"),
    ("temp_min", "Min temperature"), ("temp_mean", "Mean temperature"), ("wind", "Wind"),
    ("net_generation", "Net generation"),
)


def _render(request: Request, name: str, status: int = 200, **context: Any) -> Response:
    ctx = {"root": request.scope.get("root_path", ""), **context}
    return _TEMPLATES.TemplateResponse(request, name, ctx, status_code=status)


def _period(dataset_id: str) -> tuple[str, str, int]:
    kind = DATASETS[dataset_id].kind
    if kind == "weather":
        sql, params = "SELECT MIN(date), MAX(date), COUNT(*) FROM weather", []
    elif kind == "temps":
        sql, params = "SELECT MIN(ts), MAX(ts), COUNT(*) FROM temps WHERE station = ?", [dataset_id]
    else:
        sql, params = "SELECT MIN(year), MAX(year), COUNT(*) FROM generation", []
    first, last, n = fetch(sql, params)[0]
    return str(first), str(last), int(n)


async def home(request: Request) -> Response:
    """The site's home: what the datasets are and where to query them."""
    return _render(request, "home.html", datasets=[(d, _period(d.id)) for d in DATASETS.values()])


async def dataset_page(request: Request) -> Response:
    """A dataset (station) detail page: units, period of record, source."""
    ds = DATASETS.get(request.path_params["id"])
    if ds is None:
        raise HTTPException(404, "No such dataset")
    return _render(request, "dataset.html", ds=ds, period=_period(ds.id))


async def browse(request: Request) -> Response:
    """The query browser: an empty form; results arrive by POST from its script."""
    return _render(request, "browse.html", datasets=list(DATASETS.values()), weather_types=WEATHER_TYPES,
                   sources=SOURCES, aggs=AGGS, limits=LIMITS, sort_fields=SORT_FIELDS)


async def api_query(request: Request) -> JSONResponse:
    """POST /api/query: one batch of rows for the JSON query state (with offset and limit), and `scope`: the query
    the rows were computed under, as URL parameters (filters that do not apply left out, the sort actually used)."""
    try:
        state = json.loads(await request.body() or b"{}")
        if not isinstance(state, dict):
            raise QueryError("The request body must be a JSON object.")
        offset = max(0, int(state.get("offset") or 0))
        limit = min(max(int(state.get("limit") or LIMITS[0]), 1), max(LIMITS))
        result = run_query(parse_query(state), offset, limit)
    except (QueryError, ValueError, TypeError) as exc:
        msg = str(exc) if isinstance(exc, QueryError) else "The request body is not a valid query."
        return JSONResponse({"error": msg}, status_code=400)
    return JSONResponse({
        "columns": [{"key": c.key, "label": c.label} for c in result.columns],
        "rows": result.rows, "total": result.total, "offset": offset, "limit": limit,
        "notes": result.notes, "sort": result.sort, "dir": result.dir, "scope": scope_params(result.applied),
    })


async def export_csv(request: Request) -> Response:
    """GET /export.csv?…: every row of the query scope given by the URL parameters, as CSV."""
    qp = request.query_params
    state: dict[str, Any] = {k: qp.get(k) for k in qp.keys()}
    state["weather"], state["source"] = qp.getlist("weather"), qp.getlist("source")
    try:
        result = run_query(parse_query(state))
    except QueryError as exc:
        return Response(str(exc) + "\n", status_code=400, media_type="text/plain")
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([c.label for c in result.columns])
    writer.writerows(result.rows)
    headers = {"Content-Disposition": f'attachment; filename="{state["dataset"]}-{state.get("agg") or "daily"}.csv"'}
    return Response(buf.getvalue(), media_type="text/csv; charset=utf-8", headers=headers)


async def not_found(request: Request, exc: Exception) -> Response:
    """A plain 404 page inside the site's layout."""
    return _render(request, "404.html", status=404, message=getattr(exc, "detail", "Not found"))


def build_app() -> Starlette:
    """The eco site as a Starlette app (mounted at /eco by the registry)."""
    return Starlette(
        routes=[
            Route("/", home),
            Route("/browse", browse),
            Route("/dataset/{id}", dataset_page),
            Route("/api/query", api_query, methods=["POST"]),
            Route("/export.csv", export_csv),
            Mount("/static", StaticFiles(directory=_HERE / "static"), name="static"),
        ],
        exception_handlers={404: not_found},
    )
