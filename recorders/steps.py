"""Capturing one step: wait for the page to settle, collect its state, screenshot it, archive its text and DOM."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loguru import logger
from playwright.async_api import CDPSession, Page

from recorders import observer, screens, state
from recorders.adapter import SiteAdapter
from recorders.models import Action, Snapshot, Step
from recorders.network import NetworkCapture
from recorders.options import RecorderOptions
from recorders.redact import Redactor
from recorders.trajectory import TrajectoryWriter
from recorders.warc import Capture, WarcArchive


@dataclass
class Tab:
    """A page of the recorded context, in opening order, with its CDP session and last screenshot."""

    page: Page
    index: int
    cdp: asyncio.Task[CDPSession | None] | None = None
    steps: int = 0
    shot_hash: str | None = None
    shot_path: str | None = None

    async def session(self) -> CDPSession | None:
        """The tab's CDP session (None off Chromium)."""
        return await self.cdp if self.cdp is not None else None


class StepWriter:
    """Writes steps: settle, collect, screenshot, archive the text and live DOM, append to the trajectory."""

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

    async def write(
        self,
        tab: Tab,
        take_events: Callable[[], list[dict[str, Any]]],
        make_action: Callable[[list[dict[str, Any]]], Action],
    ) -> Step | None:
        """Capture and append one step. Once the page settled, `take_events()` gives the page events folded
        into the step (every event the page sent before settling has arrived by then) and `make_action(events)`
        the step's action. None when the page closed or never came back from navigating.
        """
        adapter = state.pick_adapter(self.adapters, tab.page.url)
        facts = {k: f.model_dump(include={"selector", "attribute"}) for k, f in adapter.page.items()} if adapter else {}
        raw, settled, shot_task = await self._settle(tab, facts)
        events = take_events()
        if raw is None:
            return None
        url = self.redactor.url(raw["url"])
        adapter = state.pick_adapter(self.adapters, url)
        action = make_action(events)
        cur = self.redactor.state(state.build_state(raw, url, adapter))
        text = self.redactor.text(state.normalize_text(raw.get("text") or ""))
        html = raw.get("html") or ""
        n = self.count
        dom_hash = state.dom_hash(html)
        shot = await self._screenshot(tab, n, dom_hash, shot_task)
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
            snapshot=self._archive(tab, n, url, text, html if self.options.dom_snapshot else None),
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

    async def _settle(
        self, tab: Tab, facts: dict[str, dict[str, Any]]
    ) -> tuple[dict[str, Any] | None, bool, asyncio.Task[bytes] | None]:
        """Wait (bounded) until the page is settled; return its raw state, whether it settled, and a screenshot.

        Settled: nothing pending in the page and no request in flight (the fast path), or else no request
        for `network_quiet_ms` and no DOM mutation for `dom_quiet_ms`. A screenshot waits for a frame anyway,
        so one is requested right away (after marking the page) and kept only when the settled state is the
        marked one: same document, no mutation since the mark. Otherwise it is retaken once settled.
        """
        o = self.options
        deadline = time.monotonic() + o.max_settle_ms / 1000
        shot, token = None, None
        cdp = await tab.session() if o.screenshots != "off" else None
        if cdp is not None and (token := await observer.mark(cdp)) is not None:
            shot = self._start_shot(tab, cdp)
        while True:
            late = time.monotonic() >= deadline
            raw = await observer.collect(
                tab.page,
                facts,
                0 if late else o.dom_quiet_ms,
                self.redactor.params,
                shot is not None,
                o.long_request_ms,
            )
            if raw is not None and not raw.get("partial"):
                fast = not raw["busy"] and self.net.inflight == 0
                windows = raw["quiet"] >= o.dom_quiet_ms and self.net.quiet_for() >= o.network_quiet_ms / 1000
                if fast or windows or late:
                    if shot is not None and not (raw.get("doc") == token and raw.get("unchangedSinceMark")):
                        shot.cancel()
                        shot = None
                    return raw, fast or windows, shot
            if shot is not None:
                shot.cancel()
                shot = None
            if tab.page.is_closed() or (late and (raw is None or raw.get("partial"))):
                logger.debug("recorders: the page did not come back from navigating within max_settle_ms")
                return None, False, None
            if self.net.inflight > 0:
                await self.net.wait_idle(deadline - time.monotonic())
                continue
            wait = 0.02 if raw is None or raw["busy"] else (o.dom_quiet_ms - raw["quiet"]) / 1000
            await asyncio.sleep(max(0.005, min(wait, deadline - time.monotonic())))

    def _start_shot(self, tab: Tab, cdp: CDPSession | None) -> asyncio.Task[bytes]:
        o = self.options
        return asyncio.get_running_loop().create_task(
            screens.capture_jpeg(tab.page, cdp, o.jpeg_quality, o.screenshot_scale)
        )

    async def _screenshot(self, tab: Tab, n: int, dom_hash: str, shot_task: asyncio.Task[bytes] | None) -> str | None:
        """The step's screenshot path: taken while settling (or now), kept per `options.screenshots`."""
        o = self.options
        if o.screenshots == "off":
            return None
        if o.screenshots == "on_change" and dom_hash == tab.shot_hash:
            if shot_task is not None:
                shot_task.cancel()
            return tab.shot_path
        if shot_task is None:
            shot_task = self._start_shot(tab, await tab.session())
        jpeg = (await asyncio.gather(shot_task, return_exceptions=True))[0]
        if not isinstance(jpeg, bytes):
            return tab.shot_path if o.screenshots == "on_change" else None
        tab.shot_hash, tab.shot_path = dom_hash, screens.save(self.out_dir, n, jpeg)
        return tab.shot_path

    def _archive(self, tab: Tab, n: int, url: str, text: str, html: str | None) -> Snapshot | None:
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
                Capture(snap.warc_record_id, "text", url, n, now, "text/plain; charset=utf-8", data, refers_to=refers)
            )
        if html is not None:
            snap.dom_record_id = self.archive.new_id()
            scrub = self.redactor
            self.archive.put(
                Capture(
                    snap.dom_record_id,
                    "dom",
                    url,
                    n,
                    now,
                    "text/html; charset=utf-8",
                    lambda: scrub.url(html).encode("utf-8"),
                    refers_to=refers,
                    concurrent_to=snap.warc_record_id,
                )
            )
        return snap
