"""Capturing one step: wait for the page to settle, collect its state, queue its image, archive its text and DOM."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loguru import logger
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from recorders import observer, screens, state
from recorders.adapter import SiteAdapter
from recorders.models import Action, Snapshot, Step
from recorders.network import NetworkCapture
from recorders.options import RecorderOptions
from recorders.redact import Redactor
from recorders.trajectory import TrajectoryWriter
from recorders.warc import Capture, WarcArchive
from rigwarc.dialect import DOM, TEXT, View

_BUSY_POLL_S = 0.01  # a page with work pending is asked again this soon
_NAVIGATING_ASK_S = 1.0  # a page waiting for its next document is asked at least this long (it may commit meanwhile)


@dataclass
class Tab:
    """A page of the recorded context, in opening order, with its step images and last image."""

    page: Page
    index: int
    screen: asyncio.Task[screens.StepShots | None] | None = None
    steps: int = 0
    shot_hash: str | None = None
    shot_path: str | None = None

    async def shots(self) -> screens.StepShots | None:
        """The tab's step images (None off Chromium, or with screenshots off)."""
        return await self.screen if self.screen is not None else None

    def started(self) -> screens.StepShots | None:
        """The tab's step images, once they are set up."""
        task = self.screen
        if task is None or not task.done() or task.cancelled() or task.exception() is not None:
            return None
        return task.result()


