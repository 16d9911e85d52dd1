"""The offline "web" for open-world tests: real HTTPS servers on 127.0.0.1 under real-looking host names.

Each host is its own starlette app served by uvicorn over TLS (a `trustme` certificate for its name, signed by a
throw-away CA the browser does not trust: run with `--ignore-https-errors`, or see a TLS error without it). A test
reaches a host by its name through the rig's host mapping:

    def test_x(liveweb, tmp_path):
        args = [*liveweb.resolve_args(), "--ignore-https-errors"]      # --resolve portal.example.org=127.0.0.1:P ...
        rig("run", "--live", *args, "--task", str(task_file), ...)      # start_url: https://portal.example.org/search
        assert liveweb.portal.requests_to("/results")                  # what arrived, per host

The hosts (`LiveWeb.HOSTS`):
- `portal.example.org` (`liveweb.portal`, a `Portal`): a state-gated search portal that is not a bundled site.
  `/search` is a form (`q` text, `kind` select, `region` checkboxes, `year_from`/`year_to`, a Search button); it
  submits to `/results`, whose table `#results` (ID, Title, Kind, Region, Year, Score) holds only the records
  passing the filters, 10 a page, ordered by `sort` (`id`, `title`, `year`, `score`) and `order` (`asc`, `desc`),
  with Previous/Next links and "Page X of Y"; `#summary` is filled by a fetch of `/api/results` (JSON, the same
  filters). `/record/<id>` shows one record; `/gallery/<n>` loads n images `/thumb/<i>.svg` at once (a burst of
  requests for politeness tests). Change the data between runs with `portal.set_records(...)` or
  `portal.edit(id, field=value)` (a drift test); `portal.matching(**filters)` gives the rows a filter shows.
- `product.example.com` (`liveweb.product`): a "deep research product" whose answer page `/answer` cites pages
  on the other hosts; `liveweb.product_answer(...)` gives that answer as Markdown (for `--answer-file`).
- `archive.example.net` (`liveweb.archive`): documents `/doc/<n>` behind a cookie banner, `/moved/<n>` (301 to
  the portal's record `n`: a redirect to another host) and nothing else (404).
- `redirect.example.com` (`liveweb.redirect`): ways out of a page, each to any URL `to`: `/go?to=URL&status=302`
  (an HTTP redirect), `/hops/<n>?to=URL` (a chain of n redirects on this host, then one to URL), `/meta?to=URL` (a
  meta refresh), `/script?to=URL` (`location = URL` from a script); `/start` is a plain page
  (`liveweb.redirect_url(kind, to)` builds these URLs).
- `liveweb.secret`: a plain HTTP service on a loopback port of its own (not a name: `http://127.0.0.1:PORT`), for
  what a run must not reach (the way an episode's own MCP endpoint or the sites server is on loopback); it answers
  every path with "secret" and counts what arrived (`hits`).

Every host records each request (`requests`, `requests_to`, `hits`), the most requests it had in flight at once
(`max_in_flight`), and can be made to misbehave: `poison()` answers everything with 500 "poison" (a frozen run must
make 0 requests to it), `fail_next(path, status, times, retry_after)` answers the next requests for a path with
429/503, `set_delay(path, seconds)` holds responses back. `reset()` (after every test, by conftest) undoes all of
that and restores the portal's data. `python tests/liveweb.py` serves the hosts until interrupted and prints
the `--resolve` arguments.
"""

from __future__ import annotations

import asyncio
import html
import json
import math
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self
from urllib.parse import urlencode

import trustme
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request as StarletteRequest
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

#: Rows of the portal's result table per page.
PAGE_SIZE = 10
KINDS = ("article", "dataset", "report")
REGIONS = ("north", "south", "east", "west")
COLUMNS = ("ID", "Title", "Kind", "Region", "Year", "Score")
SORTS = ("id", "title", "year", "score")


def default_records() -> list[dict[str, Any]]:
    """The portal's data as served after every reset: 31 records over every kind, region and year 2015-2024."""
    words = ("Alder", "Birch", "Cedar", "Dune", "Estuary", "Fjord", "Glacier", "Heath", "Isle", "Juniper", "Kelp")
    return [{"id": i, "title": f"{words[i % len(words)]} survey {i:02d}", "kind": KINDS[i % 3],
             "region": REGIONS[(i * 7) % 4], "year": 2015 + (i * 3) % 10, "score": (i * 37) % 100}
            for i in range(1, 32)]


