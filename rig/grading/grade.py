"""`rig grade` for one episode: table scores, gold-state reach, row provenance, drift, divergence, citations
and the automatic failure label, written as `grade.json`. Grading reads files only (never a browser).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from recorders.models import Step
from rig import __version__
from rig.answer import Answer
from rig.episode import EPISODE_FILE, Episode, Status, read_episode
from rig.grading.evidence import EpisodeTexts, read_step_texts
from rig.grading.labels import is_perfect, label_episode
from rig.grading.parse import ParseFailure, read_steps
from rig.grading.record_checks import RecordCheck, check_records
from rig.grading.records import RollupScores
from rig.grading.states import DriftEvent, Divergence, EpisodeStates, RowProvenance, StateReach, first_divergence
from rig.grading.tables import TableScore, score_table
from rig.grading.verify import TRAJECTORY_FILE, CitationCheck, check_citations, file_sha256, read_answer, task_for
from rig.tasks.models import FailureKind, Task

GRADER_VERSION = "1.0.0"
GRADE_FILE = "grade.json"
ANSWER_FILE = "answer.json"
#: Statuses that are never scored (not even as zero): the rig failed, or the episode never finished.
UNSCORED: tuple[str, ...] = ("infra_error", "incomplete")


class EvidenceCheck(BaseModel):
    """One evidence requirement of the task: whether a page rendered under its gold state was shown on a matching URL."""

    state: str
    description: str
    url_contains: str | None = None
    met: bool
    step: int | None = None


class Grade(BaseModel):
    """`grade.json`: everything the grader concluded about one episode."""

    format: Literal["sgr-rig/grade/1"] = "sgr-rig/grade/1"
    grader_version: str = GRADER_VERSION
    rig_version: str = __version__
    episode: str = Field(description="the episode directory as given to the grader")
    task_id: str | None = None
    task_sha256: str | None = Field(default=None, description="SHA-256 of the task file the episode was graded against")
    family: str | None = None
    site: str | None = None
    variant: str | None = None
    agent: str
    model: str | None = None
    trial: int = 0
    injected_fault: str | None = Field(default=None, description="copied from episode.json (perturbed agents)")
    status: Status
    scored: bool = Field(description="false for infra_error/incomplete episodes and episodes without a task: "
                                     "never scored as zero, excluded from means")
    error: str | None = None
    passed: bool | None = Field(default=None, description="Row-F1 = 1 and P.O.A. = 1 (or a single gold row) for an "
                                                        "answer table, and hard record F1 = 1 for records")
    scores: TableScore | None = Field(default=None, description="answer-table scores (null: a records-only task)")
    records: list[RecordCheck] = Field(default_factory=list, description="per-record verdicts (tasks with `records`)")
    record_scores: RollupScores | None = Field(default=None, description="soft and hard record P/R/F1 (tasks with `records`)")
    gold_states: list[StateReach] = Field(default_factory=list)
    answer_states: list[str] = Field(default_factory=list)
    evidence: list[EvidenceCheck] = Field(default_factory=list)
    rows: list[RowProvenance] = Field(default_factory=list, description="provenance of each answer row")
    state_anchored_rows: float | None = Field(default=None, description="share of answer rows visible in an answer state")
    drift: list[DriftEvent] = Field(default_factory=list)
    reference_episode: str | None = Field(default=None, description="the reference run compared against (null: none found)")
    first_divergence: Divergence | None = Field(default=None, description="null with a reference_episode: no divergence")
    citations: list[CitationCheck] = Field(default_factory=list)
    missing_text_steps: list[int] = Field(default_factory=list, description="steps with no text record in the WARC")
    label: FailureKind | None = None
    rationale: str | None = None
    label_step: int | None = None


def find_reference(episode_dir: Path, episode: Episode) -> Path | None:
    """The reference agent's episode for the same task and variant next to this one (RUNS/<task>/<variant>/reference)."""
    variant_dir = Path(episode_dir).resolve().parent.parent
    if episode.variant is None or variant_dir.name != episode.variant:
        return None
    for trial in sorted((variant_dir / "reference").glob("trial-*"), key=lambda p: (len(p.name), p.name)):
        if trial == Path(episode_dir).resolve() or not (trial / EPISODE_FILE).exists():
            continue
        ref = read_episode(trial)
        if ref.agent == "reference" and ref.status == "ok":
            return trial
    return None


def _steps(episode_dir: Path) -> list[Step]:
    path = episode_dir / TRAJECTORY_FILE
    return read_steps(path) if path.exists() else []


def _evidence(task: Task, es: EpisodeStates) -> list[EvidenceCheck]:
    out = []
    for ev in task.evidence:
        hit = next((es.steps[i].step for i in es.displayed(ev.state)
                    if ev.url_contains is None or ev.url_contains in es.steps[i].url), None)
        out.append(EvidenceCheck(state=ev.state, description=ev.description, url_contains=ev.url_contains,
                                 met=hit is not None, step=hit))
    return out


def grade_episode(episode_dir: str | Path, task: Task | None = None, *, reference: Path | None = None,
                  task_file: Path | None = None) -> Grade:
    """Grade one episode directory against its task (found from episode.json when not given).

    `reference` is the reference agent's episode for the first-divergence comparison (found next to the
    episode when not given); `task_file` is hashed into `task_sha256` (located like the task when not given).
    """
    episode_dir = Path(episode_dir)
    episode = read_episode(episode_dir)
    if task is None or task_file is None:
        found = task_for(episode, episode_dir)
        if found and task is None:
            task = found[0]
        if found and task_file is None and found[0] == task:
            task_file = found[1]
    grade = Grade(episode=str(episode_dir), task_id=episode.task_id, variant=episode.variant, agent=episode.agent,
                  model=episode.model, trial=episode.trial, injected_fault=episode.injected_fault, status=episode.status,
                  scored=False, error=episode.error)
    if task is None:
        grade.error = grade.error or "no task: only graded episodes of a task are scored"
        return grade
    grade.task_id, grade.family, grade.site = task.id, task.family, task.site
    grade.task_sha256 = file_sha256(task_file) if task_file else None
    if episode.status in UNSCORED:
        return grade
    steps = _steps(episode_dir)
    texts = read_step_texts(episode_dir, steps) if steps else EpisodeTexts()
    grade.missing_text_steps = texts.missing
    answer: Answer | None = None
    if episode.status == "ok" and not (episode_dir / ANSWER_FILE).exists():
        grade.status, grade.error = "agent_error", f"the episode ended ok but has no {ANSWER_FILE}"
    elif episode.status == "ok":
        try:
            answer = read_answer(episode_dir / ANSWER_FILE)
        except ParseFailure as e:
            grade.status, grade.error = "parse_failure", str(e)
    passed = []
    if task.output is not None and task.gold is not None:
        pred = answer if answer is not None else Answer(columns=task.output.columns, rows=[])
        gold = Answer(columns=task.output.columns, rows=task.gold.rows)
        grade.scores = score_table(gold, pred, task.output.key, task.canonicalize)
        passed.append(is_perfect(grade.scores))
    if task.records is not None:
        graded = check_records(task.records, answer, episode_dir, steps, texts, episode.start_url)
        grade.records, grade.record_scores = graded.records, graded.scores
        passed.append(graded.scores.hard_f1 >= 1.0 - 1e-9)
    grade.scored, grade.passed = True, all(passed)
    es = EpisodeStates(task, steps, texts, answer)
    grade.gold_states, grade.answer_states, grade.evidence = es.reach(), es.answer_names, _evidence(task, es)
    grade.rows = es.provenance()
    if grade.rows:
        grade.state_anchored_rows = sum(p.state_anchored for p in grade.rows) / len(grade.rows)
    index = {s.step: i for i, s in enumerate(steps)}
    grade.drift = es.drift({index[n] for p in grade.rows for n in p.steps})
    reference = reference if reference is not None else find_reference(episode_dir, episode)
    if reference is not None:
        grade.reference_episode = str(reference)
        grade.first_divergence = first_divergence(steps, _steps(Path(reference)))
    if answer is not None:
        grade.citations = check_citations(episode_dir, steps, texts, answer, es, episode.start_url)
    if grade.status == "ok" and grade.scores is not None:
        label = label_episode(es, grade.scores, grade.rows)
        if label is not None:
            grade.label, grade.rationale, grade.label_step = label.category, label.rationale, label.step
    return grade


def write_grade(episode_dir: str | Path, grade: Grade) -> Path:
    """Write grade.json into the episode directory (atomically)."""
    path = Path(episode_dir) / GRADE_FILE
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(grade.model_dump_json(indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def schemas() -> dict[str, dict[str, Any]]:
    """JSON Schemas of grade.json and summary.json (for rig.schemas)."""
    from rig.grading.summary import Summary

    return {"grade.schema.json": Grade.model_json_schema(), "summary.schema.json": Summary.model_json_schema()}
