"""`rig grade RUNS_DIR|EPISODE_DIR`: grade every episode (`grade.json` each), then summarise the run.

Means are over scored episodes (infra_error and incomplete episodes are counted, never scored as zero;
an agent's timeout, error or unparsable answer scores zero). An episode that cannot be graded (unreadable
files, an unknown task file) gets an unscored grade that says why.
"""

from __future__ import annotations

from pathlib import Path

from loguru import logger

from rig.episode_dir import EpisodeDir, RunsDir
from rig.errors import InputError, RigError
from rig.formats.grade import Grade
from rig.formats.summary import Summary
from rig.formats.task import Task
from rig.grading.grade import grade_episode
from rig.grading.summary import NOT_AN_EPISODE, markdown, summarize
from rig.tasks import task_of

#: Tasks already loaded in one grading pass, by task id (or `path:<file>` for task files): (task, file) or None.
TaskCache = dict[str, tuple[Task, Path] | None]


def grade_one(ed: EpisodeDir, tasks: TaskCache) -> Grade:
    """Grade one episode of a run on its own: any failure to grade it becomes an unscored grade naming the error."""
    try:
        ep = ed.read_episode()
    except RigError as e:
        logger.warning("{}: cannot grade: {}", ed.path, e)
        return Grade(episode=str(ed.path), agent="unknown", status="incomplete", scored=False,
                     error=f"unreadable {ed.episode_file.name}: {e}", grading_error=f"unreadable {ed.episode_file.name}: {e}")
    try:
        key = f"path:{ep.task_path}" if ep.task_path else str(ep.task_id)
        if key not in tasks:
            tasks[key] = task_of(ep, ed.path)
        found = tasks[key]
        return grade_episode(ed, found[0] if found else None, task_file=found[1] if found else None)
    except Exception as e:  # noqa: BLE001 - one episode's bad file (or a grader bug) must not sink the run
        reason = str(e) if isinstance(e, (OSError, ValueError, RigError)) else f"{type(e).__name__}: {e}"
        logger.opt(exception=not isinstance(e, RigError)).warning("{}: cannot grade: {}", ed.path, reason)
        return Grade(episode=str(ed.path), task_id=ep.task_id, variant=ep.variant, agent=ep.agent, model=ep.model,
                     trial=ep.trial, injected_fault=ep.injected_fault, status=ep.status, scored=False,
                     error=f"grading failed: {reason}", grading_error=reason)


def stray_grade(path: Path) -> Grade:
    """The unscored grade of a trial directory without episode.json (counted and listed, never written there)."""
    return Grade(episode=str(path), agent="unknown", status="incomplete", scored=False,
                 grading_error=f"{NOT_AN_EPISODE}: no {EpisodeDir(path).episode_file.name} (a run killed before it began, "
                               "or files left behind)")


def grade_runs(path: str | Path, write: bool = True) -> Summary:
    """Grade every episode under a runs directory (or one episode directory) and summarise.

    Writes grade.json into each episode directory and, for a runs directory, summary.json and summary.md.
    Directories that should be episodes and are not are counted and listed in the summary.
    """
    path = Path(path)
    if not path.exists():
        raise InputError(str(path), None, "no such runs or episode directory")
    if not path.is_dir():
        raise InputError(str(path), None, "not a directory: give a runs directory or an episode directory")
    single = EpisodeDir(path)
    runs = RunsDir(path)
    dirs = [single] if single.exists() else runs.episodes()
    tasks: TaskCache = {}
    grades = []
    for ed in dirs:
        grade = grade_one(ed, tasks)
        grades.append(grade)
        if write:
            ed.write_grade(grade)
    if not single.exists():
        grades += [stray_grade(d) for d in runs.strays()]
    summary = summarize(grades, str(path))
    if write and not single.exists():
        runs.write_summary(summary, markdown(summary))
    return summary
