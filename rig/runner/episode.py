"""Running one episode: a recorded context, the agent under its budgets, retries of infrastructure failures."""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from loguru import logger
from playwright.async_api import BrowserContext
from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_attempt, wait_fixed

from recorders import Recorder, RecorderOptions, SiteAdapter
from rig.agents.base import Agent, Budget, EpisodeEnv
from rig.answer import Answer
from rig.episode import Episode, playwright_version, write_episode
from rig.errors import AgentError, BrowserCrashed, InfraError, InputError
from rig.record import write_answer
from rig.runner.browsers import BrowserPool
from rig.runner.budget import BudgetExceeded, supervise
from rig.runner.hosts import HostGuard
from rig.runner.pageevents import PageEvents
from rig.runner.spec import EpisodeSpec

ATTEMPTS_DIR = "attempts"
#: How long closing the recorder may take before the context's pages are closed under it.
CLOSE_S = 20.0


class _Infra(Exception):
    """An attempt failed for infrastructure reasons; retried."""

    def __init__(self, error: InfraError) -> None:
        super().__init__(str(error))
        self.error = error


async def run_episode(
    spec: EpisodeSpec,
    agent: Agent,
    pool: BrowserPool,
    runs_dir: Path,
    *,
    sites_url: str,
    budget: Budget,
    adapters: list[SiteAdapter],
    options: RecorderOptions | None = None,
    attempts: int = 3,
    frozen: Any = None,
    allow_hosts: list[str] | None = None,
) -> Episode:
    """Run one episode into its directory; infrastructure failures are retried and never scored as the agent's.

    With `allow_hosts` (a live run), requests to hosts other than those and the sites server are aborted.
    """
    out_dir = spec.directory(runs_dir)
    episode = Episode(
        task_id=spec.task.id, variant=spec.variant, agent=agent.name, model=agent.model, trial=spec.trial,
        prompt=spec.task.prompt(spec.variant), start_url=sites_url.rstrip("/") + spec.task.start_path,
        injected_fault=getattr(agent, "injected_fault", None), task_path=_task_path(spec),
    )
    allowed = None
    if allow_hosts is not None and frozen is None:  # a frozen run reaches no network at all
        allowed = sorted({*allow_hosts, *_site_hosts(sites_url)})
        episode.allowed_hosts = allowed
    attempt_no = 0
    try:
        async for attempt in AsyncRetrying(
            retry=retry_if_exception_type(_Infra), stop=stop_after_attempt(attempts), wait=wait_fixed(0.5), reraise=True
        ):
            with attempt:
                attempt_no += 1
                if attempt_no > 1:
                    _keep_failed_attempt(out_dir, attempt_no - 1)
                    logger.warning("{}: retrying after an infrastructure failure (attempt {})", spec.label, attempt_no)
                await _attempt(spec, agent, pool, out_dir, episode, sites_url, budget, adapters, options, frozen, allowed)
    except _Infra as exc:
        episode.finish("infra_error", str(exc.error), episode.steps)
    episode.attempts = attempt_no
    write_episode(out_dir, episode)
    return episode


def _site_hosts(sites_url: str) -> list[str]:
    """The sites server's `host:port` (always allowed: the task starts there)."""
    parts = urlsplit(sites_url)
    host = parts.hostname or ""
    return [f"{host}:{parts.port or (443 if parts.scheme == 'https' else 80)}"] if host else []


def _task_path(spec: EpisodeSpec) -> str | None:
    """The task file, for tasks that are not bundled (so grading can find them)."""
    from rig.tasks.loader import BUNDLED_DIR

    source = spec.task.source
    return source if source and BUNDLED_DIR.resolve() not in Path(source).parents else None


def _keep_failed_attempt(out_dir: Path, n: int) -> None:
    """Move a failed attempt's files under attempts/<n>/ so nothing recorded is lost."""
    keep = out_dir / ATTEMPTS_DIR / str(n)
    keep.mkdir(parents=True, exist_ok=True)
    for child in list(out_dir.iterdir()):
        if child.name != ATTEMPTS_DIR:
            shutil.move(str(child), keep / child.name)


