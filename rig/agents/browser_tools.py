"""The browser tools of the tool server, named and shaped as Playwright's MCP server names them, on the episode's
recorded pages; and fetching a page in a tab of its own for `web_fetch` and `pdf_read`.

Element refs come from `browser_snapshot` (Playwright's AI snapshot: `- button "Apply" [ref=e12]`) and resolve with
`page.get_by_ref`, as in Playwright's MCP server; a ref is valid until the next snapshot. Every action goes through
the page, so the recorder sees it like any other driver's.

The fetch tab loads a URL with `rig.network.politeness.polite_goto`: a 429 or 503 is retried (its `Retry-After` honoured,
capped), and one still answered after the retries is a tool error saying the page is rate-limited, never its error
page as content. A document whose `Content-Length` is over `MAX_RESPONSE_BYTES` is stopped as soon as it starts to
load (only what was parsed by then is read), and a fetch that timed out is stopped too; after either, the fetch tab
is closed and a new one opened (and watched by the recorder) before the next fetch, so one huge or hanging page
never makes the next fetch wait.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from contextlib import suppress
from typing import TYPE_CHECKING

from playwright.async_api import BrowserContext, Frame, Locator, Page, Response
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from replay.perform import parsed
from rig.errors import AgentError
from rig.network.politeness import BACKOFF_STATUSES, Politeness, polite_goto
from rig.tools.session import Fetched, web_url

if TYPE_CHECKING:
    from rig.formats.episode import PolitenessRecord

#: Tab actions of `browser_tabs`, as Playwright's MCP server takes them.
TAB_ACTIONS = ("list", "new", "close", "select")
#: A document larger than this (by its Content-Length) is not loaded whole in the fetch tab.
MAX_RESPONSE_BYTES = 8 * 1024 * 1024
#: How `web_fetch` retries 429/503 when the run has no politeness of its own (a loopback run).
FETCH_POLITENESS = Politeness(retries=3, backoff_s=1.0, max_backoff_s=10.0)
_REF = re.compile(r"^(?:f\d+)?e\d+$")
_BLANK_LINES = re.compile(r"\n{3,}")

#: A short, stable selector for an element (what a trajectory step names as its `target`).
_SELECTOR_JS = """e => {
  const css = s => (window.CSS && CSS.escape) ? CSS.escape(s) : s;
  if (e.id) return '#' + css(e.id);
  const tag = e.tagName.toLowerCase();
  const name = e.getAttribute('name');
  if (name) return `${tag}[name="${name.replace(/"/g, '\\\\"')}"]`;
  const text = (e.innerText || e.value || '').trim().replace(/\\s+/g, ' ').slice(0, 60);
  return text ? `${tag}:has-text("${text.replace(/"/g, '\\\\"')}")` : tag;
}"""


def clean_text(text: str) -> str:
    """Visible page text tidied for a model: lines stripped, runs of blank lines cut to one."""
    lines = [line.strip() for line in text.replace("\r", "").split("\n")]
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()


#: The page's visible text, at most `n` characters of it, and its whole length.
_TEXT_JS = "n => { const t = document.body ? document.body.innerText : ''; return [t.length, t.slice(0, n)]; }"


class _LargeDocument:
    """Watches a tab's next document: `committed` is set (to its response) once a document whose Content-Length is
    over the limit has started to load in the tab."""

    def __init__(self, page: Page, limit: int) -> None:
        self.page, self.limit = page, limit
        self.response: Response | None = None
        self.committed: asyncio.Future[Response] = asyncio.get_running_loop().create_future()
        page.on("response", self._response)
        page.on("framenavigated", self._navigated)

    def _response(self, response: Response) -> None:
        if response.frame == self.page.main_frame and response.request.is_navigation_request():
            length = response.headers.get("content-length", "")
            self.response = response if length.isdigit() and int(length) > self.limit else None

    def _navigated(self, frame: Frame) -> None:
        if frame == self.page.main_frame and self.response is not None and not self.committed.done():
            self.committed.set_result(self.response)

    def detach(self) -> None:
        self.page.remove_listener("response", self._response)
        self.page.remove_listener("framenavigated", self._navigated)
        self.committed.cancel()


class BrowserTools:
    """The Playwright-MCP-named tools on one episode's recorded browser context."""

    def __init__(self, context: BrowserContext, page: Page, base_url: str, timeout_s: float = 15.0,
                 pdf_body: Callable[[str], bytes | None] | None = None,
                 watching: Callable[[Page], Awaitable[None]] | None = None,
                 politeness: Politeness | None = None, politeness_record: PolitenessRecord | None = None) -> None:
        self.context, self.current, self.base_url = context, page, base_url
        #: The bytes the recorder read of a PDF opened as a page (`Recorder.pdf_body`): Chromium's PDF viewer takes
        #: the response over, and `Response.body()` may then give the viewer's HTML.
        self.pdf_body = pdf_body
        #: Waits until the recorder watches a new page (`Recorder.watching`): the fetch tab loads a URL at once.
        self.watching = watching
        self.timeout_ms = timeout_s * 1000
        #: How the fetch tab retries 429/503: a live run's politeness, else FETCH_POLITENESS; and its record.
        self.politeness = politeness or FETCH_POLITENESS
        self.politeness_record = politeness_record
        self._fetch_page: Page | None = None
        #: Set after an oversize document or a timeout: the fetch tab is closed and a new one opened before the next
        #: fetch.
        self._fetch_stale = False

    # ---- reading -------------------------------------------------------------------------------------

    async def snapshot(self) -> str:
        """The current tab as Playwright's MCP server shows it: URL, title and an accessibility snapshot with refs."""
        page = self._page()
        try:
            tree = await page.aria_snapshot(mode="ai", timeout=self.timeout_ms)
        except PlaywrightError as exc:
            raise AgentError(f"the page could not be read: {_first_line(exc)}") from None
        return f"- Page URL: {page.url}\n- Page Title: {await _title(page)}\n- Page Snapshot:\n```yaml\n{tree}\n```"

    async def selector_for(self, ref: object) -> str | None:
        """A selector naming the element behind `ref` (for the step's `target`); None when it does not resolve."""
        if not isinstance(ref, str) or not _REF.match(ref):
            return None
        try:
            return await self._page().get_by_ref(ref).evaluate(_SELECTOR_JS, timeout=2000)
        except PlaywrightError:
            return None

    # ---- acting ---------------------------------------------------------------------------------------

    async def navigate(self, url: str) -> str:
        """Open `url` in the current tab."""
        page = self._page()
        target = web_url(url, page.url if page.url.startswith("http") else self.base_url, "url")
        try:
            await page.goto(target, timeout=max(self.timeout_ms, 30_000))
        except PlaywrightError as exc:
            raise AgentError(f"could not open {target}: {_first_line(exc)}") from None
        return await self.snapshot()

    async def click(self, ref: str) -> str:
        """Click the element behind `ref`."""
        await self._act(ref, lambda loc: loc.click(timeout=self.timeout_ms))
        return await self.snapshot()

    async def type(self, ref: str, text: str, submit: bool = False) -> str:
        """Fill the element behind `ref` with `text` (then press Enter with `submit`)."""
        await self._act(ref, lambda loc: loc.fill(text, timeout=self.timeout_ms))
        if submit:
            await self._act(ref, lambda loc: loc.press("Enter", timeout=self.timeout_ms))
        return await self.snapshot()

    async def select_option(self, ref: str, values: list[str]) -> str:
        """Select `values` (option values or labels) in the dropdown behind `ref`."""
        if not values:
            raise AgentError("values: give at least one option to select")
        # like Playwright's MCP server: a string matches an option's value or its label
        await self._act(ref, lambda loc: loc.select_option(values, timeout=self.timeout_ms))
        return await self.snapshot()

    async def navigate_back(self) -> str:
        """Go back in the current tab's history."""
        page = self._page()
        try:
            await page.go_back(timeout=max(self.timeout_ms, 30_000))
        except PlaywrightError as exc:
            raise AgentError(f"could not go back: {_first_line(exc)}") from None
        return await self.snapshot()

    async def tabs(self, action: str, index: int | None = None) -> str:
        """List, open, close or select a tab (`list`, `new`, `close`, `select`)."""
        if action not in TAB_ACTIONS:
            raise AgentError(f"action: {action!r} is not one of {', '.join(TAB_ACTIONS)}")
        if action == "new":
            self.current = await self.context.new_page()
        elif action in ("close", "select"):
            pages = self._tabs()
            if index is None and action == "select":
                raise AgentError("index: `select` needs the tab's index (see `browser_tabs` with action `list`)")
            page = self.current if index is None else _pick(pages, index)
            if action == "select":
                self.current = page
                await page.bring_to_front()
            else:
                if len(pages) == 1:
                    raise AgentError("the last tab cannot be closed")
                await page.close()
                if page is self.current:
                    self.current = [p for p in self._tabs() if p is not page][-1]
        return await self._tab_list()

    # ---- fetching -------------------------------------------------------------------------------------

    async def fetch(self, url: str, max_chars: int) -> Fetched:
        """Open `url` in the fetch tab (a tab of its own, so the current tab's state is left alone): the page and its
        responses reach the archive and its state the trajectory like any navigation. At most `max_chars` of its text
        are read; a 429/503 is retried, then refused as rate-limited; an oversize document is stopped and cut."""
        target = web_url(url, self.base_url, "url")
        page = await self.fetch_page()
        large = _LargeDocument(page, MAX_RESPONSE_BYTES)
        nav = asyncio.ensure_future(polite_goto(page, target, self.politeness, self.politeness_record,
                                                max(self.timeout_ms, 30_000)))
        try:
            await asyncio.wait({nav, large.committed}, return_when=asyncio.FIRST_COMPLETED)
            if not nav.done():
                return await self._cut_short(page, target, large.committed.result(), max_chars)
            response = nav.result()
        except PlaywrightTimeoutError as exc:
            await self._stop(page)
            raise AgentError(f"could not fetch {target}: {_first_line(exc).rstrip('.')}; the fetch tab is reset for "
                             "the next fetch") from None
        except PlaywrightError as exc:
            raise AgentError(f"could not fetch {target}: {_first_line(exc)}") from None
        finally:
            large.detach()
            if not nav.done():
                nav.cancel()
            await asyncio.wait({nav})  # the navigation ends before the tab is read or reset
            if not nav.cancelled():
                nav.exception()  # retrieved (raised above when it mattered)
        if response is not None and response.status in BACKOFF_STATUSES:
            raise AgentError(f"{target} is rate-limited: it answered {response.status} to all "
                             f"{self.politeness.retries + 1} tries (Retry-After honoured, at most "
                             f"{self.politeness.max_backoff_s:g} s apart); its error page is not the page's content. "
                             "Try again later, or use another source")
        return await self._fetched(page, target, response, max_chars)

    async def _fetched(self, page: Page, target: str, response: Response | None, max_chars: int) -> Fetched:
        """What a loaded document in the fetch tab gave: its PDF bytes, or its title and text."""
        content_type = (await response.all_headers()).get("content-type", "") if response is not None else ""
        body: bytes | None = None
        if response is not None and "html" not in content_type.lower():
            with suppress(PlaywrightError):
                body = await response.body()
        fetched = Fetched(page.url, response.status if response else None, content_type, body, "", "")
        if fetched.is_pdf and response is not None:
            kept = self.pdf_body(response.url) if self.pdf_body is not None else None
            fetched.body = kept if kept is not None else body if body and body.lstrip()[:5] == b"%PDF-" else None
            return fetched
        fetched.title, fetched.text, fetched.cut = await self._text(page, target, max_chars)
        return fetched

    async def _cut_short(self, page: Page, target: str, response: Response, max_chars: int) -> Fetched:
        """An oversize document: stop loading it, read what was parsed, and reset the tab before the next fetch."""
        await self._stop(page)
        length = response.headers.get("content-length", "?")
        content_type = response.headers.get("content-type", "")
        if "pdf" in content_type.lower():
            raise AgentError(f"{target}: the PDF is {length} bytes, more than the {MAX_RESPONSE_BYTES} web_fetch and "
                             "pdf_read read")
        title, text, _ = await self._text(page, target, max_chars)
        cut = (f"the response is {length} bytes, more than the {MAX_RESPONSE_BYTES} the fetch tab loads: it stopped "
               "loading, and only the text read by then is shown")
        return Fetched(page.url, response.status, content_type, None, title, text, cut)

    async def _text(self, page: Page, target: str, max_chars: int) -> tuple[str, str, str | None]:
        """The page's title, at most `max_chars` of its visible text, and the cut (None: the whole text)."""
        try:
            length, text = await asyncio.wait_for(page.evaluate(_TEXT_JS, max_chars), self.timeout_ms / 1000)
        except (PlaywrightError, TimeoutError) as exc:
            await self._stop(page)
            late = isinstance(exc, TimeoutError)
            reason = f"not read within {self.timeout_ms / 1000:g} s" if late else _first_line(exc)
            raise AgentError(f"{target}: the page text could not be read ({reason})") from None
        cut = f"the page text is {length} characters, only its beginning is shown" if length > max_chars else None
        return await _title(page), clean_text(text), cut

    async def _stop(self, page: Page) -> None:
        """Stop whatever the fetch tab still loads, and have it replaced before the next fetch."""
        self._fetch_stale = True
        with suppress(PlaywrightError, TimeoutError):
            await asyncio.wait_for(page.evaluate("window.stop()"), 5)

    async def fetch_page(self) -> Page:
        """The tab `web_fetch` and `pdf_read` load pages in (opened on first use, and anew after an oversize document
        or a timeout)."""
        if self._fetch_stale and self._fetch_page is not None:
            with suppress(PlaywrightError, TimeoutError):
                await asyncio.wait_for(self._fetch_page.close(), 10)
            self._fetch_page = None  # closed, or left to close on its own: never loaded in again
        self._fetch_stale = False
        if self._fetch_page is None or self._fetch_page.is_closed():
            self._fetch_page = await self.context.new_page()
            if self.watching is not None:
                await self.watching(self._fetch_page)
            if self.current.is_closed():
                self.current = self._fetch_page
            else:
                await self.current.bring_to_front()
        return self._fetch_page

    # ---- helpers ---------------------------------------------------------------------------------------

    def _page(self) -> Page:
        if self.current.is_closed():
            open_tabs = self._tabs()
            if not open_tabs:
                raise AgentError("no tab is open; open one with `browser_tabs` (action `new`)")
            self.current = open_tabs[-1]
        return self.current

    def _tabs(self) -> list[Page]:
        return [p for p in self.context.pages if not p.is_closed()]

    async def _act(self, ref: str, act: Callable[[Locator], Awaitable[object]]) -> None:
        """Do `act` on the element behind `ref`; AgentError when the ref is not on the page or the action fails."""
        if not isinstance(ref, str) or not _REF.match(ref):
            raise AgentError(f"ref: {ref!r} is not an element ref; take one from `browser_snapshot` (like e12)")
        loc = self._page().get_by_ref(ref)
        try:
            if not await loc.count():
                raise AgentError(f"ref {ref}: no such element on the page now; take a fresh `browser_snapshot` (refs "
                                 "change as the page does)")
            await act(loc)
        except PlaywrightError as exc:
            raise AgentError(f"ref {ref}: {_first_line(exc)}") from None
        await parsed(self._page(), self.timeout_ms)

    async def _tab_list(self) -> str:
        lines = ["### Open tabs"]
        for i, p in enumerate(self._tabs()):
            mark = " (current)" if p is self.current else ""
            role = " (fetch tab)" if p is self._fetch_page else ""
            lines.append(f"- {i}:{mark}{role} [{await _title(p)}]({p.url})")
        return "\n".join(lines)


def _pick(pages: list[Page], index: int) -> Page:
    if not 0 <= index < len(pages):
        raise AgentError(f"index: no tab {index}; there are {len(pages)} (0 to {len(pages) - 1})")
    return pages[index]


async def _title(page: Page) -> str:
    try:
        return await page.title()
    except PlaywrightError:
        return ""


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
