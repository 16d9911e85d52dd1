"""Network capture: every request and response of a context into the WARC, and the in-flight count for settling.

A request counts as in flight until its response headers arrive (or it fails): a page that never reads a
fetch body never "finishes" that request, so finishing is not waited for. The body is read in the
background from the moment the response arrives (`Response.body()` resolves once the browser has it) and
archived with the response.

Chromium keeps a response body in the page's renderer only until the page's next document commits, and a
page may read a fetch's answer and navigate away at once, long before a busy recorder asks for the body. So
each page (and each out-of-process frame) gets a CDP session of its own configuring `Network.
configureDurableMessages`: the browser process then keeps the bodies it delivers, past navigations, and
`Response.body()` still reads them afterwards (`keep_bodies`). A read that fails is retried while the page
is open. The same session's `Network.dataReceived` events tell a body still arriving from one that stalled. Those events
come from the page's renderer, whose main thread passes on no byte while it parses a 10 MB table or runs a long
script (4 s for the hostile site's 10 MB page idle, over 10 s on a busy machine). So a body that nothing of arrived
for `body_timeout_ms` is given up on only once the renderer, asked through the same session (`Runtime.evaluate` of
`0`), answers within `_BUSY_S` and no byte comes in `_GRACE_S` after; a slower answer means the renderer was busy,
and the timeout starts again from it.
A body that still cannot be read (nothing of it arrived for `body_timeout_ms` before it finished, its page
closed first, it was too large to keep) is archived as missing, never as an empty body: the response record carries
`WARC-Rig-Missing: body not readable: <reason>` (and `WARC-Truncated`) and `missing_bodies` counts it.

A PDF opened as a page is the exception: Chromium's PDF viewer takes the response over, and a body read after
that (a busy machine reads late) is the viewer's HTML, not the PDF. So the same sessions pause each document's
response (CDP `Fetch`, response stage) and read a PDF's bytes before letting it on (`pdf_body`); the archive and
the tools (`web_fetch`, `pdf_read`) take those.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import time
from collections import OrderedDict
from collections.abc import Callable
from http import HTTPStatus
from urllib.parse import urldefrag, urlsplit

from loguru import logger
from playwright.async_api import (
    BrowserContext,
    CDPSession,
    Frame,
    Page,
    Request,
    Response,
)
from playwright.async_api import Error as PlaywrightError
from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_fixed

from recorders.background import spawn
from recorders.redact import Redactor
from recorders.warc import Exchange, WarcArchive

_UNSETTLING = {"eventsource", "websocket"}  # long-lived by design: never counted as "in flight"
_DROP_RESPONSE = {"content-encoding", "transfer-encoding", "content-length"}  # the body is stored decoded
_HEADERS_TIMEOUT_S = 10.0
_TRANSFER_S = 60.0  # a body that finished loading is read within this (it is in the browser already)
_CLOSE_TRANSFER_S = 8.0  # at close, finished bodies still being read get this much longer
_BUSY_S = 0.5  # a renderer slower than this to answer is busy: the bytes it holds back are no stall
_GRACE_S = 0.25  # after a prompt answer, bytes a busy spell queued arrive within this
_READ_ATTEMPTS, _READ_RETRY_S = 3, 0.05  # a failed body read is tried again this often, this far apart
_KEPT_TOTAL_BYTES = 200_000_000  # the bodies a page's browser-side store holds at most (the oldest go first)
_REASON_CHARS = 200
_KEPT_PDFS = 16  # the latest PDF documents whose bytes are kept (`pdf_body`)
#: What a PDF page's body read once the viewer took it over begins with (Chromium's viewer wrapper page).
_VIEWER, _VIEWER_WITHIN = b'<template shadowrootmode="closed">', 1024
#: Every document's response pauses on the recorder's sessions so that a PDF's bytes are read before its viewer.
_DOCUMENT_RESPONSES = {"patterns": [{"urlPattern": "*", "resourceType": "Document", "requestStage": "Response"}]}


def _is_pdf(content_type: str) -> bool:
    """Whether a response's content type says PDF."""
    return "pdf" in content_type.lower()


