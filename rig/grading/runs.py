"""`rig grade RUNS_DIR|EPISODE_DIR`: grade every episode (`grade.json` each), then summarise the run.

Means are over scored episodes (infra_error and incomplete episodes are counted, never scored as zero;
an agent's timeout, error or unparsable answer scores zero). An episode that cannot be graded (unreadable
files, an unknown task file) gets an unscored grade that says why.

One pass: each episode's files are read once (`ReadOnceEpisodeDir`), each task file is loaded and hashed once per
process, each reference episode's trajectory is parsed once however many episodes compare with it. Large runs are
graded in parallel processes (`jobs`), with the same grades, in the same order, as one process gives. A grade.json
still current is kept instead of recomputed (see `RunGrader.current`) unless `force`.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path

from loguru import logger

from rig import __version__
from rig.episode_dir import EpisodeDir, ReadOnceEpisodeDir, RunsDir
from rig.errors import InfraError, InputError, RigError
from rig.formats.episode import Episode
from rig.formats.grade import GRADER_VERSION, Grade
from rig.formats.summary import Summary
from rig.formats.task import Task
from rig.grading.grade import grade_episode
from rig.grading.judge import Judge
from rig.grading.summary import NOT_AN_EPISODE, MixedRevisions, markdown, summarize
from rig.tasks import task_file_of, task_of

#: Tasks already loaded in one grading pass, by task id (or `path:<file>` for task files): (task, file) or None.
TaskCache = dict[str, tuple[Task, Path] | None]
#: From this many episodes to grade on, `jobs=None` grades in one process per CPU; below it, in this process (the
#: crossover measured by scripts/bench_grade.py: under it, starting the workers costs more than they save).
PARALLEL_FROM = 20


@dataclass
class GradingResult:
    """What one grading pass did: the run's summary, how many episodes it graded and how many grades it kept."""

    summary: Summary
    graded: int = 0
    kept: int = 0
    jobs: int = 1


