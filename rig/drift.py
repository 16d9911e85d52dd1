"""`rig drift RUNS_DIR|EPISODE_DIR|SNAPSHOT_DIR`: does what was archived still hold on the live origin?

Site drift, told apart from agent drift:
- an episode's recorded actions are re-driven against the live origin with the machinery `rig replay` uses against
  the archive (`replay.redrive`, the recorder capturing each step's visible text), and each step's text is compared
  with the text the archive holds for that step;
- a snapshot's archived requests are sent again: each HTML page is rendered twice, from the snapshot and live, and
  the visible texts compared; each data response (JSON, CSV, text ...) is fetched live from a page on its own origin
  and its body compared with the archived answers (any of them, for a request answered as a sequence). Images,
  styles, scripts and fonts are not compared (the pages that use them are).

Each item is `unchanged`, `changed` (with a short unified diff) or `gone` (an HTTP error or no answer where the
archive had a page, or a recorded action whose target is no longer there). Episodes of the bundled sites and
bundled-site snapshots are left out (`skipped`): re-drive those against their archive with `rig replay`.
"""

from __future__ import annotations

import asyncio
import base64
import difflib
import hashlib
import json
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from playwright.async_api import Browser, BrowserContext, Page, async_playwright
from playwright.async_api import Error as PlaywrightError

from recorders import Recorder, RecorderOptions, Step
from replay import (
    FROZEN_ORIGIN,
    REPLAY_CONTEXT_OPTIONS,
    FrozenSite,
    ReplayError,
    open_snapshot,
)
from replay.freeze import origin_of
from replay.index import ArchiveIndex, Exchange, load_index
from replay.redrive import RECHECKS, redrive
from replay.report import RecordedStep
from replay.snapshot import snapshot_dirs
from rig.browser import launch
from rig.network.resolve import HostMapping
from rig.episode_dir import EpisodeDir, RunsDir
from rig.errors import InputError
from rig.formats.drift import DriftItem, DriftReport
from rig.network.politeness import PoliteGate, Politeness
from rig.replay_cmd import load_episode
from rig.sites import bundled_adapters
from rig.tasks.loader import task_of

#: The live recorder captures each step's visible text and nothing else.
TEXT_ONLY = RecorderOptions(screenshots="off", dom_snapshot=False, record_text=True, fsync=False)
#: Lines of a changed item's diff kept (the rest is summarised).
DIFF_LINES = 40
_ASSETS = ("image/", "font/", "audio/", "video/", "text/css", "javascript", "ecmascript", "wasm", "octet-stream")
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


@dataclass
class DriftOptions:
    """How the live origin is reached."""

    resolve: list[HostMapping] = field(default_factory=list)
    ignore_https_errors: bool = False
    headless: bool = True
    timeout_s: float = 15.0
    #: A differing step is captured again this often (100 ms apart) before it counts: the live page may still load.
    rechecks: int = RECHECKS
    #: Requests to each host are rate-limited and capped as in live runs (None: not held back).
    politeness: Politeness | None = field(default_factory=Politeness)


@dataclass
class _Live:
    """How live contexts are made: certificate errors, the rig's user agent, one politeness gate for the whole check."""

    opts: DriftOptions
    gate: PoliteGate | None = None
    user_agent: str | None = None

    @classmethod
    async def start(cls, browser: Browser, opts: DriftOptions) -> _Live:
        """The live side of a check on `browser` (reading the browser's user agent once, for politeness)."""
        if opts.politeness is None:
            return cls(opts)
        probe = await browser.new_context()
        try:
            agent = await (await probe.new_page()).evaluate("navigator.userAgent")
        finally:
            await probe.close()
        return cls(opts, PoliteGate(opts.politeness), opts.politeness.user_agent(agent))

    async def context(self, browser: Browser) -> BrowserContext:
        """A new context reaching the live origins."""
        extra = {"user_agent": self.user_agent} if self.user_agent else {}
        context = await browser.new_context(ignore_https_errors=self.opts.ignore_https_errors, service_workers="block",
                                            **extra)
        if self.gate is not None:
            await self.gate.attach(context)
        return context


