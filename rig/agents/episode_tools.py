"""One episode's `ToolSession` (`rig.tools.session`): what the registry's tools (`rig.tools.registry`) act on.

The browser is the episode's recorded context (`rig.agents.browser_tools`: the current tab for browser tools, a
fetch tab of its own for `web_fetch` and `pdf_read`); the task's database and knowledge catalog, and the search
backend, are found here, a missing one of the rig's own being an `InfraError` (never the agent's zero); a handed-in
answer is kept in the episode directory and ends the episode. Recording is not done here but around each call
(`rig.agents.tool_calls`). A mistake of the agent raises `AgentError` (its message is the tool error).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from rig.agents.base import EpisodeEnv
from rig.agents.browser_tools import BrowserTools
from rig.episode_dir import EpisodeDir
from rig.errors import AgentError, InfraError, InputError
from rig.formats.answer import Answer
from rig.formats.answer_text import ParseFailure
from rig.formats.usage import AgentUsageReport
from rig.tools.session import ToolLimits

if TYPE_CHECKING:
    from rig.tools.knowledge import KnowledgeCatalog
    from rig.tools.search import SearchBackend


class EpisodeTools:
    """The tools' state of one episode: the recorded browser, the PDFs fetched so far, the task's data, the answer."""

    def __init__(self, env: EpisodeEnv, limits: ToolLimits | None = None) -> None:
        self.env, self.limits = env, limits or ToolLimits()
        self.sites_url = env.sites_url
        self.browser = BrowserTools(env.context, env.page, env.sites_url, pdf_body=env.recorder.pdf_body,
                                    watching=env.recorder.watching, politeness=env.politeness,
                                    politeness_record=env.politeness_record)
        #: Set by `final_answer`: the parsed answer, or the reason it held no table.
        self.finished: asyncio.Future[Answer | ParseFailure] = asyncio.get_running_loop().create_future()
        self.pdfs: dict[str, bytes] = {}
        self._search: SearchBackend | None = None

    def search_backend(self) -> SearchBackend:
        """The configured search backend (built once: the local index is read from the site snapshots)."""
        if self._search is None:
            from rig.tools.search import search_backend

            try:
                self._search = search_backend(self.env.sites_url)
            except InputError as exc:  # the operator's configuration, not the agent's mistake
                raise InfraError(f"web_search is not configured: {exc}") from None
        return self._search

    def database(self) -> Path:
        """The task's SQLite file (built on first use for a bundled one)."""
        task = self.env.task
        if task is None or not task.db:
            raise AgentError("this task has no database: run_sql and the knowledge tools are for hybrid tasks")
        from rig.tools.databases import db_path

        try:
            return db_path(task.db, task.source)
        except InputError as exc:  # the task file names a database that is not there
            raise InfraError(f"the task's database: {exc}") from None

    def catalog(self) -> KnowledgeCatalog:
        """The task database's knowledge catalog."""
        path = self.database()
        from rig.tools.knowledge import catalog

        assert self.env.task is not None and self.env.task.db
        try:
            return catalog(self.env.task.db, self.env.task.source)
        except InputError as exc:
            raise InfraError(f"the knowledge catalog of {path.name}: {exc}") from None

    async def hand_in(self, text: str, answer: Answer | ParseFailure) -> str:
        """Keep the answer's text, end the episode with its table (or its parse failure); what the agent is told."""
        if self.finished.done():
            raise AgentError("an answer was already handed in; the episode is ending")
        ed = EpisodeDir(self.env.out_dir)
        ed.write_submitted(text)
        if isinstance(answer, ParseFailure):
            ed.write_parse_failure(answer)
            self.finished.set_result(answer)
            return f"Answer handed in, but no table could be read from it ({answer.reason}); the episode ends."
        self.finished.set_result(answer)
        return f"Answer handed in: {len(answer.rows)} rows, {len(answer.citations)} citations. The episode ends."

    def report_usage(self, report: AgentUsageReport) -> str:
        """Add the agent's own report of its LLM use to the episode's usage meter (`report_usage`)."""
        if all(v is None for v in report.model_dump().values()):
            raise AgentError("report_usage: give at least one of tokens_in, tokens_out, llm_calls, cost_usd")
        self.env.usage.report(report, "report_usage")
        spent = self.env.usage.spends
        return (f"Usage recorded: {sum(x.tokens_in or 0 for x in spent)} input and "
                f"{sum(x.tokens_out or 0 for x in spent)} output tokens reported so far.")
