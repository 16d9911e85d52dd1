"""What the run overview shows: per-agent points and bars for the figures, the per-family breakdown, and the
audit's agreement."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from statistics import fmean

from markupsafe import Markup

from rig.formats.grade import Grade
from rig.formats.summary import GroupSummary, Summary
from rig.grading.summary import pooled, summarize
from rig.report.audit import Agreement, agreement
from rig.report.charts import Bar, Point, scatter, stacked_bars
from rig.report.load import EpisodeData


def agents(summary: Summary) -> list[str]:
    """Agents in the summary's order."""
    return list(dict.fromkeys(g.agent for g in summary.groups))


def points(summary: Summary) -> list[Point]:
    """One point per agent: Item-F1 and Row-F1 over all its episodes with a graded answer table."""
    out: list[Point] = []
    for a in agents(summary):
        mine = [g for g in summary.groups if g.agent == a]
        item, row = pooled(mine, "item_f1"), pooled(mine, "row_f1")
        if item is not None and row is not None:
            out.append(Point(number=len(out) + 1, agent=a, item_f1=item, row_f1=row))
    return out


def bars(summary: Summary) -> list[Bar]:
    """Per agent, its automatic failure-category counts over every variant."""
    out: list[Bar] = []
    for a in agents(summary):
        counts: dict[str, int] = {}
        for g in summary.groups:
            if g.agent == a:
                for cat, n in g.failures.items():
                    counts[cat] = counts.get(cat, 0) + n
        out.append(Bar(agent=a, counts=counts))
    return out


@dataclass
class Figures:
    """The overview's two figures and the scatter's legend."""

    scatter: Markup
    points: list[Point]
    bars: Markup


def figures(summary: Summary) -> Figures:
    """Draw the overview's figures."""
    pts = points(summary)
    return Figures(scatter=scatter(pts), points=pts, bars=stacked_bars(bars(summary)))


def audit_agreement(episodes: list[EpisodeData]) -> Agreement:
    """Automatic against manual labels over the audited episodes."""
    return agreement([(e.auto_label, e.audit.label) for e in episodes if e.audit is not None])


@dataclass
class FamilyRow:
    """One agent on one variant over one source family's episodes: `rig grade`'s summary metrics for them, and
    `drift`, the share of scored episodes (of tasks with gold states) that left a reached gold state for good."""

    family: str
    metrics: GroupSummary
    drift: float | None


def _drift(grades: list[Grade]) -> float | None:
    judged = [g for g in grades if g.scored and g.gold_states]
    return fmean(any(not d.recovered for d in g.drift) for g in judged) if judged else None


def family_rows(summary: Summary, episodes: list[EpisodeData]) -> list[FamilyRow]:
    """Per agent, variant and source family, the metrics that `rig grade` summarises per agent and variant (table,
    Pass@k/Avg@k, retrieval-state reach, row provenance, failure labels), computed by the same code over that
    family's grade.json files alone; in the summary's group order, then by family. A metric that does not apply
    (nothing scored, no gold states, a single trial for Pass@k) is None, never zero."""
    by_family: dict[str, list[Grade]] = defaultdict(list)
    for e in episodes:
        if e.grade is not None:
            by_family[e.grade.family or "unknown"].append(e.grade)
    order = {(g.agent, g.variant): i for i, g in enumerate(summary.groups)}
    rows = []
    for family, grades in by_family.items():
        for group in summarize(grades, summary.runs_dir).groups:
            mine = [g for g in grades if (g.agent_label, g.variant) == (group.agent, group.variant)]
            rows.append(FamilyRow(family=family, metrics=group, drift=_drift(mine)))
    return sorted(rows, key=lambda r: (order.get((r.metrics.agent, r.metrics.variant), len(order)), r.family))
