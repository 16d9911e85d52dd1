"""The recorder: attaches to a browser context and writes one step per retrieval-state transition.

It observes the pages itself (the observer's events through an exposed binding, main-frame navigations,
the network), so steps are written whoever drives the browser. A driver that reports its actions wraps
each one in `rec.action(info)`: everything observed meanwhile becomes ONE step with `source: agent`.
Anything else becomes `source: observed` steps, one per burst of events.

A step's line is written as soon as the page settled; its JPEG (`screens/NNNN.jpg`, named in the line) is a
screenshot taken while the step is the page's state, written shortly after (see `screens`). So after
a crash (SIGKILL) every line still parses, but the image of the last step or two may be missing. An image always
shows its step's state: a step the page left before any image of it could be taken has none.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from loguru import logger
from playwright.async_api import BrowserContext, Frame, Page, Request
from playwright.async_api import Error as PlaywrightError

from recorders import observer
from recorders.adapter import SiteAdapter
from recorders.background import spawn
from recorders.errors import RecorderError
from recorders.files import SCREENS_DIR, TRAJECTORY_FILE, WARC_FILE
from recorders.inference import infer_action
from recorders.models import Action, RecordingTime, Step
from recorders.network import NetworkCapture
from recorders.options import RecorderOptions
from recorders.redact import REDACTED, Redactor
from recorders.screens import StepShots
from recorders.steps import StepWriter, Tab
from recorders.trajectory import TrajectoryWriter
from recorders.warc import Resource, WarcArchive
from rigwarc.dialect import new_record_id

SOFTWARE = "sgr-rig recorders 0.1 (warcio)"
_CLOSE_TIMEOUT_S = 10.0
_ATTACHED: weakref.WeakSet[BrowserContext] = weakref.WeakSet()
_CLOSE_DRAIN_S = 2.0  # at close, bodies still not read after this are archived as missing


@dataclass
class _Event:
    tab: Tab
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
        self.context, self.out_dir, self.options = context, out_dir, options
        self._clock = clock
        self.redactor = Redactor(options.redact_params, options.redact_headers)
        out_dir.mkdir(parents=True, exist_ok=True)
        if options.screenshots != "off":
            (out_dir / SCREENS_DIR).mkdir(exist_ok=True)
        self.archive = WarcArchive(out_dir / WARC_FILE, clock, ids, SOFTWARE)
        self._trajectory = TrajectoryWriter(out_dir / TRAJECTORY_FILE, options.fsync)
        self._net = NetworkCapture(
            self.archive,
            self.redactor,
            clock,
            options.max_body_bytes,
            options.body_timeout_ms / 1000,
            stale_s=options.long_request_ms / 1000,
        )
        self._writer = StepWriter(
            out_dir, options, adapters, self.redactor, self.archive, self._net, self._trajectory, clock
        )
        self._tabs: dict[Page, Tab] = {}
        self._active: Tab | None = None
        self._events: list[_Event] = []
        self._last_event = 0.0
        self._agent = 0
        self._lock = asyncio.Lock()
        self._flush = asyncio.Event()
        self._observed: asyncio.Task[None] | None = None
        self._closed = False
        self._handlers: list[tuple[str, Callable[..., Any]]] = []
        self._tasks: set[asyncio.Task[Any]] = set()
        self._watched: dict[Page, asyncio.Task[Any]] = {}  # each page's CDP session of the recorder's, being set up
        self._image_wait_s = 0.0

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
        if context in _ATTACHED:  # its binding stays registered for the context's lifetime
            raise RecorderError("a Recorder was already attached to this context: record each episode in a new context")
        _ATTACHED.add(context)
        rec = cls(
            context,
            Path(out_dir),
            options or RecorderOptions(),
            list(adapters),
            clock or time.time,
            ids or new_record_id,
        )
        try:
            await rec._start()
        except BaseException:
            await rec.archive.close()
            rec._trajectory.close()
            raise
        return rec

    async def __aenter__(self) -> Recorder:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def steps(self) -> int:
        """How many steps were written."""
        return self._writer.count

    @property
    def capturing(self) -> bool:
        """Whether a step is being captured now (settling, collecting, archiving: every step is written holding the
        step lock): the recorder's time, which a budget on the driver's pace does not count."""
        return self._lock.locked()

    @property
    def last_step(self) -> Step | None:
        """The last step written (None before the first)."""
        return self._writer.last_step

    @property
    def time(self) -> RecordingTime:
        """How long the recorder held the driver up so far: settling and collecting state, waiting for frames."""
        return RecordingTime(settle_s=round(self._writer.settle_s, 3), image_wait_s=round(self._image_wait_s, 3))

    @property
    def missing_bodies(self) -> int:
        """How many responses were archived without their body (each record says why in `WARC-Rig-Missing`): a
        body that never finished within `body_timeout_ms`, or could not be read at all. Complete after `close()`."""
        return self._net.missing_bodies

    async def watching(self, page: Page) -> None:
        """Wait (at most 10 s) until the recorder watches `page` through a CDP session of its own: its
        response bodies kept past navigations, a PDF's bytes read before its viewer. A driver that opens a page and
        loads a URL in it at once awaits this in between, or that first response may come before the session."""
        task = self._watched.get(page)
        if task is not None and not task.done():
            with suppress(Exception):
                await asyncio.wait_for(asyncio.shield(task), _CLOSE_TIMEOUT_S)

    def pdf_body(self, url: str) -> bytes | None:
        """The bytes the archive holds of the latest PDF opened as a page from `url` (read before Chromium's PDF
        viewer took the response over: a later `Response.body()` may give the viewer's HTML); None if there is none."""
        return self._net.pdf_body(url)

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
        await asyncio.gather(
            self.context.expose_binding(observer.BINDING, self._on_binding),
            self.context.add_init_script(script=observer.observer_script()),
        )
        for name, handler in (
            ("page", self._add_page),
            ("request", self._net.on_request),
            ("response", self._net.on_response),
            ("requestfailed", self._net.on_failed),
            ("requestfailed", self._on_request_failed),
        ):
            self.context.on(name, handler)
            self._handlers.append((name, handler))
        for page in self.context.pages:
            self._add_page(page)
            for frame in page.frames:
                await observer.install(frame)
        await asyncio.gather(
            *(tab.screen for tab in self._tabs.values() if tab.screen is not None),
            *(self._net.keep_bodies(self.context, frame) for page in self.context.pages for frame in page.frames[1:]),
            *list(self._tasks),  # the pages' bodies kept from here on
        )

    def _add_page(self, page: Page) -> None:
        tab = Tab(page, index=len(self._tabs))
        self._tabs[page] = tab
        self._watched[page] = spawn(self._tasks, self._net.keep_bodies(self.context, page))
        if self.options.screenshots != "off" and self.options.screenshot_source == "live":
            tab.screen = asyncio.get_running_loop().create_task(self._step_shots(page))
        page.on("framenavigated", lambda frame: self._on_navigated(tab, frame))
        page.on("download", lambda _: self._stayed(page.main_frame))
        page.on("close", lambda _: self._on_close(tab))
        self._active = tab
        if page.url not in ("", "about:blank"):  # a popup may have committed its first navigation already
            self._on_event(tab, {"type": "navigate", "value": page.url})

    async def _step_shots(self, page: Page) -> StepShots | None:
        try:
            cdp = await self.context.new_cdp_session(page)
        except PlaywrightError:
            return None  # not Chromium, or the page closed: screenshots fall back to Playwright's
        o = self.options
        return StepShots(cdp, page, o.jpeg_quality, o.screenshot_scale, patience_s=o.screenshot_wait_ms / 1000)

    def _on_close(self, tab: Tab) -> None:
        if (cast := tab.started()) is not None:
            cast.end(time.time())  # nothing more to see
        if self._active is tab:
            self._active = next((t for t in reversed(self._tabs.values()) if not t.page.is_closed()), None)

    def _on_request_failed(self, request: Request) -> None:
        if request.is_navigation_request():
            with suppress(PlaywrightError):
                self._stayed(request.frame)

    def _stayed(self, frame: Frame) -> None:
        """A navigation the document announced (`beforeunload`) did not replace it: a download, or it failed."""
        spawn(self._tasks, frame.evaluate(observer.STAYED))

    def _on_navigated(self, tab: Tab, frame: Frame) -> None:
        if frame != tab.page.main_frame:  # a frame of another site runs in a process (and CDP target) of its own
            if not self._closed:
                spawn(self._tasks, self._net.keep_bodies(self.context, frame))
            return
        if frame.url not in ("", "about:blank"):
            self._on_event(tab, {"type": "navigate", "value": frame.url})

    def _on_binding(self, source: dict[str, Any], data: dict[str, Any]) -> None:
        tab = self._tabs.get(source.get("page"))  # type: ignore[arg-type]
        if tab is None or not isinstance(data, dict):
            return
        secret = data.pop("secret", None)
        if data.get("password"):
            self.redactor.learn_param(str(data.get("key") or ""))
            if isinstance(secret, str):
                self.redactor.learn_secret(secret, f"{id(tab)}:{data.get('target')}")
        elif self.redactor.secret_param(str(data.get("key") or "")) and isinstance(data.get("value"), str):
            self.redactor.learn_secret(data["value"], f"{id(tab)}:{data.get('target')}")  # a field named like a secret
        self._on_event(tab, data)

    def _on_event(self, tab: Tab, data: dict[str, Any]) -> None:
        if self._closed:
            return
        self._events.append(_Event(tab, data))
        self._last_event = time.monotonic()
        self._active = tab
        if not self._agent:
            if (cast := tab.started()) is not None:  # a new burst: the previous step's image shows no part of it
                cast.end(data["t"] / 1000 if isinstance(data.get("t"), int | float) else time.time())
            self._on_event_pending()

    # ---- the public step triggers -----------------------------------------------------------------

    @asynccontextmanager
    async def action(self, info: Action | dict[str, Any], page: Page | None = None) -> AsyncIterator[None]:
        """Wrap one driver action: the step written after it carries the action (type, target, value) as
        `source: agent`. `info` is an `Action` or a dict with those keys.

        `page` (or, in a dict, `"page"`) names the acted-on page: the step is that page's, and what other tabs
        did meanwhile (a popup the action opened) becomes their own `observed` steps. Else the page that showed
        activity is used and the step folds in every tab's events.

            async with rec.action(Action(type="click", target="#apply"), page=page):
                await page.click("#apply")
        """
        info = info.model_dump(include={"type", "target", "value"}) if isinstance(info, Action) else dict(info)
        if page is not None:
            info["page"] = page
        await self._flush_observed()
        casts = self._casts()
        if self.options.screenshot_wait_ms:
            began = time.monotonic()
            await asyncio.gather(*(cast.wait_shown(self.options.screenshot_wait_ms / 1000) for cast in casts))
            self._image_wait_s += time.monotonic() - began
        now = time.time()
        for cast in casts:
            cast.end(now)  # no step image shows this action or what follows
        self._agent += 1
        start = len(self._events)
        failed = cancelled = False
        self._net.begin_action()
        try:
            yield
            self._net.touch()  # a request the action just started may not have reached us yet
        except Exception:
            failed = True
            raise
        except BaseException:  # cancelled: leave at once, write nothing
            cancelled = True
            raise
        finally:
            try:
                if not cancelled:
                    tab = self._tab_for(info.get("page"), self._events[start:])
                    # The acting page named: other tabs' events (a popup it opened) become steps of their own.
                    only = tab if isinstance(info.get("page"), Page) else None
                    async with self._lock:
                        await self._writer.write(
                            tab, self._take_events(only), lambda events: self._agent_action(info, events)
                        )
            except Exception as exc:
                if not failed:
                    raise
                logger.debug("recorders: no step after the failed action: {}", type(exc).__name__)
            finally:
                self._agent -= 1
                self._net.end_action()
                if self._events:
                    self._on_event_pending()

    async def checkpoint(self, reason: str) -> Step | None:
        """Force a step now (pending observed events are written first); its action is `checkpoint`."""
        await self._flush_observed()
        async with self._lock:
            action = Action(type="checkpoint", value=reason, source="agent")
            return await self._writer.write(self._tab_for(None, []), self._take_events(None), lambda _: action)

    def add_resource(self, uri: str, text: str, step: int | None = None,
                     content_type: str = "text/plain; charset=utf-8") -> str:
        """Archive a text with no HTTP exchange behind it (a tool call's result) as a WARC `resource` record named
        `uri` (e.g. `urn:sgr-rig:tool/3/run_sql`) and tied to `step`; redacted like page texts. Its record id."""
        record_id = self.archive.new_id()
        data = self.redactor.text(text).encode("utf-8")
        self.archive.put(Resource(record_id, uri, step, self._clock(), content_type, data))
        return record_id

    async def close(self) -> None:
        """Write a step for pending observed events, archive pending responses, and close every file."""
        if self._closed:
            return
        with suppress(Exception):
            await asyncio.wait_for(self._flush_observed(), _CLOSE_TIMEOUT_S)
        self._closed = True
        casts = self._casts()
        await asyncio.gather(
            self._net.drain(min(self.options.body_timeout_ms / 1000, _CLOSE_DRAIN_S)), *(c.close() for c in casts)
        )
        for name, handler in self._handlers:
            self.context.remove_listener(name, handler)
        for task in list(self._tasks):
            task.cancel()
        for tab in self._tabs.values():
            if tab.screen is not None and not tab.screen.done():
                tab.screen.cancel()
        for cast in casts:  # a hung browser must not hang the close: what was recorded is already on disk
            with suppress(PlaywrightError, TimeoutError):
                await asyncio.wait_for(cast.cdp.detach(), _CLOSE_TIMEOUT_S)
        await self._net.close(_CLOSE_TIMEOUT_S)
        await self.archive.close()
        self._trajectory.close()

    # ---- steps ----------------------------------------------------------------------------------------

    def _on_event_pending(self) -> None:
        """Make sure an observed-step task runs for the pending events."""
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
                        infer = partial(infer_action, first=tab.steps == 0, redactor=self.redactor)
                        await self._writer.write(tab, self._take_events(tab), infer)
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

    def _casts(self) -> list[StepShots]:
        return [cast for tab in self._tabs.values() if (cast := tab.started()) is not None]

    def _tab_for(self, page: Any, events: list[_Event]) -> Tab:
        if isinstance(page, Page) and page in self._tabs:
            return self._tabs[page]
        if events:
            return events[-1].tab
        tab = self._active or next(iter(self._tabs.values()), None)
        if tab is None:
            raise RecorderError("the recorded context has no page: open one before recording a step")
        return tab

    def _agent_action(self, info: dict[str, Any], events: list[dict[str, Any]]) -> Action:
        """The reported action, redacted: a fill of a password field (the page said so) keeps no value."""
        value = info.get("value")
        password = any(e.get("password") for e in events)
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

    def _take_events(self, tab: Tab | None) -> Callable[[], list[dict[str, Any]]]:
        """A callable taking the pending events (of one tab, or all) out of the queue."""

        def take() -> list[dict[str, Any]]:
            taken = [e for e in self._events if tab is None or e.tab is tab]
            ids = {id(e) for e in taken}
            self._events = [e for e in self._events if id(e) not in ids]
            return [e.data for e in taken]

        return take
