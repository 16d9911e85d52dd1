"""`rig compare RUNS_A RUNS_B`: one metric of two graded runs, per task and per summary row, B minus A, with the exact
sign test over tasks. Reads only the runs' files (summary.json for the rows, grade.json for the per-task values);
never grades.

Rows are paired by name (`agent / variant`); when no name matches and each run holds one row, those two are paired,
and when each run holds one agent, its rows are paired by variant. A task's value is the metric over its scored
trials, computed as summary.json computes it (`Grade.metric_values`); a row's `a` and `b` are over the tasks both
runs hold. The sign test is used rather than a paired bootstrap: it is exact at any number of tasks (a bootstrap
p-value over three tasks that all moved one way is near 0, the sign test's is 0.25), needs no assumption about how
the bounded, often tied metric is distributed, and ties (tasks both solve) are simply left out.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from math import fsum
from pathlib import Path

from loguru import logger

from rig.episode_dir import RunsDir
from rig.errors import InputError
from rig.formats.compare import Comparison, GroupDelta, TaskDelta
from rig.formats.grade import Grade
from rig.formats.records import RECORD_METRICS
from rig.formats.summary import GroupSummary, row_name
from rig.stats import sign_test

#: The metrics `--metric` takes (per-episode means, as summary.json's rows have them).
METRICS: tuple[str, ...] = ("item_f1", "row_f1", "poa", "passed", *(f"record_{m}" for m in RECORD_METRICS),
                            "gold_state_reach", "answer_state_reach", "state_anchored_rows", "unrecovered_drift",
                            "site_found", "site_found_step")
#: Other names of a metric (`pass@1` and `avg@1` are the share of passed episodes).
ALIASES = {"pass@1": "passed", "avg@1": "passed"}
DEFAULT_METRIC = "item_f1"


@dataclass
class RunGrades:
    """A graded run as the comparison reads it: its summary rows and, per row and task, its episodes' grades."""

    path: Path
    groups: list[GroupSummary]
    #: (row name, task) -> [(episode directory, its grade)]
    episodes: dict[tuple[str, str], list[tuple[Path, Grade]]] = field(default_factory=dict)

    @property
    def tasks(self) -> set[str]:
        """Every task the run's graded episodes are of."""
        return {t for _, t in self.episodes}

    def task_ids(self, row: str) -> list[str]:
        """The tasks of one row, sorted."""
        return sorted(t for r, t in self.episodes if r == row)


def read_run(path: str | Path) -> RunGrades:
    """A graded runs directory's summary.json and grade.json files; InputError when it is not one."""
    path = Path(path)
    runs = RunsDir(path)
    if not path.is_dir():
        raise InputError(str(path), None, "no such runs directory")
    if not runs.summary_file.exists():
        raise InputError(str(path), None, f"no {runs.summary_file.name}: grade the run first (`rig grade {path}`)")
    summary = runs.read_summary()
    out = RunGrades(path, summary.groups)
    for ed in runs.episodes():
        if not ed.grade_file.exists():
            logger.warning("{}: not graded, left out of the comparison", ed.path)
            continue
        g = ed.read_grade()
        if g.task_id is not None:
            out.episodes.setdefault((row_name(g.agent_label, g.variant), g.task_id), []).append((ed.path, g))
    return out


def metric_name(metric: str) -> str:
    """The metric `--metric` names (aliases resolved); InputError for one that is not a metric."""
    name = ALIASES.get(metric, metric)
    if name not in METRICS:
        raise InputError("--metric", None, f"{metric!r} is not a metric; use one of {', '.join(METRICS + tuple(ALIASES))}")
    return name


def pair_rows(a: list[GroupSummary], b: list[GroupSummary]) -> list[tuple[GroupSummary, GroupSummary]]:
    """Rows of A and B paired by name; failing that, one row each is a pair; failing that, one agent each pairs its
    rows by variant."""
    by_b = {g.name: g for g in b}
    pairs = [(g, by_b[g.name]) for g in a if g.name in by_b]
    if pairs:
        return pairs
    if len(a) == 1 and len(b) == 1:
        return [(a[0], b[0])]
    if len({g.agent for g in a}) == 1 and len({g.agent for g in b}) == 1:
        variants = {g.variant: g for g in b}
        return [(g, variants[g.variant]) for g in a if g.variant in variants]
    return []


def _value(grades: list[Grade], metric: str) -> float | None:
    """The metric over some episodes: the sum of their numerators over the sum of their denominators."""
    values = [v[metric] for g in grades if metric in (v := g.metric_values())]
    den = fsum(d for _, d in values)
    return fsum(n for n, _ in values) / den if den else None


