"""Per-step JPEG images from a screencast of each tab, chosen off the critical path.

Each tab streams its repaints (CDP `Page.startScreencast`), each frame stamped by the browser with the time it
is presented: one display interval (16.7 ms) after the frame time of the animation frame it draws. The page
reports each animation frame that renders one of its changes (`observer.PAINT_BINDING`, through the same CDP
session, so a report always arrives before any frame drawing that animation frame). A step's image is a frame

- that arrived after the report of the animation frame rendering the step's last change, and is stamped more
  than `_MARGIN_S` after that frame's callbacks ran (older drawings, even late ones, are stamped earlier);
- stamped less than `_MARGIN_S` after the frame time of the animation frame rendering the next action's first
  change (a frame drawing that change is stamped a whole interval later).

So it shows the step's state, never the next action's. Such a frame need not come: a busy machine acks frames
late and the browser drops the frames it could not send meanwhile (a state may never be streamed), a frame may
arrive long after it was drawn, or the compositor drew it from before the change (stamped too early to count),
and a change that paints nothing brings no frame at all. The latest frame before the next action is then no
picture of the step (it may predate the change), so it is never used. Instead, while the step is still the
page's state, it gets a screenshot (a frame rendered now): the next action waits (`wait_shown`, bounded by the
option `screenshot_wait_ms`, ending early after about twice the recent frame delay) until a frame showing the
step arrived, else takes one; an observed step is pictured so before its line is written (the step has no image,
`screenshot: null`, when the page changed again first); a step nobody acts after within `_HOLD_S` is pictured
then. A step ended by an event the recorder cannot hold back (a person's input, a page script navigating) before
any of that happened keeps only a frame that arrives later (within `_FRAME_WAIT_S`) and provably shows it: else
it gets no image file, never one of another state. The file is written in the background once the next action
began (or `_HOLD_S` after the step), so after a crash the last step's image may be missing. Tabs that send no
frames (hidden, or off Chromium) get a screenshot at once instead. Frames are stamped in the browser process and
paints in the page: both read the system clock.
"""

from __future__ import annotations

import asyncio
import base64
import sys
import time
from collections import deque
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loguru import logger
from playwright.async_api import CDPSession, Page
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from recorders import observer
from recorders.background import spawn
from recorders.files import SCREENS_DIR

_MARGIN_S = 0.008  # half a display interval (16.7 ms)
_SHOWN_MIN_S, _SHOWN_MAX_S = 0.04, 0.1  # bounds of the wait for a frame after its animation frame ran
_CLOSE_SHOWN_S = 0.2  # at close, a frame showing the last step is awaited at most this long after its change
_FRAME_WAIT_S = 1.5  # a frame showing an ended step may still arrive this long after it ended (a busy machine)
_HOLD_S = 0.5  # without a next action, a step is pictured and its image written this long after its step
_SHOT_TIMEOUT_S = 3.0  # a screenshot takes well under 100 ms; one not back by then may never come
_KEEP = 6  # recent frames kept per tab (a step's frame may arrive before its step is written)


async def capture_jpeg(page: Page, quality: int, scale: float, cdp: CDPSession | None) -> bytes | None:
    """A JPEG of the page's viewport, now (it waits for the browser to render a frame); None when no frame came
    within `_SHOT_TIMEOUT_S` (Chromium's screenshot may never return while a navigation is pending: a page that
    reloads itself forever)."""
    if cdp is None:
        try:
            return await page.screenshot(
                type="jpeg", quality=quality, animations="disabled", caret="hide", timeout=_SHOT_TIMEOUT_S * 1000
            )
        except PlaywrightTimeoutError:
            return None
    params: dict[str, Any] = {"format": "jpeg", "quality": quality, "optimizeForSpeed": True}
    try:
        async with asyncio.timeout(_SHOT_TIMEOUT_S):
            if scale < 1:
                vp = await page.evaluate("() => ({x: scrollX, y: scrollY, width: innerWidth, height: innerHeight})")
                params["clip"] = {**vp, "scale": scale}
            res = await cdp.send("Page.captureScreenshot", params)
    except TimeoutError:
        logger.debug("recorders: no frame for a screenshot within {:g} s", _SHOT_TIMEOUT_S)
        return None
    return base64.b64decode(res["data"])


def screen_path(step: int) -> str:
    """The screenshot's path relative to the episode directory."""
    return f"{SCREENS_DIR}/{step:04d}.jpg"


@dataclass
class _Frame:
    stamp: float  # seconds since the epoch, when the browser presents it (a screenshot: when it came back)
    data: str  # base64 JPEG
    seq: int = 0  # arrival order (a screenshot taken for a step comes after every frame)
    shot: bool = False  # a screenshot taken while the step was the page's state: it shows the step if it came
    # back before the step ended


