"""`rig replay EPISODE_DIR`: re-drive an episode's recorded actions against its own archive and compare every step;
and `open_frozen`, the snapshot loading behind `rig run --frozen`.

Each trajectory step's action (reported by the driver, or inferred by the recorder for `observed` steps) is
performed again in a fresh context whose every request is answered from `evidence.warc.gz`. A recorder
(screenshots and DOM snapshots off) captures the state after each action exactly as during recording, and
the step matches when its state and its text hash equal the recording's, and the text hash also equals the
digest of the step's text record in the archive (so an altered archive is caught at the step it alters).
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NotRequired
from urllib.parse import urljoin, urlsplit

from loguru import logger
from playwright.async_api import Browser, Page, async_playwright
from playwright.async_api import Error as PlaywrightError
from typing_extensions import TypedDict  # pydantic's schemas need it on Python 3.11

from recorders import Recorder, RecorderOptions, SiteAdapter, load_adapter
from recorders.models import Step
from replay import REPLAY_CONTEXT_OPTIONS, FrozenSite, Manifest, ReplayError, attach_replay, load_index, open_snapshot
from replay.snapshot import MANIFEST, snapshot_dirs
from rig.browser import launch
from rig.errors import InputError
from rig.grading.parse import read_steps
from rig.tasks.loader import SITE_NAME
from rig.tasks.models import Task

#: State keys never compared. Empty: every key the recorder writes is reproducible offline for the bundled sites.
VOLATILE_KEYS: frozenset[str] = frozenset()
_NAVIGATIONS = ("load", "navigate", "hashchange", "pushState", "replaceState", "popstate")
#: A step that differs is captured again this often after the action: the recorder judges "settled" by short quiet
#: windows, and replay answers requests faster than the live site did, so a capture can land mid-update.
RECHECKS = 5
_RECHECK_S = 0.1


class Mismatch(TypedDict):
    """A step that did not match: its number and what differed (see `step_diff`)."""

    step: int
    diff: dict[str, Any]


class MissRecord(TypedDict):
    """A request the archive could not answer, and the step being re-driven then."""

    method: str
    url: str
    step: NotRequired[int]


@dataclass
class ReplayReport:
    """Per-step fidelity of one replay: the `rig replay --json` document."""

    steps: int
    matched: int = 0
    mismatches: list[Mismatch] = field(default_factory=list)
    misses: list[MissRecord] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Every step matched (the command's exit status is 0 only then)."""
        return self.matched == self.steps

    def to_json(self) -> dict[str, Any]:
        """`{"steps": N, "matched": M, "mismatches": [{"step": i, "diff": {...}}], "misses": [...]}`."""
        return {"steps": self.steps, "matched": self.matched, "mismatches": self.mismatches, "misses": self.misses}


def step_diff(recorded: Step, replayed: Step | None, archive_text: str | None, ignore: frozenset[str] = VOLATILE_KEYS) -> dict[str, Any]:
    """What differs between a recorded and a replayed step ({} when they match).

    `state`: key -> [recorded, replayed] (None for a missing key); `url`: [recorded, replayed] (origin ignored);
    `text_hash`: [recorded, replayed]; `archive_text_hash`: [the archive's text record digest, replayed].
    """
    if replayed is None:
        return {"error": "no step was captured after the action"}
    out: dict[str, Any] = {}
    keys = (set(recorded.state) | set(replayed.state)) - ignore
    state = {k: [recorded.state.get(k), replayed.state.get(k)] for k in sorted(keys) if recorded.state.get(k) != replayed.state.get(k)}
    if state:
        out["state"] = state
    if _local(recorded.url) != _local(replayed.url):
        out["url"] = [recorded.url, replayed.url]
    if recorded.text_hash != replayed.text_hash:
        out["text_hash"] = [recorded.text_hash, replayed.text_hash]
    if archive_text is not None and archive_text != replayed.text_hash:
        out["archive_text_hash"] = [archive_text, replayed.text_hash]
    return out


def _local(url: str) -> str:
    p = urlsplit(url)
    return p.path + (f"?{p.query}" if p.query else "") + (f"#{p.fragment}" if p.fragment else "")


