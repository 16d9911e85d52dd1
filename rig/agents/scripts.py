"""Agents that run action scripts: `reference` (the task's solution) and `scripted:FILE`."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from rig.agents.base import EpisodeEnv
from rig.agents.scripted import ScriptRunner
from rig.errors import AgentError, InputError
from rig.formats.actions import load_script, parse_actions
from rig.formats.answer import Answer
from rig.formats.task import Task


class ReferenceAgent:
    """Runs the task's reference solution: its action script, or for a tool task its tool-call script through the
    episode's recorded tool server."""

    name, model, needs_cdp = "reference", None, False

    def check(self, task: Task) -> None:
        """InputError, before any episode, for a task with no reference solution to run."""
        if not task.reference_solution and not task.reference_tools:
            raise InputError(task.source or task.id, "reference_solution",
                             "the task has no reference solution (nor reference_tools) for the reference agent")
        if task.reference_tools:
            from rig.tools.registry import check_reference_tools

            check_reference_tools(task)

    async def run(self, env: EpisodeEnv) -> Answer | None:
        """Run the reference solution with the recorder watching each action (or each tool call)."""
        if env.task is None:
            raise InputError("--agent reference", None, "the reference agent needs a task")
        if not env.task.reference_solution and env.task.reference_tools:
            from rig.agents.mcp_agent import replay_tool_calls

            return await replay_tool_calls(env, env.task.reference_tools)
        actions = parse_actions(env.task.reference_solution, f"{env.task.id}.reference_solution")
        result = await ScriptRunner(env.page, env.script_base, hook=env.recorder).run(actions)
        if result.answer is None:
            raise AgentError(f"{env.task.id}: the reference solution gives no answer")
        return result.answer


class ScriptedAgent:
    """Runs any action script (`scripted:FILE`)."""

    model, needs_cdp = None, False

    def __init__(self, path: str) -> None:
        self.path: Path | None = Path(path)
        self.name = f"scripted:{path}"
        self.actions = load_script(self.path)  # fail before any episode starts

    @classmethod
    def of(cls, actions: list[BaseModel], name: str) -> ScriptedAgent:
        """An agent running actions already parsed (`rig record`)."""
        agent = cls.__new__(cls)
        agent.path, agent.name, agent.actions = None, name, actions
        return agent

    async def run(self, env: EpisodeEnv) -> Answer | None:
        """Run the script; its `answer` action (if any) is the answer."""
        result = await ScriptRunner(env.page, env.script_base, hook=env.recorder).run(self.actions)
        return result.answer
