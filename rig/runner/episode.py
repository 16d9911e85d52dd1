"""Running one episode: a recorded context, the agent under its budgets, retries of infrastructure failures."""

from __future__ import annotations

import asyncio
import sys
import time
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TextIO

from loguru import logger
from playwright.async_api import Browser, BrowserContext, Page
from playwright.async_api import Error as PlaywrightError

from recorders import Action, Recorder, RecorderOptions, SiteAdapter
from replay import FrozenSite
from rig.agents.base import Agent, Budget, EpisodeEnv
from rig.agents.usage import UsageMeter
from rig.episode_dir import EpisodeDir
from rig.errors import AgentError, BrowserCrashed, InfraError, InputError
from rig.formats.answer import Answer
from rig.formats.answer_text import ParseFailure
from rig.formats.episode import Episode, PolitenessRecord, Status
from rig.formats.task import Task
from rig.formats.usage import PriceTable
from rig.network.failures import SiteUnreachable, failure_reason, is_site_failure
from rig.network.guard import NetworkGuard
from rig.network.policy import Policy, episode_policy
from rig.network.politeness import PoliteGate, Politeness, polite_goto
from rig.pricing import load_prices
from rig.runner.adapters import episode_adapters
from rig.runner.browsers import BrowserPool
from rig.runner.budget import BudgetExceeded, supervise
from rig.runner.pageevents import PageEvents
from rig.runner.retry import AttemptFailed, RetryPolicy, attempts
from rig.runner.spec import EpisodeSpec
from rig.tasks.loader import BUNDLED_DIR

#: How long closing the recorder may take before the context's pages are closed under it.
CLOSE_S = 20.0


@dataclass
class EpisodeContext:
    """The parts an episode runs with, injected by its executor (shared by every episode of a run)."""

    pool: BrowserPool
    #: The sites server (or, for `rig record`, the script's base URL): relative URLs resolve against it.
    sites_url: str
    budget: Budget = field(default_factory=Budget)
    adapters: list[SiteAdapter] = field(default_factory=list)
    options: RecorderOptions | None = None
    frozen: FrozenSite | None = None
    #: A run's host allow-list (each episode's start and task hosts are added); None: no allow-list.
    allow_hosts: list[str] | None = None
    #: How infrastructure failures are retried (`rig run --retry-infra N`: N retries).
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    #: The price table costs are computed with (None: `rig.pricing.load_prices()`).
    prices: PriceTable | None = None
    console: TextIO | None = None


def playwright_version() -> str | None:
    """The installed Playwright package version."""
    try:
        return version("playwright")
    except PackageNotFoundError:  # pragma: no cover
        return None


async def run_episode(spec: EpisodeSpec, agent: Agent, directory: EpisodeDir, ctx: EpisodeContext) -> Episode:
    """Run one episode into its directory; infrastructure failures are retried as `ctx.retry` says (each failed
    attempt kept under `attempts/<n>/`, rig.runner.retry) and never scored as the agent's."""
    task = spec.task
    hidden = task is not None and task.start_hidden
    start_url = "about:blank" if hidden else spec.start(ctx.sites_url)  # a hidden start: the agent finds the site
    network = ctx.pool.network
    episode = Episode(
        task_id=task.id if task else None, variant=spec.variant, agent=agent.name, model=agent.model, trial=spec.trial,
        prompt=task.prompt(spec.variant) if task and spec.variant else None, start_url=start_url,
        sites_url=ctx.sites_url if task is not None else None,  # `rig record`'s base URL is no sites server
        injected_fault=getattr(agent, "injected_fault", None), task_path=_task_path(task), start_hidden=hidden,
        live=network.live, resolve=network.resolve_values, ignore_https_errors=network.ignore_https_errors,
        task_revision=task.grading_revision if task is not None else None,
    )
    policy = None
    if ctx.frozen is None and network.guarded(ctx.allow_hosts):  # a frozen run reaches no network at all
        # the episode's own hosts: its start page (a recording's base URL too) and its task's origins
        own = [spec.start(ctx.sites_url), ctx.sites_url if task is None else None]
        policy = episode_policy(network.live, network.resolve, ctx.allow_hosts, task, own)
        episode.allowed_hosts = sorted(policy.allowed) if policy.allowed is not None else None
    prices = ctx.prices or load_prices()
    episode.attempts, failure = await attempts(lambda: _attempt(spec, agent, directory, episode, ctx, policy, prices),
                                               directory, ctx.retry, spec.label)
    if failure is not None:
        episode.finish("infra_error", str(failure), episode.steps)
    directory.write_episode(episode)
    return episode


def _script_base(task: Task | None, sites_url: str) -> str:
    """Where relative URLs of the agent's scripts resolve: a start_url task's start page, else the sites server."""
    return task.start_url if task is not None and task.start_url is not None else sites_url


