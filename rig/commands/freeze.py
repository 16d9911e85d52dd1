"""`rig freeze RUNS_DIR|EPISODE_DIR... --out SNAPSHOT_DIR`: a site snapshot of what episodes archived (`replay.freeze`).

Episodes the rig ran recorded its sites server on some loopback port (`episode.json`'s `sites_url`, whether the
episode started there or found it through the tools from a blank page): their exchanges on it are moved onto
`FROZEN_ORIGIN`, where frozen runs put the bundled sites, so the snapshot names no random port. Every other origin is
kept as it was recorded, so `rig run --frozen SNAPSHOT_DIR` serves tasks that start on any origin (`start_url`) with
no network at all. Bodies recorded cut or missing stay so in the snapshot, with one warning naming them.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Optional

import typer
from loguru import logger

from replay import FROZEN_ORIGIN, ReplayError
from replay.freeze import FreezeResult, FreezeSource, freeze, move_origin, origin_of
from replay.snapshot import MANIFEST
from rig import __version__
from rig.commands.console import say
from rig.commands.options import QaThreshold
from rig.episode_dir import EpisodeDir, find_episodes
from rig.errors import InputError
from rig.formats.episode import Episode
from rig.formats.qa import DEFAULT_QA_THRESHOLD, QaReport
from rig.formats.task import Task
from rig.qa.fuzzy import fuzzy_rules
from rig.qa.run import EPISODE_DIRS, QaOptions, episode_sources, qa
from rig.tasks.loader import task_of


def freeze_episodes(paths: list[Path], out: Path, *, built_at: datetime | None = None,
                    fuzzy: list[str] | None = None) -> FreezeResult:
    """Freeze the episodes under `paths` into the snapshot directory `out` (rebuilt if it holds a snapshot); `fuzzy`:
    `--fuzzy` rules (query parameters ignored in matching, `rig.qa.fuzzy`)."""
    episodes = find_episodes(paths, "freeze")
    _check_out(out)
    rules = fuzzy_rules(fuzzy or [])
    sources, sites, versions, tasks, frozen = [], set(), set(), set(), []
    for ed in episodes:
        episode = ed.read_episode()
        if not ed.warc_file.is_file():
            logger.warning("{}: no archive, nothing of it is frozen", ed.path)
            continue
        task = _task(episode, ed)
        moves = {}
        served = _sites_origin(episode, task, ed)
        if served is not None:
            moves[served] = FROZEN_ORIGIN
        if task is not None and task.site is not None:
            sites.add(task.site)
            versions.add(task.data_version)
        if episode.task_id:
            tasks.add(episode.task_id)
        start = move_origin(episode.start_url, moves) if episode.start_url else None
        sources.append(FreezeSource(ed.warc_file, moves, start))
        frozen.append((ed, moves))
    if not sources:
        raise InputError(" ".join(map(str, paths)), None, "no episode there has an archive to freeze")
    try:
        result = freeze(sources, out, name=snapshot_name(out), built_at=built_at or datetime.now(UTC).replace(microsecond=0),
                        rig_version=__version__, sites=sites, data_version=versions - {""}, rules=rules,
                        info={"episodes": len(sources), "tasks": sorted(tasks),
                              EPISODE_DIRS: episode_sources(frozen, out)})
    except ReplayError as exc:
        raise InputError(str(out), None, str(exc).removeprefix(f"{out}: ")) from None
    for problem in result.problems:
        logger.warning(problem)
    if (warning := result.incomplete_warning(out)) is not None:
        logger.warning(warning)
    return result


def qa_frozen(out: Path, threshold: float) -> QaReport:
    """`rig freeze`'s replay QA of the snapshot it wrote (`rig qa`): `qa.json` beside the manifest; the report."""
    return qa(out, QaOptions(threshold=threshold))[0]


def _sites_origin(episode: Episode, task: Task | None, ed: EpisodeDir) -> str | None:
    """The origin the rig served its bundled sites on in this episode: its `sites_url`; for an episode recorded before
    episodes named it, its start page's, when that is a bundled site's (None when it cannot be told)."""
    if episode.sites_url:
        return origin_of(episode.sites_url)
    if task is None or task.site is None:
        return None
    if episode.start_url and episode.start_url.startswith(("http://", "https://")):
        return origin_of(episode.start_url)
    logger.warning("{}: recorded without its sites server's address and started on a blank page: its bundled site's "
                   "origin is frozen as recorded", ed.path)
    return None


def snapshot_name(out: Path) -> str:
    """The snapshot's name in its manifest: the directory's name as a plain lower-case segment."""
    name = re.sub(r"[^a-z0-9_-]+", "-", out.resolve().name.lower()).strip("-_")
    return name or "frozen"


def _check_out(out: Path) -> None:
    """`--out` is new, empty, or a snapshot to rebuild: never a directory holding something else."""
    if out.exists() and not out.is_dir():
        raise InputError("--out", None, f"{out} is a file; name a directory for the snapshot")
    if out.is_dir() and any(out.iterdir()) and not (out / MANIFEST).is_file():
        raise InputError("--out", None, f"{out} holds files and no snapshot; name a new or empty directory")


def _task(episode: Episode, ed: EpisodeDir) -> Task | None:
    """The episode's task, when it can still be loaded (a moved task file: the episode counts as any origin's)."""
    try:
        found = task_of(episode, ed.path)
    except InputError as exc:
        logger.warning("{}: its task cannot be loaded ({}); its origins are frozen as recorded", ed.path, exc)
        return None
    return found[0] if found else None


def freeze_command(
    paths: list[Path] = typer.Argument(..., help="runs directories or episode directories"),
    out_dir: Path = typer.Option(..., "--out", help="the snapshot directory to write (new, empty, or a snapshot)"),
    fuzzy: Optional[list[str]] = typer.Option(None, "--fuzzy", help="NAME[@[HOST]/PATH]: ignore this query parameter "
                                              "(a cache-buster, a timestamp) when matching requests (repeatable)"),
    no_qa: bool = typer.Option(False, "--no-qa", help="do not score the snapshot's replay fidelity (`rig qa`)"),
    threshold: QaThreshold = DEFAULT_QA_THRESHOLD,
) -> None:
    """Freeze what episodes archived into a site snapshot of any origin (serve it with `rig run --frozen`), then score
    its replay fidelity (`rig qa`, kept as qa.json)."""
    m = freeze_episodes(paths, out_dir, fuzzy=fuzzy).manifest
    say(f"{out_dir}: {m.exchanges} answers from {m.sources.get('episodes', 0)} episodes, {m.bytes / 1e6:.2f} MB "
        f"({', '.join(m.origins)})")
    if not no_qa:
        say(qa_frozen(out_dir, threshold).line())