class RunGrader:
    """One process's share of a grading pass: tasks loaded and hashed once, reference episodes read once."""

    def __init__(self, force: bool = False, write: bool = True, judge: Callable[[], Judge] | None = None) -> None:
        self.force, self.write = force, write
        self._judge_factory, self._judge = judge, None
        self.tasks: TaskCache = {}
        self._files: dict[str, Path | None] = {}
        self._digests: dict[Path, str] = {}
        self._references: dict[tuple[Path, str], list[ReadOnceEpisodeDir]] = {}

    @staticmethod
    def _key(episode: Episode) -> str:
        return f"path:{episode.task_path}" if episode.task_path else str(episode.task_id)

    def task(self, episode: Episode, ed: EpisodeDir) -> tuple[Task, Path] | None:
        """The episode's task and its file, loaded once per pass."""
        key = self._key(episode)
        if key not in self.tasks:
            self.tasks[key] = task_of(episode, ed.path)
        return self.tasks[key]

    def task_file(self, episode: Episode, ed: EpisodeDir) -> Path | None:
        """The episode's task file, found once per pass (not loaded: a kept grade needs only its digest)."""
        key = self._key(episode)
        if key not in self._files:
            self._files[key] = task_file_of(episode, ed.path)
        return self._files[key]

    def digest(self, task_file: Path) -> str:
        """SHA-256 of a task file's bytes, read once per pass."""
        if task_file not in self._digests:
            self._digests[task_file] = hashlib.sha256(task_file.read_bytes()).hexdigest()
        return self._digests[task_file]

    def reference(self, ed: EpisodeDir, variant: str | None) -> ReadOnceEpisodeDir | None:
        """The reference episode `grade_episode` would compare `ed` with (`EpisodeDir.reference`), read once."""
        key = (ed.path.resolve().parent.parent, str(variant))
        if key not in self._references:
            self._references[key] = [ReadOnceEpisodeDir(r.path) for r in ed.references(variant)]
        return next((ref for ref in self._references[key] if ref != ed), None)

    def grade(self, path: Path) -> tuple[Grade, bool]:
        """Grade one episode of the run on its own (written to its grade.json), or keep its current grade; whether it
        was kept. Any failure to grade it becomes an unscored grade naming the error."""
        ed = ReadOnceEpisodeDir(path)
        try:
            ep = ed.read_episode()
        except RigError as e:
            logger.warning("{}: cannot grade: {}", ed.path, e)
            return self._written(ed, Grade(episode=str(ed.path), agent="unknown", status="incomplete", scored=False,
                                           error=f"unreadable {ed.episode_file.name}: {e}",
                                           grading_error=f"unreadable {ed.episode_file.name}: {e}")), False
        try:
            reference = self.reference(ed, ep.variant)
            inputs, latest = self.inputs(ed, reference)
            kept = None if self.force else self.current(ed, self.task_file(ep, ed), inputs, latest)
            if kept is not None and not self.judged_as_asked(kept):
                kept = None
            if kept is not None:
                return kept, True
            found = self.task(ep, ed)
            grade = grade_episode(ed, found[0] if found else None, reference=reference,
                                  task_file=found[1] if found else None, judge=self.judge())
            grade.inputs = inputs
        except Exception as e:  # noqa: BLE001 - one episode's bad file (or a grader bug) must not sink the run
            reason = str(e) if isinstance(e, (OSError, ValueError, RigError)) else f"{type(e).__name__}: {e}"
            logger.opt(exception=not isinstance(e, RigError)).warning("{}: cannot grade: {}", ed.path, reason)
            grade = Grade(episode=str(ed.path), task_id=ep.task_id, variant=ep.variant, agent=ep.agent, model=ep.model,
                          trial=ep.trial, injected_fault=ep.injected_fault, status=ep.status, scored=False,
                          error=f"grading failed: {reason}", grading_error=reason)
        finally:
            ed.forget_archive()
        return self._written(ed, grade), False

    def judge(self) -> Judge | None:
        """The LLM judge of this pass (built on first use, once per process), or None."""
        if self._judge is None and self._judge_factory is not None:
            self._judge = self._judge_factory()
        return self._judge

    def judged_as_asked(self, grade: Grade) -> bool:
        """Whether a kept grade of a judged hybrid type was decided by a judge exactly when this pass has one."""
        if grade.hybrid is None or grade.hybrid.type == "search_to_sql":
            return True
        return (grade.hybrid.decided_by == "judge") == (self._judge_factory is not None)

    def _written(self, ed: EpisodeDir, grade: Grade) -> Grade:
        if self.write:
            ed.write_grade(grade)
        return grade

    @staticmethod
    def inputs(ed: EpisodeDir, reference: EpisodeDir | None) -> tuple[dict[str, int], int]:
        """The size of every file a grade of `ed` reads (its own, and its reference episode's episode.json and
        trajectory), by path relative to `ed`; and the latest modification time among them (ns)."""
        sizes, latest = {}, 0
        for name, st in ed.grading_inputs().items():
            sizes[name], latest = st.st_size, max(latest, st.st_mtime_ns)
        for f in (reference.episode_file, reference.trajectory_file) if reference is not None else ():
            try:
                st = f.stat()
            except FileNotFoundError:
                continue
            sizes[os.path.relpath(f, ed.path)], latest = st.st_size, max(latest, st.st_mtime_ns)
        return sizes, latest

    def current(self, ed: EpisodeDir, task_file: Path | None, inputs: dict[str, int], latest: int) -> Grade | None:
        """The episode's grade.json when it is still current, else None.

        Current: written after the last change to any file it was computed from, from the same set of files with the
        same sizes (a file added, removed or replaced shows), against a task file with the same digest, by the same
        grader and rig version, for the episode directory as given now, and not a record of a failure to grade.
        """
        try:
            if ed.grade_file.stat().st_mtime_ns <= latest:
                return None
            old = ed.read_grade()
            digest = self.digest(task_file) if task_file is not None else None
        except (OSError, InputError):
            return None  # no grade, or a task file that cannot be read: grading says why
        if (old.grader_version, old.rig_version, old.episode) != (GRADER_VERSION, __version__, str(ed.path)):
            return None
        if old.grading_error is not None or old.inputs != inputs or old.task_sha256 != digest:
            return None
        return old


def stray_grade(path: Path) -> Grade:
    """The unscored grade of a trial directory without episode.json (counted and listed, never written there)."""
    return Grade(episode=str(path), agent="unknown", status="incomplete", scored=False,
                 grading_error=f"{NOT_AN_EPISODE}: no {EpisodeDir(path).episode_file.name} (a run killed before it began, "
                               "or files left behind)")


_WORKER: RunGrader | None = None


def _start_worker(force: bool, write: bool, judge: Callable[[], Judge] | None = None) -> None:
    global _WORKER  # one RunGrader per worker process: its caches serve every episode the worker grades
    _WORKER = RunGrader(force, write, judge)


def _grade_in_worker(path: Path) -> tuple[Grade, bool]:
    assert _WORKER is not None, "the worker was not started"
    return _WORKER.grade(path)


