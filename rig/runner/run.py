"""`rig run`: plan episodes, serve the bundled sites (or open snapshots), and execute."""

from __future__ import annotations

import asyncio
from contextlib import nullcontext

from loguru import logger
from rich.progress import Progress

from rig.agents.base import Agent
from rig.agents.registry import make_agent
from rig.episode_dir import RunsDir
from rig.errors import InputError, Interrupted
from rig.formats.episode import Episode
from rig.formats.task import Task
from rig.log import add_run_log
from rig.network.policy import parse_hosts
from rig.network.settings import check_reachable
from rig.runner.config import VARIANTS, RunConfig
from rig.runner.frozen import open_frozen
from rig.runner.local import COMPLETE, claim, plan, run_local
from rig.runner.spec import EpisodeSpec, agent_identity
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
    config.check()
    allow = parse_hosts(config.allow_hosts) if config.allow_hosts is not None else None
    network = config.network()
    tasks = select_tasks(config.tasks)
    check_reachable(tasks, network, frozen=config.frozen is not None)  # before any episode
    for task in tasks:
        check_task(task)  # what `rig tasks validate` checks (adapter, db, reference solution, ...): before any episode
        if task.start_hidden and task.start_url and task.start_url in task.prompts.constraint + task.prompts.goal:
            logger.warning("{}: start_hidden, but a prompt names the start page {}", task.id, task.start_url)
    agents: dict[tuple[str, str], Agent] = {}
    for name in config.agents:
        agent = make_agent(name, model=config.model, answer_file=config.answer_file, command=config.command)
        check = getattr(agent, "check", None)
        for task in tasks if check else []:
            check(task)  # e.g. a perturbation the task cannot take: fail before any episode starts
        agents[agent.name, agent_identity(agent)] = agent
    sites_url, snapshot = config.sites_url, None
    if config.frozen is not None:
        snapshot = open_frozen(config.frozen, tasks)
        sites_url = snapshot.start_url_base
    runs = RunsDir(config.runs_dir)
    specs = [spec for (name, identity) in agents
             for spec in plan(tasks, list(config.variants or VARIANTS), name, config.trials, runs, config.resume,
                              identity=identity)]
    specs = claim(specs, runs, config.resume)
    runs.path.mkdir(parents=True, exist_ok=True)
    if config.frozen is not None:
        keep_in_run(config.frozen, runs.path)  # the snapshot's replay QA, for the run's report
    log = add_run_log(runs.log_file)
    try:
        if config.executor == "ray":
            from rig.runner.ray_executor import run_ray

            return run_ray(specs, config, progress=progress, allow_hosts=allow, network=network)
        with SitesServer() if sites_url is None else nullcontext() as srv:
            url = sites_url or srv.url
            return asyncio.run(run_local(specs, agents, runs.path, sites_url=url, budget=config.budget,
                                         concurrency=config.concurrency, progress=progress, headless=config.headless,
                                         frozen=snapshot, allow_hosts=allow, network=network,
                                         options=recorder_options(config.step_images)))
    except KeyboardInterrupt:
        raise RunInterrupted(specs, runs, config.trials) from None
    finally:
        logger.remove(log)
