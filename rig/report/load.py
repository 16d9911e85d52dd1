"""What the report shows, read from a runs directory's files: summary.json, and per episode episode.json,
grade.json, trajectory.jsonl, answer.json, audit.json and the task (for per-step constraint checks).
The report never re-grades: an episode without grade.json is shown as not graded."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from loguru import logger
from pydantic import ValidationError

from recorders.models import Step
from rig.episode_dir import EPISODE_FILE, EpisodeDir, RunsDir
from rig.errors import InputError, RigError
from rig.formats.answer import Answer
from rig.formats.audit import Audit
from rig.formats.episode import Episode
from rig.formats.files import read_limited
from rig.formats.grade import Grade
from rig.formats.summary import Summary
from rig.formats.task import Task
from rig.grading.evidence import EpisodeTexts, Evidence
from rig.grading.states import holds
from rig.grading.summary import summarize
from rig.tasks import task_of


def episode_id(runs_dir: Path, episode_dir: Path) -> str:
    """A file-name-safe id: the episode's path under the runs directory joined with `__`
    (`eco-01__constraint__reference__trial-0`). When that is not the path itself (a character was replaced, or a
    name holds `__`), a digest of the path is appended, so two directories never share an id."""
    rel = episode_dir.resolve().relative_to(runs_dir.resolve()).parts or (episode_dir.resolve().name,)
    safe = [re.sub(r"[^A-Za-z0-9._-]", "_", p) for p in rel]
    eid = "__".join(safe)
    if safe != list(rel) or any("__" in p for p in rel):
        eid += "-" + hashlib.sha256("/".join(rel).encode("utf-8", "surrogateescape")).hexdigest()[:10]
    return eid


@dataclass
class ConstraintMark:
    """One gold-state constraint evaluated at one step."""

    key: str
    op: str
    expected: Any
    actual: Any
    tag: str
    dependent: bool
    holds: bool


@dataclass
class EpisodeData:
    """One episode's files, parsed."""

    id: str
    dir: Path
    episode: Episode
    grade: Grade | None
    audit: Audit | None
    audit_error: str | None = None
    task: Task | None = None
    page_error: str | None = None

    @property
    def auto_label(self) -> str | None:
        """The grader's failure category (None: no failure or not graded)."""
        return self.grade.label if self.grade else None

    @cached_property
    def steps(self) -> list[Step]:
        """The trajectory's steps (empty when the file is missing)."""
        return EpisodeDir(self.dir).steps()

    @cached_property
    def texts(self) -> EpisodeTexts:
        """The page text captured at each step."""
        if not self.steps:
            return EpisodeTexts()
        return Evidence.from_archive(EpisodeDir(self.dir).archive(), self.steps).texts

    @cached_property
    def answer(self) -> tuple[Answer | None, str | None]:
        """The answer as answer.json holds it, or None and why it could not be read."""
        path = EpisodeDir(self.dir).answer_file
        if not path.exists():
            return None, f"no {path.name}"
        try:
            return Answer.model_validate_json(read_limited(path, path.name)), None
        except InputError as e:
            return None, e.reason
        except (ValueError, ValidationError) as e:
            return None, f"{path.name} is not an answer in the {path.name} form: {e}"

    def forget(self) -> None:
        """Drop the cached steps, texts and answer (they are read again when needed)."""
        for name in ("steps", "texts", "answer"):
            self.__dict__.pop(name, None)

    def marks(self, step: Step) -> dict[str, list[ConstraintMark]]:
        """Per gold state of the task, each of its constraints checked against the step's state."""
        if self.task is None:
            return {}
        return {s.name: [ConstraintMark(c.key, c.op, c.value, step.state.get(c.key), c.tag, c.dependent,
                                        holds(c, step.state)) for c in s.constraints]
                for s in self.task.gold_states}


def _grade(d: Path) -> Grade | None:
    ed = EpisodeDir(d)
    if not ed.grade_file.exists():
        return None
    try:
        return ed.read_grade()
    except InputError as e:
        logger.warning("{}; shown as not graded", e)
        return None


def load_episode(runs_dir: Path, d: Path, tasks: dict[str, Task | None] | None = None) -> EpisodeData:
    """Read one episode directory (and its task, cached in `tasks` by task id)."""
    episode = EpisodeDir(d).read_episode()
    try:
        audit, audit_error = EpisodeDir(d).read_audit(), None
    except RigError as e:
        audit, audit_error = None, str(e)
    tasks = {} if tasks is None else tasks
    key = str(getattr(episode, "task_path", None) or episode.task_id)
    if key not in tasks:
        try:
            found = task_of(episode, d)
        except RigError as e:
            logger.warning("{}: task not loaded ({}); constraint checks left out", d, e)
            found = None
        tasks[key] = found[0] if found else None
    return EpisodeData(id=episode_id(runs_dir, d), dir=d, episode=episode, grade=_grade(d), audit=audit,
                       audit_error=audit_error, task=tasks[key])


@dataclass
class Broken:
    """A directory the report could not show as an episode, and why."""

    path: Path
    reason: str


@dataclass
class RunData:
    """A runs directory: its summary, its episodes, and what could not be shown."""

    runs_dir: Path
    summary: Summary
    summary_from_file: bool
    episodes: list[EpisodeData] = field(default_factory=list)
    broken: list[Broken] = field(default_factory=list)

    def by_id(self, eid: str) -> EpisodeData | None:
        """The episode with this id, if any."""
        return next((e for e in self.episodes if e.id == eid), None)


def _summary(runs_dir: Path, episodes: list[EpisodeData]) -> tuple[Summary, bool]:
    path = RunsDir(runs_dir).summary_file
    if path.exists():
        try:
            return RunsDir(runs_dir).read_summary(), True
        except InputError as e:
            logger.warning("{}; summarising the episodes' grades instead", e)
    return summarize([e.grade for e in episodes if e.grade], str(runs_dir)), False


def load_run(runs_dir: Path) -> RunData:
    """Read every episode under `runs_dir` (or `runs_dir` itself when it is one episode directory)."""
    runs_dir = Path(runs_dir)
    if not runs_dir.is_dir():
        raise InputError(str(runs_dir), None, "no such runs directory" if not runs_dir.exists() else "not a directory")
    dirs = [runs_dir] if EpisodeDir(runs_dir).exists() else [e.path for e in RunsDir(runs_dir).episodes()]
    tasks: dict[str, Task | None] = {}
    episodes, broken = [], []
    for d in dirs:
        try:
            episodes.append(load_episode(runs_dir, d, tasks))
        except Exception as e:  # noqa: BLE001 - one bad episode is listed, the rest are reported
            logger.warning("{}: listed as broken in the report: {}", d, e)
            broken.append(Broken(d, str(e) if isinstance(e, (OSError, ValueError, RigError)) else f"{type(e).__name__}: {e}"))
    if dirs != [runs_dir]:
        broken += [Broken(d, f"no {EPISODE_FILE}: not an episode") for d in RunsDir(runs_dir).strays()]
    summary, from_file = _summary(runs_dir, episodes)
    return RunData(runs_dir=runs_dir, summary=summary, summary_from_file=from_file, episodes=episodes, broken=broken)
