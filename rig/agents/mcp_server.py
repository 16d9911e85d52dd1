"""The recorded MCP tool server of one episode: the registry's tools (`rig.tools.registry`) on the episode's
`EpisodeTools`, served with the official `mcp` SDK (its low-level `Server`) over streamable HTTP on 127.0.0.1, in
the episode's own event loop (the tools drive the episode's Playwright pages).

`tools/list` gives every declaration as MCP declares tools (`rig.agents.mcp_tools`); `tools/call` runs one as a
recorded step (`rig.agents.tool_calls`). Every call, a failed one included (unknown tool, arguments that do not fit
the schema), is one step; a failure comes back to the agent as a tool error (`isError: true`) with a message saying
what to change.
"""

from __future__ import annotations

from typing import Any, Self

import mcp_types as types
from mcp.server import Server

from rig.agents.episode_tools import EpisodeTools
from rig.agents.mcp_tools import mcp_tools
from rig.agents.tool_calls import ELEMENT_TOOLS, FETCH_TOOLS, ToolCalls
from rig.local_server import LocalServer
from rig.tools.registry import tool_named

#: The path of the MCP endpoint on the server.
MCP_PATH = "/mcp"
INSTRUCTIONS = "Tools of one recorded sgr-rig episode. Hand in the answer with final_answer."


def _text_result(text: str, error: bool) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=error)


class RecordedMCPServer(Server[Any]):
    """A low-level MCP `Server` listing the registry's tools and recording every call as one trajectory step."""

    def __init__(self, tools: EpisodeTools, calls: ToolCalls) -> None:
        super().__init__("sgr-rig", instructions=INSTRUCTIONS, on_list_tools=self._list, on_call_tool=self._call)
        self.tools, self.calls = tools, calls

    async def _list(self, _ctx: Any, _params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=mcp_tools())

    async def _call(self, _ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        args = params.arguments if isinstance(params.arguments, dict) else {}
        result = await self.calls.call(params.name, args, lambda: tool_named(params.name).call(self.tools, args))
        return _text_result(result.text, not result.ok)


def recorded_server(tools: EpisodeTools) -> RecordedMCPServer:
    """The episode's MCP server: its tools, each call recorded on the episode's recorder."""
    b = tools.browser

    async def page_for(tool: str) -> Any:
        if tool in FETCH_TOOLS:
            return await b.fetch_page()
        return None if tool == "browser_tabs" or b.current.is_closed() else b.current

    async def target_for(tool: str, args: dict[str, Any]) -> str | None:
        return await b.selector_for(args.get("ref")) if tool in ELEMENT_TOOLS else None

    return RecordedMCPServer(tools, ToolCalls(tools.env.recorder, page_for, target_for, usage=tools.env.usage))


class ServedMCP:
    """Serves an MCP server over streamable HTTP on 127.0.0.1 (a free port) in the running event loop.

        async with ServedMCP(server) as served:
            print(served.url)  # http://127.0.0.1:PORT/mcp
    """

    def __init__(self, server: Server[Any]) -> None:
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
