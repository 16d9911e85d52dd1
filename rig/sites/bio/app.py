"""BioKB's pages: the protein search with its column chooser, entry pages, the taxonomy browser and its JSON API,
taxon pages, the trial registry and trial pages."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from rig.sites.pages import Pages, mount_base
from rig.sites.bio import query as q
from rig.sites.bio.data import EXISTENCE, PHASES, STATUSES

_HERE = Path(__file__).parent
PAGES = Pages(_HERE / "templates")
ROOT_TAXON = 1


def home(request: Request) -> HTMLResponse:
    """The knowledgebase's start page: what it holds and where to search it."""
    return PAGES.render(request, "home.html")


def _cell(col: q.Column, value: Any) -> str:
    if value is None:
        return ""
    if col.key == "existence":
        return EXISTENCE[int(value)]
    if col.key == "mass":
        return f"{int(value):,}"
    return str(value)


def _search_href(request: Request, query: str, fields: str, **extra: Any) -> str:
    params = {"query": query, **({"fields": fields} if fields else {}),
              **{k: v for k, v in extra.items() if v not in (None, "")}}
    return f"{mount_base(request)}/proteins?{urlencode(params)}"


def proteins(request: Request) -> HTMLResponse:
    """The protein search: query text (field syntax), status and organism facets, chosen columns, sorting, pages."""
    params = request.query_params
    text = params.get("query", "")
    columns = q.parse_columns(params.getlist("fields"))
    fields = ",".join(c.key for c in columns) if params.getlist("fields") else ""
    ctx: dict[str, Any] = {"text": text, "columns": columns, "fields": fields, "all_columns": list(q.COLUMNS.values()),
                           "searched": "query" in params, "error": None, "fields_help": q.FIELDS}
    if ctx["searched"]:
        try:
            scope = q.parse(text)
        except q.QueryError as exc:
            ctx["error"] = str(exc)
            return PAGES.render(request, "proteins.html", status_code=400, **ctx)
        sort = params.get("sort") or None
        desc = params.get("dir") == "desc"
        page = int(params["page"]) if params.get("page", "").isdigit() else 1
        result = q.search(scope, columns, sort, desc, page)
        heads = []
        for c in columns:
            on = c.key == result.sort
            nxt = "desc" if on and result.dir == "asc" else "asc"
            heads.append({"col": c, "href": _search_href(request, text, fields, sort=c.key, dir=nxt),
                          "aria_sort": ("descending" if result.dir == "desc" else "ascending") if on else None})
        pager = [{"page": n, "href": _search_href(request, text, fields, sort=result.sort,
                                                  dir=result.dir if result.sort else None, page=n),
                  "current": n == result.page} for n in range(1, result.pages + 1)] if result.pages > 1 else []
        facets = {
            "status": [(label, value, result.reviewed_counts.get(value == "true", 0),
                        _search_href(request, q.with_clause(text, "reviewed", value), fields), scope.reviewed is not None
                        and scope.reviewed == (value == "true"))
                       for label, value in (("Reviewed (Swiss-Prot)", "true"), ("Unreviewed (TrEMBL)", "false"))],
            "organisms": [(name, n, _search_href(request, q.with_clause(text, "organism_id", str(tid)), fields),
                           scope.organism == tid) for tid, name, n in result.organisms],
        }
        ctx.update(result=result, heads=heads, pager=pager, facets=facets, scope_params=scope.params(),
                   rows=[[(c, _cell(c, v)) for c, v in zip(columns, row)] for row in result.rows],
                   sort_label=q.COLUMNS[result.sort].label if result.sort else None)
    return PAGES.render(request, "proteins.html", **ctx)


def protein(request: Request) -> HTMLResponse:
    """An entry's page: names, organism and lineage (linked), function, sequence, evidence, trial cross-references."""
    entry = q.protein(request.path_params["accession"].upper())
    if entry is None:
        return PAGES.not_found(request, f"entry {request.path_params['accession']}")
    return PAGES.render(request, "protein.html", p=entry, existence=EXISTENCE[entry["existence"]],
                   keywords=entry["keywords"].split(";"))


def taxonomy(request: Request) -> HTMLResponse:
    """The taxonomy browser: a tree whose children load when a node expands, and the selected taxon's panel."""
    return PAGES.render(request, "taxonomy.html", root=q.taxon(ROOT_TAXON))


def _taxon_search(request: Request, field: str, taxon_id: int) -> str:
    return f"{mount_base(request)}/proteins?{urlencode({'query': f'{field}:{taxon_id}'})}"


