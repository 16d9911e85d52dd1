"""A bundled site's snapshot has no frozen episode to compare with: the reference agent's episodes of the site's tasks
are recorded for the QA on the bundled sites served here (127.0.0.1, nothing else), at the data version the snapshot
holds, and then replayed against the snapshot like frozen episodes (their sites server moved onto `FROZEN_ORIGIN`)."""

from __future__ import annotations

from pathlib import Path

from loguru import logger

from recorders import RecorderOptions
from replay import FROZEN_ORIGIN, Manifest
from replay.freeze import origin_of
from rig.agents.base import Budget
from rig.agents.registry import make_agent
from rig.episode_dir import EpisodeDir, RunsDir
from rig.qa.episodes import EpisodeUnderQa
from rig.runner.local import plan, run_local
from rig.sites import SitesServer, bundled_sites
from rig.tasks import bundled_tasks

#: How the reference episodes are recorded: step images (what the replay's are compared with), no DOM snapshot.
_OPTIONS = RecorderOptions(dom_snapshot=False, fsync=False)


async def live_references(manifest: Manifest, work: Path) -> list[EpisodeUnderQa]:
    """The reference agent's episodes (constraint prompts) of every bundled task on the snapshot's site and data
    version, recorded live into `work`; none when the snapshot is not a bundled site's."""
    if manifest.origins or manifest.site not in {s.name for s in bundled_sites()}:
        return []
    tasks = [t for t in bundled_tasks() if t.site == manifest.site and t.data_version in manifest.data_version]
    if not tasks:
        return []
    runs = RunsDir(work)
    with SitesServer() as srv:
        specs = plan(tasks, ["constraint"], "reference", 1, runs, resume=False)
        episodes = await run_local(specs, make_agent("reference"), runs.path, sites_url=srv.url,
                                   budget=Budget(timeout_s=120), options=_OPTIONS)
        moves = {origin_of(srv.url): FROZEN_ORIGIN}
    out = []
    for spec, ep in zip(specs, episodes, strict=True):
        if ep.status != "ok":
            logger.warning("{}: the live reference episode ended {} ({}): not compared", spec.label, ep.status, ep.error)
            continue
        out.append(EpisodeUnderQa(EpisodeDir(spec.directory(runs.path)), moves=moves))
    return out
