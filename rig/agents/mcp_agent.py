"""The `mcp` agent: a recorded MCP tool server for an outside agent, until `final_answer`, `rig submit` or a budget.

The runner's recorded context and page are the tools' browser; the server (`rig.agents.mcp_server`) listens on
127.0.0.1 for the episode's lifetime. `rig run --agent mcp` prints `MCP endpoint: <url>`, `Episode: <dir>` and the
prompt (also saved as `prompt.md`), each on its own line, before it waits.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from typing import TextIO

from loguru import logger

from rig.agents.base import EpisodeEnv
from rig.agents.cdp import wait_for_answer
from rig.agents.episode_tools import EpisodeTools
from rig.agents.mcp_server import ServedMCP, recorded_server
from rig.agents.tool_calls import ToolCalls
from rig.episode_dir import EpisodeDir, write_atomic
from rig.errors import AgentError, InputError
from rig.formats.answer import Answer
from rig.formats.answer_text import ParseFailure
from rig.formats.task import ToolCall


def agent_prompt(env: EpisodeEnv) -> str:
    """The prompt an outside agent is given: the task's, and where the browser is open (unless the start is
    hidden: then the agent must find the site itself)."""
    hidden = env.task is not None and env.task.start_hidden
    if hidden or not env.start_url or env.start_url == "about:blank":
        return env.prompt
    return f"{env.prompt}\n\nThe browser is open at {env.start_url}"


def announce_mcp(url: str, env: EpisodeEnv, prompt: str, out: TextIO) -> None:
    """Print `MCP endpoint:`, `Episode:` and the prompt, each on its own line, and flush."""
    out.write(f"MCP endpoint: {url}\nEpisode: {env.out_dir}\nPrompt:\n{prompt}\n"
              f"Hand in the answer with the final_answer tool, or: rig submit {env.out_dir} --answer FILE\n")
    out.flush()


@dataclass
class ToolServerSession:
    """One episode's running tool server: its URL, its tools, and where the prompt was saved."""

    url: str
    tools: EpisodeTools
    calls: ToolCalls
    prompt: str
    env: EpisodeEnv

    async def answer(self, also: Awaitable[None] | None = None) -> Answer:
        """Wait for the answer: `final_answer`, or `rig submit`; or for `also` to end first (it should raise).
        A text with no table raises its ParseFailure (the episode ends as parse_failure)."""
        waits: dict[asyncio.Future[object], str] = {
            asyncio.ensure_future(self.tools.finished): "final_answer",
            # the runner's wall-clock budget ends a silent episode first, as `timeout`; this is a backstop
            asyncio.ensure_future(wait_for_answer(self.env.out_dir, timeout_s=self.env.budget.timeout_s + 5)):
                "submit",
        }
        if also is not None:
            waits[asyncio.ensure_future(also)] = "also"
        try:
            done, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            if self.tools.finished.done():  # an answer handed in wins over a process that exited right after
                first = next(f for f, kind in waits.items() if kind == "final_answer")
            else:
                first = next(iter(done))
            # a `rig submit` the process ran just before it exited wins too: the poll may not have looked since
            handed = await wait_for_answer(self.env.out_dir, timeout_s=0) if waits[first] == "also" else None
            outcome = handed if handed is not None else first.result()
        finally:
            for f in waits:
                f.cancel()
                with suppress(BaseException):
                    await f
        if self.calls.infra is not None:
            raise self.calls.infra
        if outcome is None:
            raise AgentError("no answer was handed in within the time budget")
        if isinstance(outcome, ParseFailure):
            raise outcome
        if not isinstance(outcome, Answer):
            raise AgentError("the agent ended without handing in an answer")
        return outcome


@asynccontextmanager
async def tool_server(env: EpisodeEnv) -> AsyncIterator[ToolServerSession]:
    """Serve the episode's recorded tools on 127.0.0.1 and save the prompt; stop serving on the way out, and take
    the agent's usage file (`agent_usage.json`, RIG_USAGE_FILE) into the episode's usage if it wrote one."""
    tools = EpisodeTools(env)
    server = recorded_server(tools)
    prompt = agent_prompt(env)
    write_atomic(EpisodeDir(env.out_dir).prompt_file, prompt + "\n")
    try:
        async with ServedMCP(server) as served:
            yield ToolServerSession(served.url, tools, server.calls, prompt, env)
    finally:
        take_usage_file(env)


def take_usage_file(env: EpisodeEnv) -> None:
    """The agent's own total in `agent_usage.json` replaces what its `report_usage` calls added up to; a file that
    is not a usage report is named in the log and left out (the calls' sum stays)."""
    try:
        report = EpisodeDir(env.out_dir).read_agent_usage()
    except InputError as exc:
        logger.warning("the agent's usage file is left out: {}", exc)
        return
    if report is not None:
        env.usage.report(report, "usage_file", replace=True)


async def replay_tool_calls(env: EpisodeEnv, calls: list[ToolCall]) -> Answer:
    """Make each call of a tool-call script, in order, through the episode's recorded tool server with the `mcp`
    SDK's own client (over streamable HTTP, as any outside agent would); return the `final_answer`'s answer."""
    from mcp.client import Client

    async with tool_server(env) as session:
        async with Client(session.url) as client:
            for i, call in enumerate(calls):
                result = await client.call_tool(call.tool, call.args)
                if result.is_error and call.tool != "final_answer":
                    text = " ".join(getattr(c, "text", "") for c in result.content)
                    raise AgentError(f"reference_tools[{i}] ({call.tool}) failed: {text[:300]}")
        return await session.answer()


class McpAgent:
    """Serves the episode's recorded tools over MCP to whatever client connects, until the answer comes."""

    name, model, needs_cdp = "mcp", None, False

    async def run(self, env: EpisodeEnv) -> Answer | None:
        """Announce the endpoint and the prompt, then wait for `final_answer` or `rig submit`."""
        async with tool_server(env) as session:
            announce_mcp(session.url, env, session.prompt, env.console or sys.stdout)
            return await session.answer()
