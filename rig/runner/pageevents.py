"""What pages do to an episode besides showing content: dialogs, new tabs (popups) and downloads.

Each is answered so that no page can block the episode, and recorded in `episode.json`:
- `dialogs`: `alert`/`confirm`/`prompt`/`beforeunload` get Playwright's default answer (dismissed; `beforeunload`
  accepted, so a navigation goes on); each with its type, message, default value, URL, tab and `after_step`
  (the last step written before it; null before the first).
- `tabs`: every page the context opened after the first (window.open, target=_blank), with its opener's tab.
  `tab` is the index the trajectory's steps carry (pages in opening order).
- `downloads`: saved under the episode's `downloads/` (bounded in time and size), with URL, file, size and SHA-256.
A tab whose renderer crashes is noted (`crashed`): the runner counts the agent's failure after it as the
infrastructure's.
Each list keeps the first `KEEP` entries; `dialog_count`, `tab_count` and `download_count` count them all.
A page still opening dialogs without end when the episode finishes (a dialog storm) is closed first: nothing
else could run in it, not even the recorder's last capture.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import time
from typing import TYPE_CHECKING, Any

from loguru import logger
from playwright.async_api import BrowserContext, Dialog, Download, Page
from playwright.async_api import Error as PlaywrightError

if TYPE_CHECKING:
    from recorders import Recorder
    from rig.episode_dir import EpisodeDir
    from rig.formats.episode import Episode

#: How many dialogs, tabs and downloads `episode.json` lists (the counts cover them all).
KEEP = 20
#: A download still running after this long is cancelled.
DOWNLOAD_TIMEOUT_S = 30.0
#: A saved download larger than this is deleted again (listed as `too_large`).
MAX_DOWNLOAD_BYTES = 50_000_000
#: At the end of an episode, downloads still saving after this long are cancelled.
FINISH_S = 5.0
#: A page that opened this many dialogs, the last one less than `STORM_S` ago, is in a dialog storm.
STORM_DIALOGS = 50
STORM_S = 1.0
_MESSAGE_CHARS = 500
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class PageEvents:
    """Answers and records a context's dialogs, new tabs and downloads (attach right after the recorder)."""

    def __init__(self, rec: Recorder, directory: EpisodeDir) -> None:
        self.rec, self.out_dir, self.downloads_dir = rec, directory.path, directory.downloads_dir
        self.dialogs: list[dict[str, Any]] = []
        self.tabs: list[dict[str, Any]] = []
        self.downloads: list[dict[str, Any]] = []
        self.counts = {"dialog": 0, "tab": 0, "download": 0}
        #: Tabs whose renderer crashed (Playwright's `crash` event): a failure after one is the infrastructure's.
        self.crashed: list[int] = []
        self._pages: list[Page] = []
        self._dialogs_by_page: dict[int, tuple[int, float]] = {}  # tab -> (dialogs, when the last one opened)
        self._tasks: set[asyncio.Task[None]] = set()

    @classmethod
    def attach(cls, context: BrowserContext, rec: Recorder, directory: EpisodeDir) -> PageEvents:
        """Start answering and recording `context`'s page events (its open pages and every page it opens later)."""
        watch = cls(rec, directory)
        for page in context.pages:
            watch._add_page(page)
        context.on("page", watch._add_page)
        context.on("dialog", watch._on_dialog)
        return watch

    def _after(self) -> int | None:
        return self.rec.steps - 1 if self.rec.steps else None

    def _tab(self, page: Page | None) -> int | None:
        return next((i for i, p in enumerate(self._pages) if p is page), None)

    def _spawn(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _add_page(self, page: Page) -> None:
        index = len(self._pages)
        self._pages.append(page)
        page.on("download", lambda d: self._on_download(index, d))
        page.on("crash", lambda _: self.crashed.append(index))
        if index == 0:
            return
        self.counts["tab"] += 1
        if len(self.tabs) >= KEEP:
            return
        entry: dict[str, Any] = {"tab": index, "opener_tab": None, "url": self.rec.redactor.url(page.url),
                                 "after_step": self._after()}
        self.tabs.append(entry)

        def navigated(frame: Any) -> None:
            if frame == page.main_frame and entry["url"] in ("", "about:blank"):
                entry["url"] = self.rec.redactor.url(frame.url)

        page.on("framenavigated", navigated)
        self._spawn(self._opener(page, entry))

    async def _opener(self, page: Page, entry: dict[str, Any]) -> None:
        try:
            entry["opener_tab"] = self._tab(await page.opener())
        except PlaywrightError:  # the page closed meanwhile
            pass

    async def _on_dialog(self, dialog: Dialog) -> None:
        self.counts["dialog"] += 1
        tab = self._tab(dialog.page)
        if tab is not None:
            self._dialogs_by_page[tab] = (self._dialogs_by_page.get(tab, (0, 0.0))[0] + 1, time.monotonic())
        entry: dict[str, Any] | None = None
        if len(self.dialogs) < KEEP:
            page = dialog.page
            entry = {"type": dialog.type, "message": self.rec.redactor.prose(dialog.message[:_MESSAGE_CHARS]),
                     "default_value": self.rec.redactor.text(dialog.default_value) or None,
                     "url": self.rec.redactor.url(page.url) if page is not None else None,
                     "tab": tab, "after_step": self._after(), "response": None}
            self.dialogs.append(entry)
        accept = dialog.type == "beforeunload"
        try:
            await (dialog.accept() if accept else dialog.dismiss())
            response = "accepted" if accept else "dismissed"
        except PlaywrightError:  # someone else (a CDP driver's own handler) answered it first
            response = "answered elsewhere"
        if entry is not None:
            entry["response"] = response

    def _on_download(self, tab: int, download: Download) -> None:
        n = self.counts["download"]
        self.counts["download"] += 1
        entry: dict[str, Any] = {"url": self.rec.redactor.url(download.url),
                                 "suggested_filename": download.suggested_filename, "tab": tab,
                                 "after_step": self._after(), "status": "saving", "file": None}
        if n >= KEEP:
            self._spawn(_quiet(download.cancel()))
            return
        self.downloads.append(entry)
        self._spawn(self._save(download, entry, n))

    async def _save(self, download: Download, entry: dict[str, Any], n: int) -> None:
        name = _UNSAFE.sub("_", download.suggested_filename).strip("._")[:100] or "download"
        path = self.downloads_dir / f"{n}-{name}"
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            await asyncio.wait_for(download.save_as(path), DOWNLOAD_TIMEOUT_S)
        except (TimeoutError, asyncio.CancelledError):
            entry["status"] = "incomplete"
            await _quiet(download.cancel())
            path.unlink(missing_ok=True)
            return
        except PlaywrightError as exc:
            entry["status"], entry["error"] = "failed", self.rec.redactor.url((exc.message or str(exc)).splitlines()[0])
            path.unlink(missing_ok=True)
            return
        size = path.stat().st_size
        if size > MAX_DOWNLOAD_BYTES:
            path.unlink()
            entry.update(status="too_large", bytes=size)
            return
        entry.update(status="saved", file=path.relative_to(self.out_dir).as_posix(), bytes=size,
                     sha256=hashlib.sha256(path.read_bytes()).hexdigest())

    async def finish(self, timeout_s: float = FINISH_S) -> None:
        """Close pages in a dialog storm; wait (bounded) for downloads still saving, cancel the rest (`incomplete`)."""
        now = time.monotonic()
        for tab, (count, last) in self._dialogs_by_page.items():
            if count >= STORM_DIALOGS and now - last < STORM_S and not self._pages[tab].is_closed():
                logger.warning("tab {} is in a dialog storm ({} dialogs): closing it", tab, count)
                await _quiet(asyncio.wait_for(self._pages[tab].close(), timeout_s))
        if self._tasks:
            _, pending = await asyncio.wait(list(self._tasks), timeout=timeout_s)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)

    def write_to(self, episode: Episode) -> None:
        """Put what happened into the episode record (replacing what an earlier attempt put there)."""
        for task in list(self._tasks):  # the context is gone: nothing left will finish
            task.cancel()
        for kind, items in (("dialog", self.dialogs), ("tab", self.tabs), ("download", self.downloads)):
            setattr(episode, f"{kind}s", items)
            setattr(episode, f"{kind}_count", self.counts[kind])
        for entry in self.downloads:
            if entry["status"] == "saving":
                entry["status"] = "incomplete"
        logger.debug("page events: {}", self.counts)


async def _quiet(work: Any) -> None:
    try:
        await work
    except (PlaywrightError, TimeoutError):  # the page or download is gone, or does not answer
        pass
