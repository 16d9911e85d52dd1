"""The `cli` agent: runs a command (a CLI agent) against the episode's recorded MCP tool server.

The command runs in a shell, in a process group of its own, with `RIG_MCP_URL`, `RIG_PROMPT_FILE`,
`RIG_EPISODE_DIR` and `RIG_USAGE_FILE` (where it may write its LLM usage, read when the episode ends) in its
environment; its stdout and stderr go to the episode's `agent_output.log`. The episode ends
on `final_answer` or `rig submit` (the answer), when the command exits without an answer (the agent's failure), or
on a budget (the runner cancels the agent). However it ends, the whole process group is stopped: SIGTERM, then
SIGKILL for whatever is still running after a grace period.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

from loguru import logger

from rig.agents.base import EpisodeEnv
from rig.agents.mcp_agent import announce_mcp, tool_server
from rig.episode_dir import EpisodeDir
from rig.errors import AgentError, InputError
from rig.formats.answer import Answer

#: Seconds a stopped command's process group gets between SIGTERM and SIGKILL.
GRACE_S = 5.0
#: The environment variable naming the file where the command may write its own LLM usage (docs/cli-agents.md).
USAGE_ENV = "RIG_USAGE_FILE"


class CliAgent:
    """Runs `command` as the agent, with the tool server's endpoint and the prompt in its environment."""

    name, model, needs_cdp = "cli", None, False

    def __init__(self, command: str | None, grace_s: float = GRACE_S) -> None:
        if not command or not command.strip():
            raise InputError("--command", None, 'the cli agent needs the command to run: --agent cli --command "CMD"')
        self.command, self.grace_s = command, grace_s

    async def run(self, env: EpisodeEnv) -> Answer | None:
        """Serve the tools, start the command, wait for its answer (or its exit), then stop its process group."""
        ed = EpisodeDir(env.out_dir)
        async with tool_server(env) as session:
            announce_mcp(session.url, env, session.prompt, env.console or sys.stdout)
            environment = {**os.environ, "RIG_MCP_URL": session.url, "RIG_PROMPT_FILE": str(ed.prompt_file.resolve()),
                           "RIG_EPISODE_DIR": str(ed.path.resolve()), USAGE_ENV: str(ed.agent_usage_file.resolve())}
            env.usage.watch(ed.agent_log_file)  # its output is a sign of life (--stall-timeout)
            with ed.agent_log_file.open("ab") as log:
                proc = await asyncio.create_subprocess_shell(
                    self.command, stdin=asyncio.subprocess.DEVNULL, stdout=log, stderr=asyncio.subprocess.STDOUT,
                    env=environment, start_new_session=True,
                )
                logger.info("cli agent: started `{}` (pid {}), output in {}", self.command, proc.pid,
                            ed.agent_log_file)
                try:
                    return await session.answer(also=_exit_without_answer(proc, ed.agent_log_file))
                finally:
                    await stop_group(proc, self.grace_s)


async def _exit_without_answer(proc: asyncio.subprocess.Process, log: Path) -> None:
    code = await proc.wait()
    raise AgentError(f"the agent's command exited (code {code}) without handing in an answer; its output is in {log}")


def group_members(pgid: int) -> list[int]:
    """The live (not zombie) processes of process group `pgid`, read from /proc."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # gone meanwhile
        fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) ": state ppid pgrp ...
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            members.append(int(entry.name))
    return members


async def stop_group(proc: asyncio.subprocess.Process, grace_s: float = GRACE_S) -> None:
    """Stop the command's whole process group: SIGTERM, and SIGKILL after `grace_s` for what still runs."""
    pgid = proc.pid  # start_new_session: the command leads its own group
    if not _signal(pgid, signal.SIGTERM):
        await proc.wait()
        return
    deadline = asyncio.get_running_loop().time() + grace_s
    while group_members(pgid) and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.05)
    if group_members(pgid):
        logger.warning("cli agent: process group {} still running {:g} s after SIGTERM: killing it", pgid, grace_s)
        _signal(pgid, signal.SIGKILL)
    try:
        await asyncio.wait_for(proc.wait(), grace_s)
    except TimeoutError:
        logger.warning("cli agent: the command (pid {}) did not exit after SIGKILL", pgid)


def _signal(pgid: int, sig: signal.Signals) -> bool:
    """Send `sig` to the group; False when no process of it is left."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    return True
