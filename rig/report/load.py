"""What the report shows, read from a runs directory's files: summary.json, and per episode episode.json,
grade.json, trajectory.jsonl, answer.json, audit.json and the task (for per-step constraint checks).
The report never re-grades: an episode without grade.json is shown as not graded."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from loguru import logger
from pydantic import ValidationError

from recorders.models import Step
from recorders.trajectory import read_trajectory
from rig.answer import Answer
from rig.episode import EPISODE_FILE, Episode, read_episode
from rig.errors import RigError
from rig.grading.evidence import EpisodeTexts, read_step_texts
from rig.grading.grade import ANSWER_FILE, GRADE_FILE, Grade
from rig.grading.states import holds
from rig.grading.summary import SUMMARY_FILE, Summary, episode_dirs, summarize
from rig.grading.verify import TRAJECTORY_FILE, task_for
from rig.report.audit import Audit, read_audit
from rig.tasks.models import Task


def episode_id(runs_dir: Path, episode_dir: Path) -> str:
    """A file-name-safe id: the episode's path under the runs directory joined with `__`
    (`eco-01__constraint__reference__trial-0`)."""
    rel = episode_dir.resolve().relative_to(runs_dir.resolve()).parts or (episode_dir.resolve().name,)
    return "__".join(re.sub(r"[^A-Za-z0-9._-]", "_", p) for p in rel)


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

    @property
    def auto_label(self) -> str | None:
        """The grader's failure category (None: no failure or not graded)."""
        return self.grade.label if self.grade else None

    @cached_property
    def steps(self) -> list[Step]:
        """The trajectory's steps (empty when the file is missing)."""
        path = self.dir / TRAJECTORY_FILE
        return read_trajectory(path) if path.exists() else []

    @cached_property
    def texts(self) -> EpisodeTexts:
        """The page text captured at each step."""
        return read_step_texts(self.dir, self.steps) if self.steps else EpisodeTexts()

    @cached_property
    def answer(self) -> tuple[Answer | None, str | None]:
        """The answer as answer.json holds it, or None and why it could not be read."""
        path = self.dir / ANSWER_FILE
        if not path.exists():
            return None, "no answer.json"
        try:
            return Answer.model_validate(json.loads(path.read_text(encoding="utf-8"))), None
        except (ValueError, ValidationError) as e:
            return None, f"answer.json is not an answer in the answer.json form: {e}"

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
    path = d / GRADE_FILE
    if not path.exists():
        return None
    try:
        return Grade.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as e:
        logger.warning("{}: grade.json unreadable ({}); shown as not graded", path, e.error_count())
        return None


def load_episode(runs_dir: Path, d: Path, tasks: dict[str, Task | None] | None = None) -> EpisodeData:
    """Read one episode directory (and its task, cached in `tasks` by task id)."""
    episode = read_episode(d)
    try:
        audit, audit_error = read_audit(d), None
    except RigError as e:
        audit, audit_error = None, str(e)
    tasks = {} if tasks is None else tasks
    key = str(getattr(episode, "task_path", None) or episode.task_id)
    if key not in tasks:
        try:
            found = task_for(episode, d)
        except RigError as e:
            logger.warning("{}: task not loaded ({}); constraint checks left out", d, e)
            found = None
        tasks[key] = found[0] if found else None
    return EpisodeData(id=episode_id(runs_dir, d), dir=d, episode=episode, grade=_grade(d), audit=audit,
                       audit_error=audit_error, task=tasks[key])


@dataclass
class RunData:
    """A runs directory: its summary and its episodes."""

    runs_dir: Path
    summary: Summary
    summary_from_file: bool
    episodes: list[EpisodeData] = field(default_factory=list)

    def by_id(self, eid: str) -> EpisodeData | None:
        """The episode with this id, if any."""
        return next((e for e in self.episodes if e.id == eid), None)


def _summary(runs_dir: Path, episodes: list[EpisodeData]) -> tuple[Summary, bool]:
    path = runs_dir / SUMMARY_FILE
    if path.exists():
        try:
            return Summary.model_validate_json(path.read_text(encoding="utf-8")), True
        except ValidationError as e:
            logger.warning("{}: unreadable ({} errors); summarising grade.json files instead", path, e.error_count())
    return summarize([e.grade for e in episodes if e.grade], str(runs_dir)), False


def load_run(runs_dir: Path) -> RunData:
    """Read every episode under `runs_dir` (or `runs_dir` itself when it is one episode directory)."""
    runs_dir = Path(runs_dir)
    dirs = [runs_dir] if (runs_dir / EPISODE_FILE).exists() else episode_dirs(runs_dir)
    tasks: dict[str, Task | None] = {}
    episodes = []
    for d in dirs:
        try:
            episodes.append(load_episode(runs_dir, d, tasks))
        except (OSError, ValueError) as e:
            logger.warning("{}: left out of the report: {}", d, e)
    summary, from_file = _summary(runs_dir, episodes)
    return RunData(runs_dir=runs_dir, summary=summary, summary_from_file=from_file, episodes=episodes)