@dataclass(frozen=True)
class Seen:
    """A request as it arrived at a host: header names lower-case, `t` from `time.monotonic()`."""

    method: str
    path: str
    query: str
    headers: Mapping[str, str]
    t: float


@dataclass
class _Failure:
    status: int
    times: int
    retry_after: float | None


class LiveHost:
    """One HTTPS host name on its own 127.0.0.1 port: an app, what arrived, and the ways to make it misbehave."""

    def __init__(self, name: str, app: Starlette, cert: trustme.LeafCert | None, workdir: Path,
                 errors: list[str]) -> None:
        self.name, self._app = name, app
        #: Served over TLS with a certificate for its name; without one (`cert=None`), plain HTTP by address.
        self.tls = cert is not None
        self._lock = threading.Lock()
        self._requests: list[Seen] = []
        self._failures: dict[str, _Failure] = {}
        self._delays: dict[str, float] = {}
        self._poisoned = False
        self._in_flight = 0
        self.max_in_flight = 0
        self.errors = errors  # shared by the hosts of one LiveWeb
        tls: dict[str, str] = {}
        if cert is not None:
            pem = workdir / f"{name}.pem"
            cert.private_key_and_cert_chain_pem.write_to_path(str(pem))
            tls = {"ssl_certfile": str(pem), "ssl_keyfile": str(pem)}
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))  # bound now and handed to uvicorn: no other process can take the port
        self.port: int = self._socket.getsockname()[1]
        config = uvicorn.Config(self._asgi, host="127.0.0.1", port=self.port, log_level="warning", access_log=False,
                                lifespan="off", interface="asgi3", **tls)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._socket]},
                                        name=f"liveweb-{name}", daemon=True)

    def __repr__(self) -> str:
        return f"LiveHost({self.name} on 127.0.0.1:{self.port})"

    @property
    def origin(self) -> str:
        """`https://<name>` (reached through `--resolve`); a plain host's `http://127.0.0.1:PORT`."""
        return f"https://{self.name}" if self.tls else f"http://127.0.0.1:{self.port}"

    def url(self, path: str = "/", **query: Any) -> str:
        """An absolute URL on this host."""
        return self.origin + path + (f"?{urlencode(query, doseq=True)}" if query else "")

    @property
    def resolve(self) -> str:
        """This host's `--resolve` value."""
        return f"{self.name}=127.0.0.1:{self.port}"

    # --- misbehaving -----------------------------------------------------------------------------------

    def poison(self) -> None:
        """Answer every request with 500 "poison" until the next reset (requests are still recorded)."""
        self._poisoned = True

    def fail_next(self, path: str, status: int = 429, times: int = 1, retry_after: float | None = None) -> None:
        """Answer the next `times` requests for `path` with `status` (and a `Retry-After` header, if given)."""
        self._failures[path] = _Failure(status, times, retry_after)

    def set_delay(self, path: str, seconds: float) -> None:
        """Hold every response for `path` back `seconds`."""
        self._delays[path] = seconds

    def reset(self) -> None:
        """Forget what arrived and every misbehaviour."""
        with self._lock:
            self._requests.clear()
            self.max_in_flight = self._in_flight
        self._failures.clear()
        self._delays.clear()
        self._poisoned = False

    # --- what arrived ----------------------------------------------------------------------------------

    @property
    def requests(self) -> list[Seen]:
        """Every request since the last reset, in arrival order."""
        with self._lock:
            return list(self._requests)

    def requests_to(self, path: str) -> list[Seen]:
        """The requests for one path."""
        return [r for r in self.requests if r.path == path]

    @property
    def hits(self) -> int:
        """How many requests arrived since the last reset."""
        return len(self.requests)

    # --- serving ---------------------------------------------------------------------------------------

    async def _asgi(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        seen = Seen(scope["method"], scope["path"], scope["query_string"].decode("latin-1"), headers, time.monotonic())
        with self._lock:
            self._requests.append(seen)
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
        try:
            if (delay := self._delays.get(seen.path)) is not None:
                await asyncio.sleep(delay)
            if self._poisoned:
                await Response("poison", 500, media_type="text/plain")(scope, receive, send)
                return
            failure = self._failures.get(seen.path)
            if failure is not None and failure.times > 0:
                failure.times -= 1
                extra = {"Retry-After": f"{failure.retry_after:g}"} if failure.retry_after is not None else {}
                await Response(f"status {failure.status}", failure.status, extra, "text/plain")(scope, receive, send)
                return
            await self._app(scope, receive, send)
        except Exception as exc:  # a bug in a route: conftest fails the test
            self.errors.append(f"{self.name} {seen.path}: {type(exc).__name__}: {exc}")
            raise
        finally:
            with self._lock:
                self._in_flight -= 1

    def start(self) -> None:
        """Serve in a background thread; return once the port accepts connections."""
        self._thread.start()
        deadline = time.monotonic() + 60
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"{self.name} did not start on 127.0.0.1:{self.port}")
            time.sleep(0.02)

    def stop(self) -> None:
        """Stop serving."""
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._socket.close()