@dataclass
class _Paint:
    changed: float  # the page's last change it renders
    frame_time: float  # its animation frame's time
    ran: float  # when that frame's callbacks ran
    seq: int  # how many frames had arrived before it


@dataclass(eq=False)
class _Due:
    """A step's image still to write (times in seconds since the epoch)."""

    path: Path
    changed: float  # the step's last visible change
    reports: bool  # the page reports its paints (else only frames stamped before `until` are used)
    paint: _Paint | None = None  # the animation frame rendering the step's last change
    until: float | None = None  # when the next action began
    upper: float | None = None  # the frame time of the animation frame rendering the next action's first change
    best: _Frame | None = None  # the latest frame showing the step: its image
    latest: _Frame | None = None  # the latest frame stamped before `until`, whatever it shows: frames do come
    past: bool = False  # a frame drawing the next change arrived: frames come in order, none showing the step follows
    wake: asyncio.Event = field(default_factory=asyncio.Event)

    def offer(self, frame: _Frame) -> None:
        if frame.shot:
            if self.until is not None and frame.stamp > self.until:
                return  # it came back after the step ended: it may show what followed
        else:
            before = self.until is None or frame.stamp < self.until
            if before and (self.latest is None or frame.stamp > self.latest.stamp):
                self.latest = frame
                self.wake.set()
            if self.upper is not None and frame.stamp >= self.upper + _MARGIN_S:
                self.past = True
                self.wake.set()
                return
            p = self.paint
            if p is None or frame.seq <= p.seq or frame.stamp <= p.ran + _MARGIN_S:
                return
        if self.best is None or frame.stamp > self.best.stamp:
            self.best = frame
            self.wake.set()

    def recheck(self, frames: deque[_Frame]) -> None:
        """Choose again among the recent frames after `paint`, `until` or `upper` changed."""
        kept = [f for f in (self.best, self.latest) if f is not None]
        self.best = self.latest = None
        self.past = False
        for frame in [*kept, *frames]:
            self.offer(frame)

    def learn(self, paint: _Paint) -> bool:
        """Take a reported paint as the step's, or as the next action's first; whether it was either."""
        if self.until is not None and paint.changed > self.until:
            if self.upper is not None and paint.frame_time >= self.upper:
                return False
            self.upper = paint.frame_time
            return True
        if self.paint is None and paint.changed >= self.changed:
            self.paint = paint
            return True
        return False


