"""`rig record --script FILE --out EPISODE_DIR`: one action script in a recorded browser, no task needed
(`rig.runner.record`)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Optional

import typer

from rig.commands.console import say
from rig.commands.options import (
    Headed,
    IgnoreHttpsErrors,
    Live,
    MaxPerHost,
    RateLimit,
    Resolve,
    StepImagesOption,
    politeness,
)
from rig.errors import FOUND, INFRA
from rig.formats.episode import Episode
from rig.network.settings import Network
from rig.runner.record import record_script
from rig.runner.step_images import DEFAULT_STEP_IMAGES, recorder_options


def record_episode(script: Path, out_dir: Path, start_url: str | None = None, *, headless: bool = True,
                   network: Network | None = None, step_images: str = "live") -> Episode:
    """Record one action script into `out_dir`; the episode record."""
    options = recorder_options(step_images)  # type: ignore[arg-type]
    return asyncio.run(record_script(script, out_dir, start_url, headless=headless, network=network, options=options))


def record(
    script: Path = typer.Option(..., "--script", help="action script (YAML or JSON)"),
    out_dir: Path = typer.Option(..., "--out", help="episode directory to write"),
    start_url: Optional[str] = typer.Option(None, "--start-url", help="open this first; relative gotos resolve against it"),
    headed: Headed = False,
    live: Live = False,
    resolve: Resolve = None,
    ignore_https_errors: IgnoreHttpsErrors = False,
    rate_limit: RateLimit = 4.0,
    max_per_host: MaxPerHost = 4,
    step_images: StepImagesOption = DEFAULT_STEP_IMAGES,
) -> None:
    """Run one action script in a recorded browser; write an episode directory.

    Exit 1 when the script failed (the episode is kept), 3 when the browser or a server did."""
    network = Network.of(live, resolve or [], ignore_https_errors, politeness(rate_limit, max_per_host))
    episode = record_episode(script, out_dir, start_url, headless=not headed, network=network, step_images=step_images)
    say(f"{out_dir}: {episode.status}, {episode.steps} steps" + (f" ({episode.error})" if episode.error else ""))
    if episode.status != "ok":
        raise typer.Exit(INFRA if episode.status == "infra_error" else FOUND)
