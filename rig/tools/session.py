"""What a tool's function may use: one episode's `ToolSession`, its browser as a `BrowserPort`, and what a fetch gives.

The registry's functions (`rig.tools.registry`) are written against these protocols only, so the declarations
import no browser library; `rig.agents.episode_tools.EpisodeTools` implements the session on the episode's recorded
browser (`rig.agents.browser_tools.BrowserTools` is its port).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urljoin, urlsplit

from rig.tools.errors import ToolError

if TYPE_CHECKING:
    from rig.formats.answer import Answer
    from rig.formats.answer_text import ParseFailure
    from rig.formats.usage import AgentUsageReport
    from rig.tools.knowledge import KnowledgeCatalog
    from rig.tools.search import SearchBackend


@dataclass
class Fetched:
    """A page fetched in the fetch tab: where it ended up, what came back, its visible text (PDFs: none) and, when
    that text is not the whole page's (too long, or the response was stopped), why."""

    url: str
    status: int | None
    content_type: str
    body: bytes | None
    title: str
    text: str
    cut: str | None = None

    @property
    def is_pdf(self) -> bool:
        """Whether the response is a PDF (by content type, or by the `%PDF` signature)."""
        return "pdf" in self.content_type.lower() or bool(self.body and self.body[:5] == b"%PDF-")


@dataclass
class ToolLimits:
    """Bounds of the tools' work (their results' byte caps are declared with each tool)."""

    #: Rows `run_sql` returns at most, and its time limit.
    max_sql_rows: int = 500
    sql_timeout_s: float = 10.0


def web_url(url: object, base: str, where: str) -> str:
    """An absolute http(s) URL (relative ones against `base`); ToolError naming `where` for any other scheme."""
    if not isinstance(url, str) or not url.strip():
        raise ToolError(f"{where}: give a URL")
    target = urljoin(base, url.strip())
    scheme = urlsplit(target).scheme.lower()
    if scheme not in ("http", "https"):
        raise ToolError(f"{where}: only http(s) URLs are opened, not {scheme or 'a URL without a scheme'} ({url!r})")
    return target


class BrowserPort(Protocol):
    """The episode's recorded browser, as the browser tools and the fetching tools use it."""

    async def navigate(self, url: str) -> str:
        """Open `url` in the current tab; the page's snapshot."""
        ...

    async def snapshot(self) -> str:
        """The current tab's URL, title and accessibility snapshot with element refs."""
        ...

    async def click(self, ref: str) -> str:
        """Click the element behind `ref`; the page's snapshot."""
        ...

    async def type(self, ref: str, text: str, submit: bool = False) -> str:
        """Fill the element behind `ref` (then press Enter with `submit`); the page's snapshot."""
        ...

    async def select_option(self, ref: str, values: list[str]) -> str:
        """Select options in the dropdown behind `ref`; the page's snapshot."""
        ...

    async def navigate_back(self) -> str:
        """Go back in the current tab; the page's snapshot."""
        ...

    async def tabs(self, action: str, index: int | None = None) -> str:
        """List, open, close or select a tab; the tab list."""
        ...

    async def fetch(self, url: str, max_chars: int) -> Fetched:
        """Open `url` in the fetch tab (a tab of its own); at most `max_chars` of its text."""
        ...


class ToolSession(Protocol):
    """One episode's tools' state: the browser, the sites server's URL, the PDFs fetched so far, the task's data."""

    browser: BrowserPort
    sites_url: str
    limits: ToolLimits
    #: PDF bytes by the URL they were fetched from (and the URL asked for).
    pdfs: dict[str, bytes]

    def database(self) -> Path:
        """The task's SQLite file; ToolError for a task without one."""
        ...

    def catalog(self) -> KnowledgeCatalog:
        """The task database's knowledge catalog."""
        ...

    def search_backend(self) -> SearchBackend:
        """The configured search backend."""
        ...

    async def hand_in(self, text: str, answer: Answer | ParseFailure) -> str:
        """Hand in the final answer `text` (read as `answer`, within the limits): the episode ends; what the agent
        is told."""
        ...

    def report_usage(self, report: AgentUsageReport) -> str:
        """Add the agent's report of its own LLM use to the episode's usage; what the agent is told."""
        ...
