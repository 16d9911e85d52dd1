"""`rig run`: plan episodes, serve the bundled sites (or open snapshots), and execute."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass

from loguru import logger
from playwright.async_api import Browser
from rich.progress import Progress

from replay import FrozenSite
from rig.agents.base import Agent
from rig.episode_dir import RunsDir
from rig.errors import InputError, Interrupted
from rig.formats.episode import Episode
from rig.formats.task import Task
from rig.formats.usage import PriceTable
from rig.log import add_run_log
from rig.network.policy import parse_hosts
from rig.network.settings import Network, check_reachable
from rig.runner.config import VARIANTS, RunConfig
from rig.runner.frozen import open_frozen
from rig.pricing import load_prices
from rig.runner.local import COMPLETE, claim, plan, run_local
from rig.runner.spec import EpisodeSpec
from rig.runner.step_images import recorder_options
from rig.qa.stored import keep_in_run
from rig.sites import SitesServer
from rig.tasks import bundled_tasks, resolve_task
from rig.tasks.checks import check_task


def select_tasks(refs: list[str]) -> list[Task]:
    """Tasks by id or path; `all` means the whole bundled suite."""
    if not refs:
        raise InputError("--task", None, "give at least one task id, task file, or `all`")
    tasks: list[Task] = []
    for ref in refs:
        tasks += bundled_tasks() if ref == "all" else [resolve_task(ref)]
    return tasks


class RunInterrupted(Interrupted):
    """Ctrl-C stopped a run: `left` are the planned episodes that did not finish (`started` of them had begun and
    say `incomplete`; the others have an empty directory), every one of them run again by `--resume`."""

    def __init__(self, planned: list[EpisodeSpec], runs: RunsDir, trials: int) -> None:
        self.left = [s for s in planned if not _finished(s, runs)]
        self.started = sum(s.directory(runs).exists() for s in self.left)
        needed = max((s.trial + 1 for s in self.left), default=trials)  # added trials are numbered after the others
        again = "--resume" + (f" --trials {needed}" if needed > trials else "")
        super().__init__(f"interrupted: {len(self.left)} of {len(planned)} episodes left incomplete in {runs.path} "
                         f"({self.started} started, {len(self.left) - self.started} not started); what they recorded "
                         f"is kept: run the same command with {again} to finish them")


def _finished(spec: EpisodeSpec, runs: RunsDir) -> bool:
    d = spec.directory(runs)
    try:
        return d.exists() and d.read_episode().status in (*COMPLETE, "infra_error")
    except InputError:  # an episode.json torn by the interrupt is not a finished episode
        return False


def run(config: RunConfig, progress: Progress | None = None) -> list[Episode]:
    """Run every (task, variant, agent, trial) episode into the runs directory; return their episode records.

    With several agents, all their episodes share one browser, one sites server and one progress bar. Ctrl-C raises
    `RunInterrupted` once the episodes under way have stopped (they stay `incomplete`, their files kept)."""
    plan_ = plan_run(config)
    with _run_log(plan_.runs):
        try:
            if config.executor == "ray":
                from rig.runner.ray_executor import run_ray

                return run_ray(plan_.specs, config, plan_.tasks, progress=progress, allow_hosts=plan_.allow, network=plan_.network)
            return asyncio.run(_execute(plan_, config, progress))
        except KeyboardInterrupt:
            raise RunInterrupted(plan_.specs, plan_.runs, config.trials) from None


async def run_async(config: RunConfig, progress: Progress | None = None, browser: Browser | None = None
                    ) -> list[Episode]:
    """`run` in the running event loop (the local executor only); `browser`: run in this browser instead of launching
    one (launched with the flags the run needs, see `rig.runner.local.run_local`), e.g. a test session's."""
    if config.executor != "local":
        raise InputError("--executor", None, "run_async runs the local executor; use run() for ray")
    plan_ = plan_run(config)
    with _run_log(plan_.runs):
        return await _execute(plan_, config, progress, browser)


async def _execute(plan_: RunPlan, config: RunConfig, progress: Progress | None, browser: Browser | None = None
                   ) -> list[Episode]:
    """Run a planned run's episodes with the local executor, serving the bundled sites unless they are elsewhere."""
    with SitesServer() if plan_.sites_url is None else nullcontext() as srv:
        return await run_local(plan_.specs, plan_.agents, plan_.runs.path, sites_url=plan_.sites_url or srv.url,
                               budget=config.budget, concurrency=config.concurrency, progress=progress,
                               headless=config.headless, frozen=plan_.snapshot, allow_hosts=plan_.allow,
                               network=plan_.network, options=recorder_options(config.step_images), browser=browser,
                               retry=config.retry, prices=plan_.prices)


@dataclass
class RunPlan:
    """What a run will do, checked before any episode: its episodes, agents, network and where its sites are."""

    specs: list[EpisodeSpec]
    agents: dict[tuple[str, str], Agent]
    runs: RunsDir
    network: Network
    allow: list[str] | None
    sites_url: str | None
    snapshot: FrozenSite | None
    tasks: list[Task]
    prices: PriceTable


def plan_run(config: RunConfig) -> RunPlan:
    """Check the run's options and tasks (before any episode) and plan its episodes; the runs directory is made."""
    config.check()
    allow = parse_hosts(config.allow_hosts) if config.allow_hosts is not None else None
    network = config.network()
    tasks = select_tasks(config.tasks)
    check_reachable(tasks, network, frozen=config.frozen is not None)  # before any episode
    for task in tasks:
        check_task(task)  # what `rig tasks validate` checks (adapter, db, reference solution, ...): before any episode
        if task.start_hidden and task.start_url and task.start_url in task.prompts.constraint + task.prompts.goal:
            logger.warning("{}: start_hidden, but a prompt names the start page {}", task.id, task.start_url)
    agents = config.make_agents()
    for agent in agents.values():
        check = getattr(agent, "check", None)
        for task in tasks if check else []:
            if config.runs_task(agent.name, task.id):
                check(task)  # e.g. a perturbation the task cannot take: fail before any episode starts
    sites_url, snapshot = config.sites_url, None
    if config.frozen is not None:
        snapshot = open_frozen(config.frozen, tasks)
        sites_url = snapshot.start_url_base
    prices = load_prices()  # a bad $RIG_PRICES file fails before any episode
    runs = RunsDir(config.runs_dir)
    only_infra = config.resume and config.retry_infra is not None
    specs = [spec for (name, identity) in agents
             for spec in plan([t for t in tasks if config.runs_task(name, t.id)], list(config.variants or VARIANTS),
                              name, config.trials, runs, config.resume, identity=identity, only_infra=only_infra)]
    specs = claim(specs, runs, config.resume, retry_infra=only_infra)
    runs.path.mkdir(parents=True, exist_ok=True)
    if config.frozen is not None:
        keep_in_run(config.frozen, runs.path)  # the snapshot's replay QA, for the run's report
    return RunPlan(specs, agents, runs, network, allow, sites_url, snapshot, tasks, prices)


@contextmanager
def _run_log(runs: RunsDir) -> Iterator[None]:
    """The run's log file (`RUNS_DIR/run.log`) while the run lasts."""
    log = add_run_log(runs.log_file)
    try:
        yield
    finally:
        logger.remove(log)
