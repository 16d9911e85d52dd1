"""The recorder: attaches to a browser context and writes one step per retrieval-state transition.

It observes the pages itself (the observer's events through an exposed binding, main-frame navigations,
the network), so steps are written whoever drives the browser. A driver that reports its actions wraps
each one in `rec.action(info)`: everything observed meanwhile becomes ONE step with `source: agent`.
Anything else becomes `source: observed` steps, one per burst of events.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loguru import logger
from playwright.async_api import BrowserContext, CDPSession, Frame, Page
from playwright.async_api import Error as PlaywrightError

from recorders import observer, screens, snapshot, state
from recorders.adapter import SiteAdapter
from recorders.inference import infer_action
from recorders.models import Action, Snapshot, Step
from recorders.network import NetworkCapture
from recorders.options import RecorderOptions
from recorders.redact import REDACTED, Redactor
from recorders.trajectory import TrajectoryWriter
from recorders.warc import Capture, WarcArchive, new_record_id

SOFTWARE = "sgr-rig recorders 0.1 (warcio)"
_CLOSE_TIMEOUT_S = 10.0
_CLOSE_DRAIN_S = 2.0  # at close, bodies still missing after this are archived as truncated


@dataclass
class _Tab:
    page: Page
    index: int
    cdp: asyncio.Task[CDPSession | None] | None = None
    steps: int = 0
    shot_hash: str | None = None
    shot_path: str | None = None


@dataclass
class _Event:
    tab: _Tab
    data: dict[str, Any] = field(default_factory=dict)


class Recorder:
    """Records a browser context into an episode directory (`trajectory.jsonl`, `evidence.warc.gz`, `screens/`).

    Create it with `await Recorder.attach(context, out_dir)`; finish with `await rec.close()`.
    """

    def __init__(
        self,
        context: BrowserContext,
        out_dir: Path,
        options: RecorderOptions,
        adapters: list[SiteAdapter],
        clock: Callable[[], float],
        ids: Callable[[], str],
    ) -> None:
        self.context, self.out_dir, self.options, self.adapters = context, out_dir, options, adapters
        self._clock = clock
        self._t0 = clock()
        self.redactor = Redactor(options.redact_params, options.redact_headers)
        out_dir.mkdir(parents=True, exist_ok=True)
        if options.screenshots != "off":
            (out_dir / "screens").mkdir(exist_ok=True)
        self.archive = WarcArchive(out_dir / "evidence.warc.gz", clock, ids, SOFTWARE)
        self._trajectory = TrajectoryWriter(out_dir / "trajectory.jsonl", options.fsync)
        self._net = NetworkCapture(self.archive, self.redactor, clock, options.max_body_bytes, options.body_timeout_ms / 1000)
        self._tabs: dict[Page, _Tab] = {}
        self._active: _Tab | None = None
        self._events: list[_Event] = []
        self._last_event = 0.0
        self._agent = 0
        self._lock = asyncio.Lock()
        self._flush = asyncio.Event()
        self._observed: asyncio.Task[None] | None = None
        self._prev_state: dict[str, Any] | None = None
        self._closed = False
        self._handlers: list[tuple[str, Callable[..., Any]]] = []
        #: The last step written (None before the first).
        self.last_step: Step | None = None
        #: How many steps were written.
        self.steps = 0

    @classmethod
    async def attach(
        cls,
        context: BrowserContext,
        out_dir: str | Path,
        options: RecorderOptions | None = None,
        adapters: Iterable[SiteAdapter] = (),
        clock: Callable[[], float] | None = None,
        ids: Callable[[], str] | None = None,
    ) -> Recorder:
        """Start recording a context (its open pages and every page it opens later).

        `clock` (Unix seconds) and `ids` (WARC record ids) are injectable for deterministic output.
        """
        rec = cls(context, Path(out_dir), options or RecorderOptions(), list(adapters), clock or time.time, ids or new_record_id)
        await rec._start()
        return rec

    async def __aenter__(self) -> Recorder:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def trajectory_path(self) -> Path:
        """The episode's trajectory.jsonl."""
        return self._trajectory.path

    @property
    def warc_path(self) -> Path:
        """The episode's evidence.warc.gz."""
        return self.archive.path

    # ---- wiring -------------------------------------------------------------------------------------

    async def _start(self) -> None:
        await self.context.expose_binding(observer.BINDING, self._on_binding)
        await self.context.add_init_script(script=observer.observer_script())
        for name, handler in (
            ("page", self._add_page),
            ("request", self._net.on_request),
            ("response", self._net.on_response),
            ("requestfailed", self._net.on_failed),
        ):
            self.context.on(name, handler)
            self._handlers.append((name, handler))
        for page in self.context.pages:
            self._add_page(page)
            for frame in page.frames:
                await observer.install(frame)

    def _add_page(self, page: Page) -> None:
        tab = _Tab(page, index=len(self._tabs))
        self._tabs[page] = tab
        tab.cdp = asyncio.get_running_loop().create_task(self._cdp(page))
        page.on("framenavigated", lambda frame: self._on_navigated(tab, frame))
        page.on("close", lambda _: self._on_close(tab))
        self._active = tab
        if page.url not in ("", "about:blank"):  # a popup may have committed its first navigation already
            self._on_event(tab, {"type": "navigate", "value": page.url})

    async def _cdp(self, page: Page) -> CDPSession | None:
        try:
            return await self.context.new_cdp_session(page)
        except PlaywrightError:
            return None  # not Chromium, or the page closed: screenshots fall back to Playwright, no DOM snapshot

    def _on_close(self, tab: _Tab) -> None:
        if self._active is tab:
            self._active = next((t for t in reversed(self._tabs.values()) if not t.page.is_closed()), None)

    def _on_navigated(self, tab: _Tab, frame: Frame) -> None:
        if frame == tab.page.main_frame and frame.url not in ("", "about:blank"):
            self._on_event(tab, {"type": "navigate", "value": frame.url})

    def _on_binding(self, source: dict[str, Any], data: dict[str, Any]) -> None:
        tab = self._tabs.get(source.get("page"))  # type: ignore[arg-type]
        if tab is None or not isinstance(data, dict):
            return
        secret = data.pop("secret", None)
        if data.get("password"):
            self.redactor.learn_param(str(data.get("key") or ""))
            if isinstance(secret, str):
                self.redactor.learn_secret(secret)
        self._on_event(tab, data)

    def _on_event(self, tab: _Tab, data: dict[str, Any]) -> None:
        if self._closed:
            return
        self._events.append(_Event(tab, data))
        self._last_event = time.monotonic()
        self._active = tab
        if not self._agent and (self._observed is None or self._observed.done()):
            self._observed = asyncio.get_running_loop().create_task(self._observe())

    # ---- the public step triggers -----------------------------------------------------------------

    @asynccontextmanager
    async def action(self, info: dict[str, Any]) -> AsyncIterator[None]:
        """Wrap one driver action: the step written after it carries `info` (type, target, value) as `source: agent`.

        `info` may name the acted-on page under `"page"`; else the page that showed activity is used.
        """
        await self._flush_observed()
        self._agent += 1
        start = len(self._events)
        failed = False
        try:
            yield
        except BaseException:
            failed = True
            raise
        finally:
            try:
                tab = self._tab_for(info.get("page"), self._events[start:])
                act = self._agent_action(info, self._events[start:])
                async with self._lock:
                    await self._write(tab, act)
            except Exception as exc:
                if not failed:
                    raise
                logger.debug("recorders: no step after the failed action: {}", type(exc).__name__)
            finally:
                self._agent -= 1
                if self._events:
                    self._on_event_pending()

    async def checkpoint(self, reason: str) -> Step | None:
        """Force a step now (pending observed events are written first); its action is `checkpoint`."""
        await self._flush_observed()
        async with self._lock:
            return await self._write(self._tab_for(None, []), Action(type="checkpoint", value=reason, source="agent"))

    async def close(self) -> None:
        """Write a step for pending observed events, archive pending responses, and close every file."""
        if self._closed:
            return
        with suppress(Exception):
            await asyncio.wait_for(self._flush_observed(), _CLOSE_TIMEOUT_S)
        self._closed = True
        await self._net.drain(min(self.options.body_timeout_ms / 1000, _CLOSE_DRAIN_S))
        for name, handler in self._handlers:
            self.context.remove_listener(name, handler)
        for tab in self._tabs.values():
            if tab.cdp is not None and tab.cdp.done() and not tab.cdp.cancelled() and tab.cdp.result() is not None:
                with suppress(PlaywrightError):
                    await tab.cdp.result().detach()
            elif tab.cdp is not None:
                tab.cdp.cancel()
        await self.archive.close()
        self._trajectory.close()

    # ---- steps ----------------------------------------------------------------------------------------

    def _on_event_pending(self) -> None:
        if self._observed is None or self._observed.done():
            self._observed = asyncio.get_running_loop().create_task(self._observe())

    async def _observe(self) -> None:
        """Write observed steps: each burst of events, once idle for `observe_idle_ms` and settled, is one step."""
        idle = self.options.observe_idle_ms / 1000
        while self._events and not self._agent and not self._closed:
            left = idle - (time.monotonic() - self._last_event)
            if left > 0 and not self._flush.is_set():
                with suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._flush.wait(), left)
                continue
            tab = self._events[-1].tab
            if tab.page.is_closed() or tab.page.url in ("", "about:blank"):
                self._events = [e for e in self._events if e.tab is not tab]
                continue
            async with self._lock:
                if self._events and not self._agent:
                    try:
                        await self._write(tab, None)
                    except Exception as exc:  # the page went away mid-capture
                        logger.debug("recorders: observed step skipped: {}", type(exc).__name__)
                        self._events.clear()

    async def _flush_observed(self) -> None:
        task = self._observed
        if task is None or task.done():
            return
        self._flush.set()
        try:
            await task
        finally:
            self._flush.clear()

    def _tab_for(self, page: Any, events: list[_Event]) -> _Tab:
        if isinstance(page, Page) and page in self._tabs:
            return self._tabs[page]
        if events:
            return events[-1].tab
        tab = self._active or next(iter(self._tabs.values()), None)
        if tab is None:
            raise RuntimeError("the recorded context has no page")
        return tab

    def _agent_action(self, info: dict[str, Any], events: list[_Event]) -> Action:
        value = info.get("value")
        password = any(e.data.get("password") for e in events)
        if info.get("type") == "fill" and password:
            value = REDACTED
        elif isinstance(value, str):
            value = self.redactor.url(value) if info.get("type") == "goto" else self.redactor.text(value)
        elif isinstance(value, list):
            value = [self.redactor.text(v) if isinstance(v, str) else v for v in value]
        target = info.get("target")
        if isinstance(target, str):
            target = self.redactor.url(target)
        return Action(type=str(info.get("type") or "action"), target=target, value=value, source="agent")

    async def _settle(self, tab: _Tab, facts: dict[str, dict[str, Any]]) -> tuple[dict[str, Any] | None, bool]:
        """Wait until no request is in flight and the DOM is quiet (bounded); return the page's raw state."""
        o = self.options
        deadline = time.monotonic() + o.max_settle_ms / 1000
        while True:
            now = time.monotonic()
            late = now >= deadline
            net = self._net.quiet_for()
            if net >= o.network_quiet_ms / 1000 or late:
                raw = await observer.collect(tab.page, facts, 0 if late else o.dom_quiet_ms)
                if raw is not None and not raw.get("partial"):
                    return raw, not late
                if late:
                    return (None, False) if raw is None else (await observer.collect(tab.page, facts), False)
                wait = 0.02 if raw is None else (o.dom_quiet_ms - raw["quiet"]) / 1000
            else:
                wait = o.network_quiet_ms / 1000 - net
            if tab.page.is_closed():
                return None, False
            await asyncio.sleep(max(0.005, min(wait, deadline - now)))

    async def _write(self, tab: _Tab, action: Action | None) -> Step | None:
        """Settle, capture and append one step (the caller holds the lock)."""
        adapter = state.pick_adapter(self.adapters, tab.page.url)
        facts = {k: f.model_dump(include={"selector", "attribute"}) for k, f in adapter.page.items()} if adapter else {}
        raw, settled = await self._settle(tab, facts)
        events = [e for e in self._events if e.tab is tab] if action is None else self._events
        taken = {id(e) for e in events}
        self._events = [e for e in self._events if id(e) not in taken]
        if raw is None:
            return None
        url = self.redactor.url(raw["url"])
        adapter = state.pick_adapter(self.adapters, url)
        if action is None:
            action = infer_action([e.data for e in events], first=tab.steps == 0, redactor=self.redactor)
        cur = self.redactor.state(state.build_state(raw, url, adapter))
        text = self.redactor.text(state.normalize_text(raw.get("text") or ""))
        n = self.steps
        dom_hash = state.dom_hash(raw.get("html") or "", raw)
        shot, dom = await self._evidence(tab, n, dom_hash)
        snap = self._archive_step(tab, n, url, text, dom)
        step = Step(
            step=n,
            t=round(self._clock() - self._t0, 3),
            url=url,
            action=action,
            state=cur,
            state_diff=state.diff(self._prev_state, cur),
            dom_hash=dom_hash,
            text_hash=state.text_hash(text),
            screenshot=shot,
            snapshot=snap,
            tab=tab.index,
            settled=settled,
        )
        self._trajectory.write(step)
        self._prev_state, self.last_step = cur, step
        self.steps += 1
        tab.steps += 1
        logger.debug("recorders: step {} {} ({}) {}", n, action.type, action.source, url)
        return step

    async def _evidence(self, tab: _Tab, n: int, dom_hash: str) -> tuple[str | None, dict[str, Any] | None]:
        """The step's screenshot (path) and DOM snapshot, captured concurrently."""
        o = self.options
        cdp = await tab.cdp if tab.cdp is not None else None
        want_shot = o.screenshots == "every" or (o.screenshots == "on_change" and dom_hash != tab.shot_hash)
        jobs: list[Any] = []
        if want_shot:
            jobs.append(screens.capture_jpeg(tab.page, cdp, o.jpeg_quality, o.screenshot_scale))
        if o.dom_snapshot and cdp is not None:
            jobs.append(snapshot.capture_dom(cdp))
        results = await asyncio.gather(*jobs, return_exceptions=True)
        shot = tab.shot_path if o.screenshots == "on_change" else None
        if want_shot:
            jpeg = results.pop(0)
            if isinstance(jpeg, bytes):
                shot = screens.save(self.out_dir, n, jpeg)
                tab.shot_hash, tab.shot_path = dom_hash, shot
        dom = results.pop(0) if results else None
        return shot, dom if isinstance(dom, dict) else None

    def _archive_step(self, tab: _Tab, n: int, url: str, text: str, dom: dict[str, Any] | None) -> Snapshot | None:
        """Queue the step's text and DOM snapshot records; return their ids."""
        if not self.options.record_text and dom is None:
            return None
        refers = self._net.documents.get(tab.page.main_frame)
        snap = Snapshot()
        now = self._clock()
        if self.options.record_text:
            snap.warc_record_id = self.archive.new_id()
            self.archive.put(Capture(snap.warc_record_id, "text", url, n, now, "text/plain; charset=utf-8", text.encode("utf-8"), refers_to=refers))
        if dom is not None:
            snap.dom_record_id = self.archive.new_id()
            redactor = self.redactor
            self.archive.put(
                Capture(snap.dom_record_id, "dom", url, n, now, "application/json", lambda: snapshot.redact_dom(dom, redactor), refers_to=refers, concurrent_to=snap.warc_record_id)
            )
        return snap
