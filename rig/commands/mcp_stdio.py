"""`rig mcp-stdio`: an episode's MCP tool server relayed over stdio (`rig.agents.mcp_stdio`)."""

from __future__ import annotations

from typing import Optional

import typer

from rig.agents.mcp_stdio import run_relay


def mcp_stdio(
    url: Optional[str] = typer.Option(None, "--url", envvar="RIG_MCP_URL",
                                      help="the episode's MCP endpoint (default: $RIG_MCP_URL)"),
) -> None:
    """Relay an episode's MCP tool server over stdio, for clients that only start stdio servers (docs/cli-agents.md)."""
    run_relay(url)