def _site_is_theirs(task: Task | None) -> bool:
    """Whether the episode starts on a site the rig does not serve (a start_url task's, a recording's)."""
    return task is None or task.start_url is not None


def _task_path(task: Task | None) -> str | None:
    """The task file, for tasks that are not bundled (so grading can find them)."""
    source = task.source if task else None
    return source if source and BUNDLED_DIR.resolve() not in Path(source).parents else None


async def _attempt(spec: EpisodeSpec, agent: Agent, directory: EpisodeDir, episode: Episode, ctx: EpisodeContext,
                   policy: Policy | None, prices: PriceTable) -> None:
    """One attempt of the episode; AttemptFailed (its episode.json written as `infra_error`, its usage with it) when
    the infrastructure failed it."""
    episode.status, episode.error, episode.ended_at, episode.usage = "incomplete", None, None, None
    episode.versions.playwright = playwright_version()
    episode.versions.browser_use = getattr(agent, "software", {}).get("browser_use")
    directory.write_episode(episode)
    out_dir = directory.path
    began = time.monotonic()
    meter = UsageMeter()
    rec: Recorder | None = None
    events: PageEvents | None = None
    guard = NetworkGuard(policy) if policy is not None else None
    politeness = ctx.pool.network.politeness if ctx.frozen is None else None
    gate: PoliteGate | None = None
    failure: InfraError | None = None
    done_at: float | None = None  # when the agent's part ended (closing the recorder is the rig's time)
    try:
        if guard is not None:
            await guard.start()
        proxy = guard.proxy_option if guard is not None else None
        async with ctx.pool.context(agent.needs_cdp, proxy) as (context, cdp_url, browser):
            episode.versions.chromium = await chromium_version(context, browser)
            context.on("request", lambda _: meter.tick())  # a browser loading something is alive (--stall-timeout)
            session = await ctx.frozen.attach(context) if ctx.frozen is not None else None
            if politeness is not None:  # routed before the allow-list (the last route registered runs first)
                gate = await PoliteGate(politeness, ctx.pool.user_agent).attach(context)
            if guard is not None:
                await guard.attach(context)
            rec = await Recorder.attach(context, out_dir, options=ctx.options,
                                        adapters=episode_adapters(spec.task, ctx.adapters))
            events = PageEvents.attach(context, rec, directory)
            if guard is not None:
                guard.redact = rec.redactor.url
            page = context.pages[0] if context.pages else await context.new_page()
            record = gate.record if gate is not None else None
            unreachable = None
            deadline = time.monotonic() + ctx.budget.timeout_s  # the start page and the agent share the budget
            if episode.start_url and episode.start_url != "about:blank":
                async with rec.action(Action(type="goto", value=episode.start_url)):
                    unreachable = await _open_start(page, episode.start_url, politeness, record, deadline,
                                                    site_is_live=episode.live and _site_is_theirs(spec.task), guard=guard)
            env = EpisodeEnv(
                task=spec.task, variant=spec.variant, prompt=episode.prompt or "", start_url=episode.start_url or "",
                sites_url=ctx.sites_url, context=context, page=page, recorder=rec, out_dir=out_dir, budget=ctx.budget,
                cdp_url=cdp_url, console=ctx.console or sys.stdout, base_url=_script_base(spec.task, ctx.sites_url),
                politeness=politeness, politeness_record=record, network_guard=guard, usage=meter,
            )
            if unreachable is not None:
                status, error = "site_unreachable", unreachable
            else:
                status, error = await _drive(agent, env, browser, events, started=deadline - ctx.budget.timeout_s)
            done_at = time.monotonic()
            await events.finish()
            await _close_bounded(rec, context)
            episode.finish(status, rec.redactor.url(error) if error else None, rec.steps)
            episode.recording = rec.time
            episode.missing_bodies = rec.missing_bodies
            if session is not None and ctx.frozen is not None:
                episode.frozen = ", ".join(ctx.frozen.sites)
                episode.replay_misses = session.miss_count
    except InfraError as exc:
        await _close(rec)
        failure = type(exc)(_redacted(rec, str(exc)))
    except Exception as exc:  # Playwright failing outside the agent (context, navigation to our own server)
        await _close(rec)
        failure = InfraError(_redacted(rec, f"{type(exc).__name__}: {exc}"))
    finally:
        if guard is not None:
            await guard.close()
            episode.blocked_requests, episode.blocked_urls, episode.blocked = guard.blocked, guard.urls, guard.records
            episode.refused_connections = guard.proxy.refused
        if gate is not None:
            episode.politeness = gate.record
        if events is not None:
            events.write_to(episode)
        episode.usage = meter.usage(prices, steps=rec.steps if rec else 0, wall_s=(done_at or time.monotonic()) - began)
    if failure is not None:
        episode.finish("infra_error", str(failure), rec.steps if rec else 0)
        directory.write_episode(episode)  # the failed attempt's own record, kept with its files
        logger.warning("{}: infrastructure failure: {}", spec.label, failure)
        raise AttemptFailed(failure)
    logger.info("{}: {} ({} steps){}", spec.label, episode.status, episode.steps, f": {episode.error}" if episode.error else "")


