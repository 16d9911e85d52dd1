"""`rig view`: the report served on 127.0.0.1 with one write endpoint, `POST /api/audit/<episode-id>`,
which validates an audit, writes audit.json into that episode's directory and rewrites the affected pages."""

from __future__ import annotations

import json
import signal
import tempfile
import threading
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from loguru import logger
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.datastructures import MutableHeaders
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import (
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from rig.episode_dir import EpisodeDir
from rig.errors import InputError
from rig.formats.audit import NO_FAILURE, Audit
from rig.local_server import LocalServer
from rig.report.build import CSP, Report

HOST = "127.0.0.1"
_MAX_BODY = 64 * 1024


def _same_origin(request: Request) -> bool:
    """A browser's POST must come from a page of this server (no cross-site form posts to the local view)."""
    origin = request.headers.get("origin")
    if origin is None or origin == "null":
        return request.headers.get("sec-fetch-site") in (None, "same-origin", "none")
    return urlsplit(origin).netloc == request.headers.get("host")


class TooLarge(ValueError):
    """A request body over the limit (answered 413)."""


async def _body(request: Request, limit: int = _MAX_BODY) -> bytes:
    """The request body, refused by its Content-Length before anything is read, and never read past `limit`."""
    declared = request.headers.get("content-length", "")
    if declared.strip().isdigit() and int(declared) > limit:
        raise TooLarge(f"the audit is too large ({int(declared)} bytes; at most {limit})")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise TooLarge(f"the audit is too large (more than {limit} bytes)")
        chunks.append(chunk)
    return b"".join(chunks)


async def _fields(request: Request) -> dict[str, str]:
    body = await _body(request)
    if request.headers.get("content-type", "").startswith("application/json"):
        data = json.loads(body or b"{}")
        if not isinstance(data, dict):
            raise ValueError("send a JSON object")
        return {k: "" if v is None else str(v) for k, v in data.items()}
    return {k: v[-1] for k, v in parse_qs(body.decode("utf-8"), keep_blank_values=True).items()}


def make_app(report: Report) -> Starlette:
    """The view's ASGI app over a report already written to `report.out`."""
    lock = threading.Lock()

    async def save_audit(request: Request) -> Response:
        eid = request.path_params["episode_id"]
        if not _same_origin(request):
            return PlainTextResponse("cross-origin audit refused", status_code=403)
        episode = report.run.by_id(eid)
        if episode is None:
            return PlainTextResponse(f"no episode {eid!r} in this run", status_code=404)
        try:
            fields = await _fields(request)
            label = fields.get("label") or NO_FAILURE
            audit = Audit.model_validate({"label": None if label == NO_FAILURE else label,
                                          "note": fields.get("note", ""), "auditor": fields.get("auditor", "")})
        except TooLarge as e:
            return PlainTextResponse(str(e), status_code=413)
        except (ValueError, ValidationError, UnicodeDecodeError, RecursionError) as e:
            return PlainTextResponse(f"invalid audit: {e}", status_code=422)
        with lock:
            EpisodeDir(episode.dir).write_audit(audit)
            fresh = report.reload_episode(eid)
            assert fresh is not None
            report.write_episode(fresh)
            report.write_index()
        logger.info("audit of {} saved: {}", eid, audit.label or NO_FAILURE)
        if request.headers.get("content-type", "").startswith("application/json"):
            return JSONResponse(json.loads(audit.model_dump_json()))
        return RedirectResponse(f"/episodes/{eid}.html#audit", status_code=303)

    return Starlette(routes=[Route("/api/audit/{episode_id}", save_audit, methods=["POST"]),
                             Mount("/", StaticFiles(directory=report.out, html=True))],
                     middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=[HOST, "localhost"]), Middleware(_Headers)])


class _Headers:
    """Every response carries the report's Content-Security-Policy and is never cached (pages change on audit)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers["Content-Security-Policy"] = CSP
                headers["Cache-Control"] = "no-store"
            await send(message)

        await self.app(scope, receive, send_with_headers if scope["type"] == "http" else send)


class ViewServer:
    """`rig view` in a background thread: `with ViewServer(runs_dir) as v: v.url`."""

    def __init__(self, runs_dir: str | Path, port: int = 0, out_dir: str | Path | None = None) -> None:
        self._tmp = None if out_dir is not None else tempfile.TemporaryDirectory(prefix="rig-view-")
        out = Path(out_dir) if out_dir is not None else Path(self._tmp.name)  # type: ignore[union-attr]
        self.report = Report(Path(runs_dir), out)
        self.report.write()
        self._server = LocalServer(make_app(self.report), port, what="the report view")
        self.url = self._server.url

    def start(self) -> "ViewServer":
        """Start serving; return once the server accepts connections."""
        self._server.start()
        return self

    def stop(self) -> None:
        """Stop serving and remove the temporary report."""
        self._server.stop()
        if self._tmp is not None:
            self._tmp.cleanup()

    def __enter__(self) -> "ViewServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve_view(runs_dir: str | Path, port: int = 8766, out_dir: str | Path | None = None) -> None:
    """Write the report of `runs_dir` (to a temporary folder unless `out_dir`) and serve it on 127.0.0.1:`port`
    until interrupted (Ctrl-C or SIGTERM; the temporary folder is removed either way); audits posted from the
    episode pages are saved as audit.json in the episode directories."""
    if not 0 <= port <= 65535:
        raise InputError("--port", None, f"{port} is not a TCP port (0 to 65535)")
    previous = signal.signal(signal.SIGTERM, _exit_on_sigterm)  # until uvicorn takes over: unwind, remove the folder
    try:
        with tempfile.TemporaryDirectory(prefix="rig-view-") as tmp:
            report = Report(Path(runs_dir), Path(out_dir) if out_dir is not None else Path(tmp))
            report.write()
            server = LocalServer(make_app(report), port, what="the report view")  # InfraError when the port is taken
            logger.info("report of {} at {}/ (Ctrl-C to stop)", runs_dir, server.url)
            server.run()  # uvicorn handles SIGINT and SIGTERM: it stops serving, then raises the signal again
    finally:
        signal.signal(signal.SIGTERM, previous)


def _exit_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)
