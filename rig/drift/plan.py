"""What one `rig drift` re-checks, loaded before any browser starts."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from replay import FrozenSite, ReplayError, open_snapshot
from replay.freeze import origin_of
from replay.index import ArchiveIndex
from replay.report import RecordedStep
from replay.snapshot import snapshot_dirs
from rig.episode_dir import EpisodeDir, RunsDir
from rig.errors import InputError
from rig.runner.redrive import recorded_episode
from rig.tasks.loader import task_of


@dataclass
class EpisodeCheck:
    """An episode to re-drive live: its directory, its archive and its recorded steps."""

    episode: EpisodeDir
    index: ArchiveIndex
    steps: list[RecordedStep]

    @property
    def origins(self) -> dict[str, str]:
        """The web origins its steps were on, each with the first URL of it, in the order the steps went there."""
        found: dict[str, str] = {}
        for step in self.steps:
            if step.url.startswith(("http://", "https://")):
                found.setdefault(origin_of(step.url), step.url)
        return found


@dataclass
class SnapshotCheck:
    """A snapshot whose archived requests are sent again."""

    directory: Path
    frozen: FrozenSite


@dataclass
class DriftPlan:
    """Every episode and snapshot to re-check, and what was left out (and why)."""

    episodes: list[EpisodeCheck] = field(default_factory=list)
    snapshots: list[SnapshotCheck] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def plan_drift(paths: list[Path]) -> DriftPlan:
    """Load every episode and snapshot under `paths`; InputError (before any browser starts) for bad input."""
    if not paths:
        raise InputError("drift", None, "name a runs, episode or snapshot directory")
    plan = DriftPlan()
    for path in paths:
        if not path.is_dir():
            raise InputError(str(path), None, "no such runs, episode or snapshot directory")
        ed = EpisodeDir(path)
        if ed.episode_file.is_file() or ed.trajectory_file.is_file():
            _plan_episode(plan, ed)
        elif snapshots := _snapshots(path):
            for d in snapshots:
                _plan_snapshot(plan, d)
        elif episodes := RunsDir(path).episodes():
            for e in episodes:
                _plan_episode(plan, e)
        else:
            raise InputError(str(path), None, "neither an episode, a runs directory nor a snapshot (no episode.json, "
                                              "trajectory.jsonl or manifest.json in it or below it)")
    if not plan.episodes and not plan.snapshots:
        raise InputError(" ".join(map(str, paths)), None, "nothing to check on a live origin: " + "; ".join(plan.skipped))
    return plan


def _snapshots(path: Path) -> list[Path]:
    try:
        return snapshot_dirs(path)
    except ReplayError:
        return []


def _plan_episode(plan: DriftPlan, ed: EpisodeDir) -> None:
    index, steps = recorded_episode(ed.path)
    if ed.episode_file.is_file():
        try:
            found = task_of(ed.read_episode(), ed.path)
        except InputError:  # its task file moved or broke: the episode is re-driven on the origins it recorded
            found = None
        if found is not None and found[0].site is not None:
            plan.skipped.append(f"{ed.path}: ran on the bundled site {found[0].site} (re-drive it with `rig replay`)")
            return
    plan.episodes.append(EpisodeCheck(ed, index, steps))


def _plan_snapshot(plan: DriftPlan, directory: Path) -> None:
    try:
        frozen = open_snapshot(directory)
    except (ReplayError, ValueError, TypeError) as exc:
        raise InputError(str(directory), None, f"not a readable snapshot ({exc})") from None
    if any(not m.origins for m in frozen.manifests):
        plan.skipped.append(f"{directory}: a bundled site's snapshot answers under any origin; it has no live origin")
        return
    plan.snapshots.append(SnapshotCheck(directory, frozen))