# --- the portal --------------------------------------------------------------------------------------------


def _page(title: str, body: str, head: str = "") -> HTMLResponse:
    return HTMLResponse(f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{html.escape(title)}</title>"
                        f"{head}</head><body>{body}</body></html>")


@dataclass
class Filters:
    """The portal's search state, as its URL carries it."""

    q: str = ""
    kind: str = ""
    region: list[str] = field(default_factory=list)
    year_from: int | None = None
    year_to: int | None = None
    sort: str = "id"
    order: str = "asc"
    page: int = 1

    @classmethod
    def of(cls, request: StarletteRequest) -> Filters:
        """The filters of a request's query (bad numbers are ignored, as a lenient portal does)."""
        qp = request.query_params

        def num(name: str) -> int | None:
            v = qp.get(name, "").strip()
            return int(v) if v.isdigit() else None

        sort = qp.get("sort", "id")
        return cls(q=qp.get("q", "").strip(), kind=qp.get("kind", ""), region=qp.getlist("region"),
                   year_from=num("year_from"), year_to=num("year_to"), sort=sort if sort in SORTS else "id",
                   order="desc" if qp.get("order") == "desc" else "asc", page=max(1, num("page") or 1))

    def query(self, **changes: Any) -> str:
        """This state's query string with some parameters changed."""
        state = {**self.__dict__, **changes}
        pairs = [(k, v) for k in ("q", "kind", "year_from", "year_to") if (v := state[k]) not in ("", None)]
        pairs += [("region", r) for r in state["region"]]
        pairs += [("sort", state["sort"]), ("order", state["order"]), ("page", state["page"])]
        return urlencode(pairs)


