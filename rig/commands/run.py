"""`rig run`: episodes of tasks, one directory per (task, variant, agent, trial) (`rig.runner.run`).

Ctrl-C stops the run: the episodes under way stay `incomplete` (their files kept), and one line says how many were
left and how to finish them (`--resume`); exit 130."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from rig.agents.base import Budget
from rig.commands.console import progress, table
from rig.commands.options import (
    Headed,
    IgnoreHttpsErrors,
    Live,
    MaxPerHost,
    RateLimit,
    Resolve,
    StepImagesOption,
    politeness,
)
from rig.errors import INFRA
from rig.runner.config import RunConfig, resource_amounts
from rig.runner.run import run as run_episodes
from rig.runner.step_images import DEFAULT_STEP_IMAGES


def run(
    task: list[str] = typer.Option(..., "--task", help="task id, task file, or `all` (repeatable)"),
    agent: list[str] = typer.Option(..., "--agent", help="reference, scripted:FILE, perturbed:KIND, browser-use, cdp, "
                                                         "operator, mcp, cli (repeatable: several agents in one run)"),
    variant: Optional[list[str]] = typer.Option(None, "--variant", help="constraint or goal (default: both)"),
    trials: int = typer.Option(1, "--trials", help="episodes per (task, variant)"),
    out_dir: Path = typer.Option(Path("runs"), "--out", help="runs directory"),
    concurrency: int = typer.Option(1, "--concurrency", help="episodes at once, each in its own browser context"),
    resume: bool = typer.Option(False, "--resume", help="skip episodes already complete"),
    model: Optional[str] = typer.Option(None, "--model", help="LLM for browser-use, e.g. openai:gpt-4.1-mini"),
    answer_file: Optional[Path] = typer.Option(None, "--answer-file", help="operator: the product's answer (markdown)"),
    command: Optional[str] = typer.Option(None, "--command", help="cli: the CLI agent's shell command, run against the "
                                                                  "episode's MCP tool server (docs/cli-agents.md)"),
    max_steps: int = typer.Option(60, "--max-steps", help="step budget per episode"),
    timeout: float = typer.Option(300.0, "--timeout", help="wall-clock budget per episode, seconds"),
    stall: float = typer.Option(120.0, "--stall", help="end an episode with no new step for this long, seconds"),
    retry_infra: Optional[int] = typer.Option(None, "--retry-infra", help="retry an episode the infrastructure failed "
                                              "up to N times (default 2); with --resume: run only those again"),
    stall_timeout: Optional[float] = typer.Option(None, "--stall-timeout", help="kill an episode with no step and no "
                                                  "output for this long, seconds, as an infrastructure failure"),
    sites_url: Optional[str] = typer.Option(None, "--sites-url", help="use running sites instead of serving them"),
    executor: str = typer.Option("local", "--executor", help="local (asyncio) or ray (--ray-address or RAY_ADDRESS "
                                                             "selects a cluster)"),
    frozen: Optional[Path] = typer.Option(None, "--frozen", help="answer every request from a snapshot, e.g. "
                                                                 "site_snapshots/ or site_snapshots/eco"),
    headed: Headed = False,
    allow_host: Optional[list[str]] = typer.Option(
        None, "--allow-host", help="live runs reach only the sites server and these hosts (HOST or HOST:PORT, repeatable)"),
    live: Live = False,
    resolve: Resolve = None,
    ignore_https_errors: IgnoreHttpsErrors = False,
    rate_limit: RateLimit = 4.0,
    max_per_host: MaxPerHost = 4,
    step_images: StepImagesOption = DEFAULT_STEP_IMAGES,
    ray_address: Optional[str] = typer.Option(None, "--ray-address", help="ray: join this cluster (HOST:PORT of its head)"),
    ray_resource: Optional[list[str]] = typer.Option(None, "--ray-resource", help="ray: NAME[=AMOUNT], a custom resource "
                                                     "each worker takes (repeatable; docs/runner.md)"),
) -> None:
    """Run episodes of tasks: one episode directory per (task, variant, agent, trial).

    Exit 3 when an episode ended as an infrastructure failure; 130 when interrupted (finish with --resume)."""
    config = RunConfig(
        tasks=task, agent=agent, runs_dir=out_dir, variants=variant, trials=trials, concurrency=concurrency,
        resume=resume, model=model, answer_file=answer_file, budget=Budget(max_steps, timeout, stall, stall_timeout),
        sites_url=sites_url, executor=executor, frozen=frozen, headless=not headed, allow_hosts=allow_host,  # type: ignore[arg-type]
        command=command, live=live, resolve=resolve or [], ignore_https_errors=ignore_https_errors,
        politeness=politeness(rate_limit, max_per_host), step_images=step_images,  # type: ignore[arg-type]
        ray_address=ray_address, ray_resources=resource_amounts(ray_resource or []), retry_infra=retry_infra,
    )
    with progress() as bar:
        episodes = run_episodes(config, bar)
    table(f"{len(episodes)} episodes in {out_dir}", ("task", "variant", "agent", "trial", "status", "steps", "seconds"),
          [(e.task_id or "", e.variant or "", e.agent, e.trial, e.status, e.steps, f"{e.seconds or 0:.1f}")
           for e in episodes])
    if any(e.status == "infra_error" for e in episodes):
        raise typer.Exit(INFRA)
