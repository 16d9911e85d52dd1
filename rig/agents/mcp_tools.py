"""The registry's tools (`rig.tools.registry`) as MCP lists them: the one place the tool server and the stdio relay
take their `tools/list` from."""

from __future__ import annotations

import mcp_types as types

from rig.tools.registry import TOOLS
from rig.tools.tool import Tool


def mcp_tool(t: Tool) -> types.Tool:
    """A declaration as MCP lists it: name, description, argument schema, read-only hint."""
    return types.Tool(name=t.name, description=t.description, input_schema=t.input_schema(),
                      annotations=types.ToolAnnotations(read_only_hint=t.read_only))


def mcp_tools() -> list[types.Tool]:
    """Every tool of the registry as MCP lists it."""
    return [mcp_tool(t) for t in TOOLS]