class Portal:
    """The state-gated portal's data and pages (see the module's docstring)."""

    def __init__(self) -> None:
        self.records = default_records()

    def set_records(self, records: Iterable[Mapping[str, Any]]) -> None:
        """Serve these records from now on (each with id, title, kind, region, year, score)."""
        self.records = [dict(r) for r in records]

    def edit(self, record_id: int, **fields: Any) -> None:
        """Change fields of one record."""
        for r in self.records:
            if r["id"] == record_id:
                r.update(fields)
                return
        raise KeyError(record_id)

    def reset(self) -> None:
        """Back to `default_records()`."""
        self.records = default_records()

    def matching(self, q: str = "", kind: str = "", region: Iterable[str] = (), year_from: int | None = None,
                 year_to: int | None = None, sort: str = "id", order: str = "asc") -> list[list[str]]:
        """Every row (all pages) the results table shows for these filters, as cells in `COLUMNS` order."""
        f = Filters(q=q, kind=kind, region=list(region), year_from=year_from, year_to=year_to, sort=sort, order=order)
        return [_cells(r) for r in self._select(f)]

    def _select(self, f: Filters) -> list[dict[str, Any]]:
        rows = [r for r in self.records
                if (not f.q or f.q.casefold() in r["title"].casefold()) and (not f.kind or r["kind"] == f.kind)
                and (not f.region or r["region"] in f.region)
                and (f.year_from is None or r["year"] >= f.year_from) and (f.year_to is None or r["year"] <= f.year_to)]
        return sorted(rows, key=lambda r: (r[f.sort], r["id"]), reverse=f.order == "desc")

    def app(self) -> Starlette:
        """The portal's routes."""
        return Starlette(routes=[
            Route("/", lambda request: RedirectResponse("/search", 302)),
            Route("/search", self._search), Route("/results", self._results),
            Route("/api/results", self._api), Route("/record/{rid:int}", self._record),
            Route("/gallery/{n:int}", self._gallery), Route("/thumb/{i:int}.svg", self._thumb),
        ])

    async def _gallery(self, request: StarletteRequest) -> HTMLResponse:
        n = min(request.path_params["n"], 50)
        imgs = "".join(f'<img alt="thumbnail {i}" src="/thumb/{i}.svg" width=20 height=20>' for i in range(n))
        return _page("Gallery", f"<h1>Gallery of {n}</h1>{imgs}")

    async def _thumb(self, request: StarletteRequest) -> Response:
        i = request.path_params["i"]
        svg = f'<svg xmlns="http://www.w3.org/2000/svg" width="20" height="20"><text y="15">{i}</text></svg>'
        return Response(svg, media_type="image/svg+xml")

    async def _search(self, request: StarletteRequest) -> HTMLResponse:
        kinds = "".join(f"<option value={k}>{k.title()}</option>" for k in KINDS)
        regions = "".join(f"<label><input type=checkbox name=region value={r}> {r.title()}</label> " for r in REGIONS)
        return _page("Portal search", f"""<h1>Environmental survey portal</h1>
<form id=search action=/results method=get>
 <label for=q>Title contains</label> <input id=q name=q>
 <label for=kind>Kind</label> <select id=kind name=kind><option value="">Any</option>{kinds}</select>
 <fieldset><legend>Region</legend>{regions}</fieldset>
 <label for=year_from>From year</label> <input id=year_from name=year_from type=number>
 <label for=year_to>To year</label> <input id=year_to name=year_to type=number>
 <button type=submit>Search</button>
</form>""")

    async def _results(self, request: StarletteRequest) -> HTMLResponse:
        f = Filters.of(request)
        rows = self._select(f)
        pages = max(1, math.ceil(len(rows) / PAGE_SIZE))
        page = min(f.page, pages)
        shown = rows[(page - 1) * PAGE_SIZE: page * PAGE_SIZE]

        def head(col: str) -> str:
            key = col.lower()
            if key not in SORTS:
                return f"<th>{col}</th>"
            order = "desc" if f.sort == key and f.order == "asc" else "asc"
            mark = f' aria-sort="{"ascending" if f.order == "asc" else "descending"}"' if f.sort == key else ""
            return f'<th{mark}><a href="/results?{html.escape(f.query(sort=key, order=order, page=1))}">{col}</a></th>'

        body_rows = "".join(
            "<tr>" + f'<td><a href="/record/{r["id"]}">{r["id"]}</a></td>'
            + "".join(f"<td>{html.escape(str(c))}</td>" for c in _cells(r)[1:]) + "</tr>" for r in shown)
        nav = []
        if page > 1:
            nav.append(f'<a rel=prev href="/results?{html.escape(f.query(page=page - 1))}">Previous</a>')
        nav.append(f"<span id=page>Page {page} of {pages}</span>")
        if page < pages:
            nav.append(f'<a rel=next href="/results?{html.escape(f.query(page=page + 1))}">Next</a>')
        api = json.dumps(f"/api/results?{f.query()}")
        script = (f"<script>fetch({api}).then(r => r.json()).then(d => {{document.getElementById('summary')"
                  ".textContent = d.total + ' matching records';});</script>")
        return _page("Portal results", f"""<h1>Results</h1>
<p id=count>{len(rows)} results</p><p id=summary>counting…</p>
<table id=results><thead><tr>{''.join(head(c) for c in COLUMNS)}</tr></thead><tbody>{body_rows}</tbody></table>
<nav id=pager>{' '.join(nav)}</nav><p><a href="/search">New search</a></p>{script}""")

    async def _api(self, request: StarletteRequest) -> JSONResponse:
        rows = self._select(Filters.of(request))
        return JSONResponse({"total": len(rows), "ids": [r["id"] for r in rows]})

    async def _record(self, request: StarletteRequest) -> HTMLResponse:
        rid = request.path_params["rid"]
        rec = next((r for r in self.records if r["id"] == rid), None)
        if rec is None:
            return HTMLResponse("<!doctype html><title>Not found</title><p>No such record.</p>", 404)
        facts = "".join(f"<dt>{c}</dt><dd>{html.escape(v)}</dd>" for c, v in zip(COLUMNS, _cells(rec)))
        return _page(rec["title"], f"<h1>{html.escape(rec['title'])}</h1><dl id=record>{facts}</dl>")


