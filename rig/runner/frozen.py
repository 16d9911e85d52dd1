"""`rig run --frozen SNAPSHOT`: loading site snapshots, checked against the tasks that will run on them.

A bundled task needs its site at its data version; a task on any origin (`start_url`) needs its start page in the
snapshot (`rig freeze` of its episodes). Either way every request is answered from the snapshot, never the network.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from loguru import logger

from replay import FrozenSite, Manifest, ReplayError, open_snapshot
from replay.snapshot import MANIFEST, snapshot_dirs
from rig.errors import InputError
from rig.formats.task import Task
from rig.qa.stored import warn_if_low
from rig.tasks.loader import SITE_NAME


def open_frozen(path: Path, tasks: Iterable[Task] = ()) -> FrozenSite:
    """`rig run --frozen SNAPSHOT`: load a site snapshot (one site's directory, `site_snapshots/` for all, or a
    `rig freeze` snapshot), checking that it holds every task's site at its data version, or its start page."""
    try:
        for d in snapshot_dirs(path):
            _check_manifest(d)
        frozen = open_snapshot(path)
    except ReplayError as exc:
        raise InputError(str(path), None, str(exc)) from None
    for problem in frozen.index.errors:
        logger.warning(problem)
    warn_if_low(path)  # the snapshot's replay QA (qa.json) found pages under its threshold
    for task in tasks:
        if task.site is not None:
            _check_site(path, frozen, task)
        elif task.start_url is not None and not frozen.index.lookup("GET", task.start_url):
            origins = sorted({o for m in frozen.manifests for o in m.origins}) or ["the bundled sites"]
            raise InputError("--frozen", None, f"{path} does not hold {task.start_url}, where {task.id} starts (it holds "
                                               f"{', '.join(origins)}): freeze episodes of the task with `rig freeze`")
    return frozen


def _check_site(path: Path, frozen: FrozenSite, task: Task) -> None:
    """A bundled task's site must be in the snapshot, at the task's data version."""
    held = {s: m for m in frozen.manifests for s in m.bundled_sites}
    m = held.get(task.site or "")
    if m is None:
        raise InputError("--frozen", None, f"{path} holds {', '.join(sorted(held)) or 'no bundled site'}, not {task.site} "
                                           f"({task.id}); pass site_snapshots to use every bundled site")
    if task.data_version not in m.data_version:
        raise InputError("--frozen", None, f"{task.id} needs {task.data_version}; the {m.site} snapshot holds "
                                           f"{', '.join(m.data_version) or 'no data version'}: rebuild it with "
                                           "scripts/build_snapshots.py (or `rig freeze` episodes of it)")


def _check_manifest(directory: Path) -> None:
    """A snapshot's manifest must be readable and its names (site, WARC files) must stay inside `directory`."""
    where = directory / MANIFEST
    try:
        m = Manifest.read(directory)
    except (ValueError, TypeError) as exc:
        raise InputError(str(where), None, f"not a snapshot manifest ({exc}); rebuild it with scripts/build_snapshots.py") from None
    if not isinstance(m.site, str) or not SITE_NAME.match(m.site):
        raise InputError(str(where), "site", f"{m.site!r} is not a site name: one plain segment that stays inside "
                                             f"{directory.parent}")
    for w in m.warcs if isinstance(m.warcs, list) else [m.warcs]:
        if not isinstance(w, str) or w in ("", ".", "..") or Path(w).name != w or "\\" in w:
            raise InputError(str(where), "warcs", f"{w!r} must name a file inside the snapshot directory {directory}")
