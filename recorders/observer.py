"""Loading the page-side observer script and calling its one-shot state collection."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame, Page

#: The name of the binding the observer reports events through.
BINDING = "__sgrRecorderEvent"

_COLLECT = "o => window.__sgrRec ? window.__sgrRec.collect(o) : null"


@cache
def observer_script() -> str:
    """The observer's source (an idempotent init script)."""
    return (Path(__file__).with_name("observer.js")).read_text(encoding="utf-8")


async def install(frame: Frame) -> None:
    """Run the observer in a frame that was loaded before the recorder attached (no-op when present)."""
    try:
        await frame.evaluate(observer_script())
    except PlaywrightError:
        pass  # the frame navigated or closed meanwhile; its next document gets the init script


async def collect(
    page: Page, facts: dict[str, dict[str, Any]], min_quiet_ms: float = 0, text: bool = True, html: bool = True
) -> dict[str, Any] | None:
    """The page's raw state in one call: URL, controls, ARIA states, facts, quiet time, text and HTML.

    When the DOM changed less than `min_quiet_ms` ago, only `url`, `quiet` and `partial: true` come back.
    None when the page is between documents (navigating) or closed.
    """
    opts = {"facts": facts, "text": text, "html": html, "minQuiet": min_quiet_ms}
    try:
        raw = await page.evaluate(_COLLECT, opts)
        if raw is None:
            await install(page.main_frame)
            raw = await page.evaluate(_COLLECT, opts)
    except PlaywrightError:
        return None
    return raw
