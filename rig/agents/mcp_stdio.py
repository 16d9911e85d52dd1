"""`rig mcp-stdio`: the episode's tool server for MCP clients that only start stdio servers.

A stdio MCP server (the `mcp` SDK's low-level `Server`) listing the registry's tools (`rig.agents.mcp_tools`, as the
episode's server lists them) and forwarding every `tools/call` to the episode's streamable HTTP endpoint (`--url`,
default `$RIG_MCP_URL`, which `rig run --agent cli` sets for its command). Every call is recorded by the episode's
server; this process only relays.

    {"mcpServers": {"rig": {"command": "rig", "args": ["mcp-stdio"]}}}
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import anyio
import mcp_types as types
from mcp.client import Client
from mcp.server import Server
from mcp.server.stdio import stdio_server

from rig.agents.mcp_tools import mcp_tools
from rig.errors import InputError


def check_url(url: str | None) -> str:
    """The endpoint to relay to; InputError when none is given or it is not an http URL on this machine."""
    if not url:
        raise InputError("--url", None, "no endpoint: pass --url, or run under `rig run --agent cli` (RIG_MCP_URL)")
    parts = urlsplit(url)
    if parts.scheme != "http" or parts.hostname not in ("127.0.0.1", "localhost"):
        raise InputError("--url", None, f"{url!r} is not the rig's endpoint (http://127.0.0.1:PORT/mcp)")
    return url


async def relay(url: str) -> None:
    """Serve MCP on stdin/stdout, forwarding every tool request to `url`, until stdin closes."""
    async with Client(url) as upstream:

        async def list_tools(_ctx: Any, _params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
            return types.ListToolsResult(tools=mcp_tools())

        async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
            return await upstream.call_tool(params.name, params.arguments or {})

        server: Server[Any] = Server("sgr-rig", on_list_tools=list_tools, on_call_tool=call_tool)
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())


def run_relay(url: str | None) -> None:
    """`rig mcp-stdio`: relay stdio to the episode's endpoint."""
    anyio.run(relay, check_url(url))
