"""Step images rendered from an archive's DOM snapshots, after the episode and with no network.

    images = await render_dom_images(browser, Path("evidence.warc.gz"), {3: Path("screens/0003.jpg")})
    images[3]   # None: written; else why not ("no DOM snapshot of step 3 in the archive", a timeout ...)

Each step's DOM snapshot (a `conversion` record with `WARC-Rig-Capture: dom`: the live DOM with its form values,
open shadow roots and same-origin frames) is loaded as the document at the step's URL in a context whose every
other request is answered from the same archive (`replay.route`), with scripts off, so the page shows exactly the
snapshot: nothing the page would run can change it. It is pictured at the recorded viewport and scroll offset
(`WARC-Rig-View`). So the image shows its step by construction, however fast the next action came. What no DOM
holds (a canvas's drawing, a video frame, plugin content) is not shown; the recorder takes a live screenshot of
such steps instead. Steps with the same snapshot and view are rendered once.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urlsplit

from loguru import logger
from playwright.async_api import Browser, Page, Route
from playwright.async_api import Error as PlaywrightError
from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_fixed

from replay.errors import ReplayError
from replay.index import ArchiveIndex, load_index
from replay.route import REPLAY_CONTEXT_OPTIONS, attach_replay
from rigwarc.atomic import atomic_write
from rigwarc.dialect import DOM, View
from rigwarc.read import ArchiveReader, WarcError

DEFAULT_VIEW: View = (1280, 720, 0, 0)
_STEP_TIMEOUT_S = 10.0  # one snapshot's load and picture; its resources all come from the archive


@dataclass(frozen=True)
class DomSnapshot:
    """One step's archived DOM: the document's URL, its HTML and the view it was shown in."""

    step: int
    url: str
    html: bytes
    view: View


def read_dom_snapshots(paths: Path | Iterable[Path]) -> dict[int, DomSnapshot]:
    """Every step's DOM snapshot in the WARCs, by step (a step archived twice keeps its last; the whole records of a
    torn archive are read). ReplayError when a file is no WARC."""
    out: dict[int, DomSnapshot] = {}
    for path in [paths] if isinstance(paths, Path) else list(paths):
        try:
            for record in ArchiveReader(path):
                if record.type == "conversion" and record.capture == DOM and record.step is not None:
                    out[record.step] = DomSnapshot(record.step, record.target_uri or "", record.content,
                                                   record.view or DEFAULT_VIEW)
        except WarcError as exc:
            raise ReplayError(f"{path}: {exc}") from None
    return out


async def render_dom_images(
    browser: Browser,
    warc: Path,
    targets: dict[int, Path],
    *,
    quality: int = 60,
    scale: float = 0.625,
    index: ArchiveIndex | None = None,
) -> dict[int, str | None]:
    """Render each target step's DOM snapshot from `warc` into a JPEG at its path (scaled by `scale`); for each step,
    None when written, else why not. `index`: the archive's lookup if the caller has one already."""
    snapshots = read_dom_snapshots(warc)
    result: dict[int, str | None] = {}
    todo = []
    for step in sorted(targets):
        if step in snapshots:
            todo.append(snapshots[step])
        else:
            result[step] = f"no DOM snapshot of step {step} in the archive"
    if not todo:
        return result
    first = todo[0].view
    context = await browser.new_context(
        **REPLAY_CONTEXT_OPTIONS, java_script_enabled=False, viewport={"width": first[0], "height": first[1]}
    )
    try:
        await attach_replay(context, index if index is not None else load_index(warc), freeze_clock=False)
        page = await context.new_page()
        renderer = _Renderer(page, await context.new_cdp_session(page), quality, scale)
        await page.route("**/*", renderer.handle)
        done: dict[str, bytes] = {}
        for snap in todo:
            key = hashlib.sha256(snap.url.encode() + b"\0" + repr(snap.view).encode() + b"\0" + snap.html).hexdigest()
            try:
                if key not in done:
                    async with asyncio.timeout(_STEP_TIMEOUT_S):
                        done[key] = await renderer.render(snap)
                atomic_write(targets[snap.step], done[key])
                result[snap.step] = None
            except (PlaywrightError, TimeoutError, OSError) as exc:
                reason = "timed out" if isinstance(exc, TimeoutError) else str(exc).splitlines()[0]
                logger.debug("replay: step {} not rendered: {}", snap.step, reason)
                result[snap.step] = f"step {snap.step} could not be rendered: {reason}"
    finally:
        await context.close()
    return result


