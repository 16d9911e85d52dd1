"""Loading the page-side observer script and calling its one-shot state collection."""

from __future__ import annotations

import asyncio
import json
from contextlib import suppress
from functools import cache
from pathlib import Path
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame, Page

from recorders.redact import PART_BOUNDARY, SECRET_PAIR, SECRET_PART

#: The name of the binding the observer reports events through.
BINDING = "__sgrRecorderEvent"

#: Tells the page a navigation it announced did not happen (a download, a failed or 204 navigation).
STAYED = "window.__sgrRec ? (window.__sgrRec.unloading = 0) : 0"
#: How long `collect` waits for the page's answer by default (a 10 MB DOM answers in seconds).
ANSWER_S = 30.0
_COLLECT = "async o => window.__sgrRec ? JSON.stringify(await window.__sgrRec.collect(o)) : null"


@cache
def observer_script() -> str:
    """The observer's source (an idempotent init script)."""
    return (Path(__file__).with_name("observer.js")).read_text(encoding="utf-8")


async def install(frame: Frame) -> None:
    """Run the observer in a frame that was loaded before the recorder attached (no-op when present)."""
    with suppress(PlaywrightError):  # the frame navigated or closed meanwhile: its next document gets the init script
        await frame.evaluate(observer_script())


async def collect(
    page: Page,
    facts: dict[str, dict[str, Any]],
    min_quiet_ms: float = 0,
    secret_names: list[str] | None = None,
    stale_ms: float = 3000,
    text: bool = True,
    html: bool = True,
    timeout_s: float = ANSWER_S,
    since_ms: float = 0,
    fresh_since_ms: float | None = None,
) -> dict[str, Any] | None:
    """The page's raw state in one call: URL, controls, ARIA states, facts, text and live HTML, and how settled it is.

    The live HTML carries current form values (never those of password fields, by type or autocomplete, of fields in
    `secret_names`, or of fields whose names say secret by `recorders.redact.secret_name`).
    The page first runs the tasks already queued. `busy` says whether it still has work pending (short timers,
    animation frames, fetches and XHR younger than `stale_ms` or started since `fresh_since_ms` (the action under way's
    start, page clock), loading) or mutated meanwhile; `fetching` counts those fetches and XHRs alone; `quiet` is the
    time since its last DOM mutation, or since `since_ms` (the page clock, ms since the epoch) when that is later (ms).
    When busy and quiet for less than `min_quiet_ms`, only `url`, `quiet`, `busy`, `fetching` and `partial: true` come
    back. None when the page is between documents, closed, or gave no answer
    within `timeout_s` (a page stuck in a script: a 10 MB DOM answers in seconds).
    """
    opts = {
        "facts": facts,
        "text": text,
        "html": html,
        "minQuiet": min_quiet_ms,
        "staleMs": stale_ms,
        "secretNames": secret_names or [],
        "secretPart": SECRET_PART.pattern,
        "secretPair": SECRET_PAIR.pattern,
        "secretBoundary": PART_BOUNDARY.pattern,
        "since": since_ms,
        "freshSince": fresh_since_ms,
    }

    async def ask() -> str | None:  # one JSON string: far cheaper to pass through Playwright than the nested value
        raw = await page.evaluate(_COLLECT, opts)
        if raw is None:
            await install(page.main_frame)
            raw = await page.evaluate(_COLLECT, opts)
        return raw

    try:
        raw = await asyncio.wait_for(ask(), timeout_s)
    except (PlaywrightError, TimeoutError):
        return None
    return json.loads(raw) if raw is not None else None
