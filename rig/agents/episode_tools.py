"""The tool server's tools for one episode, as plain async methods returning the text the agent sees.

Browser tools act on the recorded pages (`rig.agents.browser_tools`); `web_fetch` and `pdf_read` load pages in the
recorded fetch tab; the data tools call `rig.tools` (read-only SQL, knowledge catalogs, search, PDF text);
`final_answer` parses the answer like an operator's and ends the episode. Recording is not done here but around
each call (`rig.agents.tool_calls`). A mistake of the agent raises `AgentError` (its message is the tool error).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rig.agents.base import EpisodeEnv
from rig.agents.browser_tools import BrowserTools, Fetched, web_url
from rig.episode_dir import EpisodeDir
from rig.errors import AgentError, InfraError, InputError
from rig.formats.answer import Answer
from rig.formats.answer_text import ParseFailure, parse_table

#: Where a handed-in final answer says it came from (in parse errors and answer citations).
FINAL_ANSWER_SOURCE = "final_answer"


@dataclass
class ToolLimits:
    """Bounds of the tools' results."""

    #: Longest page text `web_fetch` returns (the rest is cut, and the cut is said).
    max_page_chars: int = 40_000
    #: Rows `run_sql` returns at most, and its time limit.
    max_sql_rows: int = 500
    sql_timeout_s: float = 10.0


class EpisodeTools:
    """Every tool of one episode: the browser, fetching, the data tools and the final answer."""

    def __init__(self, env: EpisodeEnv, limits: ToolLimits | None = None) -> None:
        self.env, self.limits = env, limits or ToolLimits()
        self.browser = BrowserTools(env.context, env.page, env.sites_url, pdf_body=env.recorder.pdf_body,
                                    watching=env.recorder.watching)
        #: Set by `final_answer`: the parsed answer, or the reason it held no table.
        self.finished: asyncio.Future[Answer | ParseFailure] = asyncio.get_running_loop().create_future()
        self._pdfs: dict[str, bytes] = {}
        self._search: Any = None

    # ---- the web -------------------------------------------------------------------------------------

    async def web_search(self, query: str, count: int = 10) -> str:
        """Search the web (by default an offline index of the bundled sites) and list the hits."""
        from rig.tools.search import format_hits

        backend = await asyncio.to_thread(self._backend)
        hits = await asyncio.to_thread(backend.search, query, count)
        return format_hits(backend, hits)

    async def web_fetch(self, url: str) -> str:
        """Load `url` in the recorded fetch tab and return its visible text (a PDF's text, for a PDF)."""
        fetched = await self.browser.fetch(url)
        if fetched.is_pdf:
            if fetched.body is None:
                raise AgentError(f"{fetched.url}: the PDF's bytes could not be read")
            self._pdfs[fetched.url] = self._pdfs[url] = fetched.body
            return self._header(fetched) + self._cut(await self._pdf_text(fetched.body, None, fetched.url))
        return self._header(fetched) + self._cut(fetched.text)

    async def pdf_read(self, source: str, pages: str | None = None) -> str:
        """The text of a PDF (the given pages, like `1-3,5`): `source` is a URL (fetched before, or now)."""
        data = self._pdfs.get(source)
        where = source
        if data is None:
            web_url(source, self.env.sites_url, "source")
            fetched = await self.browser.fetch(source)
            if not fetched.is_pdf or fetched.body is None:
                raise AgentError(f"source: {fetched.url} is not a PDF (content type {fetched.content_type or 'none'});"
                                 " read it with web_fetch")
            data, where = fetched.body, fetched.url
            self._pdfs[fetched.url] = self._pdfs[source] = data
        return self._cut(await self._pdf_text(data, pages, where))

    # ---- data tools (rig.tools) ----------------------------------------------------------------------

    async def run_sql(self, sql: str, description: str = "") -> str:
        """Run one read-only query against the task's database; a text table with a `Rows: N` header."""
        from rig.tools.sql import run_sql

        path = self._database()
        result = await asyncio.to_thread(run_sql, path, sql, self.limits.max_sql_rows, self.limits.sql_timeout_s)
        return result.text

    async def knowledge_names(self) -> str:
        """The names in the task database's knowledge catalog."""
        return "\n".join(self._catalog().names())

    async def knowledge_definition(self, knowledge_name: str) -> str:
        """One knowledge entry's definition."""
        return json.dumps(self._catalog().definition(knowledge_name), ensure_ascii=False, indent=1)

    async def all_knowledge_definitions(self) -> str:
        """Every knowledge entry with its definition."""
        return json.dumps(self._catalog().all_definitions(), ensure_ascii=False, indent=1)

    # ---- the answer ----------------------------------------------------------------------------------

    async def final_answer(self, answer: str) -> str:
        """Hand in the answer (a Markdown/TSV/CSV table with links, or answer.json): the episode ends."""
        if self.finished.done():
            raise AgentError("an answer was already handed in; the episode is ending")
        ed = EpisodeDir(self.env.out_dir)
        ed.write_submitted(answer)
        try:
            parsed = parse_table(answer, FINAL_ANSWER_SOURCE)
        except ParseFailure as exc:
            ed.write_parse_failure(exc)
            self.finished.set_result(exc)
            return f"Answer handed in, but no table could be read from it ({exc.reason}); the episode ends."
        self.finished.set_result(parsed)
        return f"Answer handed in: {len(parsed.rows)} rows, {len(parsed.citations)} citations. The episode ends."

    # ---- helpers ---------------------------------------------------------------------------------------

    def _backend(self) -> Any:
        """The configured search backend (built once: the local index is read from the site snapshots)."""
        if self._search is None:
            from rig.tools.search import search_backend

            try:
                self._search = search_backend(self.env.sites_url)
            except InputError as exc:  # the operator's configuration, not the agent's mistake
                raise InfraError(f"web_search is not configured: {exc}") from None
        return self._search

    def _database(self) -> Path:
        task = self.env.task
        if task is None or not task.db:
            raise AgentError("this task has no database: run_sql and the knowledge tools are for hybrid tasks")
        from rig.tools.databases import db_path

        try:
            return db_path(task.db, task.source)
        except InputError as exc:  # the task file names a database that is not there
            raise InfraError(f"the task's database: {exc}") from None

    def _catalog(self) -> Any:
        path = self._database()
        from rig.tools.knowledge import catalog

        assert self.env.task is not None and self.env.task.db
        try:
            return catalog(self.env.task.db, self.env.task.source)
        except InputError as exc:
            raise InfraError(f"the knowledge catalog of {path.name}: {exc}") from None

    async def _pdf_text(self, data: bytes, pages: str | None, where: str) -> str:
        from rig.tools.pdf import read_pdf

        try:
            return await asyncio.to_thread(read_pdf, data, pages)
        except AgentError as exc:
            raise AgentError(f"{exc} ({where})") from None

    def _header(self, fetched: Fetched) -> str:
        status = f" (HTTP {fetched.status})" if fetched.status and fetched.status >= 400 else ""
        title = f"Title: {fetched.title}\n" if fetched.title else ""
        return f"URL: {fetched.url}{status}\n{title}\n"

    def _cut(self, text: str) -> str:
        limit = self.limits.max_page_chars
        return text if len(text) <= limit else text[:limit] + f"\n[… {len(text) - limit} more characters cut]"
