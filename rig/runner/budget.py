"""Supervising an agent: wall-clock timeout, stall detection and the step budget."""

from __future__ import annotations

import asyncio
import time
from typing import Any, Awaitable, Callable

from rig.agents.base import Budget
from rig.errors import InfraError

#: How long an agent stopped by Ctrl-C may take to clean up (a CLI agent's process group, its tool server) before
#: the run goes on without it; a second Ctrl-C does not wait.
STOP_S = 30.0


class BudgetExceeded(Exception):
    """The agent ran out of a budget; `status` is how the episode ends (`timeout` or `agent_error`)."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status


class EpisodeHung(InfraError):
    """No step and no output for `--stall-timeout` seconds: the episode was killed (an infrastructure failure)."""


async def supervise(work: Awaitable[Any], budget: Budget, steps: Callable[[], int], poll_s: float = 0.1,
                    started: float | None = None, activity: Callable[[], int] | None = None,
                    capturing: Callable[[], bool] | None = None) -> Any:
    """Await `work`, cancelling it when the time, stall or step budget runs out (the wall-clock budget counted from
    `started`, a `time.monotonic()` time, default now: the episode's start page shares it), or when neither `steps`
    nor `activity` moved for `budget.stall_timeout_s` (EpisodeHung). The stall budget is the agent's pace: it does
    not run while `capturing()` says the recorder is capturing a step (a 10 MB DOM on a busy machine is the rig's
    time, not the agent's)."""
    task = asyncio.ensure_future(work)
    last_change = time.monotonic()
    start = started if started is not None else last_change
    seen = steps()
    alive, last_alive = (seen, activity() if activity else 0), last_change
    reason: BaseException | None = None
    while not task.done():
        try:
            await asyncio.wait({task}, timeout=poll_s)
        except asyncio.CancelledError:  # the run is stopping (Ctrl-C): the agent stops with it, never orphaned
            await _stop(task, STOP_S)
            raise
        if task.done():
            break
        now, count = time.monotonic(), steps()
        if count != seen or (capturing is not None and capturing()):
            seen, last_change = count, now
        pulse = (count, activity() if activity else 0)
        if pulse != alive:
            alive, last_alive = pulse, now
        hung = budget.stall_timeout_s is not None and now - last_alive > budget.stall_timeout_s
        if now - start > budget.timeout_s:
            reason = BudgetExceeded("timeout", f"wall-clock budget of {budget.timeout_s:g} s exceeded")
        elif hung:
            reason = EpisodeHung(f"hung: no step and no output for {budget.stall_timeout_s:g} s (--stall-timeout); "
                                 "killed")
        elif now - last_change > budget.stall_s:
            reason = BudgetExceeded("timeout", f"stalled: no new step for {budget.stall_s:g} s")
        elif count > budget.max_steps:
            reason = BudgetExceeded("agent_error", f"step budget of {budget.max_steps} exceeded")
        if reason is not None:
            await _stop(task)
            raise reason
    return task.result()


async def _stop(task: asyncio.Future[Any], grace_s: float = 5.0) -> None:
    """Cancel the agent's task and give it `grace_s` to clean up; whatever it ended with is read (never left as
    "Task exception was never retrieved")."""
    task.cancel()
    await asyncio.wait({task}, timeout=grace_s)
    if task.done() and not task.cancelled():
        task.exception()