@dataclass
class _Plan:
    """What one `rig drift` re-checks, loaded before any browser starts."""

    episodes: list[tuple[EpisodeDir, ArchiveIndex, list[RecordedStep]]] = field(default_factory=list)
    snapshots: list[tuple[Path, FrozenSite]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def plan_drift(paths: list[Path]) -> _Plan:
    """Load every episode and snapshot under `paths`; InputError (before any browser starts) for bad input."""
    if not paths:
        raise InputError("drift", None, "name a runs, episode or snapshot directory")
    plan = _Plan()
    for path in paths:
        if not path.is_dir():
            raise InputError(str(path), None, "no such runs, episode or snapshot directory")
        ed = EpisodeDir(path)
        if ed.episode_file.is_file() or ed.trajectory_file.is_file():
            _plan_episode(plan, ed)
        elif snapshots := _snapshots(path):
            for d in snapshots:
                _plan_snapshot(plan, d)
        elif episodes := RunsDir(path).episodes():
            for e in episodes:
                _plan_episode(plan, e)
        else:
            raise InputError(str(path), None, "neither an episode, a runs directory nor a snapshot (no episode.json, "
                                              "trajectory.jsonl or manifest.json in it or below it)")
    if not plan.episodes and not plan.snapshots:
        raise InputError(" ".join(map(str, paths)), None, "nothing to check on a live origin: " + "; ".join(plan.skipped))
    return plan


def _snapshots(path: Path) -> list[Path]:
    try:
        return snapshot_dirs(path)
    except ReplayError:
        return []


def _plan_episode(plan: _Plan, ed: EpisodeDir) -> None:
    index, steps = load_episode(ed.path)
    if ed.episode_file.is_file():
        try:
            found = task_of(ed.read_episode(), ed.path)
        except InputError:  # its task file moved or broke: the episode is re-driven on the origins it recorded
            found = None
        if found is not None and found[0].site is not None:
            plan.skipped.append(f"{ed.path}: ran on the bundled site {found[0].site} (re-drive it with `rig replay`)")
            return
    plan.episodes.append((ed, index, steps))


def _plan_snapshot(plan: _Plan, directory: Path) -> None:
    try:
        frozen = open_snapshot(directory)
    except (ReplayError, ValueError, TypeError) as exc:
        raise InputError(str(directory), None, f"not a readable snapshot ({exc})") from None
    if any(not m.origins for m in frozen.manifests):
        plan.skipped.append(f"{directory}: a bundled site's snapshot answers under any origin; it has no live origin")
        return
    plan.snapshots.append((directory, frozen))


def drift(paths: list[Path], options: DriftOptions | None = None) -> DriftReport:
    """`rig drift`: re-check every episode and snapshot under `paths` against the live origins."""
    opts = options or DriftOptions()
    plan = plan_drift(paths)

    async def main() -> DriftReport:
        report = DriftReport(skipped=plan.skipped)
        async with async_playwright() as pw:
            browser = await launch(pw, headless=opts.headless, local_only=False, resolve=opts.resolve)
            try:
                live = await _Live.start(browser, opts)
                for ed, index, steps in plan.episodes:
                    for item in await episode_drift(browser, live, ed, index, steps):
                        report.add(item)
                for directory, frozen in plan.snapshots:
                    for item in await snapshot_drift(browser, live, directory, frozen, report.skipped):
                        report.add(item)
            finally:
                await browser.close()
        return report

    return asyncio.run(main())


# --- episodes ------------------------------------------------------------------------------------------------


class _Tap:
    """The recorder as `redrive` sees it, noting which capture belongs to which recorded step."""

    def __init__(self, rec: Recorder, steps: list[RecordedStep]) -> None:
        self.rec, self._order, self._i = rec, [s.step for s in steps], -1
        self.by_step: dict[int, Step] = {}

    @property
    def steps(self) -> int:
        return self.rec.steps

    @property
    def last_step(self) -> Step | None:
        return self.rec.last_step

    @asynccontextmanager
    async def action(self, info: dict[str, Any]) -> AsyncIterator[None]:
        self._i += 1
        before = self.rec.steps
        async with self.rec.action(info):
            yield
        if self.rec.steps > before and self.rec.last_step is not None:
            self.by_step[self._order[self._i]] = self.rec.last_step

    async def checkpoint(self, note: str) -> Step | None:
        step = await self.rec.checkpoint(note)
        if step is not None and 0 <= self._i < len(self._order):
            self.by_step[self._order[self._i]] = step
        return step


async def episode_drift(browser: Browser, live_side: _Live, ed: EpisodeDir, index: ArchiveIndex,
                        steps: list[RecordedStep]) -> list[DriftItem]:
    """Re-drive an episode's steps live; one item per step."""
    opts = live_side.opts
    with tempfile.TemporaryDirectory(prefix="rig-drift-") as scratch:
        context = await live_side.context(browser)
        try:
            rec = await Recorder.attach(context, scratch, options=TEXT_ONLY, adapters=bundled_adapters())
            tap = _Tap(rec, steps)
            result = await redrive(steps, context, None, tap, archive_texts=index.step_text, timeout_s=opts.timeout_s,
                                   rechecks=opts.rechecks)
            await rec.close()
        finally:
            await context.close()
        live = load_index(rec.warc_path, texts=True)
    errors = {m["step"]: m["diff"]["error"] for m in result.mismatches if "error" in m["diff"]}
    items = []
    for step in steps:
        captured = tap.by_step.get(step.step)
        rid = index.text_ids.get(step.step)
        archived_text = index.texts.get(rid) if rid else None
        item = DriftItem(url=step.url, step=step.step, status="unchanged", kind="step", source=str(ed.path))
        if step.step in errors or captured is None:
            item.status, item.reason = "gone", errors.get(step.step) or "no step was captured after the action"
            items.append(item)
            continue
        item.live_url = captured.url
        live_rid = captured.snapshot.warc_record_id if captured.snapshot else None
        live_text = live.texts.get(live_rid) if live_rid else None
        item.http_status = _status(live, captured.url)
        gone = _gone_reason(item.http_status, _status(index, step.url), captured.url)
        if gone:
            item.status, item.reason = "gone", gone
        elif archived_text is None or live_text is None:
            item.status = "unchanged" if step.text_hash == captured.text_hash else "changed"
            item.diff = None if item.status == "unchanged" else "the archive holds no text for this step: its hash differs"
        elif archived_text != live_text:
            item.status, item.diff = "changed", text_diff(archived_text, live_text)
        items.append(item)
    return items


def _status(index: ArchiveIndex, url: str) -> int | None:
    """The HTTP status of the last answer to `GET url` in an archive, if it holds one."""
    found = [x for x in index.lookup("GET", url) if x.response is not None]
    return found[-1].response.status if found and found[-1].response else None


def _gone_reason(live: int | None, archived: int | None, live_url: str) -> str | None:
    """Why a page is gone: an HTTP error where the archive had none, or no page at all."""
    if live_url.startswith("chrome-error:"):
        return "the page did not load"
    if live is not None and live >= 400 and (archived is None or archived < 400):
        return f"HTTP {live}" + (f" (archived: HTTP {archived})" if archived else "")
    return None


def text_diff(archived: str, live: str, lines: int = DIFF_LINES) -> str:
    """A short unified diff of two texts, archived (-) against live (+)."""
    out = list(difflib.unified_diff(archived.splitlines(), live.splitlines(), "archived", "live", n=1, lineterm=""))
    if len(out) > lines:
        out = [*out[:lines], f"... {len(out) - lines} more diff lines"]
    return "\n".join(out)


# --- snapshots -----------------------------------------------------------------------------------------------


def _kind(x: Exchange) -> str | None:
    """`page` (an HTML document or redirect to GET), `data`, or None for assets that are not compared."""
    r = x.response
    if r is None:
        return None
    ctype = r.content_type.split(";")[0].strip().lower()
    if x.method == "GET" and (ctype in ("text/html", "application/xhtml+xml") or 300 <= r.status < 400):
        return "page"
    if any(a in ctype for a in _ASSETS):
        return None
    return "data"


async def snapshot_drift(browser: Browser, live: _Live, directory: Path, frozen: FrozenSite,
                         skipped: list[str]) -> list[DriftItem]:
    """Send every archived request of a snapshot again; one item per page or data request."""
    groups = sorted(frozen.index.exchanges.values(), key=lambda xs: xs[0].order)
    pages, data, assets, bundled = [], [], 0, 0
    for xs in groups:
        if origin_of(xs[0].url) == FROZEN_ORIGIN:
            bundled += 1
        elif (kind := _kind(xs[0])) == "page":
            pages.append(xs)
        elif kind == "data":
            data.append(xs)
        else:
            assets += 1
    if bundled:
        skipped.append(f"{directory}: {bundled} requests to the bundled sites (no live origin)")
    if assets:
        skipped.append(f"{directory}: {assets} images, styles, scripts and fonts (the pages using them are compared)")
    items = await _page_items(browser, live, directory, frozen, pages)
    items += await _data_items(browser, live, directory, data)
    return items


async def _page_items(browser: Browser, live_side: _Live, directory: Path, frozen: FrozenSite,
                      pages: list[list[Exchange]]) -> list[DriftItem]:
    if not pages:
        return []
    urls = [xs[0].url for xs in pages]

    async def from_snapshot(b: Browser) -> BrowserContext:
        context = await b.new_context(**REPLAY_CONTEXT_OPTIONS)
        await frozen.attach(context)
        return context

    archived = await _render(browser, urls, from_snapshot, live_side.opts)
    live = await _render(browser, urls, live_side.context, live_side.opts, expected=[a[4] for a in archived])
    items = []
    for url, (a_text, a_status, *_), (l_text, l_status, l_url, error, _) in zip(urls, archived, live, strict=True):
        item = DriftItem(url=url, kind="page", status="unchanged", source=str(directory), live_url=l_url,
                         http_status=l_status)
        gone = error or _gone_reason(l_status, a_status, l_url or "")
        if gone:
            item.status, item.reason = "gone", gone
        elif a_text != l_text:
            item.status, item.diff = "changed", text_diff(a_text or "", l_text or "")
        items.append(item)
    return items


async def _render(browser: Browser, urls: list[str], new_context: Callable[[Browser], Awaitable[BrowserContext]],
                  opts: DriftOptions, expected: list[str | None] | None = None,
                  ) -> list[tuple[str | None, int | None, str | None, str | None, str | None]]:
    """Each URL loaded in turn in one recorded context (from `new_context`: the snapshot's, or a live one): its visible
    text, the document's HTTP status, where it ended up, an error if it did not load, and the text's hash.

    A page is captured again (100 ms apart, `opts.rechecks` times at most) until its text is the `expected` one, or
    without `expected` until two captures agree: a page still filling itself in is not compared mid-way."""
    out: list[tuple[str, Step | None, int | None, str | None]] = []
    with tempfile.TemporaryDirectory(prefix="rig-drift-") as scratch:
        context = await new_context(browser)
        try:
            rec = await Recorder.attach(context, scratch, options=TEXT_ONLY, adapters=bundled_adapters())
            page = await context.new_page()
            for n, url in enumerate(urls):
                url, step, status, error = await _visit(rec, page, url, opts)
                want = expected[n] if expected is not None else None
                out.append((url, await _steady(rec, step, want, opts.rechecks), status, error))
            await rec.close()
        finally:
            await context.close()
        texts = load_index(rec.warc_path, texts=True).texts
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


async def _data_items(browser: Browser, live: _Live, directory: Path, data: list[list[Exchange]]) -> list[DriftItem]:
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
            item = DriftItem(url=x.url, method=x.method, kind="data", status="unchanged", source=str(directory),
                             http_status=got.get("status"))
            archived = [a for a in xs if a.response is not None]
            if "error" in got:
                item.status, item.reason = "gone", f"no answer ({got['error']})"
            elif (gone := _gone_reason(got["status"], min(a.response.status for a in archived if a.response), "")):
                item.status, item.reason = "gone", gone
            else:
                live_body = _canonical(base64.b64decode(got["body"]), got["type"])
                held = [_canonical(a.response.body, a.response.content_type) for a in archived if a.response]
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


def _canonical(body: bytes, content_type: str) -> str:
    """A body as compared: JSON re-serialised with sorted keys, text as text, anything else by its digest."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return f"(binary, sha256 {hashlib.sha256(body).hexdigest()})"
    if "json" in content_type.lower() or text.lstrip()[:1] in ("{", "["):
        try:
            return json.dumps(json.loads(text), sort_keys=True, indent=1, ensure_ascii=False)
        except ValueError:
            pass
    return text


def format_drift(report: DriftReport) -> str:
    """A human summary: the counts, then each changed or gone item (with its diff)."""
    lines = [f"{report.unchanged} unchanged, {report.changed} changed, {report.gone} gone"]
    for item in report.items:
        if item.status == "unchanged":
            continue
        where = f"step {item.step} " if item.step is not None else ""
        lines.append(f"{item.status}: {where}{item.method + ' ' if item.kind == 'data' else ''}{item.url}"
                     + (f" ({item.reason})" if item.reason else "") + f"  [{item.source}]")
        if item.diff:
            lines += ["    " + ln for ln in item.diff.splitlines()]
    lines += [f"skipped: {s}" for s in report.skipped]
    return "\n".join(lines)
