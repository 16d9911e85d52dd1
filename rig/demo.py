"""`rig demo`: the main job on the bundled sites, offline, with no API key."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path

from loguru import logger
from playwright.async_api import async_playwright
from rich.progress import Progress

from rig.agents.reference import gold_mismatch, run_reference
from rig.browser import launch
from rig.errors import RigError
from rig.sites import SitesServer
from rig.tasks import bundled_tasks
from rig.tasks.models import Task


@dataclass
class Reproduction:
    """Whether one task's reference solution reproduced its gold table in the live site."""

    task: Task
    ok: bool
    rows: int
    seconds: float
    detail: str


async def reproduce_all(tasks: list[Task], base_url: str, progress: Progress | None = None) -> list[Reproduction]:
    """Run every task's reference solution in real Chromium and compare with its gold table."""
    out: list[Reproduction] = []
    bar = progress.add_task("reference solutions", total=len(tasks)) if progress else None
    async with async_playwright() as pw:
        browser = await launch(pw)
        try:
            for task in tasks:
                t0 = time.monotonic()
                ctx = await browser.new_context()
                try:
                    answer = await run_reference(task, await ctx.new_page(), base_url)
                    detail = gold_mismatch(task, answer)
                    out.append(Reproduction(task, detail is None, len(answer.rows), time.monotonic() - t0, detail or ""))
                except RigError as exc:
                    out.append(Reproduction(task, False, 0, time.monotonic() - t0, str(exc)))
                finally:
                    await ctx.close()
                logger.debug("{}: {}", task.id, "reproduced" if out[-1].ok else out[-1].detail)
                if progress is not None:
                    progress.advance(bar)
        finally:
            await browser.close()
    return out


def run_demo(out_dir: Path, progress: Progress | None = None) -> list[Reproduction]:
    """Serve the bundled sites and reproduce every bundled task's gold answer through them."""
    out_dir.mkdir(parents=True, exist_ok=True)
    tasks = bundled_tasks()
    with SitesServer() as srv:
        logger.info("bundled sites at {}", srv.url)
        return asyncio.run(reproduce_all(tasks, srv.url, progress))
