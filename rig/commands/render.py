"""`rig render RUNS_DIR|EPISODE_DIR...`: draw the step images of episodes recorded with `--step-images dom` from
their archived DOM snapshots and resources (`replay.render`), with no network; images already there are kept."""

from __future__ import annotations

import asyncio
from pathlib import Path

import typer

from rig.commands.console import say
from rig.errors import FOUND
from rig.runner.step_images import render_episodes


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
