"""Step images: where they come from in a run (`--step-images`), and `rig render`, which draws the ones recorded as
DOM snapshots.

- `live` (the default): a screenshot of each step, taken while it is the page's state (`recorders.screens`).
- `dom`: nothing is pictured while the agent acts; each step names its image (`screens/NNNN.jpg`) and `rig render`
  draws it later from the step's archived DOM snapshot and resources (`replay.render`), with no network. Recording
  then costs what recording without images costs, and images are drawn only for the episodes someone looks at.
- `off`: no images.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from recorders import RecorderOptions
from rig.episode_dir import EpisodeDir, find_episodes
from rig.errors import InputError

StepImages = Literal["live", "dom", "off"]
STEP_IMAGES: tuple[StepImages, ...] = ("live", "dom", "off")


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


async def render_episodes(paths: list[Path], *, force: bool = False) -> list[EpisodeRender]:
    """Draw the missing step images of the episodes under `paths` from their DOM snapshots, in one browser."""
    from playwright.async_api import async_playwright  # a run's configuration names these modes without a browser

    from replay.render import render_dom_images
    from rig.browser import launch

    episodes = find_episodes(paths, "render")
    out: list[EpisodeRender] = []
    async with async_playwright() as pw:
        browser = await launch(pw, archive_only=True)
        try:
            for episode in episodes:
                due, present = due_images(episode, force)
                result = EpisodeRender(episode, present=present)
                if due and episode.warc_file.is_file():
                    failed = await render_dom_images(browser, episode.warc_file, due)
                    result.failed = {step: why for step, why in failed.items() if why is not None}
                    result.rendered = len(due) - len(result.failed)
                elif due:
                    result.failed = dict.fromkeys(due, "the episode has no archive")
                out.append(result)
        finally:
            await browser.close()
    return out