def _taxon_id(request: Request) -> int | None:
    raw = request.query_params.get("id", "")
    return int(raw) if raw.isdigit() else None


def api_children(request: Request) -> JSONResponse:
    """JSON: the children of one taxon (`?id=`), each with its rank and whether it has children of its own."""
    tid = _taxon_id(request)
    if tid is None or q.taxon(tid) is None:
        return JSONResponse({"error": f"unknown taxon {request.query_params.get('id')!r}"}, status_code=404)
    return JSONResponse({"id": tid, "children": [{k: c[k] for k in ("id", "name", "rank", "has_children")}
                                                  for c in q.children(tid)]})


def api_node(request: Request) -> JSONResponse:
    """JSON: one taxon for the browser's panel: lineage, entry counts, and its children with theirs."""
    tid = _taxon_id(request)
    node = q.taxon(tid) if tid is not None else None
    if node is None:
        return JSONResponse({"error": f"unknown taxon {request.query_params.get('id')!r}"}, status_code=404)
    return JSONResponse({
        "id": node["id"], "name": node["name"], "rank": node["rank"], "common": node["common"],
        "ancestors": node["ancestors"], "path": node["path"],
        "reviewed": node["reviewed"], "unreviewed": node["unreviewed"],
        "search": _taxon_search(request, "taxonomy_id", node["id"]),
        "children": q.children(node["id"]),
    })


def taxon_page(request: Request) -> HTMLResponse:
    """A taxon's page: rank, lineage with each ancestor's id, entry counts and searches of its entries."""
    tid = request.path_params["id"]
    node = q.taxon(int(tid)) if tid.isdigit() else None
    if node is None:
        return PAGES.not_found(request, f"taxon {tid}")
    return PAGES.render(request, "taxon.html", t=node, search_taxonomy=_taxon_search(request, "taxonomy_id", node["id"]),
                   search_organism=_taxon_search(request, "organism_id", node["id"]))


def trials(request: Request) -> HTMLResponse:
    """The trial registry: target, condition, phase and status filters; results once a filter is applied."""
    f = q.parse_trials(request.query_params)
    searched = bool(request.query_params)
    ctx: dict[str, Any] = {"f": f, "searched": searched, "phases": PHASES, "statuses": STATUSES}
    if searched:
        result = q.search_trials(f)
        items = [(k, v) for k, v in request.query_params.multi_items() if k not in ("page", "sort", "dir")]
        base = f"{mount_base(request)}/trials?"

        def href(**extra: Any) -> str:
            return base + urlencode(items + [(k, str(v)) for k, v in extra.items()])

        heads = [{"key": key, "label": label,
                  "href": href(sort=key, dir="desc" if f.sort == key and f.dir == "asc" else "asc") if key else None,
                  "aria_sort": ("descending" if f.dir == "desc" else "ascending") if key == f.sort else None}
                 for key, label in (("nct", "NCT ID"), (None, "Title"), (None, "Phase"), (None, "Status"),
                                    ("start", "Start"), ("enrollment", "Enrollment"))]
        pager = [{"page": n, "href": href(sort=f.sort, dir=f.dir, page=n), "current": n == result.page}
                 for n in range(1, result.pages + 1)] if result.pages > 1 else []
        ctx.update(result=result, heads=heads, pager=pager, target=q.protein(f.target) if f.target else None)
    return PAGES.render(request, "trials.html", **ctx)


def trial_page(request: Request) -> HTMLResponse:
    """A trial's record: phase, status, condition, dates, enrollment, sponsor and its target entries (linked)."""
    t = q.trial(request.path_params["nct"].upper())
    if t is None:
        return PAGES.not_found(request, f"trial {request.path_params['nct']}")
    return PAGES.render(request, "trial.html", t=t)


async def not_found(request: Request, exc: Exception) -> Response:
    """Any other path: a plain 404 inside the site's layout."""
    return PAGES.not_found(request, f"page {request.url.path}")


def build_app() -> Starlette:
    """BioKB as an ASGI app (mounted at /bio by the registry)."""
    return Starlette(routes=[
        Route("/", home), Route("/proteins", proteins), Route("/protein/{accession}", protein),
        Route("/taxonomy", taxonomy), Route("/api/taxonomy/children", api_children),
        Route("/api/taxonomy/node", api_node), Route("/taxon/{id}", taxon_page),
        Route("/trials", trials), Route("/trial/{nct}", trial_page),
        Mount("/static", StaticFiles(directory=str(_HERE / "static")), name="static"),
    ], exception_handlers={404: not_found})
