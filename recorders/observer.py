"""Loading the page-side observer script and calling its one-shot state collection."""

from __future__ import annotations

from contextlib import suppress
from functools import cache
from pathlib import Path
from typing import Any

from playwright.async_api import CDPSession, Frame, Page
from playwright.async_api import Error as PlaywrightError

#: The name of the binding the observer reports events through.
BINDING = "__sgrRecorderEvent"

_COLLECT = "o => window.__sgrRec ? window.__sgrRec.collect(o) : null"
_MARK = "window.__sgrRec ? window.__sgrRec.mark() : null"


@cache
def observer_script() -> str:
    """The observer's source (an idempotent init script)."""
    return (Path(__file__).with_name("observer.js")).read_text(encoding="utf-8")


async def install(frame: Frame) -> None:
    """Run the observer in a frame that was loaded before the recorder attached (no-op when present)."""
    with suppress(PlaywrightError):  # the frame navigated or closed meanwhile: its next document gets the init script
        await frame.evaluate(observer_script())


async def mark(cdp: CDPSession) -> str | None:
    """Mark the page right before a screenshot; the document's token (None when the page has no observer)."""
    try:
        res = await cdp.send("Runtime.evaluate", {"expression": _MARK, "returnByValue": True})
    except PlaywrightError:
        return None
    return res.get("result", {}).get("value")


async def collect(
    page: Page,
    facts: dict[str, dict[str, Any]],
    min_quiet_ms: float = 0,
    secret_names: list[str] | None = None,
    frame: bool = False,
    stale_ms: float = 3000,
    text: bool = True,
    html: bool = True,
) -> dict[str, Any] | None:
    """The page's raw state in one call: URL, controls, ARIA states, facts, text and live HTML, and how settled it is.

    The live HTML carries current form values (never those of password fields or fields in `secret_names`).
    The page first runs the tasks already queued (and, with `frame`, renders one frame). `busy` says whether it
    still has work pending (short timers, animation frames, fetches and XHR younger than `stale_ms`, loading) or
    mutated meanwhile; `quiet` is
    the time since its last DOM mutation (ms). When busy and quiet for less than `min_quiet_ms`, only `url`,
    `quiet`, `busy` and `partial: true` come back. Else also `doc` (the document's token) and `unchangedSinceMark`
    (no mutation since `mark()`). None when the page is between documents or closed.
    """
    opts = {
        "facts": facts,
        "text": text,
        "html": html,
        "minQuiet": min_quiet_ms,
        "frame": frame,
        "staleMs": stale_ms,
        "secretNames": secret_names or [],
    }
    try:
        raw = await page.evaluate(_COLLECT, opts)
        if raw is None:
            await install(page.main_frame)
            raw = await page.evaluate(_COLLECT, opts)
    except PlaywrightError:
        return None
    return raw
