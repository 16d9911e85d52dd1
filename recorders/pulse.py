"""Whether a page's renderer is busy, for telling a stalled body from one held back.

A body's bytes reach the recorder through the page's renderer: CDP's `Network.dataReceived` comes from its main
thread. While that thread parses a 10 MB table or runs a long script, no byte is seen to arrive, however fast
the server sends (4 s for the hostile site's 10 MB page on an idle machine, over 10 s on a busy one). So while a
body read waits for bytes, a `RendererPulse` asks the renderer a trivial question every `_EVERY_S`
(`Runtime.evaluate` of `0`, through the recorder's own CDP session), and `busy_until` tells when it was last seen
busy: an answer slower than `_BUSY_S`, or a question still unanswered after that long. A read counts only the time
after that towards its stall timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator

from playwright.async_api import CDPSession
from playwright.async_api import Error as PlaywrightError

_EVERY_S = 0.25  # how often a renderer a read waits on is asked
_BUSY_S = 0.5  # a renderer slower than this to answer is busy


class RendererPulse:
    """The answers of one page's (or out-of-process frame's) renderer, asked while reads wait on it."""

    def __init__(self, cdp: CDPSession) -> None:
        self._cdp = cdp
        self._asked: float | None = None  # when the question under way was asked (monotonic)
        self._busy_until = 0.0  # when a slow answer last came
        self._watchers = 0
        self._beating: asyncio.Task[None] | None = None

    def busy_until(self) -> float:
        """When the renderer was last seen busy (monotonic; now while a question waits longer than `_BUSY_S`)."""
        now = time.monotonic()
        if self._asked is not None and now - self._asked > _BUSY_S:
            return now
        return self._busy_until

    @contextlib.contextmanager
    def watching(self) -> Iterator[None]:
        """Ask the renderer while the block runs (one series of questions, however many reads watch)."""
        self._watchers += 1
        if self._beating is None:
            self._beating = asyncio.get_running_loop().create_task(self._beat())
        try:
            yield
        finally:
            self._watchers -= 1
            if self._watchers == 0 and self._beating is not None:
                self._beating.cancel()
                self._beating, self._asked = None, None

    async def _beat(self) -> None:
        while True:
            self._asked = asked = time.monotonic()
            with contextlib.suppress(PlaywrightError):  # an answer all the same (navigating, closed)
                await self._cdp.send("Runtime.evaluate", {"expression": "0"})
            answered = time.monotonic()
            self._asked = None
            if answered - asked > _BUSY_S:
                self._busy_until = answered
            await asyncio.sleep(_EVERY_S)
