"""The local executor: episodes as independent units of work under bounded asyncio concurrency."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from loguru import logger
from playwright.async_api import Browser, Playwright, async_playwright
from rich.progress import Progress

from recorders import RecorderOptions
from replay import FrozenSite
from rig.agents.base import Agent, Budget
from rig.episode_dir import EpisodeDir, RunsDir
from rig.errors import InputError
from rig.formats.episode import Episode
from rig.formats.task import Task
from rig.formats.usage import PriceTable
from rig.network.guard import GUARDED_CONTEXT_OPTIONS
from rig.network.settings import Network
from rig.runner.browsers import BrowserPool
from rig.runner.episode import EpisodeContext, run_episode
from rig.runner.retry import RetryPolicy
from rig.runner.spec import EpisodeSpec
from rig.sites import bundled_adapters

#: Statuses of an episode that finished; `incomplete` and `infra_error` episodes are run again by --resume.
COMPLETE = ("ok", "timeout", "agent_error", "parse_failure", "site_unreachable")
#: Statuses of an episode the infrastructure failed (`--resume --retry-infra` runs only these again).
INFRA_FAILED = ("infra_error", "incomplete")


def plan(tasks: list[Task], variants: list[str], agent: str, trials: int, runs: RunsDir | Path,
         resume: bool, identity: str = "", only_infra: bool = False) -> list[EpisodeSpec]:
    """The episodes to run. With `resume`, trials 0..N-1 minus those already complete (`only_infra`: only those of
    them the infrastructure failed, none that never ran); without it, N new trials numbered after the highest that
    exists (running again into a runs directory adds episodes, and never reuses a trial directory). `identity`
    tells agents of one name apart (`spec.agent_identity`)."""
    runs = runs if isinstance(runs, RunsDir) else RunsDir(runs)
    specs: list[EpisodeSpec] = []
    for task in tasks:
        for variant in variants:
            if resume:
                wanted = [EpisodeSpec(task, variant, agent, t, identity=identity) for t in range(trials)]
                keep = _infra_failed if only_infra else (lambda d: not _complete(d))
                specs += [s for s in wanted if keep(s.directory(runs))]
            else:
                first = max(runs.trials(task.id, variant, agent, identity), default=-1) + 1
                specs += [EpisodeSpec(task, variant, agent, first + t, identity=identity) for t in range(trials)]
    return specs


def claim(specs: list[EpisodeSpec], runs: RunsDir | Path, resume: bool, retry_infra: bool = False) -> list[EpisodeSpec]:
    """Before any episode runs, make sure none is written into a directory that holds one; the specs to run.

    A new trial (without `resume`) reserves its directory by creating it: one that exists already (a run writing
    into the same runs directory at the same moment took it, or files of an earlier run are there) is never
    written into, and the trial takes the next free number. With `resume`, a finished episode is an InputError,
    and what an unfinished run left is moved under the episode's `attempts/unfinished-<n>/`, kept and never
    appended to; with `retry_infra` too, an `infra_error` episode's last failed attempt joins its earlier ones as
    `attempts/<n>/`, and its retries go on counting from there."""
    runs = runs if isinstance(runs, RunsDir) else RunsDir(runs)
    return [_reserve(spec, runs) if not resume else _resume(spec, runs, retry_infra) for spec in specs]


def _reserve(spec: EpisodeSpec, runs: RunsDir) -> EpisodeSpec:
    """The spec, renumbered to the first trial from its own whose directory this call created."""
    while True:
        d = spec.directory(runs)
        d.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            d.path.mkdir()
            return spec
        except FileExistsError:
            logger.info("{} exists already: trial {} is run instead", d.path, spec.trial + 1)
            spec = replace(spec, trial=spec.trial + 1)


def _resume(spec: EpisodeSpec, runs: RunsDir, retry_infra: bool) -> EpisodeSpec:
    d = spec.directory(runs)
    if d.is_empty():
        return spec
    if _complete(d):
        raise InputError(str(d.path), None, "holds a finished episode; a finished episode is never written into again")
    if retry_infra and _status(d) == "infra_error":
        kept = d.keep_failed_attempt(len(d.attempts()) + 1)
        logger.info("{}: retrying an infrastructure failure; its last attempt is kept as {}", d.path, kept.path)
        return spec
    kept = d.set_aside()
    if kept is not None:
        logger.warning("{}: the files of an unfinished earlier run are kept under {}", d.path, kept.path)
    return spec


def context_options(frozen: bool, allow_hosts: list[str] | None, network: Network | None = None) -> dict[str, Any] | None:
    """Context options for episodes answered from a snapshot, or guarded (allow-listed or live: service workers
    blocked in all, their requests bypass routing)."""
    if frozen:
        from replay import REPLAY_CONTEXT_OPTIONS

        return dict(REPLAY_CONTEXT_OPTIONS)
    return dict(GUARDED_CONTEXT_OPTIONS) if (network or Network()).guarded(allow_hosts) else None


def _status(directory: EpisodeDir) -> str | None:
    """The status episode.json records (None: there is none, or it cannot be read: not a finished episode)."""
    if not directory.exists():
        return None
    try:
        return directory.read_episode().status
    except InputError:
        return None


def _complete(directory: EpisodeDir) -> bool:
    return _status(directory) in COMPLETE


def _infra_failed(directory: EpisodeDir) -> bool:
    """Whether an episode ran and the infrastructure failed it (`infra_error`, or `incomplete`: its process killed)."""
    return _status(directory) in INFRA_FAILED


def episode_context(pw: Playwright | None, *, sites_url: str, budget: Budget, options: RecorderOptions | None = None,
                    headless: bool = True, frozen: FrozenSite | None = None, allow_hosts: list[str] | None = None,
                    network: Network | None = None, browser: Browser | None = None, retry: RetryPolicy | None = None,
                    prices: PriceTable | None = None) -> EpisodeContext:
    """The browser pool and the parts every episode of a run shares: one set-up for the local and the Ray executors
    (a Ray worker makes its own on its node). `browser`: a browser the caller launched (with the flags the run needs,
    see `run_local`), lent to the pool instead of one launched from `pw`. `retry`: how infrastructure failures are
    retried (default: two retries); `prices`: the price table costs are computed with."""
    ctx_options = context_options(frozen is not None, allow_hosts, network)
    if browser is not None:
        pool = BrowserPool.around(browser, network=network, context_options=ctx_options)
    else:
        assert pw is not None, "a pool launches its browser from Playwright"
        pool = BrowserPool(pw, headless=headless, context_options=ctx_options,
                           sealed=(network or Network()).guarded(allow_hosts), archive_only=frozen is not None,
                           network=network)
    return EpisodeContext(pool=pool, sites_url=sites_url, budget=budget, adapters=bundled_adapters(), options=options,
                          frozen=frozen, allow_hosts=allow_hosts, retry=retry or RetryPolicy(), prices=prices)


async def run_spec(spec: EpisodeSpec, agent: Agent, directory: EpisodeDir, ctx: EpisodeContext) -> Episode:
    """One planned episode, as every executor runs it (the seam where a run-level retry of infrastructure failures
    goes, so that the local and Ray executors both have it)."""
    return await run_episode(spec, agent, directory, ctx)


@dataclass
class RunStats:
    """Live counts for the progress bar."""

    done: int = 0
    failing: int = 0
    running: int = 0
    episodes: list[Episode] = field(default_factory=list)


async def run_local(
    specs: list[EpisodeSpec],
    agents: Agent | Mapping[tuple[str, str], Agent],
    runs_dir: Path,
    *,
    sites_url: str,
    budget: Budget,
    concurrency: int = 1,
    options: RecorderOptions | None = None,
    progress: Progress | None = None,
    headless: bool = True,
    frozen: FrozenSite | None = None,
    allow_hosts: list[str] | None = None,
    network: Network | None = None,
    browser: Browser | None = None,
    retry: RetryPolicy | None = None,
    prices: PriceTable | None = None,
) -> list[Episode]:
    """Run episodes, at most `concurrency` at once, each in its own browser context of one shared browser.

    `agents` is the agent of every spec, or, for a run of several, the agents by (name, identity) as the specs give
    them (`spec.agent`, `spec.identity`).

    With `allow_hosts`, each context reaches only its episode's start and task hosts and those hosts; `network` says
    whether the browser may reach the network, with which host mappings and politeness (rig.network); a live or
    allow-listed episode's context goes through a guard of its own (rig.network.guard). `retry`: how infrastructure
    failures are retried (rig.runner.retry; default two retries); `prices`: the price table costs are computed with.

    `browser`: run in this browser instead of launching one (a caller that runs many short runs, e.g. a test
    session); it must have been launched with the flags the run needs (`rig.browser.launch`: sealed for allow-listed
    runs, archive-only for frozen ones, the host mappings), and it is neither relaunched nor closed here.
    """
    by_name = agents if isinstance(agents, Mapping) else None
    stats = RunStats()
    sem = asyncio.Semaphore(max(1, concurrency))
    runs = RunsDir(runs_dir)
    bar = progress.add_task("episodes", total=len(specs)) if progress else None

    def show() -> None:
        if progress is not None:
            progress.update(bar, completed=stats.done,
                            description=f"episodes (running {stats.running}, failing {stats.failing})")

    async with async_playwright() if browser is None else nullcontext() as pw:
        ctx = episode_context(pw, sites_url=sites_url, budget=budget, options=options, headless=headless,
                              frozen=frozen, allow_hosts=allow_hosts, network=network, browser=browser,
                              retry=retry, prices=prices)
        pool = ctx.pool

        async def one(spec: EpisodeSpec) -> Episode:
            async with sem:
                stats.running += 1
                show()
                try:
                    agent = by_name[spec.agent, spec.identity] if by_name is not None else agents
                    ep = await run_spec(spec, agent, spec.directory(runs), ctx)  # type: ignore[arg-type]
                finally:
                    stats.running -= 1
                stats.done += 1
                stats.failing += ep.status != "ok"
                show()
                return ep

        try:
            episodes = await asyncio.gather(*(one(s) for s in specs))
        finally:
            await pool.close()
    logger.info("{} episodes: {}", len(episodes), ", ".join(f"{s} {sum(e.status == s for e in episodes)}"
                                                            for s in sorted({e.status for e in episodes})))
    return list(episodes)