async def _attempt(
    spec: EpisodeSpec, agent: Agent, pool: BrowserPool, out_dir: Path, episode: Episode, sites_url: str,
    budget: Budget, adapters: list[SiteAdapter], options: RecorderOptions | None, frozen: Any,
    allowed: list[str] | None,
) -> None:
    episode.status, episode.error, episode.ended_at = "incomplete", None, None
    episode.versions.playwright = playwright_version()
    write_episode(out_dir, episode)
    rec: Recorder | None = None
    events: PageEvents | None = None
    guard = HostGuard(allowed) if allowed is not None else None
    try:
        async with pool.context(agent.needs_cdp) as (context, cdp_url, browser):
            episode.versions.chromium = browser.version if browser is not None else None
            session = await frozen.attach(context) if frozen is not None else None
            if guard is not None:
                await guard.attach(context)
            rec = await Recorder.attach(context, out_dir, options=options, adapters=adapters)
            events = PageEvents.attach(context, rec, out_dir)
            if guard is not None:
                guard.redact = rec.redactor.url
            page = context.pages[0] if context.pages else await context.new_page()
            async with rec.action({"type": "goto", "target": None, "value": episode.start_url}):
                await page.goto(episode.start_url, timeout=30_000)
            env = EpisodeEnv(
                task=spec.task, variant=spec.variant, prompt=episode.prompt or "", start_url=episode.start_url or "",
                sites_url=sites_url, context=context, page=page, recorder=rec, out_dir=out_dir, budget=budget,
                cdp_url=cdp_url, console=sys.stdout,
            )
            status, error = await _drive(agent, env, rec, budget, browser)
            await events.finish()
            await _close_bounded(rec, context)
            episode.finish(status, rec.redactor.url(error) if error else None, rec.steps)
            episode.recording = rec.time
            if session is not None:
                episode.frozen = ", ".join(frozen.sites)
                episode.replay_misses = session.miss_count
    except InfraError as exc:
        await _close(rec)
        episode.steps = rec.steps if rec else 0
        raise _Infra(type(exc)(_redacted(rec, str(exc)))) from None
    except Exception as exc:  # Playwright failing outside the agent (context, navigation to our own server)
        await _close(rec)
        episode.steps = rec.steps if rec else 0
        raise _Infra(InfraError(_redacted(rec, f"{type(exc).__name__}: {exc}"))) from None
    finally:
        if guard is not None:
            episode.blocked_requests, episode.blocked_urls = guard.blocked, guard.urls
        if events is not None:
            events.write_to(episode)
    logger.info("{}: {} ({} steps){}", spec.label, episode.status, episode.steps, f": {episode.error}" if episode.error else "")


async def _drive(agent: Agent, env: EpisodeEnv, rec: Recorder, budget: Budget, browser) -> tuple[str, str | None]:
    """Run the agent under its budgets; map the outcome to an episode status."""
    from rig.grading.parse import ParseFailure

    try:
        answer = await supervise(agent.run(env), budget, lambda: rec.steps)
    except BudgetExceeded as exc:
        return exc.status, str(exc)
    except ParseFailure as exc:
        return "parse_failure", str(exc)
    except InfraError:
        raise
    except Exception as exc:  # anything else the agent raised is the agent's failure, unless the browser died
        if browser is not None and not browser.is_connected():
            raise BrowserCrashed(f"the browser died during the episode ({exc})") from None
        return "agent_error", str(exc) if isinstance(exc, (AgentError, InputError)) else f"{type(exc).__name__}: {exc}"
    if browser is not None and not browser.is_connected():
        raise BrowserCrashed("the browser died during the episode")
    if answer is None:
        return "agent_error", "the agent gave no answer"
    write_answer(env.out_dir, _redacted_answer(answer, rec))
    return "ok", None


def _redacted_answer(answer: Answer, rec: Recorder) -> Answer:
    """The answer as the archive knows it: citation URLs and excerpts, and cells, redacted like every artifact
    (a URL the agent cites keeps matching the redacted URL the archive recorded)."""
    r = rec.redactor
    return answer.model_copy(update={
        "rows": [[r.text(c) for c in row] for row in answer.rows],
        "citations": [c.model_copy(update={"url": r.url(c.url), "excerpt": r.text(c.excerpt)}) for c in answer.citations],
    })


def _redacted(rec: Recorder | None, message: str) -> str:
    """An error message with the episode's secrets (tokens in URLs, typed passwords) redacted."""
    return rec.redactor.url(message) if rec is not None else message


async def _close_bounded(rec: Recorder, context: BrowserContext) -> None:
    """Close the recorder; if a page never answers (an endless run of dialogs), close the pages under it so the
    recorder still finishes its files."""
    closing = asyncio.ensure_future(rec.close())
    await asyncio.wait({closing}, timeout=CLOSE_S)
    if not closing.done():
        logger.warning("the recorder did not close within {:g} s: closing the pages under it", CLOSE_S)
        for page in context.pages:
            try:
                await asyncio.wait_for(page.close(), 5)
            except Exception as exc:  # the page or browser is gone: nothing left to close
                logger.debug("closing a page under the recorder: {}", exc)
        await asyncio.wait({closing}, timeout=CLOSE_S)
    if not closing.done():
        closing.cancel()
        raise InfraError(f"the recorder did not close within {2 * CLOSE_S:g} s")
    closing.result()


async def _close(rec: Recorder | None) -> None:
    if rec is not None:
        try:
            await rec.close()
        except Exception as exc:  # the archive keeps every complete record even if closing fails
            logger.debug("recorder close after failure: {}", exc)