class StepWriter:
    """Writes steps: settle, collect, queue the image, archive the text and live DOM, append to the trajectory."""

    def __init__(
        self,
        out_dir: Path,
        options: RecorderOptions,
        adapters: list[SiteAdapter],
        redactor: Redactor,
        archive: WarcArchive,
        net: NetworkCapture,
        trajectory: TrajectoryWriter,
        clock: Callable[[], float],
    ) -> None:
        self.out_dir, self.options, self.adapters, self.redactor = out_dir, options, adapters, redactor
        self.archive, self.net, self.trajectory, self.clock = archive, net, trajectory, clock
        self.t0 = clock()
        self.prev_state: dict[str, Any] | None = None
        self.last_step: Step | None = None
        self.count = 0
        self.settle_s = 0.0  # time spent in `_settle`: waiting for quiet and collecting state

    async def write(
        self,
        tab: Tab,
        take_events: Callable[[], list[dict[str, Any]]],
        make_action: Callable[[list[dict[str, Any]]], Action],
    ) -> Step | None:
        """Capture and append one step. Once the page settled, `take_events()` gives the page events folded
        into the step (every event the page sent before settling has arrived by then) and `make_action(events)`
        the step's action. None when the page closed.
        """
        adapter = state.pick_adapter(self.adapters, tab.page.url)
        facts = {k: f.model_dump(include={"selector", "attribute", "all"}) for k, f in adapter.page.items()} if adapter else {}
        began = time.monotonic()
        try:
            raw, settled = await self._settle(tab, facts)
        finally:
            self.settle_s += time.monotonic() - began
        events = take_events()
        if raw is None:
            return None
        url = self.redactor.url(raw["url"])
        adapter = state.pick_adapter(self.adapters, url)
        action = make_action(events)
        cur = state.build_state(raw, url, adapter, self.redactor.state)
        text = self.redactor.prose(state.normalize_text(raw.get("text") or ""))
        html = raw.get("html") or ""
        n = self.count
        dom_hash = state.dom_hash(html)
        url_only = raw.keys() == {"url"}  # a page that did not answer: no screenshot either (it would wait in vain)
        shot = None if url_only else await self._image(tab, n, dom_hash, raw, observed=action.source == "observed")
        step = Step(
            step=n,
            t=round(self.clock() - self.t0, 3),
            url=url,
            action=action,
            state=cur,
            state_diff=state.diff(self.prev_state, cur),
            dom_hash=dom_hash,
            text_hash=state.text_hash(text),
            screenshot=shot,
            snapshot=self._archive(tab, n, url, text, html if self.options.dom_snapshot else None, _view(raw)),
            tab=tab.index,
            settled=settled,
        )
        self.trajectory.write(step)
        self.redactor.commit()
        self.prev_state, self.last_step = cur, step
        self.count += 1
        tab.steps += 1
        logger.debug("recorders: step {} {} ({}) {}", n, action.type, action.source, url)
        return step

    async def _settle(self, tab: Tab, facts: dict[str, dict[str, Any]]) -> tuple[dict[str, Any] | None, bool]:
        """Wait (bounded) until the page is settled; return its raw state and whether it settled.

        Settled: nothing pending in the page and no request in flight (the fast path), or else no fetch the page
        waits for, no request for `network_quiet_ms` and no DOM mutation for `dom_quiet_ms`, both counted from the
        settle's start at the earliest (a change an action scheduled may still be on its way; timers and animation
        frames may still run). The page's own count of its fetches matters on a loaded machine: the browser may tell
        the recorder of a request later than the page showed "Loading…" for longer than both windows. A page still navigating (or not answering)
        after `max_settle_ms` gets an unsettled step holding only its URL; None only when the page closed.
        """
        o = self.options
        deadline = time.monotonic() + o.max_settle_ms / 1000
        since_ms = time.time() * 1000
        while True:
            late = time.monotonic() >= deadline
            # a page waiting for its next document answers nothing till it commits: ask no longer than the settle lasts
            answer_s = (max(_NAVIGATING_ASK_S, deadline - time.monotonic()) if self.net.navigating(tab.page)
                        else observer.ANSWER_S)
            raw = await observer.collect(
                tab.page, facts, 0 if late else o.dom_quiet_ms, self.redactor.params, o.long_request_ms,
                since_ms=since_ms, fresh_since_ms=self.net.action_began_ms, timeout_s=answer_s,
            )
            if raw is not None and not raw.get("partial"):
                fast = not raw["busy"] and self.net.inflight == 0
                windows = (not raw.get("fetching") and raw["quiet"] >= o.dom_quiet_ms
                           and self.net.quiet_for() >= o.network_quiet_ms / 1000)
                if fast or windows or late:
                    return raw, fast or windows
            if tab.page.is_closed():
                return None, False
            if late and (raw is None or raw.get("partial")):  # still navigating (a refresh loop) or unresponsive
                logger.debug("recorders: the page did not come back within max_settle_ms: a step with its URL only")
                url = raw["url"] if raw else tab.page.url
                return {"url": url}, False
            if self.net.inflight > 0:
                await self.net.wait_idle(deadline - time.monotonic())
                continue
            wait = _BUSY_POLL_S if raw is None or raw["busy"] else (o.dom_quiet_ms - raw["quiet"]) / 1000
            await asyncio.sleep(max(0.005, min(wait, deadline - time.monotonic())))

    async def _image(self, tab: Tab, n: int, dom_hash: str, raw: dict[str, Any], observed: bool) -> str | None:
        """The step's image path, per `options.screenshots`: a screenshot written later, with
        `screenshot_source: dom` an image rendered from the DOM snapshot after the episode (none is written now),
        else a screenshot now.

        An observed step is pictured before its line is written (nothing holds its next event back, so its image
        must be there before that): None when the page changed again first."""
        o = self.options
        if o.screenshots == "off":
            return None
        if o.screenshots == "on_change" and dom_hash == tab.shot_hash:
            return tab.shot_path
        rel = screens.screen_path(n)
        if o.screenshot_source == "dom" and not raw.get("live") and raw.get("html") is not None:
            tab.shot_hash, tab.shot_path = dom_hash, rel  # rendered after the episode from the DOM snapshot
            return rel
        cast = await tab.shots()
        if cast is not None:
            due = cast.due(self.out_dir / rel, _view(raw))
            if observed and o.screenshot_wait_ms and not await cast.picture(due, o.screenshot_wait_ms / 1000):
                cast.drop(due)
                tab.shot_hash, tab.shot_path = dom_hash, None
                return None
        else:
            try:
                jpeg = await screens.capture_jpeg(tab.page, o.jpeg_quality, o.screenshot_scale, None)
            except PlaywrightError:
                jpeg = None
            if jpeg is None:  # the page went away, or rendered no frame in time
                return tab.shot_path if o.screenshots == "on_change" else None
            (self.out_dir / rel).write_bytes(jpeg)
        tab.shot_hash, tab.shot_path = dom_hash, rel
        return rel

    def _archive(self, tab: Tab, n: int, url: str, text: str, html: str | None,
                 view: View | None = None) -> Snapshot | None:
        """Queue the step's text and live-DOM records; return their ids."""
        if not self.options.record_text and html is None:
            return None
        refers = self.net.documents.get(tab.page.main_frame)
        snap = Snapshot()
        now = self.clock()
        if self.options.record_text:
            snap.warc_record_id = self.archive.new_id()
            data = text.encode("utf-8")
            self.archive.put(
                Capture(snap.warc_record_id, TEXT, url, n, now, "text/plain; charset=utf-8", data, refers_to=refers)
            )
        if html is not None:
            snap.dom_record_id = self.archive.new_id()
            scrub = self.redactor
            self.archive.put(
                Capture(
                    snap.dom_record_id,
                    DOM,
                    url,
                    n,
                    now,
                    "text/html; charset=utf-8",
                    lambda: scrub.url(html).encode("utf-8"),
                    refers_to=refers,
                    concurrent_to=snap.warc_record_id,
                    view=view,
                )
            )
        return snap


def _view(raw: dict[str, Any]) -> View | None:
    """The viewport a state read was taken in (width, height, scroll x, scroll y), when it read the DOM."""
    view = raw.get("view")
    if not isinstance(view, list) or len(view) != 4:
        return None
    width, height, x, y = (int(v) for v in view)
    return width, height, x, y