async def perform(page: Page, step: Step, timeout_ms: float) -> None:
    """Do a recorded step's action again on `page` (navigation-like steps only navigate when the URL differs)."""
    a = step.action
    loc = page.locator(a.target) if a.target else None
    if a.type == "goto":
        await page.goto(urljoin(page.url if page.url.startswith("http") else step.url, str(a.value or a.target or step.url)), timeout=timeout_ms)
    elif a.type in _NAVIGATIONS:
        want = urljoin(step.url, str(a.value or step.url))
        if _local(want) != _local(page.url):
            await page.goto(want, timeout=timeout_ms)
    elif loc is None:
        if a.type == "press" and a.value:
            await page.keyboard.press(str(a.value))
    elif a.type == "select":
        await loc.select_option(a.value, timeout=timeout_ms)
    elif a.type in ("check", "uncheck"):
        await (loc.check if a.type == "check" else loc.uncheck)(timeout=timeout_ms)
    elif a.type == "fill":
        await loc.fill(str(a.value or ""), timeout=timeout_ms)
    elif a.type == "press":
        await loc.press(str(a.value), timeout=timeout_ms)
    elif a.type == "click":
        await loc.click(timeout=timeout_ms)
    elif a.type == "submit":
        await loc.evaluate("f => f.requestSubmit ? f.requestSubmit() : f.submit()")
    elif a.type == "wait_for":
        await loc.first.wait_for(state="visible", timeout=timeout_ms)
    elif a.type in ("extract_table", "extract_text"):
        await loc.first.wait_for(state="attached", timeout=timeout_ms)
    # answer, checkpoint and unknown kinds change nothing on the page: the state is captured as it stands


async def replay_episode(
    episode_dir: Path, browser: Browser, *, timeout_s: float = 10.0, rechecks: int = RECHECKS, ignore: frozenset[str] = VOLATILE_KEYS,
) -> ReplayReport:
    """Re-drive an episode's actions in `browser` against its archive; compare every step.

    A differing step is captured again up to `rechecks` times (100 ms apart) before it counts as a mismatch.
    """
    episode_dir = Path(episode_dir)
    traj, warc = episode_dir / "trajectory.jsonl", episode_dir / "evidence.warc.gz"
    for path in (traj, warc):
        if not path.is_file():
            raise InputError(str(episode_dir), path.name, "missing: not an episode directory (see `rig record`)")
    try:
        index = await asyncio.to_thread(load_index, warc)
    except ReplayError as exc:
        raise InputError(str(warc), None, str(exc)) from None
    for problem in index.errors:
        logger.warning(problem)
    steps = read_steps(traj)
    report = ReplayReport(steps=len(steps))
    options = RecorderOptions(screenshots="off", dom_snapshot=False, record_text=False, fsync=False)
    with tempfile.TemporaryDirectory(prefix="rig-replay-") as scratch:
        context = await browser.new_context(**REPLAY_CONTEXT_OPTIONS)
        try:
            session = await attach_replay(context, index)
            rec = await Recorder.attach(context, scratch, options=options, adapters=_adapters())
            pages: list[Page] = []
            for step in steps:
                session.tag = step.step
                while len(pages) <= step.tab:
                    pages.append(await context.new_page())
                page = pages[step.tab]
                error = None
                before = rec.steps
                try:
                    async with rec.action({"type": step.action.type, "target": step.action.target, "value": step.action.value, "page": page}):
                        await perform(page, step, timeout_s * 1000)
                except (PlaywrightError, ValueError, TypeError) as exc:
                    error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                replayed = rec.last_step if rec.steps > before else None
                diff = step_diff(step, replayed, index.step_text.get(step.step), ignore)
                for _ in range(rechecks if diff and not error else 0):
                    await asyncio.sleep(_RECHECK_S)  # captured mid-update? the page may still reach the recorded state
                    try:
                        again = await rec.checkpoint("replay recheck")
                    except (PlaywrightError, RuntimeError):
                        break  # the page went away: keep the first capture's differences
                    if not (later := step_diff(step, again, index.step_text.get(step.step), ignore)):
                        diff = later
                        break
                if error:
                    diff["error"] = error
                if diff:
                    report.mismatches.append(Mismatch(step=step.step, diff=diff))
                else:
                    report.matched += 1
            await rec.close()
        finally:
            await context.close()
    report.misses = [MissRecord(**m.to_json()) for m in session.misses]
    return report


