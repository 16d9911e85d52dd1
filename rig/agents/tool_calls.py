"""Recording tool calls: each call of the tool server is one trajectory step and one WARC record.

A call's step carries `action: {"type": <tool name>, "target": <selector, for element tools>, "value": {"args":
{...}, "result": {"ok": bool, "digest": "<sha256 of the result text>", "chars": N, "error": "<msg>" | null}},
"source": "agent"}`, and the state of the page the tool acted on; the result text itself is archived as a
`resource` record named `urn:sgr-rig:tool/<step>/<tool>`. A call that fails (bad arguments, a refused query, a
stale element ref) is recorded the same way with `ok: false`, and its message goes back to the agent as a tool
error. Calls are taken one at a time, in the order they arrive.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from loguru import logger
from playwright.async_api import Page

from recorders import Recorder
from rig.agents.usage import UsageMeter
from rig.errors import AgentError, InfraError
from rig.tools.tool import cut_to_bytes

#: Tools that load pages in the fetch tab (their steps are that tab's).
FETCH_TOOLS = ("web_fetch", "pdf_read")
#: Tools whose `ref` argument names an element (their steps' `target` is a selector for it).
ELEMENT_TOOLS = ("browser_click", "browser_type", "browser_select_option")
#: Longest text of one argument kept in a step (a long SQL query or answer is cut there; its result is not).
MAX_ARG_CHARS = 20_000
#: Longest error message handed back (a result's own cap is declared with its tool, rig.tools.registry).
MAX_ERROR_BYTES = 8 * 1024


@dataclass
class ToolResult:
    """What one tool call gave back: its text (the error message when it failed), whether it worked, its step."""

    text: str
    ok: bool
    step: int | None
    error: str | None = None


def tool_uri(step: int | None, tool: str) -> str:
    """The URI of a tool result's WARC record."""
    return f"urn:sgr-rig:tool/{step if step is not None else 'none'}/{tool}"


def digest(text: str) -> str:
    """SHA-256 of a result text (hex), as the step records it."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ToolCalls:
    """Runs and records tool calls on one episode's recorder, one at a time."""

    def __init__(self, recorder: Recorder, page_for: Callable[[str], Awaitable[Page | None]],
                 target_for: Callable[[str, dict[str, Any]], Awaitable[str | None]],
                 usage: UsageMeter | None = None) -> None:
        self.recorder = recorder
        #: Counts each call and the bytes of its result (what the agent is shown) into the episode's usage.
        self.usage = usage
        self._page_for, self._target_for = page_for, target_for
        self._lock = asyncio.Lock()
        self.calls = 0
        #: An infrastructure failure met during a call (the episode ends as infra_error, never as the agent's 0).
        self.infra: InfraError | None = None

    async def call(self, tool: str, args: dict[str, Any], work: Callable[[], Awaitable[str]]) -> ToolResult:
        """Run `work` (the tool's body) as one recorded step; never raises for the agent's own mistakes."""
        async with self._lock:
            self.calls += 1
            page = await self._page_for(tool)
            target = await self._target_for(tool, args)
            result: dict[str, Any] = {"ok": False, "digest": None, "chars": 0, "error": None}
            # a dict, not an Action: the recorder copies it shallowly, so `result` is filled in before the step is
            # written (the recorder reads the action when it writes the step, after the work)
            action = {"type": tool, "target": target, "value": {"args": self._kept(args), "result": result}}
            text, ok, error = "", False, None
            async with self.recorder.action(action, page=page):
                try:
                    text, ok = await work(), True
                except AgentError as exc:  # the agent's mistake (ToolError included): it sees the message
                    error = str(exc)
                except InfraError as exc:
                    self.infra = self.infra or exc
                    error = f"the rig failed ({exc}); this episode will not be scored"
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # noqa: BLE001 - an unexpected failure of the tool: told to the agent, logged
                    logger.opt(exception=exc).warning("tool {} failed unexpectedly", tool)
                    error = f"{tool} failed: {type(exc).__name__}: {exc}"
                shown = text if ok else cut_to_bytes(error or "", MAX_ERROR_BYTES, "the rest of the message is cut")
                error = None if ok else shown
                result.update(ok=ok, digest=digest(shown), chars=len(shown), error=error)
            last = self.recorder.last_step
            step = last.step if last is not None else None
            self.recorder.add_resource(tool_uri(step, tool), shown, step)
            if self.usage is not None:
                self.usage.tool_call(shown)
            return ToolResult(shown, ok, step, error)

    def _kept(self, args: dict[str, Any]) -> dict[str, Any]:
        """The arguments as the step keeps them: strings redacted like page texts, and cut when very long."""
        red = self.recorder.redactor

        def keep(v: Any) -> Any:
            if isinstance(v, str):
                v = red.text(v)
                return v if len(v) <= MAX_ARG_CHARS else v[:MAX_ARG_CHARS] + f"… [{len(v) - MAX_ARG_CHARS} more]"
            if isinstance(v, list):
                return [keep(x) for x in v]
            if isinstance(v, dict):
                return {str(k): keep(x) for k, x in v.items()}
            return v

        return {str(k): keep(v) for k, v in args.items()}
