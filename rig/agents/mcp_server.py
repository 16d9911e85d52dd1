"""The recorded MCP tool server of one episode: the tools of `EpisodeTools` under the names HybridDeepResearch's
contract and Playwright's MCP server give them, served with the official `mcp` SDK over streamable HTTP on
127.0.0.1, in the episode's own event loop (the tools drive the episode's Playwright pages).

Every call, a failed one included (unknown tool, arguments that do not fit the schema), is one recorded step
(`rig.agents.tool_calls`); a failure comes back to the agent as a tool error (`isError: true`) with a message
saying what to change.
"""

from __future__ import annotations

from typing import Annotated, Any, Self

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field, ValidationError

from rig.agents.episode_tools import EpisodeTools
from rig.agents.tool_calls import ELEMENT_TOOLS, FETCH_TOOLS, ToolCalls
from rig.errors import AgentError, InfraError
from rig.local_server import LocalServer

#: The path of the MCP endpoint on the server.
MCP_PATH = "/mcp"
#: Every tool name, as docs/cli-agents.md lists them.
TOOL_NAMES = (
    "web_search", "web_fetch", "pdf_read", "run_sql", "get_all_external_knowledge_names", "get_knowledge_definition",
    "get_all_knowledge_definitions", "final_answer", "browser_navigate", "browser_snapshot", "browser_click",
    "browser_type", "browser_select_option", "browser_navigate_back", "browser_tabs",
)

Element = Annotated[str, Field(description="Human-readable element description used to obtain permission to "
                                           "interact with the element")]
Ref = Annotated[str, Field(description="Exact target element reference from the page snapshot")]
_READ_ONLY = ToolAnnotations(read_only_hint=True)


class RecordedMCPServer(MCPServer):
    """An `MCPServer` whose every tool call is recorded as one trajectory step."""

    def __init__(self, tools: EpisodeTools, calls: ToolCalls) -> None:
        super().__init__("sgr-rig", instructions="Tools of one recorded sgr-rig episode. Hand in the answer with "
                                                 "final_answer.", log_level="WARNING")
        self.tools, self.calls = tools, calls
        _register(self, tools)

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        """Run one tool call as a recorded step; a failure becomes a tool error with its message."""
        args = arguments if isinstance(arguments, dict) else {}
        result = await self.calls.call(name, args, lambda: self._run(name, args, context))
        if not result.ok:
            raise ToolError(result.text)
        return CallToolResult(content=[TextContent(type="text", text=result.text)])

    async def _run(self, name: str, arguments: dict[str, Any], context: Any) -> str:
        try:
            out = await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, (AgentError, InfraError)):
                raise cause from None
            if isinstance(cause, ValidationError):
                raise AgentError(f"bad arguments for {name}: {_validation(cause)}") from None
            if isinstance(exc, UnexpectedToolError) and cause is not None:
                raise cause from None
            raise AgentError(str(exc) if name in TOOL_NAMES else
                             f"unknown tool {name!r}; the tools are {', '.join(TOOL_NAMES)}") from None
        return "\n".join(getattr(c, "text", "") for c in getattr(out, "content", []) or [])


def _validation(error: ValidationError) -> str:
    parts = []
    for e in error.errors():
        where = ".".join(str(x) for x in e["loc"]) or "arguments"
        parts.append(f"{where}: {e['msg']}")
    return "; ".join(parts)


