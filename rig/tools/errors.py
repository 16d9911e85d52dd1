"""The error a tool hands back to the agent: a refused or failed call, with a message saying what to change."""

from __future__ import annotations

from rig.errors import AgentError


class ToolError(AgentError):
    """A tool call the agent got wrong (refused SQL, an unknown knowledge name, pages past the end): its message is
    what the agent sees."""