def _cells(r: Mapping[str, Any]) -> list[str]:
    return [str(r["id"]), r["title"], r["kind"], r["region"], str(r["year"]), str(r["score"])]


# --- the archive and the product --------------------------------------------------------------------------

#: The archive's documents: number -> (title, text).
DOCUMENTS = {1: ("Survey methods", "Every survey is scored from 0 to 100 by two reviewers."),
             2: ("Regions", "The portal divides the coast into four regions: north, south, east and west.")}

_BANNER = """<div id=cookie-banner role=dialog aria-label="Cookie consent"><p>We use cookies.</p>
<button onclick="document.cookie='consent=yes; path=/'; this.parentElement.remove()">Accept</button></div>"""


def archive_app() -> Starlette:
    """archive.example.net: documents behind a cookie banner, and moved pages redirecting to the portal."""

    async def doc(request: StarletteRequest) -> HTMLResponse:
        n = request.path_params["n"]
        if n not in DOCUMENTS:
            return HTMLResponse("<!doctype html><title>Not found</title><p>No such document.</p>", 404)
        title, text = DOCUMENTS[n]
        banner = "" if request.cookies.get("consent") else _BANNER
        return _page(title, f"{banner}<article><h1>{title}</h1><p>{text}</p></article>")

    async def moved(request: StarletteRequest) -> RedirectResponse:
        return RedirectResponse(f"https://{LiveWeb.PORTAL}/record/{request.path_params['n']}", 301)

    return Starlette(routes=[Route("/doc/{n:int}", doc), Route("/moved/{n:int}", moved)])


