"""A snapshot's archived requests sent again: each HTML page rendered from the snapshot and live and the visible texts
compared; each data response fetched live from a page on its own origin and its body compared with the archived
answers. Images, styles, scripts and fonts are not compared (the pages that use them are)."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Awaitable, Callable
from typing import Any

from playwright.async_api import Browser, BrowserContext, Page
from playwright.async_api import Error as PlaywrightError

from recorders import Recorder, Step
from replay import FROZEN_ORIGIN, REPLAY_CONTEXT_OPTIONS
from replay.freeze import origin_of
from replay.index import Exchange
from rig.drift.compare import body_as_compared, exchange_kind, gone_reason, text_diff
from rig.drift.episodes import TEXT_ONLY
from rig.drift.live import DriftOptions, LiveSide
from rig.drift.plan import SnapshotCheck
from rig.formats.drift import DriftItem
from rig.runner.redrive import scratch_recording

_FETCH = """async ([url, method, body, type]) => {
  const init = {method, credentials: 'omit', redirect: 'follow'};
  if (body !== null) init.body = Uint8Array.from(atob(body), c => c.charCodeAt(0));
  if (type) init.headers = {'content-type': type};
  try {
    const r = await fetch(url, init);
    const bytes = new Uint8Array(await r.arrayBuffer());
    let s = '';
    for (let i = 0; i < bytes.length; i += 8192) s += String.fromCharCode(...bytes.subarray(i, i + 8192));
    return {status: r.status, type: r.headers.get('content-type') || '', body: btoa(s)};
  } catch (e) {
    return {error: String(e)};
  }
}"""
#: What one rendering gives per URL: visible text, HTTP status, where it ended up, an error, the text's hash.
Rendered = tuple[str | None, int | None, str | None, str | None, str | None]


async def snapshot_drift(browser: Browser, live: LiveSide, check: SnapshotCheck, skipped: list[str]) -> list[DriftItem]:
    """Send every archived request of a snapshot again; one item per page or data request (`unreachable` for those
    of an origin that could not be reached)."""
    groups = sorted(check.frozen.index.exchanges.values(), key=lambda xs: xs[0].order)
    pages, data, assets, bundled = [], [], 0, 0
    for xs in groups:
        if origin_of(xs[0].url) == FROZEN_ORIGIN:
            bundled += 1
        elif (kind := exchange_kind(xs[0])) == "page":
            pages.append(xs)
        elif kind == "data":
            data.append(xs)
        else:
            assets += 1
    if bundled:
        skipped.append(f"{check.directory}: {bundled} requests to the bundled sites (no live origin)")
    if assets:
        skipped.append(f"{check.directory}: {assets} images, styles, scripts and fonts (the pages using them are "
                       "compared)")
    origins: dict[str, str] = {}
    for xs in pages + data:
        origins.setdefault(origin_of(xs[0].url), xs[0].url)
    await live.probe(browser, origins)
    items = [_unreachable(live, check, xs) for xs in pages + data if origin_of(xs[0].url) in live.unreachable]
    items += await _page_items(browser, live, check, [xs for xs in pages if origin_of(xs[0].url) not in live.unreachable])
    items += await _data_items(browser, live, check, [xs for xs in data if origin_of(xs[0].url) not in live.unreachable])
    return items


def _unreachable(live: LiveSide, check: SnapshotCheck, xs: list[Exchange]) -> DriftItem:
    """The item of an archived request whose origin could not be reached: not re-checked."""
    x = xs[0]
    return DriftItem(url=x.url, method=x.method, kind=exchange_kind(x) or "data", status="unreachable",
                     source=str(check.directory), reason=live.blocked({origin_of(x.url): x.url}))


async def _page_items(browser: Browser, live_side: LiveSide, check: SnapshotCheck,
                      pages: list[list[Exchange]]) -> list[DriftItem]:
    if not pages:
        return []
    urls = [xs[0].url for xs in pages]
    archived = await _render(browser, urls, live_side.opts, REPLAY_CONTEXT_OPTIONS, check.frozen.attach)
    live = await _render(browser, urls, live_side.opts, live_side.context_options, live_side.prepare,
                         expected=[a[4] for a in archived])
    items = []
    for url, (a_text, a_status, *_), (l_text, l_status, l_url, error, _) in zip(urls, archived, live, strict=True):
        item = DriftItem(url=url, kind="page", status="unchanged", source=str(check.directory), live_url=l_url,
                         http_status=l_status)
        gone = error or gone_reason(l_status, a_status, l_url or "")
        if gone:
            item.status, item.reason = "gone", gone
        elif a_text != l_text:
            item.status, item.diff = "changed", text_diff(a_text or "", l_text or "")
        items.append(item)
    return items


async def _render(browser: Browser, urls: list[str], opts: DriftOptions, context_options: dict[str, Any],
                  prepare: Callable[[BrowserContext], Awaitable[Any]],
                  expected: list[str | None] | None = None) -> list[Rendered]:
    """Each URL loaded in turn in one scratch recording (the snapshot's context, or a live one): its visible text,
    the document's HTTP status, where it ended up, an error if it did not load, and the text's hash.

    A page is captured again (100 ms apart, `opts.rechecks` times at most) until its text is the `expected` one, or
    without `expected` until two captures agree: a page still filling itself in is not compared mid-way."""
    out: list[tuple[str, Step | None, int | None, str | None]] = []
    async with scratch_recording(browser, TEXT_ONLY, context_options=context_options, prepare=prepare,
                                 read_back=True) as scratch:
        page = await scratch.context.new_page()
        for n, url in enumerate(urls):
            url, step, status, error = await _visit(scratch.recorder, page, url, opts)
            want = expected[n] if expected is not None else None
            out.append((url, await _steady(scratch.recorder, step, want, opts.rechecks), status, error))
    texts = scratch.archive.texts if scratch.archive is not None else {}
    return [(texts.get(s.snapshot.warc_record_id or "") if s and s.snapshot else None, status,
             s.url if s else url, error, s.text_hash if s else None) for url, s, status, error in out]


async def _steady(rec: Recorder, step: Step | None, want: str | None, rechecks: int) -> Step | None:
    """The page captured again until its text hash is `want` (None: until two captures agree), `rechecks` times at most."""
    last = step
    for _ in range(rechecks if step is not None else 0):
        if last is None or (want is not None and last.text_hash == want):
            break
        await asyncio.sleep(0.1)
        try:
            again = await rec.checkpoint("drift recheck")
        except (PlaywrightError, RuntimeError):
            break  # the page went away: keep the capture there is
        if again is None:
            break
        if want is None and again.text_hash == last.text_hash:
            return again
        last = again
    return last


async def _visit(rec: Recorder, page: Page, url: str, opts: DriftOptions) -> tuple[str, Step | None, int | None, str | None]:
    """Load one URL as a recorded `goto`; the captured step, the document's status, or the error."""
    status, error = None, None
    before = rec.steps
    try:
        async with rec.action({"type": "goto", "value": url, "page": page}):
            response = await page.goto(url, timeout=opts.timeout_s * 1000)
            status = response.status if response is not None else None
    except PlaywrightError as exc:
        error = f"the page did not load ({str(exc).splitlines()[0]})"
    return url, rec.last_step if rec.steps > before else None, status, error


async def _data_items(browser: Browser, live: LiveSide, check: SnapshotCheck,
                      data: list[list[Exchange]]) -> list[DriftItem]:
    if not data:
        return []
    items = []
    context = await live.context(browser)
    try:
        pages: dict[str, Page] = {}
        for xs in data:
            x = xs[0]
            page = pages.get(origin := origin_of(x.url)) or await _origin_page(context, origin)
            pages[origin] = page
            body = base64.b64encode(x.body).decode() if x.body else None
            got = await page.evaluate(_FETCH, [x.url, x.method, body, x.content_type])
            item = DriftItem(url=x.url, method=x.method, kind="data", status="unchanged", source=str(check.directory),
                             http_status=got.get("status"))
            archived = [a for a in xs if a.response is not None]
            if "error" in got:
                item.status, item.reason = "gone", f"no answer ({got['error']})"
            elif (gone := gone_reason(got["status"], min(a.response.status for a in archived if a.response), "")):
                item.status, item.reason = "gone", gone
            else:
                live_body = body_as_compared(base64.b64decode(got["body"]), got["type"])
                held = [body_as_compared(a.response.body, a.response.content_type) for a in archived if a.response]
                if live_body not in held:
                    item.status, item.diff = "changed", text_diff(held[-1], live_body)
            items.append(item)
    finally:
        await context.close()
    return items


async def _origin_page(context: BrowserContext, origin: str) -> Page:
    """A blank page on `origin` (answered by a route, never the network), so data requests are same-origin."""
    stub = f"{origin}/.rig-drift-origin"
    await context.route(stub, lambda route: route.fulfill(status=200, body="<!doctype html><title>drift</title>",
                                                          headers={"content-type": "text/html"}))
    page = await context.new_page()
    await page.goto(stub)
    return page
