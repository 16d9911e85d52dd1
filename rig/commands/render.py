"""`rig render RUNS_DIR|EPISODE_DIR...`: draw the step images of episodes recorded with `--step-images dom` from
their archived DOM snapshots and resources (`replay.render`), with no network; images already there are kept."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

import typer

from replay.render import render_dom_images
from rig.commands.console import say
from rig.episode_dir import EpisodeDir, find_episodes
from rig.errors import FOUND
from rig.runner.redrive import chromium


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
    episodes = find_episodes(paths, "render")
    out: list[EpisodeRender] = []
    async with chromium(archive_only=True) as browser:
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
    return out


def render(
    paths: list[Path] = typer.Argument(..., help="runs directories or episode directories"),
    force: bool = typer.Option(False, "--force", help="draw every DOM-snapshot step image again, even those present"),
) -> None:
    """Draw the step images of episodes recorded with `--step-images dom` from their archived DOM snapshots (no
    network); images already present are kept.

    Exit 1 when an image could not be drawn."""
    failed = 0
    for r in asyncio.run(render_episodes(paths, force=force)):
        line = f"{r.episode.path}: {r.rendered} drawn, {r.present} present"
        if r.failed:
            failed += len(r.failed)
            line += f", {len(r.failed)} not drawn ({'; '.join(sorted(set(r.failed.values()))[:3])})"
        say(line)
    if failed:
        raise typer.Exit(FOUND)
