"""`rig replay EPISODE_DIR`: re-drive an episode's recorded actions against its own archive (`replay.redrive`),
capturing each replayed state with the recorder exactly as during recording (screenshots and DOM snapshots off)."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from loguru import logger
from playwright.async_api import Browser, async_playwright

from recorders import Recorder, RecorderOptions
from replay import REPLAY_CONTEXT_OPTIONS, ReplayError, attach_replay
from replay.index import ArchiveIndex
from replay.redrive import RECHECKS, redrive
from replay.report import RecordedStep, ReplayReport, read_recorded_steps
from rig.browser import launch
from rig.episode_dir import EpisodeDir
from rig.errors import InputError
from rig.sites import bundled_adapters


def load_episode(episode_dir: Path) -> tuple[ArchiveIndex, list[RecordedStep]]:
    """The archive and the recorded steps to replay; InputError, before any browser starts, when there is nothing to
    replay (no or an empty trajectory or archive)."""
    ed = EpisodeDir(episode_dir)
    for path in (ed.trajectory_file, ed.warc_file):
        if not path.is_file():
            raise InputError(str(ed.path), path.name, "missing: not an episode directory (see `rig record`)")
    index = ed.archive(strict=False)
    for problem in index.errors:
        logger.warning(problem)
    if index.records == 0:
        raise InputError(str(ed.warc_file), None, "holds no WARC record: there is nothing to replay against")
    try:
        steps = read_recorded_steps(ed.trajectory_file)
    except ReplayError as exc:
        raise InputError(str(ed.trajectory_file), None, str(exc).removeprefix(f"{ed.trajectory_file}: ")) from None
    if not steps:
        raise InputError(str(ed.trajectory_file), None, "holds no step: there is nothing to replay")
    return index, steps


async def replay_episode(episode_dir: Path, browser: Browser, *, timeout_s: float = 10.0,
                         rechecks: int = RECHECKS,
                         loaded: tuple[ArchiveIndex, list[RecordedStep]] | None = None) -> ReplayReport:
    """Re-drive an episode's actions in `browser` against its archive (`loaded`: from `load_episode`); compare
    every step."""
    index, steps = loaded if loaded is not None else await asyncio.to_thread(load_episode, episode_dir)
    options = RecorderOptions(screenshots="off", dom_snapshot=False, record_text=False, fsync=False)
    with tempfile.TemporaryDirectory(prefix="rig-replay-") as scratch:
        context = await browser.new_context(**REPLAY_CONTEXT_OPTIONS)
        try:
            session = await attach_replay(context, index)
            rec = await Recorder.attach(context, scratch, options=options, adapters=bundled_adapters())
            report = await redrive(steps, context, session, rec, archive_texts=index.step_text, timeout_s=timeout_s,
                                   rechecks=rechecks)
            await rec.close()
        finally:
            await context.close()
    return report


def replay(episode_dir: Path, *, headless: bool = True, timeout_s: float = 10.0) -> ReplayReport:
    """`rig replay`: launch Chromium, re-drive the episode, return the report (exit 0 only when `report.ok`)."""

    loaded = load_episode(episode_dir)  # fail fast, before a browser starts

    async def main() -> ReplayReport:
        async with async_playwright() as pw:
            browser = await launch(pw, headless=headless, archive_only=True)
            try:
                return await replay_episode(episode_dir, browser, timeout_s=timeout_s, loaded=loaded)
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
