"""The report's comparison pages (`rig report RUNS_A --compare RUNS_B`): the per-task deltas of `rig compare`, sorted
by delta, and for each task the two runs' trajectories side by side (states, answers, failure labels), all from the
runs' files."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recorders.models import Step
from rig.compare import RunGrades, compare, read_run
from rig.formats.compare import Comparison, TaskDelta
from rig.report.episode_view import AnswerRow, TimelineRow, answer_table, timeline
from rig.report.load import EpisodeData, load_episode

COMPARE_PAGE = "compare.html"


def task_page(delta: TaskDelta) -> str:
    """Path of one (pair of rows, task) side-by-side page, relative to the report root."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", delta.task)
    digest = hashlib.sha256(f"{delta.group}\0{delta.task}".encode()).hexdigest()[:10]
    return f"compare/{safe}-{digest}.html"


@dataclass
class Side:
    """One run's episodes of one task in one row, each with its timeline and answer table."""

    label: str
    runs_dir: Path
    episodes: list[tuple[EpisodeData, list[TimelineRow], tuple[list[str], list[AnswerRow]]]]


def dims(step: Step) -> dict[str, Any]:
    """A step's retrieval state as the site adapter names it (`dim.*`); without such keys, what the step changed."""
    found = {k: v for k, v in step.state.items() if k.startswith("dim.")}
    if found:
        return found
    return {**{k: new for k, (_, new) in step.state_diff.changed.items()}, **step.state_diff.added}


def side(label: str, run: RunGrades, row: str, task: str) -> Side:
    """The episodes of `task` in row `row` of `run`, read from their files, by trial."""
    found = sorted(run.episodes.get((row, task), []), key=lambda pg: pg[1].trial)
    out = []
    for path, _ in found:
        e = load_episode(run.path, path)
        out.append((e, timeline(e), answer_table(e)))
    return Side(label, run.path, out)


@dataclass
class ComparisonPages:
    """What the comparison pages show: the comparison, and per task delta its two sides."""

    comparison: Comparison
    sides: dict[str, tuple[Side, Side]]


def comparison_pages(runs_a: Path, runs_b: Path, metric: str) -> ComparisonPages:
    """Compare two runs and gather, for every task both hold, the episodes of each side."""
    a, b = read_run(runs_a), read_run(runs_b)
    c = compare(a, b, metric)
    rows = {g.group: (g.group_a, g.group_b) for g in c.groups}
    sides = {}
    for t in c.tasks:
        row_a, row_b = rows[t.group]
        sides[task_page(t)] = (side("A", a, row_a, t.task), side("B", b, row_b, t.task))
    return ComparisonPages(c, sides)
