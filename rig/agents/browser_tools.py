"""The browser tools of the tool server, named and shaped as Playwright's MCP server names them, on the episode's
recorded pages; and fetching a page in a tab of its own for `web_fetch` and `pdf_read`.

Element refs come from `browser_snapshot` (Playwright's AI snapshot: `- button "Apply" [ref=e12]`) and resolve with
`page.get_by_ref`, as in Playwright's MCP server; a ref is valid until the next snapshot. Every action goes through
the page, so the recorder sees it like any other driver's.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

from playwright.async_api import BrowserContext, Locator, Page
from playwright.async_api import Error as PlaywrightError

from rig.errors import AgentError

#: Tab actions of `browser_tabs`, as Playwright's MCP server takes them.
TAB_ACTIONS = ("list", "new", "close", "select")
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


@dataclass
class Fetched:
    """A page fetched in the fetch tab: where it ended up, what came back, and its visible text (PDFs: none)."""

    url: str
    status: int | None
    content_type: str
    body: bytes | None
    title: str
    text: str

    @property
    def is_pdf(self) -> bool:
        """Whether the response is a PDF (by content type, or by the `%PDF` signature)."""
        return "pdf" in self.content_type.lower() or bool(self.body and self.body[:5] == b"%PDF-")


def clean_text(text: str) -> str:
    """Visible page text tidied for a model: lines stripped, runs of blank lines cut to one."""
    lines = [line.strip() for line in text.replace("\r", "").split("\n")]
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()


def web_url(url: str, base: str, where: str) -> str:
    """An absolute http(s) URL (relative ones against `base`); AgentError for any other scheme."""
    if not isinstance(url, str) or not url.strip():
        raise AgentError(f"{where}: give a URL")
    target = urljoin(base, url.strip())
    scheme = urlsplit(target).scheme.lower()
    if scheme not in ("http", "https"):
        raise AgentError(f"{where}: only http(s) URLs are opened, not {scheme or 'a URL without a scheme'} ({url!r})")
    return target


class BrowserTools:
    """The Playwright-MCP-named tools on one episode's recorded browser context."""

    def __init__(self, context: BrowserContext, page: Page, base_url: str, timeout_s: float = 15.0,
                 pdf_body: Callable[[str], bytes | None] | None = None,
                 watching: Callable[[Page], Awaitable[None]] | None = None) -> None:
        self.context, self.current, self.base_url = context, page, base_url
        #: The bytes the recorder read of a PDF opened as a page (`Recorder.pdf_body`): Chromium's PDF viewer takes
        #: the response over, and `Response.body()` may then give the viewer's HTML.
        self.pdf_body = pdf_body
        #: Waits until the recorder watches a new page (`Recorder.watching`): the fetch tab loads a URL at once.
        self.watching = watching
        self.timeout_ms = timeout_s * 1000
        self._fetch_page: Page | None = None

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

    async def fetch(self, url: str) -> Fetched:
        """Open `url` in the fetch tab (a tab of its own, so the current tab's state is left alone): the page and its
        responses reach the archive and its state the trajectory like any navigation."""
        target = web_url(url, self.base_url, "url")
        page = await self.fetch_page()
        try:
            response = await page.goto(target, timeout=max(self.timeout_ms, 30_000))
        except PlaywrightError as exc:
            raise AgentError(f"could not fetch {target}: {_first_line(exc)}") from None
        body: bytes | None = None
        content_type = ""
        if response is not None:
            content_type = (await response.all_headers()).get("content-type", "")
            try:
                body = await response.body()
            except PlaywrightError:
                body = None
        fetched = Fetched(page.url, response.status if response else None, content_type, body, "", "")
        if fetched.is_pdf and response is not None:
            kept = self.pdf_body(response.url) if self.pdf_body is not None else None
            fetched.body = kept if kept is not None else body if body and body.lstrip()[:5] == b"%PDF-" else None
        if not fetched.is_pdf:
            fetched.title = await _title(page)
            try:
                fetched.text = clean_text(await page.locator("body").inner_text(timeout=self.timeout_ms))
            except PlaywrightError as exc:
                raise AgentError(f"{target}: the page text could not be read: {_first_line(exc)}") from None
        return fetched

    async def fetch_page(self) -> Page:
        """The tab `web_fetch` and `pdf_read` load pages in (opened on first use)."""
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
