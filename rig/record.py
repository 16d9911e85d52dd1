"""Recording one action script in a fresh browser context: what `rig record` and the scripted agents share."""

from __future__ import annotations

import json
from pathlib import Path

from loguru import logger
from playwright.async_api import Browser, async_playwright
from pydantic import BaseModel

from recorders import Recorder, RecorderOptions, SiteAdapter, load_adapter
from rig.actions import load_script
from rig.agents.scripted import ScriptRunner
from rig.answer import Answer
from rig.browser import launch
from rig.episode import Episode, playwright_version, write_episode
from rig.errors import AgentError, InfraError, InputError
from rig.runner.pageevents import PageEvents


def bundled_adapters() -> list[SiteAdapter]:
    """The adapters of every bundled site."""
    from rig.sites import bundled_sites

    return [load_adapter(site.adapter) for site in bundled_sites()]


def write_answer(out_dir: Path, answer: Answer) -> Path:
    """Write answer.json into an episode directory."""
    path = out_dir / "answer.json"
    path.write_text(json.dumps(answer.model_dump(exclude_none=True), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


async def record_actions(
    browser: Browser,
    actions: list[BaseModel],
    out_dir: Path,
    episode: Episode,
    *,
    base_url: str,
    options: RecorderOptions | None = None,
    adapters: list[SiteAdapter] | None = None,
) -> Episode:
    """Run actions in a new recorded context; write episode.json (first `incomplete`), answer.json and the recording.

    Dialogs, new tabs and downloads are answered and listed in episode.json as in `rig run` (`PageEvents`).
    """
    episode.versions.playwright = playwright_version()
    episode.versions.chromium = browser.version
    write_episode(out_dir, episode)
    context = await browser.new_context()
    rec = await Recorder.attach(context, out_dir, options=options, adapters=adapters if adapters is not None else bundled_adapters())
    events = PageEvents.attach(context, rec, out_dir)  # dialogs answered, downloads saved, both listed in episode.json
    status, error = "ok", None
    try:
        page = await context.new_page()
        runner = ScriptRunner(page, base_url, hook=rec)
        if episode.start_url:
            async with rec.action({"type": "goto", "target": None, "value": episode.start_url}):
                await page.goto(episode.start_url)
        result = await runner.run(actions)
        if result.answer is not None:
            write_answer(out_dir, result.answer)
    except AgentError as exc:
        status, error = "agent_error", str(exc)
    except InfraError as exc:
        status, error = "infra_error", str(exc)
    finally:
        await events.finish()
        await rec.close()
        await context.close()
        events.write_to(episode)
    episode.finish(status, error, rec.steps)
    episode.recording = rec.time
    write_episode(out_dir, episode)
    logger.info("episode {} ended {} after {} steps", out_dir, status, rec.steps)
    return episode


async def record_script(script: Path, out_dir: Path, start_url: str | None = None, headless: bool = True) -> Episode:
    """`rig record`: run one action script in a recorded browser, no task needed."""
    actions = load_script(script)
    first = actions[0] if actions else None
    if start_url is None and not (first is not None and getattr(first, "goto", "").startswith(("http://", "https://"))):
        raise InputError(str(script), "[0]", "without --start-url the script must begin with an absolute `goto`")
    episode = Episode(agent=f"scripted:{script}", start_url=start_url)
    async with async_playwright() as pw:
        browser = await launch(pw, headless=headless)
        try:
            return await record_actions(browser, actions, out_dir, episode, base_url=start_url or first.goto)
        finally:
            await browser.close()