class _Renderer:
    """One page showing snapshots in turn: the first of an origin is loaded by navigating (the snapshot answers its
    own navigation, the archive everything else); the next ones of that origin replace the document's content in
    place (`Page.setDocumentContent`, with a `<base>` of the step's URL), which costs a third as much."""

    def __init__(self, page: Page, cdp: Any, quality: int, scale: float) -> None:
        self.page, self.cdp, self.quality, self.scale = page, cdp, quality, scale
        self._doc: DomSnapshot | None = None
        self._origin: str | None = None  # the origin of the document shown
        self._scrolled = False

    async def handle(self, route: Route) -> None:
        request = route.request
        doc = self._doc
        if doc is not None and request.is_navigation_request() and request.frame == self.page.main_frame:
            self._doc = None  # one navigation per snapshot; a meta refresh is answered from the archive
            await route.fulfill(status=200, body=doc.html, headers={"content-type": "text/html; charset=utf-8"})
            return
        await route.fallback()

    async def render(self, snap: DomSnapshot) -> bytes:
        w, h, x, y = snap.view
        size = self.page.viewport_size
        if size is None or (size["width"], size["height"]) != (w, h):
            await self.page.set_viewport_size({"width": w, "height": h})
        still = _still(snap)
        origin = _origin(snap.url)
        html = _based(still.html, snap.url) if origin == self._origin else None
        if html is not None:
            frame = (await self.cdp.send("Page.getFrameTree"))["frameTree"]["frame"]["id"]
            await self.cdp.send("Page.setDocumentContent", {"frameId": frame, "html": html})
            await self.page.evaluate(_LOADED)
        else:
            self._doc = still
            # Without its fragment: a fragment-only change from the page shown would not load the snapshot.
            await self.page.goto(urldefrag(snap.url).url or "about:blank", wait_until="load")
            self._origin = origin
        vp = {"x": 0, "y": 0, "width": w, "height": h}
        if x or y or self._scrolled:
            vp = await self.page.evaluate(_SCROLL, [x, y])
            self._scrolled = bool(x or y)
        params: dict[str, Any] = {"format": "jpeg", "quality": self.quality, "optimizeForSpeed": True}
        if self.scale < 1:
            params["clip"] = {**vp, "scale": self.scale}
        # A busy machine's compositor may have no frame of a page just loaded yet: Chromium then answers "Unable to
        # capture screenshot" at once; a moment later it has one.
        async for attempt in AsyncRetrying(
            retry=retry_if_exception(_no_frame_yet), stop=stop_after_attempt(4), wait=wait_fixed(0.25), reraise=True
        ):
            with attempt:
                res = await self.cdp.send("Page.captureScreenshot", params)
        return base64.b64decode(res["data"])


def _no_frame_yet(exc: BaseException) -> bool:
    return isinstance(exc, PlaywrightError) and "Unable to capture screenshot" in str(exc)


_LOADED = "() => new Promise(r => document.readyState === 'complete' ? r() : addEventListener('load', () => r(), {once: true}))"
_SCROLL = "([x, y]) => { scrollTo(x, y); return {x: scrollX, y: scrollY, width: innerWidth, height: innerHeight}; }"
_HEAD = re.compile(rb"<head\b[^>]*>", re.I)


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _based(html: bytes, url: str) -> str | None:
    """The snapshot's HTML with a `<base>` of its URL first in its head, for showing it in a document of another
    URL of the same origin; None when that would show it differently (it has a base of its own, declarative shadow
    roots, which content set in place does not attach, or no head) or it is not UTF-8."""
    if b"<base" in html.lower() or b"shadowrootmode" in html:
        return None
    head = _HEAD.search(html)
    if head is None:
        return None
    try:
        text = html.decode("utf-8")
    except UnicodeDecodeError:
        return None
    at = len(html[: head.end()].decode("utf-8"))
    return text[:at] + f'<base href="{escape(url, quote=True)}">' + text[at:]


#: Appended to each snapshot: animations and transitions at their end state, as when the step was read.
_NO_MOTION = (b"<style>*,*::before,*::after{animation-duration:0s!important;animation-delay:0s!important;"
              b"transition:none!important}</style>")
_NOSCRIPT = re.compile(rb"<noscript\b[^>]*>.*?</noscript\s*>", re.I | re.S)
_REFRESH = re.compile(rb"<meta\b[^>]*http-equiv\s*=\s*[\"']?refresh[^>]*>", re.I)


def _still(snap: DomSnapshot) -> DomSnapshot:
    """The snapshot as scripts-off rendering must see it: no `<noscript>` content (the recorded page ran scripts, so
    it never showed), no meta refresh (the render would navigate away), no motion."""
    html = _REFRESH.sub(b"", _NOSCRIPT.sub(b"", snap.html)) + _NO_MOTION
    return DomSnapshot(snap.step, snap.url, html, snap.view)


