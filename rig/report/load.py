"""What the report shows, read from a runs directory's files: summary.json, and per episode episode.json,
grade.json, trajectory.jsonl, the page texts of evidence.warc.gz, answer.json and audit.json. The report never
re-grades: every verdict it shows (per-step constraint marks, highlights, labels, summary rows) comes from grade.json
and summary.json as `rig grade` wrote them; an episode without grade.json is shown as not graded, one whose grade.json
is of an older format asks for a regrade."""

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

#: What the report says where grade.json or summary.json is of an older format than the grader writes now.
REGRADE = ("regrade with `rig grade RUNS_DIR` (it redoes the grades of an older grader; `rig grade --force` redoes "
           "every one)")


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
    """One gold-state constraint at one step, as grade.json's `step_marks` judged it."""

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
    page_error: str | None = None

    @property
    def auto_label(self) -> str | None:
        """The grader's failure category (None: no failure or not graded)."""
        return self.grade.label if self.grade else None

    @property
    def outdated(self) -> bool:
        """Whether the episode's grade.json is of an older format (it lacks what the report shows)."""
        return self.grade is not None and self.grade.outdated

    @cached_property
    def steps(self) -> list[Step]:
        """The trajectory's steps (empty when the file is missing)."""
        return EpisodeDir(self.dir).steps()

    @cached_property
    def texts(self) -> dict[int, str]:
        """The page text captured at each step, by step number (a step without a text record is left out)."""
        return EpisodeDir(self.dir).step_texts(self.steps)

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

    @cached_property
    def _step_marks(self) -> dict[int, dict[str, list[bool]]]:
        return {m.step: m.holds for m in self.grade.step_marks} if self.grade else {}

    def forget(self) -> None:
        """Drop the cached steps, texts and answer (they are read again when needed)."""
        for name in ("steps", "texts", "answer"):
            self.__dict__.pop(name, None)

    def marks(self, step: Step) -> dict[str, list[ConstraintMark]]:
        """Per gold state, each of its constraints at this step: whether grade.json says it holds, and the value the
        step's state has for its key (none: the step has no marks in grade.json)."""
        held = self._step_marks.get(step.step)
        if self.grade is None or held is None:
            return {}
        return {r.name: [ConstraintMark(c.key, c.op, c.value, step.state.get(c.key), c.tag, c.dependent, h)
                         for c, h in zip(r.constraints, held.get(r.name, []))]
                for r in self.grade.gold_states}


def _grade(d: Path) -> Grade | None:
    ed = EpisodeDir(d)
    if not ed.grade_file.exists():
        return None
    try:
        return ed.read_grade()
    except InputError as e:
        logger.warning("{}; shown as not graded", e)
        return None


def load_episode(runs_dir: Path, d: Path) -> EpisodeData:
    """Read one episode directory."""
    episode = EpisodeDir(d).read_episode()
    try:
        audit, audit_error = EpisodeDir(d).read_audit(), None
    except RigError as e:
        audit, audit_error = None, str(e)
    return EpisodeData(id=episode_id(runs_dir, d), dir=d, episode=episode, grade=_grade(d), audit=audit,
                       audit_error=audit_error)


@dataclass
class Broken:
    """A directory the report could not show as an episode, and why."""

    path: Path
    reason: str


@dataclass
class RunData:
    """A runs directory: its summary (None: no readable summary.json, see `summary_error`), its episodes, and what
    could not be shown."""

    runs_dir: Path
    summary: Summary | None
    summary_error: str | None = None
    episodes: list[EpisodeData] = field(default_factory=list)
    broken: list[Broken] = field(default_factory=list)

    def by_id(self, eid: str) -> EpisodeData | None:
        """The episode with this id, if any."""
        return next((e for e in self.episodes if e.id == eid), None)

    @property
    def outdated(self) -> bool:
        """Whether summary.json, or a grade.json, is of an older format than the grader writes now."""
        return (self.summary is not None and self.summary.outdated) or any(e.outdated for e in self.episodes)


def read_summary(runs_dir: Path) -> tuple[Summary | None, str | None]:
    """The run's summary.json, or None and why there is none to show."""
    runs = RunsDir(runs_dir)
    if not runs.summary_file.exists():
        return None, f"no {runs.summary_file.name}: run `rig grade {runs_dir}`, then write the report again"
    try:
        return runs.read_summary(), None
    except InputError as e:
        logger.warning("{}; the report shows no summary", e)
        return None, f"{e}; {REGRADE}"


def load_run(runs_dir: Path) -> RunData:
    """Read every episode under `runs_dir` (or `runs_dir` itself when it is one episode directory)."""
    runs_dir = Path(runs_dir)
    if not runs_dir.is_dir():
        raise InputError(str(runs_dir), None, "no such runs directory" if not runs_dir.exists() else "not a directory")
    single = EpisodeDir(runs_dir).exists()
    dirs = [runs_dir] if single else [e.path for e in RunsDir(runs_dir).episodes()]
    episodes, broken = [], []
    for d in dirs:
        try:
            episodes.append(load_episode(runs_dir, d))
        except Exception as e:  # noqa: BLE001 - one bad episode is listed, the rest are reported
            logger.warning("{}: listed as broken in the report: {}", d, e)
            broken.append(Broken(d, str(e) if isinstance(e, (OSError, ValueError, RigError)) else f"{type(e).__name__}: {e}"))
    if not single:
        broken += [Broken(d, f"no {EPISODE_FILE}: not an episode") for d in RunsDir(runs_dir).strays()]
    summary, why = (None, "one episode directory: `rig grade` writes a summary for a runs directory") if single \
        else read_summary(runs_dir)
    return RunData(runs_dir=runs_dir, summary=summary, summary_error=why, episodes=episodes, broken=broken)
