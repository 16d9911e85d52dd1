"""`rig run`: plan episodes, serve the bundled sites, and execute."""

from __future__ import annotations

import asyncio
from contextlib import nullcontext
from pathlib import Path

from loguru import logger
from rich.progress import Progress

from rig.agents.base import Budget
from rig.agents.registry import make_agent
from rig.episode import Episode
from rig.errors import InputError
from rig.log import add_run_log
from rig.runner.hosts import parse_hosts
from rig.runner.local import plan, run_local
from rig.sites import SitesServer
from rig.tasks import bundled_tasks, resolve_task
from rig.tasks.models import Task

VARIANTS = ("constraint", "goal")


def select_tasks(refs: list[str]) -> list[Task]:
    """Tasks by id or path; `all` means the whole bundled suite."""
    if not refs:
        raise InputError("--task", None, "give at least one task id, task file, or `all`")
    tasks: list[Task] = []
    for ref in refs:
        tasks += bundled_tasks() if ref == "all" else [resolve_task(ref)]
    return tasks


def run(
    task_refs: list[str],
    agent_name: str,
    runs_dir: Path,
    *,
    variants: list[str] | None = None,
    trials: int = 1,
    concurrency: int = 1,
    resume: bool = False,
    model: str | None = None,
    answer_file: Path | None = None,
    budget: Budget | None = None,
    sites_url: str | None = None,
    executor: str = "local",
    frozen: Path | None = None,
    headless: bool = True,
    progress: Progress | None = None,
    allow_hosts: list[str] | None = None,
) -> list[Episode]:
    """Run every (task, variant, agent, trial) episode into `runs_dir`; return their episode records.

    `allow_hosts` (live runs): each episode reaches only the sites server and these hosts (rig.runner.hosts).
    """
    if executor not in ("local", "ray"):
        raise InputError("--executor", None, f"{executor!r} is not an executor; use local or ray")
    for v in variants or []:
        if v not in VARIANTS:
            raise InputError("--variant", None, f"{v!r} is not one of {', '.join(VARIANTS)}")
    if trials < 1 or concurrency < 1:
        raise InputError("--trials/--concurrency", None, "must be at least 1")
    allow = parse_hosts(allow_hosts) if allow_hosts is not None else None
    tasks = select_tasks(task_refs)
    agent = make_agent(agent_name, model=model, answer_file=answer_file)
    check = getattr(agent, "check", None)
    for task in tasks if check else []:
        check(task)  # e.g. a perturbation the task cannot take: fail before any episode starts
    snapshot = None
    if frozen is not None:
        from rig.replay_cmd import open_frozen

        if executor != "local":
            raise InputError("--frozen", None, "frozen runs use the local executor")
        snapshot = open_frozen(frozen, tasks)
        sites_url = snapshot.start_url_base
    specs = plan(tasks, list(variants or VARIANTS), agent.name, trials, runs_dir, resume)
    runs_dir.mkdir(parents=True, exist_ok=True)
    log = add_run_log(runs_dir / "run.log")
    try:
        if executor == "ray":
            from rig.runner.ray_executor import run_ray

            return run_ray(specs, agent_name, runs_dir, model=model, answer_file=answer_file, sites_url=sites_url,
                           budget=budget or Budget(), concurrency=concurrency, headless=headless, progress=progress,
                           allow_hosts=allow)
        with SitesServer() if sites_url is None else nullcontext() as srv:
            url = sites_url or srv.url
            return asyncio.run(run_local(specs, agent, runs_dir, sites_url=url, budget=budget or Budget(),
                                         concurrency=concurrency, progress=progress, headless=headless,
                                         frozen=snapshot, allow_hosts=allow))
    finally:
        logger.remove(log)
