"""`rig run`: plan episodes, serve the bundled sites (or open snapshots), and execute."""

from __future__ import annotations

import asyncio
from contextlib import nullcontext

from loguru import logger
from rich.progress import Progress

from rig.agents.base import Agent
from rig.agents.registry import make_agent
from rig.episode_dir import RunsDir
from rig.errors import InputError
from rig.formats.episode import Episode
from rig.formats.task import Task
from rig.log import add_run_log
from rig.runner.config import VARIANTS, RunConfig
from rig.runner.frozen import open_frozen
from rig.network.policy import parse_hosts
from rig.network.settings import check_reachable
from rig.pricing import load_prices
from rig.runner.local import claim, plan, run_local
from rig.runner.spec import agent_identity
from rig.sites import SitesServer
from rig.step_images import recorder_options
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


def run(config: RunConfig, progress: Progress | None = None) -> list[Episode]:
    """Run every (task, variant, agent, trial) episode into the runs directory; return their episode records.

    With several agents, all their episodes share one browser, one sites server and one progress bar."""
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
    prices = load_prices()  # a bad $RIG_PRICES file fails before any episode
    runs = RunsDir(config.runs_dir)
    only_infra = config.resume and config.retry_infra is not None
    specs = [spec for (name, identity) in agents
             for spec in plan(tasks, list(config.variants or VARIANTS), name, config.trials, runs, config.resume,
                              identity=identity, only_infra=only_infra)]
    specs = claim(specs, runs, config.resume, retry_infra=only_infra)
    runs.path.mkdir(parents=True, exist_ok=True)
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
                                         options=recorder_options(config.step_images), retry=config.retry,
                                         prices=prices))
    finally:
        logger.remove(log)