def missing_reason(why: str) -> str:
    """The `WARC-Rig-Missing` value for a body that could not be read: one line, bounded."""
    line = " ".join(why.split())
    return f"body not readable: {line[:_REASON_CHARS]}"


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
        self._reads: dict[asyncio.Future[bytes], Response] = {}  # body reads under way -> the response read
        self._arriving: dict[str, float] = {}  # URL -> when bytes of its body last arrived (monotonic)
        self._ended = asyncio.Event()  # set whenever a waited-for request ends
        self._sessions: list[CDPSession] = []  # the sessions keeping bodies (`keep_bodies`)
        self._renderers: dict[Page | Frame, CDPSession] = {}  # each kept target's session: asks if it is busy
        self._kept: dict[Frame, str] = {}  # out-of-process frames kept, by the origin they were kept for
        self._pdfs: OrderedDict[str, bytes] = OrderedDict()  # URL (no fragment) -> the PDF document's bytes
        self._pausing: set[asyncio.Task[None]] = set()  # answers to paused document responses
        self.last_activity = time.monotonic()
        #: When the agent's action under way began (monotonic, and ms since the epoch for the page), else None.
        self.action_began: float | None = None
        self.action_began_ms: float | None = None
        #: The response record id of each frame's current document.
        self.documents: dict[Frame, str] = {}
        #: Responses archived without their body (each record says why in `WARC-Rig-Missing`).
        self.missing_bodies = 0

    def begin_action(self) -> None:
        """An agent's action begins: a request it starts is waited for whatever its age (up to the step's
        `max_settle_ms`): on a loaded machine an ordinary fetch takes longer than `stale_s`, and a step recorded before
        its answer holds a half-updated page."""
        self.action_began = time.monotonic()
        self.action_began_ms = time.time() * 1000

    def end_action(self) -> None:
        """The action's step is written: requests go stale by age again."""
        self.action_began = self.action_began_ms = None

    def _fresh(self, started: float) -> bool:
        """Started by the action under way: never long-lived."""
        return self.action_began is not None and started >= self.action_began

    def _long_lived(self, started: float, now: float) -> bool:
        return now - started >= self._stale and not self._fresh(started)

    @property
    def inflight(self) -> int:
        """Requests waiting for their response, except long-lived ones (event streams, or older than `stale_s` and
        started before the action under way)."""
        now = time.monotonic()
        return sum(1 for t in self._waiting.values() if not self._long_lived(t, now))

    def navigating(self, page: Page) -> bool:
        """Whether the page's main frame waits for the response of a document it navigates to (until it commits, the
        page answers no script: not even the document it leaves)."""
        return any(r.resource_type == "document" and r.is_navigation_request() and _frame_of(r) == page.main_frame
                   for r in self._waiting)

    def quiet_for(self) -> float:
        """Seconds with no request waiting for its response (0 while any is)."""
        if self.inflight > 0:
            return 0.0
        return time.monotonic() - self.last_activity

    def touch(self) -> None:
        """Count now as network activity (an action just ran: a request it started may still be on its way)."""
        self.last_activity = time.monotonic()

    async def keep_bodies(self, context: BrowserContext, target: Page | Frame) -> None:
        """Have the browser keep the response bodies of a page (or of an out-of-process frame) past its
        navigations, through a CDP session of the recorder's own. Off Chromium, for a frame that runs in its
        parent's process (the parent's session covers it) or once the target is gone, nothing happens."""
        if self._max_body <= 0:
            return  # no body is archived
        if isinstance(target, Frame):
            origin = _origin(target.url)
            if target.parent_frame is None or self._kept.get(target) == origin or target.is_detached():
                return
            parent = target.parent_frame
            if origin is None or origin == _origin(parent.url):
                return  # same origin as its parent: the same process
            self._kept[target] = origin
        try:
            cdp = await context.new_cdp_session(target)
        except PlaywrightError:
            return  # not Chromium, closed, or not a frame of its own
        urls: dict[str, str] = {}  # CDP request id -> URL, while its body loads
        cdp.on("Network.responseReceived", lambda p: urls.__setitem__(p["requestId"], p["response"]["url"]))
        cdp.on("Network.dataReceived", lambda p: self._received(urls.get(p["requestId"])))
        for done in ("Network.loadingFinished", "Network.loadingFailed"):
            cdp.on(done, lambda p: urls.pop(p["requestId"], None))
        try:
            await cdp.send("Network.enable")  # its events tell a body still arriving from one that stalled
            per_body = min(self._max_body, _KEPT_TOTAL_BYTES)
            await cdp.send(
                "Network.configureDurableMessages",
                {"maxTotalBufferSize": _KEPT_TOTAL_BYTES, "maxResourceBufferSize": per_body},
            )
        except PlaywrightError as exc:  # an older Chromium: bodies live in the renderer only
            logger.debug("recorders: response bodies are not kept past navigations: {}", _first_line(exc))
            with contextlib.suppress(PlaywrightError):
                await cdp.detach()
            return
        self._sessions.append(cdp)
        self._renderers[target] = cdp
        cdp.on("Fetch.requestPaused", lambda p: spawn(self._pausing, self._document_response(cdp, p)))
        with contextlib.suppress(PlaywrightError):
            await cdp.send("Fetch.enable", _DOCUMENT_RESPONSES)

    def _viewer_made(self, request: Request, response: Response | None) -> bool:
        """Whether this is the exchange Chromium's PDF viewer makes up for its inner document: a child frame of a
        PDF page loading the PDF's URL, answered in the browser with the viewer's HTML. Not the server's answer,
        so not evidence: it is not archived."""
        if response is None or request.resource_type != "document" or self.pdf_body(request.url) is None:
            return False
        if _is_pdf(response.headers.get("content-type", "")):
            return False
        frame = _frame_of(request)
        return frame is not None and frame.parent_frame is not None

    def pdf_body(self, url: str) -> bytes | None:
        """The bytes of the latest PDF document loaded from `url` (any fragment), read before its viewer took the
        response over; None when none was (not a PDF, not loaded in a page with a session of the recorder's)."""
        return self._pdfs.get(urldefrag(url)[0])

    async def _document_response(self, cdp: CDPSession, paused: dict) -> None:
        """A document's response is paused: keep a PDF's bytes (`pdf_body`), then let the response on."""
        rid = paused["requestId"]
        try:
            heads = {h["name"].lower(): h["value"] for h in paused.get("responseHeaders") or ()}
            status = paused.get("responseStatusCode") or 0
            length = heads.get("content-length", "").strip()
            small = not length.isdigit() or int(length) <= self._max_body  # a larger one is archived truncated
            if 200 <= status < 300 and _is_pdf(heads.get("content-type", "")) and small:
                got = await cdp.send("Fetch.getResponseBody", {"requestId": rid})
                body = base64.b64decode(got["body"]) if got.get("base64Encoded") else got["body"].encode()
                url = urldefrag(paused["request"]["url"])[0]
                self._pdfs.pop(url, None)
                self._pdfs[url] = body
                while len(self._pdfs) > _KEPT_PDFS:
                    self._pdfs.popitem(last=False)
        except PlaywrightError as exc:
            logger.debug("recorders: a PDF's bytes could not be read before its viewer: {}", _first_line(exc))
        finally:
            with contextlib.suppress(PlaywrightError):
                await cdp.send("Fetch.continueRequest", {"requestId": rid})

    def _received(self, url: str | None) -> None:
        if url is not None:
            self._arriving[url] = time.monotonic()

    def on_request(self, request: Request) -> None:
        """A request started."""
        if not request.url.startswith(("http:", "https:")):
            return
        self._started[request] = (self._clock(), self._archive.new_id())
        self.last_activity = time.monotonic()
        if request.resource_type not in _UNSETTLING:
            self._waiting[request] = self.last_activity

    def on_response(self, response: Response) -> None:
        """Response headers arrived: read the body at once, archive the exchange once it is in."""
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
        if self._viewer_made(request, response):
            return
        if response is not None and request.is_navigation_request():
            rid = self._archive.new_id()
            if (frame := _frame_of(request)) is not None:
                self.documents[frame] = rid
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
            stale = min((t + self._stale - now for t in self._waiting.values()
                         if now - t < self._stale and not self._fresh(t)), default=left)
            self._ended.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._ended.wait(), max(0.001, min(left, stale)))

    async def drain(self, timeout_s: float) -> None:
        """Wait (bounded) for pending bodies: `timeout_s`, and up to `_CLOSE_TRANSFER_S` more while bodies that
        finished loading are still being read; archive the rest as missing."""
        if not self._tasks:
            return
        _, pending = await asyncio.wait(list(self._tasks), timeout=timeout_s)
        deadline = time.monotonic() + _CLOSE_TRANSFER_S
        while pending and self._transferring() and (left := deadline - time.monotonic()) > 0:
            _, pending = await asyncio.wait(pending, timeout=left, return_when=asyncio.FIRST_COMPLETED)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)

    def _transferring(self) -> bool:
        """Whether a body read is under way whose body finished loading (it is in the browser: only the transfer
        is slow). Asked of each response now: a read waiting for more bytes has not looked since they came."""
        return any(_ended(response) for response in self._reads.values())

    async def close(self, timeout_s: float) -> None:
        """Detach the sessions keeping bodies (after `drain`)."""
        for cdp in self._sessions:
            with contextlib.suppress(PlaywrightError, TimeoutError):
                await asyncio.wait_for(cdp.detach(), timeout_s)
        self._sessions.clear()
        self._renderers.clear()

    async def _headers(
        self, request: Request, response: Response | None
    ) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
        jobs = [request.headers_array()] + ([response.headers_array()] if response else [])
        got = await asyncio.wait_for(asyncio.gather(*jobs), _HEADERS_TIMEOUT_S)
        return got[0], (got[1] if response else [])

    async def _read(self, response: Response) -> tuple[bytes, str | None, str | None]:
        """The body, its `WARC-Truncated` reason and its `WARC-Rig-Missing` reason. A body still loading gives
        no body once nothing of it arrived for `body_timeout_s` while its renderer answered (a stream that stalls
        forever); one still arriving, held back by a busy renderer, or finished loading and being read (a 10 MB body
        takes seconds on a busy machine), is waited for up to `_TRANSFER_S` in all. A failed read is retried while
        the page is open."""

        pdf_page = response.request.resource_type == "document" and _is_pdf(response.headers.get("content-type", ""))
        if pdf_page and (pdf := self.pdf_body(response.url)) is not None:
            return pdf, None, None  # read before the viewer took it over (a later read gets the viewer)

        def retry(exc: BaseException) -> bool:
            return isinstance(exc, PlaywrightError) and not _page_closed(response)

        async def read() -> bytes:
            async for attempt in AsyncRetrying(
                stop=stop_after_attempt(_READ_ATTEMPTS),
                wait=wait_fixed(_READ_RETRY_S),
                retry=retry_if_exception(retry),
                reraise=True,
            ):
                with attempt:
                    return await response.body()
            raise AssertionError("unreachable")  # pragma: no cover

        reading = asyncio.ensure_future(read())
        url, start = response.url, time.monotonic()
        self._reads[reading] = response
        try:
            await self._wait_read(reading, response, start)
            if not reading.done():
                if _ended(response):
                    why = f"finished, but not read within {_TRANSFER_S:g} s"
                elif time.monotonic() - start >= _TRANSFER_S:
                    why = f"not finished within {_TRANSFER_S:g} s"
                else:
                    why = f"not finished: nothing arrived for {self._body_timeout:g} s"
                return b"", "time", missing_reason(why)
            if pdf_page and _VIEWER in reading.result()[:_VIEWER_WITHIN]:
                return b"", "unspecified", missing_reason("a PDF opened as a page was read only once Chromium's viewer "
                                                          "had taken its response over")
            return reading.result(), None, None
        except PlaywrightError as exc:
            return b"", "unspecified", missing_reason(self._redactor.text(_first_line(exc)))
        finally:
            self._reads.pop(reading, None)
            self._arriving.pop(url, None)
            if not reading.done():
                reading.cancel()

    async def _wait_read(self, reading: asyncio.Future[bytes], response: Response, start: float) -> None:
        """Wait for a body read: up to `_TRANSFER_S` in all, and while the body still loads, only as long as some of
        it arrived within `body_timeout_s` or its renderer was too busy to pass it on (a busy spell is no stall)."""
        url, renderer, free_since = response.url, self._renderer(response), start
        while not reading.done() and (total := start + _TRANSFER_S - time.monotonic()) > 0:
            if _ended(response):  # it is all in the browser: only the transfer is slow
                await asyncio.wait({reading}, timeout=total)
                continue
            last = max(free_since, self._arriving.get(url, start))
            if (left := min(total, last + self._body_timeout - time.monotonic())) > 0:
                await asyncio.wait({reading}, timeout=left)  # still loading: waited for while its bytes keep arriving
                continue
            if renderer is None:
                return
            asking = asyncio.ensure_future(_answer_s(renderer))
            try:
                await asyncio.wait({reading, asking}, timeout=total, return_when=asyncio.FIRST_COMPLETED)
            finally:
                asking.cancel()
            if reading.done() or not asking.done() or asking.cancelled():
                continue  # read, or out of time (the loop ends either way)
            if asking.result() > _BUSY_S:
                free_since = time.monotonic()  # busy until now: its timeout starts again
                continue
            await asyncio.wait({reading}, timeout=_GRACE_S)  # free: bytes a busy spell held back come at once
            if self._arriving.get(url, start) <= last:
                return

    def _renderer(self, response: Response) -> CDPSession | None:
        """The session of the renderer a response's bytes pass through: its out-of-process frame's, else its page's."""
        try:
            frame = response.frame
            return self._renderers.get(frame) or self._renderers.get(frame.page)
        except PlaywrightError:  # a service worker's response: no page
            return None

    async def _capture(
        self, request: Request, response: Response | None, started: tuple[float, str], rid: str | None
    ) -> None:
        date, request_id = started
        r = self._redactor
        readable = response is not None and not 300 <= response.status < 400  # redirects have no body to read
        reading = asyncio.ensure_future(self._read(response)) if response is not None and readable else None
        heads = asyncio.ensure_future(self._headers(request, response))
        try:
            await asyncio.wait([t for t in (heads, reading) if t is not None])
        except asyncio.CancelledError:  # the recording is closing: archive what came in
            for t in (heads, reading):
                if t is not None:
                    t.cancel()
            await asyncio.gather(*(t for t in (heads, reading) if t is not None), return_exceptions=True)
        response_date = self._clock()
        if heads.done() and not heads.cancelled() and heads.exception() is None:
            req_headers, resp_headers = heads.result()
        else:  # the page closed under us (or the recording ended): the headers Playwright had from the start
            req_headers = [{"name": k, "value": v} for k, v in request.headers.items()]
            resp_headers = [{"name": k, "value": v} for k, v in (response.headers if response else {}).items()]
        body, truncated, missing = b"", None, None
        if reading is not None:
            if reading.done() and not reading.cancelled():
                body, truncated, missing = reading.result()
            else:
                truncated, missing = "time", missing_reason("the recording ended before it finished")
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
            body_type = next((v for k, v in headers if k.lower() == "content-type"), None)
            # the headers first: a secret they carry (a cookie set) is learned before the body is scrubbed
            headers = r.headers([(k, v) for k, v in headers if k.lower() not in _DROP_RESPONSE and k[:1] != ":"])
            body = r.response_body(body[: self._max_body], body_type)
            if missing is None:  # a missing body claims no length
                headers.append(("Content-Length", str(len(body))))
            else:
                self.missing_bodies += 1
                logger.debug("recorders: {} {}: {}", request.method, ex.url, missing)
            ex.response_id, ex.status = rid, response.status
            ex.reason = response.status_text or _reason(response.status)
            ex.response_headers = headers
            ex.response_body, ex.response_date, ex.truncated, ex.missing = body, response_date, truncated, missing
        self._archive.put(ex)


async def _answer_s(cdp: CDPSession) -> float:
    """How long a renderer takes to answer a trivial question (an error is an answer too: navigating, closed)."""
    asked = time.monotonic()
    with contextlib.suppress(PlaywrightError):
        await cdp.send("Runtime.evaluate", {"expression": "0"})
    return time.monotonic() - asked


def _ended(response: Response) -> bool:
    """Whether the response finished loading (or failed): its end time is known."""
    return response.request.timing.get("responseEnd", -1) >= 0


def _page_closed(response: Response) -> bool:
    try:
        return response.frame.page.is_closed()
    except PlaywrightError:  # a service worker's response: no page
        return False


def _origin(url: str) -> str | None:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme in ("http", "https") else None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


def _frame_of(request: Request) -> Frame | None:
    """The frame a request was made for; None for a new tab's first document, whose frame does not exist yet."""
    try:
        return request.frame
    except PlaywrightError:  # "Frame for this navigation request is not available"
        return None