def _adapters() -> list[SiteAdapter]:
    """The bundled sites' adapters, read from their files without importing the sites (and their data)."""
    from rig.sites.registry import SITE_MODULES

    root = Path(__file__).parent / "sites"
    paths = [root / m / "adapter.yaml" for m in SITE_MODULES]
    if all(p.is_file() for p in paths):
        return [load_adapter(p) for p in paths]
    from rig.record import bundled_adapters

    return bundled_adapters()


def open_frozen(path: Path, tasks: Iterable[Task] = ()) -> FrozenSite:
    """`rig run --frozen SNAPSHOT`: load a site snapshot (one site's directory, or `site_snapshots/` for all),
    checking that it holds every task's site at the task's data version."""
    try:
        for d in snapshot_dirs(path):
            _check_manifest(d)
        frozen = open_snapshot(path)
    except ReplayError as exc:
        raise InputError(str(path), None, str(exc)) from None
    for problem in frozen.index.errors:
        logger.warning(problem)
    held = {m.site: m for m in frozen.manifests}
    for task in tasks:
        m = held.get(task.site)
        if m is None:
            raise InputError("--frozen", None, f"{path} holds {', '.join(sorted(held))}, not {task.site} ({task.id}); "
                                               "pass site_snapshots to use every bundled site")
        if task.data_version not in m.data_version:
            raise InputError("--frozen", None, f"{task.id} needs {task.data_version}; the {m.site} snapshot holds "
                                               f"{', '.join(m.data_version)}: rebuild it with scripts/build_snapshots.py")
    return frozen


def _check_manifest(directory: Path) -> None:
    """A snapshot's manifest must be readable and its names (site, WARC files) must stay inside `directory`."""
    where = directory / MANIFEST
    try:
        m = Manifest.read(directory)
    except (ValueError, TypeError) as exc:
        raise InputError(str(where), None, f"not a snapshot manifest ({exc}); rebuild it with scripts/build_snapshots.py") from None
    if not isinstance(m.site, str) or not SITE_NAME.match(m.site):
        raise InputError(str(where), "site", f"{m.site!r} is not a site name: one plain segment that stays inside "
                                             f"{directory.parent}")
    for w in m.warcs if isinstance(m.warcs, list) else [m.warcs]:
        if not isinstance(w, str) or w in ("", ".", "..") or Path(w).name != w or "\\" in w:
            raise InputError(str(where), "warcs", f"{w!r} must name a file inside the snapshot directory {directory}")


def replay(episode_dir: Path, *, headless: bool = True, timeout_s: float = 10.0) -> ReplayReport:
    """`rig replay`: launch Chromium, re-drive the episode, return the report (exit 0 only when `report.ok`)."""

    async def main() -> ReplayReport:
        async with async_playwright() as pw:
            browser = await launch(pw, headless=headless)
            try:
                return await replay_episode(episode_dir, browser, timeout_s=timeout_s)
            finally:
                await browser.close()

    return asyncio.run(main())


def format_report(report: ReplayReport) -> str:
    """A human summary: matched steps, then one line per mismatch and per miss."""
    lines = [f"{report.matched}/{report.steps} steps matched; {len(report.misses)} replay misses"]
    for m in report.mismatches:
        d = m["diff"]
        parts = []
        if "error" in d:
            parts.append(d["error"])
        if "state" in d:
            parts.append("state " + ", ".join(f"{k}: {v[0]!r} -> {v[1]!r}" for k, v in list(d["state"].items())[:4]))
        parts += [name for name in ("url", "text_hash", "archive_text_hash") if name in d]
        lines.append(f"  step {m['step']}: " + "; ".join(parts))
    lines += [f"  miss: {x['method']} {x['url']}" + (f" (step {x['step']})" if "step" in x else "") for x in report.misses]
    return "\n".join(lines)