def _revision(episodes: list[tuple[Path, Grade]]) -> str | None:
    return ", ".join(sorted({g.revision for _, g in episodes if g.revision})) or None


def _delta(a: float | None, b: float | None) -> float | None:
    return b - a if a is not None and b is not None else None


def compare(run_a: RunGrades, run_b: RunGrades, metric: str = DEFAULT_METRIC) -> Comparison:
    """Compare two runs read by `read_run` on one metric."""
    metric = metric_name(metric)
    pairs = pair_rows(run_a.groups, run_b.groups)
    out = Comparison(runs_a=str(run_a.path), runs_b=str(run_b.path), metric=metric,
                     only_in_a=sorted(run_a.tasks - run_b.tasks), only_in_b=sorted(run_b.tasks - run_a.tasks),
                     unpaired_a=[g.name for g in run_a.groups if g not in [p for p, _ in pairs]],
                     unpaired_b=[g.name for g in run_b.groups if g not in [q for _, q in pairs]])
    mismatched: set[str] = set()
    for ga, gb in pairs:
        name = ga.name if ga.name == gb.name else f"{ga.name} vs {gb.name}"
        rows: list[TaskDelta] = []
        for task in sorted(set(run_a.task_ids(ga.name)) & set(run_b.task_ids(gb.name))):
            ea, eb = run_a.episodes[(ga.name, task)], run_b.episodes[(gb.name, task)]
            va, vb = _value([g for _, g in ea], metric), _value([g for _, g in eb], metric)
            row = TaskDelta(task=task, group=name, metric=metric, a=va, b=vb, delta=_delta(va, vb), episodes_a=len(ea),
                            episodes_b=len(eb), revision_a=_revision(ea), revision_b=_revision(eb))
            if row.revision_a != row.revision_b:
                mismatched.add(task)
            rows.append(row)
        paired = [r for r in rows if r.delta is not None]
        both = [r.task for r in paired]
        a = _value([g for t in both for _, g in run_a.episodes[(ga.name, t)]], metric)
        b = _value([g for t in both for _, g in run_b.episodes[(gb.name, t)]], metric)
        test = sign_test([r.delta for r in paired if r.delta is not None])
        out.groups.append(GroupDelta(group=name, group_a=ga.name, group_b=gb.name, metric=metric, a=a, b=b,
                                     delta=_delta(a, b), p_value=test.p_value if paired else None, tasks=len(paired),
                                     positive=test.positive, negative=test.negative, ties=test.ties))
        out.tasks += sorted(rows, key=lambda r: (r.delta is None, r.delta if r.delta is not None else 0.0, r.task))
    out.revision_mismatch = sorted(mismatched)
    return out


def compare_runs(runs_a: str | Path, runs_b: str | Path, metric: str = DEFAULT_METRIC) -> Comparison:
    """Compare two graded runs directories on one metric (B minus A), from their files alone."""
    metric_name(metric)  # a bad --metric is refused before any file is read
    return compare(read_run(runs_a), read_run(runs_b), metric)


def format_comparison(c: Comparison) -> str:
    """The comparison as plain text: per pair of rows, then per task, and the tasks only one run holds."""
    def pct(x: float | None) -> str:
        return "–" if x is None else f"{100 * x:.1f}"

    def signed(x: float | None) -> str:
        return "–" if x is None else f"{100 * x:+.1f}"

    lines = [f"{c.metric}: A = {c.runs_a}, B = {c.runs_b} (delta = B - A, in points; sign test over tasks)", ""]
    for g in c.groups:
        p = "–" if g.p_value is None else f"{g.p_value:.3g}"
        lines.append(f"{g.group}: A {pct(g.a)}, B {pct(g.b)}, delta {signed(g.delta)} over {g.tasks} tasks "
                     f"({g.positive} up, {g.negative} down, {g.ties} tied), p = {p}")
    by_group: dict[str, list[TaskDelta]] = defaultdict(list)
    for t in c.tasks:
        by_group[t.group].append(t)
    for group, rows in by_group.items():
        lines += ["", f"{group}:"] + [f"  {t.task}: A {pct(t.a)}, B {pct(t.b)}, delta {signed(t.delta)}" for t in rows]
    for label, tasks in (("only in A", c.only_in_a), ("only in B", c.only_in_b)):
        if tasks:
            lines += ["", f"tasks {label}: {', '.join(tasks)}"]
    for label, rows in (("rows of A with no partner in B", c.unpaired_a), ("rows of B with no partner in A", c.unpaired_b)):
        if rows:
            lines += ["", f"{label}: {', '.join(rows)}"]
    if c.revision_mismatch:
        lines += ["", f"warning: the runs graded these tasks at different revisions: {', '.join(c.revision_mismatch)}"]
    return "\n".join(lines)
