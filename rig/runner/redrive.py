"""Re-driving what was recorded, outside a run (`rig replay`, `rig drift`, `rig render`).

- `recorded_episode`: an episode's archive and recorded steps, loaded (InputError for nothing to re-drive) before
  any browser starts;
- `chromium`: Playwright and Chromium for one command, with the rig's launch flags, both closed after;
- `scratch_recording`: a context, a recorder writing into a temporary archive, and that archive read back when
  the block ends; the context and the archive are gone afterwards. `rig replay` records the replayed states in one,
  `rig drift` the live ones.
"""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loguru import logger
from playwright.async_api import Browser, BrowserContext, async_playwright

from recorders import Recorder, RecorderOptions
from replay import ReplayError
from replay.index import ArchiveIndex, load_index
from replay.report import RecordedStep, read_recorded_steps
from rig.browser import launch
from rig.episode_dir import EpisodeDir
from rig.errors import InputError
from rig.sites import bundled_adapters


def recorded_episode(episode_dir: Path) -> tuple[ArchiveIndex, list[RecordedStep]]:
    """The archive and the recorded steps to re-drive; InputError, before any browser starts, when there is nothing
    to re-drive (no or an empty trajectory or archive)."""
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


@asynccontextmanager
async def chromium(*, headless: bool = True, **flags: Any) -> AsyncIterator[Browser]:
    """Chromium launched with the rig's flags (`rig.browser.launch`: `archive_only`, `local_only`, `resolve`);
    Playwright and the browser are closed when the block ends."""
    async with async_playwright() as pw:
        browser = await launch(pw, headless=headless, **flags)
        try:
            yield browser
        finally:
            await browser.close()


@dataclass
class ScratchRecording:
    """A context being recorded into a temporary archive: `prepared` is what `prepare` returned; `archive`, the
    archive read back (page texts included) once the block has ended."""

    context: BrowserContext
    recorder: Recorder
    prepared: Any = None
    archive: ArchiveIndex | None = None


@asynccontextmanager
async def scratch_recording(browser: Browser, options: RecorderOptions, *,
                            context_options: Mapping[str, Any] | None = None,
                            prepare: Callable[[BrowserContext], Awaitable[Any]] | None = None,
                            read_back: bool = False) -> AsyncIterator[ScratchRecording]:
    """A new context of `browser` (`context_options`; `prepare` runs on it before the recorder attaches, e.g. to
    route it), recorded with `options` into a temporary archive; the recorder is closed when the block ends, the
    archive read back into `archive` (with `read_back`), and the context closed."""
    with tempfile.TemporaryDirectory(prefix="rig-scratch-") as scratch:
        context = await browser.new_context(**(context_options or {}))
        try:
            prepared = await prepare(context) if prepare is not None else None
            rec = await Recorder.attach(context, scratch, options=options, adapters=bundled_adapters())
            recording = ScratchRecording(context, rec, prepared)
            yield recording
            await rec.close()
        finally:
            await context.close()
        if read_back:
            recording.archive = load_index(rec.warc_path, texts=True)
