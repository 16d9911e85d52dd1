"""The Ray executor: episodes as Ray work, one browser per worker process, results in the shared runs directory.

Each worker is an async Ray actor that keeps one Playwright, one Chromium and (unless `sites_url` is
given) its own copy of the bundled sites on its own 127.0.0.1, so a worker on any node of a cluster
needs nothing from the driver but the runs directory. `RAY_ADDRESS` selects a cluster; without it a
local Ray instance is started. Ray's usage statistics are switched off.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from rich.progress import Progress

from rig.agents.base import Budget
from rig.errors import InputError
from rig.formats.episode import Episode
from rig.network.settings import Network
from rig.runner.config import RunConfig
from rig.runner.spec import EpisodeSpec, agent_identity


class EpisodeWorker:
    """One worker process: runs episodes one at a time with its own browser."""

    def __init__(self, agents: list[str], model: str | None, answer_file: str | None, runs_dir: str,
                 sites_url: str | None, budget: Budget, headless: bool, allow_hosts: list[str] | None = None,
                 network: Network | None = None) -> None:
        from rig.agents.registry import make_agent
        from rig.sites import SitesServer

        made = [make_agent(a, model=model, answer_file=Path(answer_file) if answer_file else None) for a in agents]
        self.agents = {(a.name, agent_identity(a)): a for a in made}
        self.runs_dir, self.budget, self.headless, self.allow_hosts = Path(runs_dir), budget, headless, allow_hosts
        self.network = network
        self.sites = None if sites_url else SitesServer().start()
        self.sites_url = sites_url or self.sites.url
        self.pw: Any = None
        self.ctx: Any = None

    async def run(self, spec: EpisodeSpec) -> dict[str, Any]:
        """Run one episode; return its episode.json content."""
        from playwright.async_api import async_playwright

        from rig.episode_dir import RunsDir
        from rig.runner.browsers import BrowserPool
        from rig.runner.episode import EpisodeContext, run_episode
        from rig.runner.local import context_options
        from rig.sites import bundled_adapters

        if self.ctx is None:
            self.pw = await async_playwright().start()
            pool = BrowserPool(self.pw, headless=self.headless,
                               context_options=context_options(False, self.allow_hosts, self.network),
                               sealed=(self.network or Network()).guarded(self.allow_hosts), network=self.network)
            self.ctx = EpisodeContext(pool=pool, sites_url=self.sites_url, budget=self.budget,
                                      adapters=bundled_adapters(), allow_hosts=self.allow_hosts)
        ep = await run_episode(spec, self.agents[spec.agent, spec.identity], spec.directory(RunsDir(self.runs_dir)), self.ctx)
        return ep.model_dump(mode="json")


def run_ray(specs: list[EpisodeSpec], config: RunConfig, *, progress: Progress | None = None,
            allow_hosts: list[str] | None = None, network: Network | None = None) -> list[Episode]:
    """Run episodes as Ray tasks on `config.concurrency` worker actors; return them in `specs` order."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    try:
        import ray
        from ray.util import ActorPool
    except ImportError:
        raise InputError("--executor ray", None, "Ray is not installed; pip install 'sgr-rig[ray]'") from None
    started = not ray.is_initialized()
    if started:
        ray.init(address=os.environ.get("RAY_ADDRESS") or None, include_dashboard=False, log_to_driver=False,
                 num_cpus=None if os.environ.get("RAY_ADDRESS") else max(2, config.concurrency))
    try:
        worker = ray.remote(num_cpus=1, max_concurrency=1)(EpisodeWorker)
        answer_file = str(config.answer_file) if config.answer_file else None
        actors = [worker.remote(config.agents, config.model, answer_file, str(config.runs_dir.resolve()), config.sites_url,
                                config.budget, config.headless, allow_hosts, network)
                  for _ in range(max(1, min(config.concurrency, len(specs))))]
        bar = progress.add_task("episodes (ray)", total=len(specs)) if progress else None
        results: list[Episode] = []
        for data in ActorPool(actors).map(lambda a, s: a.run.remote(s), specs):
            results.append(Episode.model_validate(data))
            if progress is not None:
                progress.advance(bar)
        for a in actors:
            ray.kill(a)
        return results
    finally:
        if started:
            ray.shutdown()
