"""Step images: where they come from in a run (`--step-images`), and drawing the ones recorded as DOM snapshots
(`rig render`, and `rig report` and `rig view` before they build: `draw_missing_images`).

- `dom` (the default of `rig run` and `rig record`): nothing is pictured while the agent acts; each step names its
  image (`screens/NNNN.jpg`), and it is drawn later from the step's archived DOM snapshot and resources
  (`replay.render`), with no network: by `rig report` and `rig view` before they build (`draw_missing_images`), or by
  `rig render`. Recording then costs what recording without images costs, and images are drawn only for the episodes
  someone looks at. A step whose page holds a canvas, video or plugin (no DOM shows those) is pictured live at once.
- `live` (the recorder library's default, and `RunConfig`'s): a screenshot of each step, taken while it is the page's
  state (`recorders.screens`); for pages a DOM cannot show throughout.
- `off`: no images.
"""

from __future__ import annotations

import asyncio
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from loguru import logger

from recorders import RecorderOptions
from rig.episode_dir import EpisodeDir, RunsDir, find_episodes
from rig.errors import InputError

StepImages = Literal["live", "dom", "off"]
STEP_IMAGES: tuple[StepImages, ...] = ("live", "dom", "off")
#: `--step-images` of the commands that record (`rig run`, `rig record`) when none is given.
DEFAULT_STEP_IMAGES: StepImages = "dom"


def recorder_options(step_images: StepImages) -> RecorderOptions | None:
    """The recorder options for `--step-images` (None: the recorder's defaults); InputError for another value."""
    if step_images not in STEP_IMAGES:
        raise InputError("--step-images", None, f"{step_images!r}: choose one of {', '.join(STEP_IMAGES)}")
    if step_images == "live":
        return None
    if step_images == "dom":
        return RecorderOptions(screenshot_source="dom")
    return RecorderOptions(screenshots="off")


@dataclass
class EpisodeRender:
    """What `rig render` did for one episode."""

    episode: EpisodeDir
    rendered: int = 0
    present: int = 0  # images already there (pictured live, or rendered before)
    failed: dict[int, str] = field(default_factory=dict)  # step -> why it has no image


def due_images(episode: EpisodeDir, force: bool = False) -> tuple[dict[int, Path], int]:
    """The steps whose own image file is missing (all of them with `force`), by step, and how many are present."""
    due: dict[int, Path] = {}
    present = 0
    for step in episode.steps():
        if not step.screenshot or step.snapshot is None or step.snapshot.dom_record_id is None:
            continue
        path = (episode.path / step.screenshot).resolve()
        if path.parent != episode.screens_dir.resolve() or path.name != f"{step.step:04d}.jpg":
            continue  # the image of an earlier step with the same DOM (or not the recorder's): drawn with that step
        if path.exists() and not force:
            present += 1
        else:
            due[step.step] = path
    return due, present


async def render_episodes(paths: list[Path], *, force: bool = False, jobs: int | None = None,
                          episodes: list[EpisodeDir] | None = None) -> list[EpisodeRender]:
    """Draw the missing step images of the episodes under `paths` (or of `episodes`, where one whose trajectory
    cannot be read is left out) from their DOM snapshots, in one browser sealed off from every server (the archives
    answer every request), `jobs` episodes at a time (default: one per CPU), each in a context of its own; no browser
    is launched when no image is due."""
    todo: list[tuple[EpisodeDir, dict[int, Path], int]] = []
    for episode in episodes if episodes is not None else find_episodes(paths, "render"):
        try:
            todo.append((episode, *due_images(episode, force)))
        except InputError as exc:
            if episodes is None:
                raise
            logger.warning("{}: no step images drawn: {}", episode.path, exc)
    out = [EpisodeRender(episode, present=present) for episode, _, present in todo]
    if not any(due for _, due, _ in todo):
        return out
    from replay.render import render_dom_images  # a run's configuration names these modes without a browser
    from rig.runner.redrive import chromium

    lanes = asyncio.Semaphore(max(1, jobs or os.cpu_count() or 1))

    async def draw(browser: object, result: EpisodeRender, due: dict[int, Path]) -> None:
        if not due:
            return
        if not result.episode.warc_file.is_file():
            result.failed = dict.fromkeys(due, "the episode has no archive")
            return
        async with lanes:
            failed = await render_dom_images(browser, result.episode.warc_file, due)  # type: ignore[arg-type]
        result.failed = {step: why for step, why in failed.items() if why is not None}
        result.rendered = len(due) - len(result.failed)

    async with chromium(archive_only=True) as browser:
        await asyncio.gather(*(draw(browser, result, due) for result, (_, due, _) in zip(out, todo)))
    return out


def draw_missing_images(runs_dir: Path) -> list[EpisodeRender]:
    """Draw the step images a runs directory's episodes still lack (recorded with `--step-images dom`), in parallel and
    archive-only, before a report shows them (`rig report`, `rig view`); images drawn before are kept, so a second
    report draws nothing. A failure is logged, never raised: the report then shows those steps without an image."""
    try:
        episodes = RunsDir(runs_dir).episodes()
        work = render_episodes([], episodes=episodes)
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            results = asyncio.run(work)
        else:  # called from async code: draw on a loop of its own
            with ThreadPoolExecutor(1) as pool:
                results = pool.submit(asyncio.run, work).result()
    except Exception as exc:  # noqa: BLE001 - a report without some images beats no report
        logger.warning("{}: step images not drawn: {}", runs_dir, str(exc).splitlines()[0] if str(exc) else exc)
        return []
    for r in results:
        if r.failed:
            logger.warning("{}: {} step images not drawn ({})", r.episode.path, len(r.failed),
                           "; ".join(sorted(set(r.failed.values()))[:3]))
    drawn = sum(r.rendered for r in results)
    if drawn:
        logger.info("{}: {} step images drawn from the archived DOM snapshots", runs_dir, drawn)
    return results
