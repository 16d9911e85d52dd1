"""The tool server's tools, each declared once: name, arguments, whether it only reads, its result's byte cap,
description and function (`rig.tools.tool`).

The MCP server (`rig.agents.mcp_server`) and the stdio relay (`rig mcp-stdio`) list and run exactly these; a
reference tool-call script is checked against them (`check_calls`). Data tools use HybridDeepResearch's names;
browser tools the names and argument names of Playwright's MCP server. Adding a tool is one declaration here plus
its function; every name and argument name is a public contract (docs/cli-agents.md).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from pydantic import Field

from rig.errors import InputError
from rig.formats.task import Task
from rig.formats.usage import AgentUsageReport
from rig.tools import sql as sql_runner
from rig.tools.answers import read_answer
from rig.tools.errors import ToolError
from rig.tools.pdf import read_pdf
from rig.tools.session import Fetched, ToolSession, web_url
from rig.tools.tool import Tool, tool

KIB = 1024
#: Byte caps of the results (docs/cli-agents.md, "Limits").
PAGE_BYTES = 64 * KIB
#: The most characters of a page's text `web_fetch` reads (the byte cap holds them with the header and any note).
PAGE_CHARS = 40_000
SNAPSHOT_BYTES = 128 * KIB
SMALL_BYTES = 16 * KIB

Element = Annotated[str, Field(description="Human-readable element description used to obtain permission to "
                                           "interact with the element")]
Ref = Annotated[str, Field(description="Exact target element reference from the page snapshot")]


# ---- the web -------------------------------------------------------------------------------------------

@tool(read_only=True, max_bytes=32 * KIB, cut_hint="ask for fewer results")
async def web_search(s: ToolSession, query: Annotated[str, Field(description="what to search for")],
                     count: Annotated[int, Field(description="how many results")] = 10) -> str:
    """Search the web; returns titles, URLs and snippets."""
    from rig.tools.search import format_hits  # the index's libraries load on the first search

    backend = await asyncio.to_thread(s.search_backend)
    hits = await asyncio.to_thread(backend.search, query, count)
    return format_hits(backend, hits)


@tool(read_only=False, max_bytes=PAGE_BYTES, cut_hint="the rest of the page is not shown")
async def web_fetch(s: ToolSession, url: Annotated[str, Field(description="the http(s) URL to open")]) -> str:
    """Open a URL and return its visible text (a PDF's text for a PDF)."""
    fetched = await s.browser.fetch(url, PAGE_CHARS)
    if fetched.is_pdf:
        if fetched.body is None:
            raise ToolError(f"{fetched.url}: the PDF's bytes could not be read")
        s.pdfs[fetched.url] = s.pdfs[url] = fetched.body
        return _header(fetched) + await _pdf_text(fetched.body, None, fetched.url)
    return _header(fetched) + fetched.text + (f"\n[cut: {fetched.cut}]" if fetched.cut else "")


@tool(read_only=True, max_bytes=PAGE_BYTES, cut_hint="ask for fewer pages")
async def pdf_read(s: ToolSession,
                   source: Annotated[str, Field(description="the PDF's URL (fetched before, or now)")],
                   pages: Annotated[str | None, Field(description="pages to read, like `1-3,5` (default all)")]
                   = None) -> str:
    """Read the text of a PDF."""
    data, where = s.pdfs.get(source), source
    if data is None:
        web_url(source, s.sites_url, "source")
        fetched = await s.browser.fetch(source, PAGE_CHARS)
        if not fetched.is_pdf or fetched.body is None:
            raise ToolError(f"source: {fetched.url} is not a PDF (content type {fetched.content_type or 'none'}); "
                            "read it with web_fetch")
        data, where = fetched.body, fetched.url
        s.pdfs[fetched.url] = s.pdfs[source] = data
    return await _pdf_text(data, pages, where)


def _header(fetched: Fetched) -> str:
    status = f" (HTTP {fetched.status})" if fetched.status and fetched.status >= 400 else ""
    title = f"Title: {fetched.title}\n" if fetched.title else ""
    return f"URL: {fetched.url}{status}\n{title}\n"


async def _pdf_text(data: bytes, pages: str | None, where: str) -> str:
    try:
        return await asyncio.to_thread(read_pdf, data, pages)
    except ToolError as exc:
        raise ToolError(f"{exc} ({where})") from None


# ---- data tools ----------------------------------------------------------------------------------------

@tool(read_only=True, max_bytes=sql_runner.MAX_BYTES, cut_hint="select fewer or shorter columns, or add LIMIT")
async def run_sql(s: ToolSession,
                  sql: Annotated[str, Field(description="one read-only SQLite query (SELECT, WITH, PRAGMA, EXPLAIN)")],
                  description: Annotated[str, Field(description="what the query is for")] = "") -> str:
    """Run a read-only SQL query against the task's database; returns a text table with a `Rows: N` header."""
    path = s.database()
    result = await asyncio.to_thread(sql_runner.run_sql, path, sql, s.limits.max_sql_rows, s.limits.sql_timeout_s,
                                     sql_runner.MAX_BYTES)
    return result.text


@tool(read_only=True, max_bytes=SMALL_BYTES)
async def get_all_external_knowledge_names(s: ToolSession) -> str:
    """List the names in the database's external-knowledge catalog."""
    return "\n".join(s.catalog().names())


@tool(read_only=True, max_bytes=SMALL_BYTES)
async def get_knowledge_definition(s: ToolSession,
                                   knowledge_name: Annotated[str, Field(description="a catalog name")]) -> str:
    """The definition of one external-knowledge entry."""
    return json.dumps(s.catalog().definition(knowledge_name), ensure_ascii=False, indent=1)


@tool(read_only=True, max_bytes=32 * KIB, cut_hint="ask for single entries with get_knowledge_definition")
async def get_all_knowledge_definitions(s: ToolSession) -> str:
    """Every external-knowledge entry with its definition."""
    return json.dumps(s.catalog().all_definitions(), ensure_ascii=False, indent=1)


# ---- the answer ----------------------------------------------------------------------------------------

#: Where a handed-in final answer says it came from (in parse errors and answer citations).
FINAL_ANSWER_SOURCE = "final_answer"


@tool(read_only=False, max_bytes=4 * KIB)
async def final_answer(s: ToolSession,
                       answer: Annotated[str, Field(description="the answer: a Markdown table (with links to the "
                                                                "pages that show each row), TSV, CSV or answer.json")],
                       ) -> str:
    """Hand in the final answer; the episode ends."""
    return await s.hand_in(answer, read_answer(answer, FINAL_ANSWER_SOURCE))


# ---- the agent's own usage -----------------------------------------------------------------------------

@tool(read_only=False, max_bytes=SMALL_BYTES)
async def report_usage(s: ToolSession,
                       tokens_in: Annotated[int | None, Field(ge=0, description="input tokens spent since the last "
                                                                                "report (cached ones included)")] = None,
                       tokens_out: Annotated[int | None, Field(ge=0, description="output tokens spent since the "
                                                                                 "last report")] = None,
                       tokens_cached: Annotated[int | None, Field(ge=0, description="of tokens_in, those read from "
                                                                                    "a prompt cache")] = None,
                       llm_calls: Annotated[int | None, Field(ge=0, description="LLM calls they were spent in")]
                       = None,
                       cost_usd: Annotated[float | None, Field(ge=0, description="what they cost in US dollars, if "
                                                                                 "known (else the rig prices them by "
                                                                                 "model)")] = None,
                       model: Annotated[str | None, Field(description="the model, as provider:model (e.g. "
                                                                      "anthropic:claude-sonnet-4-0)")] = None) -> str:
    """Report the LLM tokens (and cost) you spent since your last report; they are added to the episode's usage."""
    return s.report_usage(AgentUsageReport(tokens_in=tokens_in, tokens_out=tokens_out, tokens_cached=tokens_cached,
                                           llm_calls=llm_calls, cost_usd=cost_usd, model=model))


# ---- the browser (as Playwright's MCP server names its tools) --------------------------------------------

@tool(read_only=False, max_bytes=SNAPSHOT_BYTES, cut_hint="the rest of the snapshot is not shown")
async def browser_navigate(s: ToolSession, url: Annotated[str, Field(description="The URL to navigate to")]) -> str:
    """Navigate to a URL."""
    return await s.browser.navigate(url)


@tool(read_only=True, max_bytes=SNAPSHOT_BYTES, cut_hint="the rest of the snapshot is not shown")
async def browser_snapshot(s: ToolSession) -> str:
    """Capture accessibility snapshot of the current page, this is better than screenshot."""
    return await s.browser.snapshot()


@tool(read_only=False, max_bytes=SNAPSHOT_BYTES, cut_hint="the rest of the snapshot is not shown")
async def browser_click(s: ToolSession, element: Element, ref: Ref) -> str:
    """Perform click on a web page."""
    return await s.browser.click(ref)


@tool(read_only=False, max_bytes=SNAPSHOT_BYTES, cut_hint="the rest of the snapshot is not shown")
async def browser_type(s: ToolSession, element: Element, ref: Ref,
                       text: Annotated[str, Field(description="Text to type into the element")],
                       submit: Annotated[bool, Field(description="Whether to submit entered text (press Enter "
                                                                 "after)")] = False) -> str:
    """Type text into editable element."""
    return await s.browser.type(ref, text, submit)


@tool(read_only=False, max_bytes=SNAPSHOT_BYTES, cut_hint="the rest of the snapshot is not shown")
async def browser_select_option(s: ToolSession, element: Element, ref: Ref,
                                values: Annotated[list[str], Field(description="Array of values to select in the "
                                                                               "dropdown.")]) -> str:
    """Select an option in a dropdown."""
    return await s.browser.select_option(ref, values)


@tool(read_only=False, max_bytes=SNAPSHOT_BYTES, cut_hint="the rest of the snapshot is not shown")
async def browser_navigate_back(s: ToolSession) -> str:
    """Go back to the previous page."""
    return await s.browser.navigate_back()


@tool(read_only=False, max_bytes=SMALL_BYTES, cut_hint="close tabs you no longer need")
async def browser_tabs(s: ToolSession,
                       action: Annotated[str, Field(description="Operation to perform: list, new, close or select")],
                       index: Annotated[int | None, Field(description="Tab index, used for close/select. If omitted "
                                                                      "for close, current tab is closed.")] = None,
                       ) -> str:
    """List, create, close, or select a browser tab."""
    return await s.browser.tabs(action, index)


#: Every tool, in the order the server lists them.
TOOLS: tuple[Tool, ...] = (
    web_search, web_fetch, pdf_read, run_sql, get_all_external_knowledge_names, get_knowledge_definition,
    get_all_knowledge_definitions, final_answer, browser_navigate, browser_snapshot, browser_click, browser_type,
    browser_select_option, browser_navigate_back, browser_tabs, report_usage,
)
_BY_NAME = {t.name: t for t in TOOLS}
#: Every tool name.
TOOL_NAMES = tuple(_BY_NAME)


def tool_named(name: str) -> Tool:
    """The tool called `name`; ToolError listing the tools for an unknown one."""
    found = _BY_NAME.get(name)
    if found is None:
        raise ToolError(f"unknown tool {name!r}; the tools are {', '.join(TOOL_NAMES)}")
    return found


def check_calls(calls: Sequence[tuple[str, Mapping[str, Any]]]) -> None:
    """Check a tool-call script (tool name and arguments per call) against the declarations; ToolError naming the
    first bad call by its index (`[3]: bad arguments for run_sql: ...`)."""
    for i, (name, args) in enumerate(calls):
        try:
            tool_named(name).parse(args)
        except ToolError as exc:
            raise ToolError(f"[{i}]: {exc}") from None


def check_reference_tools(task: Task) -> None:
    """InputError naming the task file, the call and the reason when the task's `reference_tools` calls a tool that
    is not declared, or with arguments that do not fit its schema."""
    try:
        check_calls([(c.tool, c.args) for c in task.reference_tools])
    except ToolError as exc:
        index, _, reason = str(exc).partition(": ")
        raise InputError(task.source or task.id, f"reference_tools{index}", reason) from None
