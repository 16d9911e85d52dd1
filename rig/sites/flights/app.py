"""The flights site's pages: home, the faceted search with CSV export, and airport/plane/carrier pages."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route
from starlette.templating import Jinja2Templates

from rig.sites.flights import query as q
from rig.sites.flights.data import MONTHS, ORIGINS, STATUSES, WEEKDAYS, query

_templates = Jinja2Templates(directory=str(Path(__file__).parent / "templates"))


def _base(request: Request) -> str:
    return request.scope.get("root_path", "").rstrip("/")


def _render(request: Request, name: str, status_code: int = 200, **context: Any) -> HTMLResponse:
    base = _base(request)
    context.update(base=base, link=lambda kind, ident: f"{base}/{kind}/{quote(str(ident), safe='')}")
    return _templates.TemplateResponse(request, name, context, status_code=status_code)


def _qs(request: Request, **overrides: str | int | None) -> str:
    """The current query string with some parameters replaced (None drops one)."""
    items = [(k, v) for k, v in request.query_params.multi_items() if k not in overrides]
    items += [(k, str(v)) for k, v in overrides.items() if v is not None]
    return urlencode(items)


def _pagination(request: Request, page: int, pages: int) -> list[dict[str, Any]]:
    """Page links: first, last and a window around the current page, with gaps marked."""
    base = f"{_base(request)}/search?"
    shown = sorted({1, pages, *range(max(1, page - 2), min(pages, page + 2) + 1)})
    items: list[dict[str, Any]] = []
    for n in shown:
        if items and n != items[-1]["page"] + 1:
            items.append({"page": items[-1]["page"], "gap": True})
        items.append({"page": n, "href": base + _qs(request, page=n), "current": n == page})
    return items


def _origin_names() -> list[tuple[str, str]]:
    return [(r["faa"], r["name"]) for r in query("SELECT faa, name FROM airports WHERE faa IN ('EWR', 'JFK', 'LGA') "
                                                 "ORDER BY faa")]


def home(request: Request) -> HTMLResponse:
    """The start page: what the data is, the three origin airports and the carriers."""
    return _render(request, "home.html", origins=_origin_names(), carriers=q.carriers())


def _headers(request: Request, result: q.Result) -> list[dict[str, Any]]:
    """Column headers: label, sort link (toggling direction) and aria-sort on the sorted one."""
    base = f"{_base(request)}/search?"
    aria = {"asc": "ascending", "desc": "descending"}
    return [{"label": c.label, "numeric": c.numeric,
             "href": base + _qs(request, sort=c.key, dir=c.next_dir(result.sort, result.dir), page=None)
             if c.sortable else None,
             "aria_sort": aria[result.dir] if c.key == result.sort else None} for c in result.columns]


def search(request: Request) -> HTMLResponse:
    """The faceted search form; results only once a query has been submitted."""
    f = q.parse(request.query_params)
    ctx: dict[str, Any] = {"f": f, "searched": bool(request.query_params)}
    if ctx["searched"]:
        result = q.search(f)
        base = f"{_base(request)}/search?"
        ctx.update(result=result, count_text=result.count_text(f.group), headers=_headers(request, result),
                   pagination=_pagination(request, result.page, result.pages) if result.pages > 1 else [],
                   prev_href=base + _qs(request, page=result.page - 1) if result.page > 1 else None,
                   next_href=base + _qs(request, page=result.page + 1) if result.page < result.pages else None,
                   export_href=f"{_base(request)}/export.csv?{_qs(request, page=None)}")
    return _render(request, "search.html", origins=ORIGINS, origin_names=dict(_origin_names()), carriers=q.carriers(),
                   months=MONTHS, statuses=STATUSES, weekdays=WEEKDAYS, metrics=q.METRICS, groups=q.GROUPS, **ctx)


def export_csv(request: Request) -> Response:
    """The current search's whole result (every page) as CSV, in the table's order and columns."""
    headers, rows = q.export_rows(q.parse(request.query_params))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(headers)
    writer.writerows(rows)
    return Response(out.getvalue(), media_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition": 'attachment; filename="flights-export.csv"'})


def _not_found(request: Request, what: str) -> HTMLResponse:
    return _render(request, "not_found.html", status_code=404, what=what)


def airport(request: Request) -> HTMLResponse:
    """An airport's facts and its 2013 traffic to or from New York."""
    faa = request.path_params["faa"].upper()
    rows = query("SELECT * FROM airports WHERE faa = ?", (faa,))
    counts = query("SELECT SUM(origin = :faa) AS departures, SUM(dest = :faa) AS arrivals FROM flights",
                   {"faa": faa})[0]
    if not rows and not (counts["departures"] or counts["arrivals"]):
        return _not_found(request, f"airport {faa}")
    return _render(request, "airport.html", faa=faa, airport=rows[0] if rows else None,
                   departures=counts["departures"] or 0, arrivals=counts["arrivals"] or 0,
                   search_qs=urlencode({"dest_q": faa, "group": "carrier"}))


def plane(request: Request) -> HTMLResponse:
    """A plane's registry facts and the carriers that flew it from New York in 2013."""
    tailnum = request.path_params["tailnum"].upper()
    rows = query("SELECT * FROM planes WHERE tailnum = ?", (tailnum,))
    flown = query("SELECT carrier, COUNT(*) AS flights FROM flights WHERE tailnum = ? GROUP BY carrier "
                  "ORDER BY flights DESC, carrier", (tailnum,))
    if not rows and not flown:
        return _not_found(request, f"plane {tailnum}")
    return _render(request, "plane.html", tailnum=tailnum, plane=rows[0] if rows else None, flown=flown,
                   total=sum(r["flights"] for r in flown))


def carrier(request: Request) -> HTMLResponse:
    """A carrier's name and its 2013 departures from each New York airport."""
    code = request.path_params["code"].upper()
    rows = query("SELECT * FROM airlines WHERE carrier = ?", (code,))
    if not rows:
        return _not_found(request, f"carrier {code}")
    by_origin = query("SELECT origin, COUNT(*) AS flights FROM flights WHERE carrier = ? GROUP BY origin "
                      "ORDER BY origin", (code,))
    return _render(request, "carrier.html", airline=rows[0], by_origin=by_origin,
                   total=sum(r["flights"] for r in by_origin))


def build_app() -> Starlette:
    """The flights site as an ASGI app (mounted at /flights by the registry)."""
    return Starlette(routes=[
        Route("/", home), Route("/search", search), Route("/export.csv", export_csv),
        Route("/airport/{faa}", airport), Route("/plane/{tailnum}", plane), Route("/carrier/{code}", carrier),
    ])
