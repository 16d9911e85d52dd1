"""`rig replay EPISODE_DIR`: re-drive an episode's recorded actions against its own archive (`replay.redrive`),
capturing each replayed state with the recorder exactly as during recording (screenshots and DOM snapshots off), in
a scratch recording (`rig.runner.redrive`)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import typer
from playwright.async_api import Browser

from recorders import RecorderOptions
from replay import REPLAY_CONTEXT_OPTIONS, attach_replay
from replay.index import ArchiveIndex
from replay.redrive import RECHECKS, redrive
from replay.report import RecordedStep, ReplayReport
from rig.commands.console import say
from rig.commands.options import AsJson, Headed
from rig.errors import FOUND
from rig.runner.redrive import chromium, recorded_episode, scratch_recording

#: What the replayed states are captured with: their state and hashes, no images, no page texts.
REPLAY_RECORDING = RecorderOptions(screenshots="off", dom_snapshot=False, record_text=False, fsync=False)


async def replay_episode(episode_dir: Path, browser: Browser, *, timeout_s: float = 10.0,
                         rechecks: int = RECHECKS,
                         loaded: tuple[ArchiveIndex, list[RecordedStep]] | None = None) -> ReplayReport:
    """Re-drive an episode's actions in `browser` against its archive (`loaded`: from `recorded_episode`); compare
    every step."""
    index, steps = loaded if loaded is not None else await asyncio.to_thread(recorded_episode, episode_dir)
    async with scratch_recording(browser, REPLAY_RECORDING, context_options=REPLAY_CONTEXT_OPTIONS,
                                 prepare=lambda context: attach_replay(context, index)) as scratch:
        return await redrive(steps, scratch.context, scratch.prepared, scratch.recorder, archive_texts=index.step_text,
                             timeout_s=timeout_s, rechecks=rechecks)


def replay(episode_dir: Path, *, headless: bool = True, timeout_s: float = 10.0) -> ReplayReport:
    """`rig replay`: launch Chromium, re-drive the episode, return the report (exit 0 only when `report.ok`)."""
    loaded = recorded_episode(episode_dir)  # fail fast, before a browser starts

    async def main() -> ReplayReport:
        async with chromium(headless=headless, archive_only=True) as browser:
            return await replay_episode(episode_dir, browser, timeout_s=timeout_s, loaded=loaded)

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


def replay_command(
    episode_dir: Path = typer.Argument(..., help="an episode directory"),
    as_json: AsJson = False,
    headed: Headed = False,
) -> None:
    """Re-drive the recorded actions against the episode's own archive (no network); exit 0 when every step matched."""
    report = replay(episode_dir, headless=not headed)
    if as_json:
        sys.stdout.write(json.dumps(report.to_json()) + "\n")
    else:
        say(format_report(report))
    if not report.ok:
        raise typer.Exit(FOUND)
