"""What the run overview shows: per-agent points and bars for the figures, the per-family breakdown, and the
audit's agreement."""

from __future__ import annotations

from dataclasses import dataclass

from markupsafe import Markup

from rig.formats.summary import GroupSummary, HybridSummary, Metrics, Summary, pooled
from rig.report.audit import Agreement, agreement
from rig.report.charts import Bar, CostPoint, Point, cost_scatter, scatter, stacked_bars
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


def cost_points(summary: Summary) -> list[CostPoint]:
    """One point per summary row whose cost and Item-F1 are both known: its cost per episode (summary.json's total
    `cost_usd` over its episodes) and its Item-F1."""
    out: list[CostPoint] = []
    for g in summary.groups:
        if g.cost_usd is not None and g.item_f1 is not None and g.episodes:
            out.append(CostPoint(number=len(out) + 1, group=g.name, cost=g.cost_usd / g.episodes, item_f1=g.item_f1))
    return out


@dataclass
class Figures:
    """The overview's figures and the scatters' legends."""

    scatter: Markup
    points: list[Point]
    bars: Markup
    cost: Markup | None
    cost_points: list[CostPoint]


def figures(summary: Summary) -> Figures:
    """Draw the overview's figures (the cost chart only when some row's cost is known)."""
    pts, costs = points(summary), cost_points(summary)
    return Figures(scatter=scatter(pts), points=pts, bars=stacked_bars(bars(summary)),
                   cost=cost_scatter(costs) if costs else None, cost_points=costs)


def audit_agreement(episodes: list[EpisodeData]) -> Agreement:
    """Automatic against manual labels over the audited episodes."""
    return agreement([(e.auto_label, e.audit.label) for e in episodes if e.audit is not None])


@dataclass
class FamilyRow:
    """One agent on one variant over one source family's episodes: summary.json's row for that family (its
    `families` entry), shown as `rig grade` wrote it."""

    family: str
    group: GroupSummary
    metrics: Metrics


def family_rows(summary: Summary) -> list[FamilyRow]:
    """Per group (in the summary's order) and source family, summary.json's family row."""
    return [FamilyRow(family=f, group=g, metrics=m) for g in summary.groups for f, m in g.families.items()]


@dataclass
class TypeRow:
    """One agent on one variant over the hybrid tasks of one type: summary.json's `hybrid` entry."""

    kind: str
    group: GroupSummary
    metrics: HybridSummary


def type_rows(summary: Summary) -> list[TypeRow]:
    """Per group (in the summary's order) and hybrid type, summary.json's row for that type."""
    return [TypeRow(kind=k, group=g, metrics=m) for g in summary.groups for k, m in g.hybrid.items()]