def _register(server: MCPServer, t: EpisodeTools) -> None:
    """The tools, with the argument names and descriptions agents' configs expect."""
    b = t.browser

    async def web_search(query: Annotated[str, Field(description="what to search for")],
                         count: Annotated[int, Field(description="how many results")] = 10) -> str:
        """Search the web; returns titles, URLs and snippets."""
        return await t.web_search(query, count)

    async def web_fetch(url: Annotated[str, Field(description="the http(s) URL to open")]) -> str:
        """Open a URL and return its visible text (a PDF's text for a PDF)."""
        return await t.web_fetch(url)

    async def pdf_read(source: Annotated[str, Field(description="the PDF's URL (fetched before, or now)")],
                       pages: Annotated[str | None, Field(description="pages to read, like `1-3,5` (default all)")]
                       = None) -> str:
        """Read the text of a PDF."""
        return await t.pdf_read(source, pages)

    async def run_sql(sql: Annotated[str, Field(description="one read-only SQLite query (SELECT, WITH, PRAGMA, "
                                                            "EXPLAIN)")],
                      description: Annotated[str, Field(description="what the query is for")] = "") -> str:
        """Run a read-only SQL query against the task's database; returns a text table with a `Rows: N` header."""
        return await t.run_sql(sql, description)

    async def get_all_external_knowledge_names() -> str:
        """List the names in the database's external-knowledge catalog."""
        return await t.knowledge_names()

    async def get_knowledge_definition(knowledge_name: Annotated[str, Field(description="a catalog name")]) -> str:
        """The definition of one external-knowledge entry."""
        return await t.knowledge_definition(knowledge_name)

    async def get_all_knowledge_definitions() -> str:
        """Every external-knowledge entry with its definition."""
        return await t.all_knowledge_definitions()

    async def final_answer(answer: Annotated[str, Field(description="the answer: a Markdown table (with links to "
                                                                    "the pages that show each row), TSV, CSV or "
                                                                    "answer.json")]) -> str:
        """Hand in the final answer; the episode ends."""
        return await t.final_answer(answer)

    async def browser_navigate(url: Annotated[str, Field(description="The URL to navigate to")]) -> str:
        """Navigate to a URL."""
        return await b.navigate(url)

    async def browser_snapshot() -> str:
        """Capture accessibility snapshot of the current page, this is better than screenshot."""
        return await b.snapshot()

    async def browser_click(element: Element, ref: Ref) -> str:
        """Perform click on a web page."""
        return await b.click(ref)

    async def browser_type(element: Element, ref: Ref,
                           text: Annotated[str, Field(description="Text to type into the element")],
                           submit: Annotated[bool, Field(description="Whether to submit entered text (press Enter "
                                                                     "after)")] = False) -> str:
        """Type text into editable element."""
        return await b.type(ref, text, submit)

    async def browser_select_option(element: Element, ref: Ref,
                                    values: Annotated[list[str], Field(description="Array of values to select in the "
                                                                                   "dropdown.")]) -> str:
        """Select an option in a dropdown."""
        return await b.select_option(ref, values)

    async def browser_navigate_back() -> str:
        """Go back to the previous page."""
        return await b.navigate_back()

    async def browser_tabs(action: Annotated[str, Field(description="Operation to perform: list, new, close or "
                                                                    "select")],
                           index: Annotated[int | None, Field(description="Tab index, used for close/select. If "
                                                                          "omitted for close, current tab is "
                                                                          "closed.")] = None) -> str:
        """List, create, close, or select a browser tab."""
        return await b.tabs(action, index)

    read_only = {"web_search", "pdf_read", "run_sql", "get_all_external_knowledge_names", "get_knowledge_definition",
                 "get_all_knowledge_definitions", "browser_snapshot"}
    for fn in (web_search, web_fetch, pdf_read, run_sql, get_all_external_knowledge_names, get_knowledge_definition,
               get_all_knowledge_definitions, final_answer, browser_navigate, browser_snapshot, browser_click,
               browser_type, browser_select_option, browser_navigate_back, browser_tabs):
        server.add_tool(fn, name=fn.__name__, structured_output=False,
                        annotations=_READ_ONLY if fn.__name__ in read_only else None)


def recorded_server(tools: EpisodeTools) -> RecordedMCPServer:
    """The episode's MCP server: its tools, each call recorded on the episode's recorder."""
    b = tools.browser

    async def page_for(tool: str) -> Any:
        if tool in FETCH_TOOLS:
            return await b.fetch_page()
        return None if tool == "browser_tabs" or b.current.is_closed() else b.current

    async def target_for(tool: str, args: dict[str, Any]) -> str | None:
        return await b.selector_for(args.get("ref")) if tool in ELEMENT_TOOLS else None

    return RecordedMCPServer(tools, ToolCalls(tools.env.recorder, page_for, target_for))


class ServedMCP:
    """Serves an MCP server over streamable HTTP on 127.0.0.1 (a free port) in the running event loop.

        async with ServedMCP(server) as served:
            print(served.url)  # http://127.0.0.1:PORT/mcp
    """

    def __init__(self, server: MCPServer) -> None:
        self.server = server
        app = server.streamable_http_app(streamable_http_path=MCP_PATH, json_response=True, host="127.0.0.1")
        self._http = LocalServer(app, what="the MCP tool server", lifespan="on")
        self.url = f"{self._http.url}{MCP_PATH}"

    async def __aenter__(self) -> Self:
        await self._http.astart()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Stop serving (open connections get a moment to finish) and free the port."""
        await self._http.aclose()
