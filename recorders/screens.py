"""Per-step JPEG images: a screenshot of each step taken while the step is still the page's state.

A step's image is a screenshot (CDP `Page.captureScreenshot`, which waits for the browser to render a frame)
requested while nothing has ended the step yet, and kept only if it came back before the step ended. So it
shows the step's state, never the previous one's nor the next action's. The next reported action waits for it
(`wait_shown`, unless the option `screenshot_wait_ms` is 0); an observed step is pictured before its line is
written; a step nobody acts after within `_HOLD_S` is pictured then. A step that an event the recorder cannot
hold back (a person's input, a page script navigating) ended first has no image file, never one of another state.
The file is written in the background, so after a crash the last step's image may be missing.

Why not the frames of a screencast (`Page.startScreencast`), which cost the driver less: a frame carries only
the time the browser means to present it, and on a busy machine the compositor draws the previous state after
the page rendered its change, in frames stamped as late as the new state's (the recorder then chose such a frame
for about one step in three hundred under load). No stamp tells the two apart; a screenshot requested after the
change cannot show the state before it.
"""

from __future__ import annotations

import asyncio
import base64
import time
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loguru import logger
from playwright.async_api import CDPSession, Page
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from recorders.files import SCREENS_DIR
from rigwarc.dialect import View

_HOLD_S = 0.5  # without a next action, a step is pictured and its image written this long after its step
_SHOT_TIMEOUT_S = 3.0  # a screenshot takes well under 100 ms; one not back by then may never come


async def capture_jpeg(
    page: Page, quality: int, scale: float, cdp: CDPSession | None, timeout_s: float = _SHOT_TIMEOUT_S,
    view: View | None = None,
) -> bytes | None:
    """A JPEG of the page's viewport, now (it waits for the browser to render a frame), encoded by the browser at
    `scale`; None when none came within `timeout_s` (Chromium's screenshot may never return while a navigation is
    pending: a page that reloads itself forever). `view` (width, height, scroll x, scroll y), when the step's state
    read gave it, is the viewport pictured; else the page is asked for it first (one round trip more)."""
    if cdp is None:
        try:
            return await page.screenshot(
                type="jpeg", quality=quality, animations="disabled", caret="hide", timeout=timeout_s * 1000
            )
        except PlaywrightTimeoutError:
            return None
    params: dict[str, Any] = {"format": "jpeg", "quality": quality, "optimizeForSpeed": True}
    try:
        async with asyncio.timeout(timeout_s):
            if scale < 1:
                if view is not None:
                    vp = {"x": view[2], "y": view[3], "width": view[0], "height": view[1]}
                else:
                    vp = await page.evaluate("() => ({x: scrollX, y: scrollY, width: innerWidth, height: innerHeight})")
                params["clip"] = {**vp, "scale": scale}
            res = await cdp.send("Page.captureScreenshot", params)
    except TimeoutError:
        logger.debug("recorders: no frame for a screenshot within {:g} s", timeout_s)
        return None
    return base64.b64decode(res["data"])


def screen_path(step: int) -> str:
    """The screenshot's path relative to the episode directory."""
    return f"{SCREENS_DIR}/{step:04d}.jpg"


@dataclass(eq=False)
class _Due:
    """A step's image still to write (times in seconds since the epoch)."""

    path: Path
    view: View | None = None  # the viewport the step's state was read in (width, height, scroll x, scroll y)
    until: float | None = None  # when the step ended (the next action began, or an event the recorder saw)
    jpeg: bytes | None = None  # a screenshot that came back before the step ended: its image
    wake: asyncio.Event = field(default_factory=asyncio.Event)


class StepShots:
    """A tab's step images: the steps whose image is still to take or write, and the CDP session taking them."""

    def __init__(self, cdp: CDPSession, page: Page, quality: int, scale: float, patience_s: float = _SHOT_TIMEOUT_S
                 ) -> None:
        self.cdp = cdp
        self._shot = (page, quality, scale)  # what `capture_jpeg` takes
        self._patience_s = max(patience_s, _SHOT_TIMEOUT_S)  # how long a step nobody acts after is tried
        self._dues: dict[_Due, asyncio.Task[None]] = {}

    def due(self, path: Path, view: View | None = None) -> _Due:
        """A step's image is due at `path` (`view`: the viewport its state was read in, when known)."""
        self.end(time.time())  # an earlier step of this tab is over (normally already ended by the next action)
        due = _Due(path, view)
        self._dues[due] = asyncio.get_running_loop().create_task(self._finish(due))
        return due

    def drop(self, due: _Due) -> None:
        """Write no image for this step."""
        if (task := self._dues.pop(due, None)) is not None:
            task.cancel()

    async def wait_shown(self, timeout_s: float) -> None:
        """Make sure each open step is pictured before the next action (`picture`)."""
        for due in list(self._dues):
            await self.picture(due, timeout_s)

    async def picture(self, due: _Due, timeout_s: float = _SHOT_TIMEOUT_S) -> bool:
        """Picture a step that is still the page's state (nothing ended it): a screenshot now, kept if it came back
        before the step ended, and asked again while none came and `timeout_s` lasts (each try given at most
        `_SHOT_TIMEOUT_S`: on a loaded machine a frame may come late). Whether the step has an image."""
        deadline = time.monotonic() + timeout_s
        while due.jpeg is None and due.until is None and (left := deadline - time.monotonic()) > 0:
            try:
                jpeg = await capture_jpeg(*self._shot, self.cdp, min(left, _SHOT_TIMEOUT_S), due.view)
            except PlaywrightError:
                break  # the page or its session went away
            if jpeg is not None and (due.until is None or time.time() <= due.until):
                due.jpeg = jpeg
        return due.jpeg is not None

    def end(self, until: float) -> None:
        """The step's state ended at `until` (seconds since the epoch): a screenshot back later shows nothing of it."""
        for due in self._dues:
            if due.until is None or until < due.until:
                due.until = until
                due.wake.set()

    async def close(self) -> None:
        """Picture the open steps, end them now and wait until their images are written."""
        await self.wait_shown(self._patience_s)
        self.end(time.time())
        if self._dues:
            await asyncio.wait(list(self._dues.values()))

    async def _finish(self, due: _Due) -> None:
        """Wait for the step to end (or `_HOLD_S`: then picture it, still the page's state); write its image, if it
        has one."""
        try:
            with suppress(TimeoutError):
                await asyncio.wait_for(self._until(due), _HOLD_S)
            if due.until is None:
                await self.picture(due, self._patience_s)
                if due.until is None:
                    due.until = time.time()  # this step only: a later one may be being pictured
            if due.jpeg is None:
                logger.debug("recorders: {}: the step ended before it was pictured: no image", due.path.name)
                return
            due.path.write_bytes(due.jpeg)
        finally:
            self._dues.pop(due, None)

    @staticmethod
    async def _until(due: _Due) -> None:
        while due.until is None:
            due.wake.clear()
            await due.wake.wait()