async def chromium_version(context: BrowserContext, browser: Browser | None) -> str | None:
    """The running browser's version: Playwright's, or for a browser of its own (a CDP driver's persistent context,
    which Playwright gives no `Browser`), Chromium's own answer over CDP."""
    if browser is not None:
        return browser.version
    try:
        cdp = await context.new_cdp_session(context.pages[0] if context.pages else await context.new_page())
        product = str((await cdp.send("Browser.getVersion")).get("product", ""))
        await cdp.detach()
    except PlaywrightError as exc:  # the version is provenance, not a reason to fail the episode
        logger.debug("could not read the browser's version over CDP: {}", exc)
        return None
    return product.partition("/")[2] or product or None


async def _open_start(page: Page, url: str, politeness: Politeness | None, record: PolitenessRecord | None,
                      deadline: float, site_is_live: bool, guard: NetworkGuard | None) -> str | None:
    """Open the episode's start page within the episode's budget. A live site's page that does not load (a timeout,
    DNS, refused, TLS, no time left) is the site's failure: why, in words (status `site_unreachable`); the rig's own
    failures (its proxy, its browser, its sites server) raise, as infrastructure."""
    try:
        await polite_goto(page, url, politeness, record, deadline=deadline)
    except SiteUnreachable as exc:
        if not site_is_live:
            raise InfraError(str(exc)) from None
        return str(exc)
    except PlaywrightError as exc:
        if not (site_is_live and is_site_failure(exc)):
            raise
        timeout_s = max(0.0, min(30.0, deadline - time.monotonic()))
        return f"{url}: {failure_reason(exc, timeout_s, guard.failure(url) if guard is not None else None)}"
    return None


async def _drive(agent: Agent, env: EpisodeEnv, browser: Browser | None, events: PageEvents,
                 started: float) -> tuple[Status, str | None]:
    """Run the agent under its budgets (the wall-clock one counted from `started`, before the start page); map the
    outcome to an episode status. A task-less episode (`rig record`) needs no answer. A failure after the browser
    or one of its tabs crashed is the infrastructure's (BrowserCrashed), as is a hung episode (EpisodeHung)."""
    rec = env.recorder
    try:
        answer = await supervise(agent.run(env), env.budget, lambda: rec.steps, started=started,
                                 activity=env.usage.activity, capturing=lambda: rec.capturing)
    except BudgetExceeded as exc:
        _raise_if_crashed(browser, events, exc)
        return exc.status, str(exc)
    except ParseFailure as exc:
        return "parse_failure", str(exc)
    except InfraError:
        raise
    except Exception as exc:  # anything else the agent raised is the agent's failure, unless the browser died
        _raise_if_crashed(browser, events, exc)
        return "agent_error", str(exc) if isinstance(exc, (AgentError, InputError)) else f"{type(exc).__name__}: {exc}"
    if browser is not None and not browser.is_connected():
        raise BrowserCrashed("the browser died during the episode")
    if answer is None:
        if env.task is not None:
            _raise_if_crashed(browser, events, None)
        return ("ok", None) if env.task is None else ("agent_error", "the agent gave no answer")
    EpisodeDir(env.out_dir).write_answer(_redacted_answer(answer, rec))
    return "ok", None


def _raise_if_crashed(browser: Browser | None, events: PageEvents, exc: BaseException | None) -> None:
    """BrowserCrashed when the browser died or a tab's renderer crashed: the agent's failure then is not its own."""
    why = f" ({exc})" if exc is not None else ""
    if browser is not None and not browser.is_connected():
        raise BrowserCrashed(f"the browser died during the episode{why}") from None
    if events.crashed:
        tabs = ", ".join(str(t) for t in events.crashed)
        raise BrowserCrashed(f"a tab crashed during the episode (tab {tabs}: its renderer process died){why}") from None


def _redacted_answer(answer: Answer, rec: Recorder) -> Answer:
    """The answer as the archive knows it: citation URLs and excerpts, and cells, redacted like every artifact
    (a URL the agent cites keeps matching the redacted URL the archive recorded)."""
    r = rec.redactor
    return answer.model_copy(update={
        "rows": [[r.text(c) for c in row] for row in answer.rows],
        "citations": [c.model_copy(update={
            "url": r.url(c.url), "excerpt": r.text(c.excerpt), "final_url": r.url(c.final_url) if c.final_url else None,
            "redirects": [r.url(u) for u in c.redirects] if c.redirects is not None else None,
        }) for c in answer.citations],
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
                logger.debug("closing a page under the recorder: {}", rec.redactor.url(str(exc)))
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
            logger.debug("recorder close after failure: {}", rec.redactor.url(str(exc)))