def product_answer(rows: list[list[str]], columns: Iterable[str] = ("ID", "Title", "Year"),
                   extra_citations: Iterable[str] = ()) -> str:
    """A product's answer as Markdown: a table of `rows` (cells in `COLUMNS` order, as `Portal.matching` gives),
    each row's Title linked to its portal record page, then the sources (`extra_citations`, e.g. a dead link)."""
    cols = list(columns)
    idx = [COLUMNS.index(c) for c in cols]
    lines = ["Here is what I found.", "", "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in rows:
        cells = [row[i] for i in idx]
        if "Title" in cols:
            at = cols.index("Title")
            cells[at] = f"[{cells[at]}](https://{LiveWeb.PORTAL}/record/{row[0]})"
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Sources:", *(f"- {u}" for u in extra_citations)]
    return "\n".join(lines) + "\n"


def product_app(answer: Callable[[], str]) -> Starlette:
    """product.example.com: the product's answer page (`/answer`, the Markdown as preformatted text)."""

    async def page(request: StarletteRequest) -> HTMLResponse:
        return _page("Research product", f"<h1>Answer</h1><pre id=answer>{html.escape(answer())}</pre>")

    async def raw(request: StarletteRequest) -> Response:
        return Response(answer(), media_type="text/markdown")

    return Starlette(routes=[Route("/answer", page), Route("/answer.md", raw)])


# --- ways out of a page, and a loopback secret -------------------------------------------------------------


def redirect_app() -> Starlette:
    """redirect.example.com: an HTTP redirect, a chain of them, a meta refresh and a script navigation, each to any
    URL (see the module's docstring)."""

    async def go(request: StarletteRequest) -> RedirectResponse:
        return RedirectResponse(request.query_params["to"], int(request.query_params.get("status", "302")))

    async def hops(request: StarletteRequest) -> RedirectResponse:
        n, to = request.path_params["n"], request.query_params["to"]
        return RedirectResponse(f"/hops/{n - 1}?{urlencode({'to': to})}" if n > 0 else to, 302)

    async def meta(request: StarletteRequest) -> HTMLResponse:
        to = html.escape(request.query_params["to"])
        return _page("Moving on", "<h1>Moving on</h1>", head=f'<meta http-equiv="refresh" content="0; url={to}">')

    async def script(request: StarletteRequest) -> HTMLResponse:
        return _page("Moving on", f"<h1>Moving on</h1><script>location = {json.dumps(request.query_params['to'])};"
                                  "</script>")

    async def start(request: StarletteRequest) -> HTMLResponse:
        return _page("Redirect lab", "<h1>Redirect lab</h1><p id=here>Nothing moves here.</p>")

    return Starlette(routes=[Route("/go", go), Route("/hops/{n:int}", hops), Route("/meta", meta),
                             Route("/script", script), Route("/start", start)])


def secret_app() -> Starlette:
    """The loopback secret: "secret" at every path."""

    async def secret(request: StarletteRequest) -> Response:
        return Response("secret", media_type="text/plain")

    return Starlette(routes=[Route("/{path:path}", secret)])


# --- the web -----------------------------------------------------------------------------------------------


class LiveWeb:
    """The hosts of the offline web, started together (see the module's docstring)."""

    PORTAL, PRODUCT, ARCHIVE = "portal.example.org", "product.example.com", "archive.example.net"
    REDIRECT, SECRET = "redirect.example.com", "secret"
    #: The hosts reached by name (`resolve_args`); the secret is reached by its loopback address only.
    HOSTS = (PORTAL, PRODUCT, ARCHIVE, REDIRECT)

    def __init__(self) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="rig-liveweb-")
        self.ca = trustme.CA()
        self.ca_pem = Path(self._dir.name) / "ca.pem"
        self.ca.cert_pem.write_to_path(str(self.ca_pem))
        self.data = Portal()
        #: The product's answer (Markdown): by default the portal's datasets from 2020 on, plus the archive's doc 1.
        self.answer_text: str | None = None
        apps = {self.PORTAL: self.data.app(), self.ARCHIVE: archive_app(),
                self.PRODUCT: product_app(lambda: self.answer_text or self.product_answer()),
                self.REDIRECT: redirect_app(), self.SECRET: secret_app()}
        #: Exceptions raised by any host's routes (conftest fails the test on them).
        self.errors: list[str] = []
        self.hosts = {name: LiveHost(name, app, self.ca.issue_cert(name) if name in self.HOSTS else None,
                                     Path(self._dir.name), self.errors)
                      for name, app in apps.items()}

    @property
    def portal(self) -> LiveHost:
        return self.hosts[self.PORTAL]

    @property
    def product(self) -> LiveHost:
        return self.hosts[self.PRODUCT]

    @property
    def archive(self) -> LiveHost:
        return self.hosts[self.ARCHIVE]

    @property
    def redirect(self) -> LiveHost:
        return self.hosts[self.REDIRECT]

    @property
    def secret(self) -> LiveHost:
        return self.hosts[self.SECRET]

    def redirect_url(self, kind: str, to: str, hops: int = 3) -> str:
        """A URL on the redirect host that leads to `to`: kind `go` (302), `hops` (a chain), `meta`, `script`."""
        return self.redirect.url(f"/hops/{hops}" if kind == "hops" else f"/{kind}", to=to)

    def resolve_args(self, hosts: Iterable[str] | None = None) -> list[str]:
        """`--resolve HOST=127.0.0.1:PORT` for every host (or those named), as CLI arguments."""
        return [a for name in (hosts or self.HOSTS) for a in ("--resolve", self.hosts[name].resolve)]

    def product_answer(self, extra_citations: Iterable[str] = ()) -> str:
        """The default product answer: the portal's datasets from 2020 on, citing their records and the archive."""
        rows = self.data.matching(kind="dataset", year_from=2020)
        return product_answer(rows, extra_citations=[self.archive.url("/doc/1"), *extra_citations])

    def reset(self) -> None:
        """After each test: every host forgets its requests and misbehaviour; the portal's data is restored."""
        for h in self.hosts.values():
            h.reset()
        self.data.reset()
        self.answer_text = None

    def __enter__(self) -> Self:
        for h in self.hosts.values():
            h.start()
        return self

    def __exit__(self, *exc: object) -> None:
        for h in self.hosts.values():
            h.stop()
        self._dir.cleanup()


if __name__ == "__main__":
    with LiveWeb() as web:
        print(" ".join(web.resolve_args()), "--ignore-https-errors", flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass
