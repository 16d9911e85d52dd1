"""Grading one episode: table scores, gold-state reach, row provenance, drift, divergence, citations, evidence
records and the automatic failure label (a `Grade`). Grading reads files only, never a browser; the episode's
archive is read once and every check works on that one `Evidence`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel

from rig.episode_dir import EpisodeDir
from rig.formats.answer import Answer
from rig.formats.answer_text import ParseFailure
from rig.formats.episode import Episode
from rig.formats.grade import UNSCORED, EvidenceCheck, Grade
from rig.formats.task import Task
from rig.grading.citations import check_citations
from rig.grading.discovery import site_found
from rig.grading.evidence import Evidence
from rig.grading.hybrid import check_hybrid
from rig.grading.judge import Judge
from rig.grading.labels import is_perfect, label_episode
from rig.grading.record_checks import check_records
from rig.grading.states import EpisodeStates, first_divergence
from rig.grading.tables import score_table
from rig.tasks import task_of, task_sha256


def _evidence(task: Task, es: EpisodeStates) -> list[EvidenceCheck]:
    out = []
    for ev in task.evidence:
        hit = next((es.steps[i].step for i in es.displayed(ev.state)
                    if ev.url_contains is None or ev.url_contains in es.steps[i].url), None)
        out.append(EvidenceCheck(state=ev.state, description=ev.description, url_contains=ev.url_contains,
                                 met=hit is not None, step=hit))
    return out


def run_revision(episode: Episode) -> str | None:
    """The task revision episode.json recorded when the episode ran (`task_revision`, or `revision`), if any."""
    value = getattr(episode, "task_revision", None) or getattr(episode, "revision", None)
    return str(value) if value is not None else None


def run_usage(episode: Episode) -> dict[str, Any] | None:
    """episode.json's `usage` (tokens, cost, calls) as a plain mapping, if it records one."""
    usage = getattr(episode, "usage", None)
    if isinstance(usage, BaseModel):
        return usage.model_dump(mode="json")
    return dict(usage) if isinstance(usage, dict) else None


def grade_episode(episode_dir: str | Path | EpisodeDir, task: Task | None = None, *,
                  reference: EpisodeDir | None = None, task_file: Path | None = None,
                  judge: Judge | None = None) -> Grade:
    """Grade one episode directory against its task (found from episode.json when not given).

    `reference` is the reference agent's episode for the first-divergence comparison (found next to the
    episode when not given); `task_file` is hashed into `task_sha256` (located like the task when not given);
    `judge` decides the free-text hybrid tasks (`sql_to_search`, `parallel`) instead of the answer table.
    """
    ed = episode_dir if isinstance(episode_dir, EpisodeDir) else EpisodeDir(episode_dir)
    episode = ed.read_episode()
    if task is None or task_file is None:
        found = task_of(episode, ed.path)
        if found and task is None:
            task = found[0]
        if found and task_file is None and found[0] == task:
            task_file = found[1]
    grade = Grade(episode=str(ed.path), task_id=episode.task_id, variant=episode.variant, agent=episode.agent,
                  model=episode.model, trial=episode.trial, injected_fault=episode.injected_fault, status=episode.status,
                  scored=False, error=episode.error, versions=episode.versions.model_dump(), usage=run_usage(episode),
                  run_revision=run_revision(episode))
    if task is None:
        grade.error = grade.error or "no task: only graded episodes of a task are scored"
        return grade
    grade.task_id, grade.family, grade.site = task.id, task.family, task.site
    grade.task_sha256 = task_sha256(task_file) if task_file else None
    grade.task_revision = task.grading_revision
    if episode.status in UNSCORED:
        return grade
    grade.incomplete_evidence = ed.evidence_gaps()
    steps = ed.steps()
    if not steps and not grade.incomplete_evidence:
        grade.incomplete_evidence.append(f"{ed.trajectory_file.name} holds no complete step")
    archive = ed.archive() if steps else None
    if archive is not None and archive.records == 0 and not any(ed.warc_file.name in g for g in grade.incomplete_evidence):
        grade.incomplete_evidence.append(f"{ed.warc_file.name} holds no complete record")
    evidence = Evidence.from_archive(archive, steps) if archive is not None else Evidence()
    texts = evidence.texts
    grade.missing_text_steps = texts.missing
    answer: Answer | None = None
    if episode.status == "ok" and not ed.answer_file.exists():
        grade.status, grade.error = "agent_error", f"the episode ended ok but has no {ed.answer_file.name}"
    elif episode.status == "ok":
        try:
            answer = ed.read_answer()
        except ParseFailure as e:
            grade.status, grade.error = "parse_failure", str(e)
    passed = []
    if task.output is not None and task.gold is not None:
        pred = answer if answer is not None else Answer(columns=task.output.columns, rows=[])
        gold = Answer(columns=task.output.columns, rows=task.gold.rows)
        grade.scores = score_table(gold, pred, task.output.key, task.canonicalize)
        passed.append(is_perfect(grade.scores))
    if task.records is not None:
        graded = check_records(task.records, answer, evidence, steps, episode.start_url)
        grade.records, grade.record_scores = graded.records, graded.scores
        passed.append(graded.scores.hard_f1 >= 1.0 - 1e-9)
    grade.hybrid_type = task.hybrid_type
    if task.hybrid_type is not None:  # decided by execution match, the answer table or the judge (rig.grading.hybrid)
        ok = grade.status == "ok"
        grade.hybrid = check_hybrid(task, answer, steps, table_passed=all(passed), judge=judge if ok else None,
                                    task_file=task_file)
        passed = [grade.hybrid.passed and ok]
    grade.site_found, grade.site_found_step = site_found(task, steps)
    grade.scored, grade.passed = True, all(passed) and not grade.incomplete_evidence
    es = EpisodeStates(task, steps, texts, answer)
    grade.annotated = task.annotated
    grade.gold_states, grade.answer_states, grade.evidence = es.reach(), es.answer_names, _evidence(task, es)
    grade.step_marks = es.marks()
    grade.rows = es.provenance()
    if grade.rows and task.annotated:  # not annotated: null, never 0
        grade.state_anchored_rows = sum(p.state_anchored for p in grade.rows) / len(grade.rows)
    index = {s.step: i for i, s in enumerate(steps)}
    grade.drift = es.drift({index[n] for p in grade.rows for n in p.steps})
    reference = reference if reference is not None else ed.reference(episode.variant)
    if reference is not None:
        grade.reference_episode = str(reference.path)
        grade.first_divergence = first_divergence(steps, reference.steps())
    if answer is not None:
        grade.citations = check_citations(evidence, steps, answer, es, episode.start_url)
    if grade.status == "ok" and grade.scores is not None:
        label = label_episode(es, grade.scores, grade.rows)
        if label is not None:
            grade.label, grade.rationale, grade.label_step = label.category, label.rationale, label.step
    return grade
