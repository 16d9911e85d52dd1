"""Network capture: every request and response of a context into the WARC, and the in-flight count for settling.

A request counts as in flight until its response headers arrive (or it fails): a page that never reads a
fetch body never "finishes" that request, so finishing is not waited for. The body is read in the
background (`Response.body()` resolves once the browser has it) and archived with the response.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from http import HTTPStatus

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame, Request, Response

from recorders.redact import Redactor
from recorders.warc import Exchange, WarcArchive

_UNSETTLING = {"eventsource", "websocket"}  # long-lived by design: never counted as "in flight"
_DROP_RESPONSE = {"content-encoding", "transfer-encoding", "content-length"}  # the body is stored decoded
_HEADERS_TIMEOUT_S = 10.0


class NetworkCapture:
    """Handlers for a context's `request`, `response` and `requestfailed` events."""

    def __init__(
        self,
        archive: WarcArchive,
        redactor: Redactor,
        clock: Callable[[], float],
        max_body: int,
        body_timeout_s: float,
        stale_s: float,
    ) -> None:
        self._archive, self._redactor, self._clock = archive, redactor, clock
        self._max_body, self._body_timeout, self._stale = max_body, body_timeout_s, stale_s
        self._started: dict[Request, tuple[float, str]] = {}
        self._waiting: dict[Request, float] = {}  # requests that keep the page unsettled -> when they started
        self._tasks: set[asyncio.Task[None]] = set()
        self._ended = asyncio.Event()  # set whenever a waited-for request ends
        self.last_activity = time.monotonic()
        #: The response record id of each frame's current document.
        self.documents: dict[Frame, str] = {}

    @property
    def inflight(self) -> int:
        """Requests waiting for their response, except long-lived ones (event streams, or older than `stale_s`)."""
        now = time.monotonic()
        return sum(1 for t in self._waiting.values() if now - t < self._stale)

    def quiet_for(self) -> float:
        """Seconds with no request waiting for its response (0 while any is)."""
        if self.inflight > 0:
            return 0.0
        return time.monotonic() - self.last_activity

    def touch(self) -> None:
        """Count now as network activity (an action just ran: a request it started may still be on its way)."""
        self.last_activity = time.monotonic()

    def on_request(self, request: Request) -> None:
        """A request started."""
        if not request.url.startswith(("http:", "https:")):
            return
        self._started[request] = (self._clock(), self._archive.new_id())
        self.last_activity = time.monotonic()
        if request.resource_type not in _UNSETTLING:
            self._waiting[request] = self.last_activity

    def on_response(self, response: Response) -> None:
        """Response headers arrived: archive the exchange once the body is in."""
        self._end(response.request, response)

    def on_failed(self, request: Request) -> None:
        """A request failed before a response: archive the request alone."""
        self._end(request, None)

    def _end(self, request: Request, response: Response | None) -> None:
        started = self._started.pop(request, None)
        if started is None:
            return
        if self._waiting.pop(request, None) is not None:
            self._ended.set()
        self.last_activity = time.monotonic()
        if response is not None and request.is_navigation_request():
            rid = self._archive.new_id()
            with contextlib.suppress(PlaywrightError):
                self.documents[request.frame] = rid
        else:
            rid = self._archive.new_id() if response is not None else None
        task = asyncio.get_running_loop().create_task(self._capture(request, response, started, rid))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def wait_idle(self, timeout_s: float) -> None:
        """Wait (bounded) until no request waits for its response (one turning long-lived counts as done)."""
        deadline = time.monotonic() + timeout_s
        while self.inflight and (left := deadline - time.monotonic()) > 0:
            now = time.monotonic()
            stale = min((t + self._stale - now for t in self._waiting.values() if now - t < self._stale), default=left)
            self._ended.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._ended.wait(), max(0.001, min(left, stale)))

    async def drain(self, timeout_s: float) -> None:
        """Wait (bounded) for pending bodies; archive what is still missing as truncated."""
        if self._tasks:
            _, pending = await asyncio.wait(list(self._tasks), timeout=timeout_s)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)

    async def _capture(
        self, request: Request, response: Response | None, started: tuple[float, str], rid: str | None
    ) -> None:
        date, request_id = started
        r = self._redactor
        try:
            jobs = [request.headers_array()] + ([response.headers_array()] if response else [])
            got = await asyncio.wait_for(asyncio.gather(*jobs), _HEADERS_TIMEOUT_S)
            req_headers, resp_headers = got[0], (got[1] if response else [])
        except (TimeoutError, PlaywrightError):
            return  # the page or context closed under us: nothing left to archive
        response_date = self._clock()
        body, truncated = b"", None
        if response is not None and not 300 <= response.status < 400:  # redirects have no body to read
            try:
                body = await asyncio.wait_for(response.body(), self._body_timeout)
            except (TimeoutError, PlaywrightError, asyncio.CancelledError):
                truncated = "time"  # never finished (e.g. the page did not read it) or the page went away
        pairs = [(h["name"], h["value"]) for h in req_headers if not h["name"].startswith(":")]
        if not any(k.lower() == "host" for k, _ in pairs):
            pairs.insert(0, ("Host", request.url.split("/")[2]))
        ctype = next((v for k, v in pairs if k.lower() == "content-type"), None)
        ex = Exchange(
            url=r.url(request.url),
            method=request.method,
            request_headers=r.headers(pairs),
            request_body=r.body(request.post_data_buffer or b"", ctype),
            request_date=date,
            request_id=request_id,
        )
        if response is not None and rid is not None:
            if len(body) > self._max_body:
                truncated = "length"
            headers = [(h["name"], h["value"]) for h in resp_headers]
            body = r.response_body(
                body[: self._max_body], next((v for k, v in headers if k.lower() == "content-type"), None)
            )
            headers = [(k, v) for k, v in headers if k.lower() not in _DROP_RESPONSE and not k.startswith(":")]
            headers.append(("Content-Length", str(len(body))))
            ex.response_id, ex.status = rid, response.status
            ex.reason = response.status_text or _reason(response.status)
            ex.response_headers = r.headers(headers)
            ex.response_body, ex.response_date, ex.truncated = body, response_date, truncated
        self._archive.put(ex)


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""
