"""The tests' one HTTP server, in the style of playwright-python's `tests/server.py`.

A `TestServer` listens on 127.0.0.1 (a free port, or the one asked for) and answers each connection in its own
thread, so a slow or never-ending response holds up no other request. Each request is answered by, in order:
the route registered for its path (`set_route`, `set_redirect`; the routes given to the constructor are the
site's own and survive `reset`), a file of the static directory (`static=`; `/` is `index.html`, `.py` files are
never served), the fallback handler (`fallback=`), else a 404. A handler that raises answers 500 (or drops the
connection) and its traceback is kept in `errors`. `set_headers` adds headers to a path's responses,
`set_delay` holds a path's responses back. Every request is recorded (`requests`, `wait_for_request`), even one
that is not valid HTTP. `reset` (run after each test by conftest) drops the test's routes, headers, delays and
recorded requests and ends every response still waiting (`Exchange.wait`, `Exchange.hang`).

    with TestServer(static=PAGES) as server:
        server.set_route("/api/x", lambda ex: ex.send_json({"ok": True}))
        ...; request = await server.wait_for_request("/api/x")

`pages_site()` is tests/pages with the endpoints its pages call; `python tests/server.py [pages|hostile]` serves
tests/pages or the hostile pages (tests/pages/hostile/routes.py) until interrupted.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import mimetypes
import socket
import sys
import threading
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

#: The test pages.
PAGES = Path(__file__).parent / "pages"

HTML = "text/html; charset=utf-8"


@dataclass(frozen=True)
class Request:
    """A request as it arrived: `target` is the path and query as sent, header names are lower-case."""

    method: str
    target: str
    headers: Mapping[str, str]
    body: bytes

    @property
    def path(self) -> str:
        return urlsplit(self.target).path

    @property
    def query(self) -> dict[str, list[str]]:
        return parse_qs(urlsplit(self.target).query)


class Exchange:
    """One request being answered: what arrived (`request`) and the ways to answer it."""

    def __init__(self, handler: _Handler, request: Request, released: threading.Event) -> None:
        self._handler, self.request, self._released = handler, request, released
        self.started = False  # the status line is sent

    def _start(self, status: int, content_type: str, headers: Mapping[str, str] | None) -> None:
        self.started = True
        h = self._handler
        h.send_response(status)
        h.send_header("Content-Type", content_type)
        h.send_header("Cache-Control", "no-store")
        for k, v in {**h.server.owner._headers.get(self.request.path, {}), **(headers or {})}.items():
            h.send_header(k, v)

    def send(self, status: int = 200, body: bytes | str = b"", content_type: str = HTML,
             headers: Mapping[str, str] | None = None) -> None:
        """Answer with a whole body."""
        data = body.encode() if isinstance(body, str) else body
        self._start(status, content_type, headers)
        self._handler.send_header("Content-Length", str(len(data)))
        self._handler.end_headers()
        if self.request.method != "HEAD":
            self._handler.wfile.write(data)

    def send_json(self, value: Any, status: int = 200) -> None:
        self.send(status, json.dumps(value).encode(), "application/json")

    def redirect(self, location: str, status: int = 302, headers: Mapping[str, str] | None = None) -> None:
        self.send(status, b"", "text/plain", {"Location": location, **(headers or {})})

    def start_chunked(self, status: int = 200, content_type: str = HTML,
                      headers: Mapping[str, str] | None = None) -> None:
        """Send the status and headers of a chunked response; then `write_chunk` its body."""
        self._start(status, content_type, headers)
        self._handler.send_header("Transfer-Encoding", "chunked")
        self._handler.end_headers()

    def write_chunk(self, data: bytes) -> None:
        """Send one chunk now (an empty one ends the body)."""
        self._handler.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self._handler.wfile.flush()

    def wait(self, seconds: float) -> None:
        """Let `seconds` pass before answering (a slow endpoint), or less when the test ends first."""
        self._released.wait(seconds)

    def hang(self) -> None:
        """Wait until the test ends (the server is reset or stopped), then drop the connection: a response begun
        (`start_chunked`) stays unfinished."""
        self._released.wait()
        self._handler.close_connection = True


Handler = Callable[[Exchange], None]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out as separate writes: no wait between them
    server: _HTTPServer

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass

    def setup(self) -> None:
        super().setup()
        with self.server.owner._lock:
            self.server.owner._connections.add(self.connection)

    def finish(self) -> None:
        with self.server.owner._lock:
            self.server.owner._connections.discard(self.connection)
        super().finish()

    def parse_request(self) -> bool:
        if super().parse_request():
            return True
        line = self.raw_requestline.decode("latin-1").rstrip("\r\n")
        self.server.owner._record(Request("", line, {}, b""))  # not HTTP: recorded all the same
        return False

    def _body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            parts = []
            while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                parts.append(self.rfile.read(size))
                self.rfile.readline()
            while self.rfile.readline() not in (b"\r\n", b"\n", b""):  # trailers
                pass
            return b"".join(parts)
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _dispatch(self) -> None:
        owner = self.server.owner
        headers: dict[str, str] = {}
        for k, v in self.headers.items():
            headers[k.lower()] = f"{headers[k.lower()]}, {v}" if k.lower() in headers else v
        request = Request(self.command, self.path, headers, self._body())
        released = owner._released
        owner._record(request)
        ex = Exchange(self, request, released)
        try:
            if (delay := owner._delays.get(request.path)) is not None:
                ex.wait(delay)
            route = owner._routes.get(request.path) or owner._site_routes.get(request.path)
            if route is not None:
                route(ex)
            elif owner.static is not None and (file := owner._file(request.path)) is not None:
                ex.send(200, file.read_bytes(), mimetypes.guess_type(file.name)[0] or "application/octet-stream")
            elif owner.fallback is not None:
                owner.fallback(ex)
            else:
                ex.send(404, b"not found", "text/plain")
        except ConnectionError:  # the browser gave up on the request: fine
            self.close_connection = True
        except Exception:
            owner.errors.append(error := traceback.format_exc())  # a bug in a test's handler: conftest fails the test
            if ex.started:
                self.close_connection = True
            else:
                ex.send(500, error, "text/plain")

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _dispatch


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, owner: TestServer, port: int) -> None:
        self.owner = owner
        super().__init__(("127.0.0.1", port), _Handler)

    def handle_error(self, request: object, client_address: object) -> None:  # a browser dropped a connection: fine
        pass


class TestServer:
    """A threaded HTTP server on 127.0.0.1 with per-path routes (see the module's docstring)."""

    __test__ = False  # not a test class

    def __init__(self, static: Path | None = None, routes: Mapping[str, Handler] | None = None,
                 fallback: Handler | None = None, port: int = 0) -> None:
        self.static = static.resolve() if static is not None else None
        self.fallback = fallback
        self.errors: list[str] = []  # tracebacks of handlers that raised
        self._site_routes = dict(routes or {})
        self._routes: dict[str, Handler] = {}
        self._headers: dict[str, dict[str, str]] = {}
        self._delays: dict[str, float] = {}
        self._requests: list[Request] = []
        self._waiters: list[tuple[str, asyncio.AbstractEventLoop, asyncio.Future[Request]]] = []
        self._lock = threading.Lock()
        self._released = threading.Event()
        self._connections: set[socket.socket] = set()
        self._httpd = _HTTPServer(self, port)  # binds now: OSError when the port is taken
        self.port: int = self._httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), name=f"test-server-{self.port}",
                                        daemon=True)  # polls for `stop` every 0.05 s

    def __repr__(self) -> str:
        return f"TestServer({self.url})"

    def start(self) -> TestServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop answering: end waiting responses, close every open connection and the listening socket."""
        self._released.set()
        self._httpd.shutdown()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._httpd.server_close()

    def __enter__(self) -> TestServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- set up ------------------------------------------------------------------------------------------

    def set_route(self, path: str, handler: Handler) -> None:
        """Answer requests for `path` (any method, any query) with `handler` until the next `reset`."""
        self._routes[path] = handler

    def set_redirect(self, path: str, location: str, status: int = 302) -> None:
        self.set_route(path, lambda ex: ex.redirect(location, status))

    def set_headers(self, path: str, headers: Mapping[str, str]) -> None:
        """Add `headers` to every response for `path` (a route's, a static file's)."""
        self._headers[path] = dict(headers)

    def set_delay(self, path: str, seconds: float) -> None:
        """Hold every response for `path` back `seconds` (only that request's thread waits)."""
        self._delays[path] = seconds

    def reset(self) -> None:
        """Back to the site as constructed: drop the test's routes, headers, delays and recorded requests, and
        end every response still waiting (`Exchange.wait`, `Exchange.hang`)."""
        released, self._released = self._released, threading.Event()
        released.set()
        self._routes.clear()
        self._headers.clear()
        self._delays.clear()
        with self._lock:
            self._requests.clear()
            waiters, self._waiters = self._waiters, []
        for _, loop, future in waiters:
            try:
                loop.call_soon_threadsafe(future.cancel)
            except RuntimeError:  # that loop is closed
                pass

    # --- what arrived ------------------------------------------------------------------------------------

    @property
    def requests(self) -> list[Request]:
        """Every request since the last `reset`, in the order they arrived."""
        with self._lock:
            return list(self._requests)

    def requests_to(self, path: str) -> list[Request]:
        return [r for r in self.requests if r.path == path]

    async def wait_for_request(self, path: str, timeout: float = 10.0) -> Request:
        """The first request for `path` since the last `reset`: at once if it already arrived, else when it
        does; AssertionError after `timeout` seconds."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Request] = loop.create_future()
        with self._lock:
            for r in self._requests:
                if r.path == path:
                    return r
            waiter = (path, loop, future)
            self._waiters.append(waiter)
        try:
            return await asyncio.wait_for(future, timeout)
        except TimeoutError:
            seen = sorted({r.path for r in self.requests})
            raise AssertionError(f"no request for {path} reached {self.url} within {timeout} s (it saw {seen})") \
                from None
        finally:
            with self._lock:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)

    def _record(self, request: Request) -> None:
        with self._lock:
            self._requests.append(request)
            ready = [w for w in self._waiters if w[0] == request.path]
            for w in ready:
                self._waiters.remove(w)
        for _, loop, future in ready:
            try:
                loop.call_soon_threadsafe(_resolve, future, request)
            except RuntimeError:  # the waiting test's loop is closed: nobody waits any more
                pass

    def _file(self, path: str) -> Path | None:
        assert self.static is not None
        file = (self.static / unquote(path).lstrip("/")).resolve()
        if file.is_dir():
            file = file / "index.html"
        if not file.is_relative_to(self.static) or not file.is_file() or file.suffix == ".py":
            return None
        return file


def _resolve(future: asyncio.Future[Request], request: Request) -> None:
    if not future.done():
        future.set_result(request)


# --- tests/pages -------------------------------------------------------------------------------------------


def pages_site(port: int = 0) -> TestServer:
    """tests/pages and the endpoints its pages call:

    POST /api/echo (JSON {"count": 42, "received": <body bytes>}), GET /set-cookie (sets a cookie, redirects to
    /login.html), GET /redirect (302 to /page2.html), GET /hang (answers after 5 s), POST /login (a page saying
    "signed in").
    """

    def set_cookie(ex: Exchange) -> None:
        ex.redirect("/login.html", headers={"Set-Cookie": "session_blob=SECRETCOOKIE123; Path=/"})

    def hang(ex: Exchange) -> None:  # a long poll
        ex.wait(5)
        ex.send_json({})

    def echo(ex: Exchange) -> None:
        ex.send_json({"count": 42, "received": len(ex.request.body)})

    def login(ex: Exchange) -> None:
        ex.send(200, b"<!doctype html><title>Signed in</title><p>signed in</p>")

    routes = {"/set-cookie": set_cookie, "/hang": hang, "/redirect": lambda ex: ex.redirect("/page2.html"),
              "/api/echo": echo, "/login": login}
    return TestServer(static=PAGES, routes=routes, port=port)


def hostile_site(port: int = 0) -> TestServer:
    """The hostile pages (tests/pages/hostile/routes.py)."""
    routes = load_module(PAGES / "hostile" / "routes.py", "hostile_pages")
    return TestServer(routes=routes.routes(), fallback=routes.not_found, port=port)


def load_module(path: Path, name: str) -> Any:
    """Import a helper module of the tests (not a package) from its path, once."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec and spec.loader
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


if __name__ == "__main__":
    site = {"pages": pages_site, "hostile": hostile_site}[sys.argv[1] if len(sys.argv) > 1 else "pages"]
    with site(int(sys.argv[2]) if len(sys.argv) > 2 else 0) as srv:
        print(srv.url, flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass
