"""The Ray executor: episodes as Ray work, one browser per worker actor, on one machine or a cluster.

Each worker is an async Ray actor that keeps one Playwright, one Chromium and (unless `sites_url` is given, or the
run is `--frozen`) its own copy of the bundled sites on its own 127.0.0.1, so a worker on any node needs nothing of the
driver's but the run's configuration. It runs each episode exactly as the local executor does (`local.run_spec` with
`local.episode_context`), so every `rig run` option works the same: `--command`, `--step-images`, `--live`,
`--resolve`, `--frozen`, politeness, allow-lists.

Where episodes are written: a worker on the driver's own node writes into the runs directory; a worker on any other
node records into a directory of its own and ships the episode's files back, which the driver writes into the runs
directory (so the runs directory need only exist where `rig run` runs). What the command line names besides (task
files and their folders, `--frozen` snapshots, `--answer-file`, the CLI agent's own files) must be at the same path on
every node: a shared file system, or the same image.

The cluster: `--ray-address HOST:PORT` (else `RAY_ADDRESS`) joins one; without either a local Ray instance is started
for the run. Workers are spread over the nodes (`SPREAD`), each taking one CPU and the `--ray-resource`s asked for.
Ray's usage statistics are switched off.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import replace
import tempfile
from pathlib import Path
from typing import Any

from loguru import logger
from rich.progress import Progress

from rig.episode_dir import EpisodeDir, RunsDir
from rig.errors import InputError
from rig.formats.episode import Episode
from rig.formats.task import Task
from rig.network.settings import Network
from rig.runner.config import RunConfig
from rig.runner.spec import EpisodeSpec
from rigwarc.atomic import atomic_write


class EpisodeWorker:
    """One worker process: runs episodes one at a time with its own browser (and, unless told otherwise, sites)."""

    def __init__(self, config: RunConfig, tasks: list[Task], allow_hosts: list[str] | None, network: Network | None,
                 driver_node: str | None) -> None:
        import ray

        self.config, self.allow_hosts, self.network = config, allow_hosts, network
        self.agents = config.make_agents()
        self.node = ray.get_runtime_context().get_node_id()
        self.address = ray.util.get_node_ip_address()
        self.ships = driver_node is not None and self.node != driver_node
        self.frozen: Any = None
        self.sites: Any = None
        if config.frozen is not None:
            from rig.runner.frozen import open_frozen

            self.frozen = open_frozen(config.frozen, tasks)
            self.sites_url = self.frozen.start_url_base
        elif config.sites_url:
            self.sites_url = config.sites_url
        else:
            from rig.sites import SitesServer

            self.sites = SitesServer().start()
            self.sites_url = self.sites.url
        self.pw: Any = None
        self.ctx: Any = None

    async def run(self, spec: EpisodeSpec) -> dict[str, Any]:
        """Run one episode: its episode.json content, the node, and (from another node than the driver's) its files."""
        from playwright.async_api import async_playwright

        from rig.pricing import load_prices
        from rig.runner.local import episode_context, run_spec
        from rig.runner.step_images import recorder_options

        if self.ctx is None:
            self.pw = await async_playwright().start()
            c = self.config
            self.ctx = episode_context(self.pw, sites_url=self.sites_url, budget=c.budget,
                                       options=recorder_options(c.step_images), headless=c.headless,
                                       frozen=self.frozen, allow_hosts=self.allow_hosts, network=self.network,
                                       retry=c.retry, prices=load_prices())
        local = Path(tempfile.mkdtemp(prefix="rig-ray-")) if self.ships else None
        try:
            directory = spec.directory(RunsDir(local if local is not None else self.config.runs_dir))
            directory.path.mkdir(parents=True, exist_ok=True)
            ep = await run_spec(spec, self.agents[spec.agent, spec.identity], directory, self.ctx)
            ep.ray_node = f"{self.node}@{self.address}"
            directory.write_episode(ep)
            files = _files(directory) if local is not None else None
        finally:
            if local is not None:
                shutil.rmtree(local, ignore_errors=True)
        return {"episode": ep.model_dump(mode="json"), "files": files}

    def stop(self) -> None:
        """Stop the worker's sites server (the browser goes with the process)."""
        if self.sites is not None:
            self.sites.stop()


def _files(directory: EpisodeDir) -> dict[str, bytes]:
    """Every file of an episode directory by its path inside it (to ship to the driver)."""
    return {p.relative_to(directory.path).as_posix(): p.read_bytes() for p in sorted(directory.path.rglob("*"))
            if p.is_file()}


def _receive(directory: EpisodeDir, files: dict[str, bytes]) -> None:
    """Write an episode shipped from another node into its directory of the runs directory, episode.json last."""
    root = directory.path.resolve()
    last = directory.episode_file.relative_to(directory.path).as_posix()
    for name in sorted(files, key=lambda n: n == last):
        target = (root / name).resolve()
        if root not in target.parents:
            raise InputError(name, None, "a shipped episode file outside its episode directory")
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, files[name])


def _connect(config: RunConfig) -> bool:
    """Connect to the cluster (or start a local instance); whether this call started the connection."""
    import ray

    if ray.is_initialized():
        return False
    address = config.ray_address or os.environ.get("RAY_ADDRESS") or None
    try:
        if address:
            ray.init(address=address, log_to_driver=False, configure_logging=False)
        else:
            ray.init(include_dashboard=False, log_to_driver=False, configure_logging=False,
                     num_cpus=max(2, config.concurrency))
    except ConnectionError as exc:
        raise InputError("--ray-address", None, f"{address}: no Ray cluster answers there ({exc})") from None
    return True


def run_ray(specs: list[EpisodeSpec], config: RunConfig, tasks: list[Task], *, progress: Progress | None = None,
            allow_hosts: list[str] | None = None, network: Network | None = None) -> list[Episode]:
    """Run episodes on `config.concurrency` Ray worker actors (spread over the cluster's nodes); return them in
    `specs` order, each written into the runs directory."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    try:
        import ray
        from ray.util import ActorPool
    except ImportError:
        raise InputError("--executor ray", None, "Ray is not installed; pip install 'sgr-rig[ray]'") from None
    started = _connect(config)
    # Paths as every node sees them (a worker's working directory is not the driver's).
    config = replace(config, runs_dir=config.runs_dir.resolve(),
                     frozen=config.frozen.resolve() if config.frozen is not None else None,
                     answer_file=config.answer_file.resolve() if config.answer_file is not None else None)
    try:
        worker = ray.remote(num_cpus=1, max_concurrency=1, resources=config.ray_resources or None)(EpisodeWorker)
        driver_node = ray.get_runtime_context().get_node_id()
        actors = [worker.options(scheduling_strategy="SPREAD").remote(config, tasks, allow_hosts, network, driver_node)
                  for _ in range(max(1, min(config.concurrency, len(specs))))]
        bar = progress.add_task("episodes (ray)", total=len(specs)) if progress else None
        runs = RunsDir(config.runs_dir)
        results: list[Episode] = []
        try:
            for spec, data in zip(specs, ActorPool(actors).map(lambda a, s: a.run.remote(s), specs)):
                if data["files"] is not None:
                    _receive(spec.directory(runs), data["files"])
                episode = Episode.model_validate(data["episode"])
                logger.info("{}: {} on Ray node {}", spec.label, episode.status, episode.ray_node)
                results.append(episode)
                if progress is not None:
                    progress.advance(bar)
        finally:
            try:
                ray.get([a.stop.remote() for a in actors], timeout=60)
            except Exception as exc:  # noqa: BLE001 - a worker that died has no sites server left to stop
                logger.debug("ray: a worker could not be stopped: {}", type(exc).__name__)
            for a in actors:
                ray.kill(a)
        return results
    finally:
        if started:
            ray.shutdown()