class Screencast:
    """A tab's screencast: its recent frames and paints, and the step images waiting for theirs."""

    def __init__(self, cdp: CDPSession) -> None:
        self.cdp = cdp
        self.visible = True
        self._frames: deque[_Frame] = deque(maxlen=_KEEP)
        self._paints: deque[_Paint] = deque(maxlen=_KEEP * 4)
        self._seq = 0
        self._dues: dict[_Due, asyncio.Task[None]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._shot: tuple[Page, int, float] | None = None  # page, quality and scale for a screenshot instead
        self._lags: deque[float] = deque(maxlen=8)  # recent delays from rendering a change to its frame
        self._gone = False  # the tab closed: no frame will come

    async def start(self, page: Page, quality: int, scale: float) -> None:
        """Receive the page's paints and start streaming frames (scaled by `scale`)."""
        self.cdp.on("Page.screencastFrame", self._on_frame)
        self.cdp.on("Page.screencastVisibilityChanged", self._on_visibility)
        self.cdp.on("Runtime.bindingCalled", self._on_paint)
        await self.cdp.send("Runtime.addBinding", {"name": observer.PAINT_BINDING})
        await self.cdp.send("Runtime.enable")
        self._shot = (page, quality, scale)
        params: dict[str, Any] = {"format": "jpeg", "quality": quality, "everyNthFrame": 1}
        if scale < 1:
            size = page.viewport_size or await page.evaluate("() => ({width: innerWidth, height: innerHeight})")
            params.update(maxWidth=round(size["width"] * scale), maxHeight=round(size["height"] * scale))
        await self.cdp.send("Page.startScreencast", params)

    def due(self, path: Path, changed: float, reports: bool) -> _Due:
        """A step's image is due at `path`; `changed`: its last visible change (page clock, seconds)."""
        self.end(time.time())  # an earlier step of this tab is over (normally already ended by the next action)
        due = _Due(path, changed, reports)
        for paint in self._paints:
            due.learn(paint)
        due.recheck(self._frames)
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

    async def picture(self, due: _Due, timeout_s: float) -> bool:
        """Make sure a step that is still the page's state (nothing ended it) is pictured: wait until a frame
        showing it arrived, at most about twice as long after its last change was rendered as frames took lately
        and `timeout_s` after the change; else take a screenshot. Whether the step has an image showing it."""
        while due.best is None and due.until is None:
            limit = due.changed + timeout_s
            if due.paint is not None and due.latest is not None:
                limit = min(limit, due.paint.ran + min(timeout_s, self._patience()))
            left = limit - time.time()
            if left <= 0:
                break
            due.wake.clear()
            with suppress(TimeoutError):
                await asyncio.wait_for(due.wake.wait(), left)
        if due.best is None and due.until is None and self._shot is not None:
            # No frame shows it: frames were dropped or are late, or the change painted nothing. The latest
            # frame may predate the change; a frame rendered now shows the step.
            with suppress(PlaywrightError):
                if (jpeg := await capture_jpeg(*self._shot, self.cdp)) is not None:
                    due.offer(_Frame(time.time(), base64.b64encode(jpeg).decode("ascii"), sys.maxsize, shot=True))
        return due.best is not None

    def end(self, until: float, last: bool = False) -> None:
        """The next action began at `until` (seconds since the epoch): the open steps' images show nothing later.
        `last`: the tab closed, no frame will come."""
        if last:
            self._gone = True
            for due in self._dues:
                due.wake.set()
        for due in self._dues:
            self._end(due, until)

    def _end(self, due: _Due, until: float) -> None:
        if due.until is not None and due.until <= until:
            return
        due.until = until
        due.upper = None if due.reports else until
        for paint in self._paints:
            due.learn(paint)
        due.recheck(self._frames)
        due.wake.set()

    async def close(self) -> None:
        """Picture the open steps, end them now and wait until their images are written."""
        await self.wait_shown(_CLOSE_SHOWN_S)
        self.end(time.time())
        if self._dues:
            await asyncio.wait(list(self._dues.values()))
        self._frames.clear()

    def _patience(self) -> float:
        """How long after a change was rendered its frame is awaited: twice the recent worst, within bounds."""
        return min(_SHOWN_MAX_S, max(_SHOWN_MIN_S, 2 * max(self._lags, default=0.0)))

    def _on_paint(self, params: dict[str, Any]) -> None:
        """The page reported an animation frame rendering its changes."""
        if params.get("name") != observer.PAINT_BINDING:
            return
        try:
            changed, frame_time, ran = (float(x) / 1000 for x in str(params.get("payload")).split())
        except ValueError:
            return
        paint = _Paint(changed, frame_time, ran, self._seq)
        self._paints.append(paint)
        for due in self._dues:
            if due.learn(paint):
                due.recheck(self._frames)
                due.wake.set()

    def _on_frame(self, params: dict[str, Any]) -> None:
        spawn(self._tasks, self.cdp.send("Page.screencastFrameAck", {"sessionId": params["sessionId"]}))
        self._seq += 1
        frame = _Frame(params.get("metadata", {}).get("timestamp") or time.time(), params["data"], self._seq)
        self._frames.append(frame)
        for due in self._dues:
            shown = due.best is not None
            due.offer(frame)
            if not shown and due.best is frame and due.paint is not None:
                self._lags.append(time.time() - due.paint.ran)

    def _on_visibility(self, params: dict[str, Any]) -> None:
        self.visible = bool(params.get("visible", True))

    async def _finish(self, due: _Due) -> None:
        """Wait for the next action (or `_HOLD_S`: then picture the step, still the page's state), then (bounded,
        unless the screencast moved past the step) for a frame showing the step; write it. Without one, no image:
        the latest frame may show the state before."""
        try:
            with suppress(TimeoutError):
                await asyncio.wait_for(self._until(due), _HOLD_S)
            if due.until is None:
                await self.picture(due, 0)
                self._end(due, time.time())  # this step only: a later one may be being pictured
            deadline = (due.until or time.time()) + _FRAME_WAIT_S
            while due.best is None and not due.past and not self._gone:
                left = deadline - time.time()
                if left <= 0:
                    break
                due.wake.clear()
                with suppress(TimeoutError):
                    await asyncio.wait_for(due.wake.wait(), left)
            if due.best is None:
                logger.debug("recorders: {}: the page changed before any frame showed the step: no image", due.path.name)
                return
            due.path.write_bytes(base64.b64decode(due.best.data))
        finally:
            self._dues.pop(due, None)

    @staticmethod
    async def _until(due: _Due) -> None:
        while due.until is None:
            due.wake.clear()
            await due.wake.wait()
