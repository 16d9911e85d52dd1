"""Making an agent from its name on the command line (the agent list in docs/runner.md)."""

from __future__ import annotations

from pathlib import Path

from rig.agents.base import Agent
from rig.errors import InputError

AGENT_KINDS = ("reference", "scripted:FILE", "perturbed:KIND", "browser-use", "cdp", "operator", "mcp", "cli")


def make_agent(name: str, *, model: str | None = None, answer_file: Path | None = None,
               command: str | None = None) -> Agent:
    """The agent called `name`; raises InputError for unknown names or missing options."""
    kind, _, arg = name.partition(":")
    if kind == "reference" and not arg:
        from rig.agents.scripts import ReferenceAgent

        return ReferenceAgent()
    if kind == "scripted" and arg:
        from rig.agents.scripts import ScriptedAgent

        return ScriptedAgent(arg)
    if kind == "perturbed" and arg:
        from rig.agents.perturbed import PerturbedAgent

        return PerturbedAgent(arg)
    if kind == "browser-use" and not arg:
        from rig.agents.browser_use_agent import BrowserUseAgent

        return BrowserUseAgent(model)
    if kind == "cdp" and not arg:
        from rig.agents.external import CdpAgent

        return CdpAgent()
    if kind == "operator" and not arg:
        from rig.agents.external import OperatorAgent

        return OperatorAgent(answer_file)
    if kind == "mcp" and not arg:
        from rig.agents.mcp_agent import McpAgent

        return McpAgent()
    if kind == "cli" and not arg:
        from rig.agents.cli_agent import CliAgent

        return CliAgent(command)
    raise InputError("--agent", None, f"unknown agent {name!r}; expected one of {', '.join(AGENT_KINDS)}")