def default_jobs(episodes: int) -> int:
    """How many processes grade `episodes` episodes when not told: one per usable CPU from PARALLEL_FROM on, else 1."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(cpus, episodes)) if episodes >= PARALLEL_FROM else 1


def _grade_all(dirs: list[EpisodeDir], jobs: int, force: bool, write: bool,
               judge: Callable[[], Judge] | None = None) -> list[tuple[Grade, bool]]:
    """Each episode's grade (and whether it was kept), in the order of `dirs`, in `jobs` processes."""
    if jobs <= 1 or len(dirs) <= 1:
        grader = RunGrader(force, write, judge)
        return [grader.grade(ed.path) for ed in dirs]
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else None)  # fork: no re-import per worker
    chunk = max(1, min(16, len(dirs) // (jobs * 4)))
    before = set(multiprocessing.active_children())
    try:
        with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_start_worker,
                                 initargs=(force, write, judge)) as pool:
            return list(pool.map(_grade_in_worker, [ed.path for ed in dirs], chunksize=chunk))
    except BrokenProcessPool as e:
        _end_workers_left(before)
        raise InfraError(f"a grading process died ({e}); the grades written so far are kept: run `rig grade` again, "
                         "with --jobs 1 to grade in one process") from None


def _end_workers_left(before: set[multiprocessing.process.BaseProcess]) -> None:
    """Kill the grading processes a broken pool left running (any child started since `before`).

    Seen once, in a full test run on a busy machine (Python 3.11.7): a worker outlived its broken pool, blocked reading
    the pool's queue. A forked child holds copies of its parent's pipes; that one held the stdin of the parent's
    Playwright driver open, so the driver never saw it close and the parent hung on exit."""
    for process in set(multiprocessing.active_children()) - before:
        logger.warning("grading: process {} outlived its broken pool: killing it", process.pid)
        process.kill()
        process.join(5)


def grade_run(path: str | Path, write: bool = True, *, jobs: int | None = None, force: bool = False,
              judge: Callable[[], Judge] | None = None, mix_revisions: bool = False) -> GradingResult:
    """Grade every episode under a runs directory (or one episode directory) and summarise.

    Writes grade.json into each episode directory and, for a runs directory, summary.json and summary.md.
    Directories that should be episodes and are not are counted and listed in the summary; a path holding neither is
    an InputError (and nothing is written). `jobs`: processes
    (None: `default_jobs`); `force`: regrade episodes whose grade.json is still current; `judge`: builds the LLM judge
    of free-text hybrid tasks (picklable, called once per process; rig.grading.judge). When one summary row would hold
    two revisions of a task, the grades are written, an earlier summary is removed (it no longer matches them) and
    MixedRevisions is raised, unless `mix_revisions`.
    """
    path = Path(path)
    if not path.exists():
        raise InputError(str(path), None, "no such runs or episode directory")
    if not path.is_dir():
        raise InputError(str(path), None, "not a directory: give a runs directory or an episode directory")
    if jobs is not None and jobs < 1:
        raise InputError("--jobs", None, f"must be at least 1, got {jobs}")
    single = EpisodeDir(path)
    runs = RunsDir(path)
    dirs = [single] if single.exists() else runs.episodes()
    strays = [] if single.exists() else runs.strays()
    if not dirs and not strays:
        raise InputError(str(path), None, "holds no episode (no episode.json in it or below it): nothing to grade")
    n_jobs = jobs if jobs is not None else default_jobs(len(dirs))
    done = _grade_all(dirs, n_jobs, force, write, judge)
    grades = [g for g, _ in done]
    grades += [stray_grade(d) for d in strays]
    try:
        summary = summarize(grades, str(path), mix_revisions=mix_revisions)
    except MixedRevisions:
        if write and not single.exists():
            runs.summary_file.unlink(missing_ok=True)
            runs.summary_md.unlink(missing_ok=True)
        raise
    if write and not single.exists():
        runs.write_summary(summary, markdown(summary))
    kept = sum(k for _, k in done)
    return GradingResult(summary, graded=len(done) - kept, kept=kept, jobs=min(n_jobs, max(1, len(dirs))))


def grade_runs(path: str | Path, write: bool = True, *, jobs: int | None = None, force: bool = False,
               judge: Callable[[], Judge] | None = None, mix_revisions: bool = False) -> Summary:
    """`grade_run`'s summary: grade every episode under a runs directory (or one episode directory) and summarise."""
    return grade_run(path, write, jobs=jobs, force=force, judge=judge, mix_revisions=mix_revisions).summary
