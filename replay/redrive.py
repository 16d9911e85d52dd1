"""Re-driving a recorded episode against its own archive and comparing every step (`rig replay`).

Each trajectory step's action (reported by the driver, or inferred by the recorder for `observed` steps) is
performed again in a context whose every request is answered from the archive. Whatever captured the
original states captures the replayed ones (a `StepCapture`: the recorder, with images and DOM snapshots
off), and a step matches when its state and its text hash equal the recording's, and the text hash also
equals the digest of the step's text record in the archive (so an altered archive is caught at the step it
alters).

The trajectory is read as plain JSON lines (`replay.report.read_recorded_steps`), so replay needs no recorder.
"""

from __future__ import annotations

import asyncio
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

from playwright.async_api import BrowserContext, Page
from playwright.async_api import Error as PlaywrightError

from replay.perform import perform
from replay.report import (
    VOLATILE_KEYS,
    Captured,
    Mismatch,
    MissRecord,
    RecordedStep,
    ReplayReport,
    step_diff,
)
from replay.route import ReplaySession

#: A step that differs is captured again this often (100 ms apart) after the action: the recorder judges "settled"
#: by short quiet windows, and replay answers requests faster than the live site did, so a capture can land
#: mid-update; on a busy machine the page may take a couple of seconds to reach the recorded state.
RECHECKS = 20
_RECHECK_S = 0.1


class StepCapture(Protocol):
    """Captures the state after each action, as during recording (`recorders.Recorder` is one)."""

    @property
    def steps(self) -> int: ...

    @property
    def last_step(self) -> Captured | None: ...

    def action(self, info: dict[str, Any]) -> AbstractAsyncContextManager[Any]: ...

    async def checkpoint(self, note: str) -> Captured: ...


def _base_url(page: Page, step: RecordedStep) -> str:
    """What a recorded action's relative URL resolved against: the page's URL for a `goto`, else the step's."""
    return page.url if step.action.get("type") == "goto" and page.url.startswith("http") else step.url


async def redrive(steps: list[RecordedStep], context: BrowserContext, session: ReplaySession | None, capture: StepCapture,
                  *, archive_texts: dict[int, str], timeout_s: float = 10.0, rechecks: int = RECHECKS,
                  ignore: frozenset[str] = VOLATILE_KEYS) -> ReplayReport:
    """Perform every recorded step's action again in `context` (answered by `session`, or by the network when it is
    None: `rig drift`) and compare the captures.

    `archive_texts` is the archive's text digest per step (`ArchiveIndex.step_text`). A differing step is
    captured again up to `rechecks` times (100 ms apart) before it counts as a mismatch.
    """
    report = ReplayReport(steps=len(steps))
    pages: list[Page] = []
    for step in steps:
        if session is not None:
            session.tag = step.step
        while len(pages) <= step.tab:
            pages.append(await context.new_page())
        page = pages[step.tab]
        action = {"type": step.action.get("type"), "target": step.action.get("target"), "value": step.action.get("value")}
        if action["type"] == "goto" and not (action["value"] or action["target"]):
            action["value"] = step.url
        error = None
        before = capture.steps
        try:
            async with capture.action({**action, "page": page}):
                await perform(page, action, base_url=_base_url(page, step), timeout_ms=timeout_s * 1000)
        except (PlaywrightError, ValueError, TypeError) as exc:
            error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        replayed = capture.last_step if capture.steps > before else None
        diff = step_diff(step, replayed, archive_texts.get(step.step), ignore)
        for _ in range(rechecks if diff and not error else 0):
            await asyncio.sleep(_RECHECK_S)  # captured mid-update? the page may still reach the recorded state
            try:
                again = await capture.checkpoint("replay recheck")
            except (PlaywrightError, RuntimeError):
                break  # the page went away: keep the first capture's differences
            if not (later := step_diff(step, again, archive_texts.get(step.step), ignore)):
                diff = later
                break
        if error:
            diff["error"] = error
        if diff:
            report.mismatches.append(Mismatch(step=step.step, diff=diff))
        else:
            report.matched += 1
    report.misses = [MissRecord(**m.to_json()) for m in session.misses] if session else []  # type: ignore[typeddict-item]
    return report
