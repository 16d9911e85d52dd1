"""The overview's figures as inline SVG, drawn in Python (SGR-Bench figures 2a and 4, and cost against Item-F1 with
its Pareto front): no script, no styles inline (colours come from classes in report.css), every label escaped."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

from markupsafe import Markup, escape

from rig.formats.vocabulary import CATEGORIES


@dataclass
class Point:
    """One agent in the Item-F1 / Row-F1 plane."""

    number: int
    agent: str
    item_f1: float
    row_f1: float


def _f(x: float) -> str:
    return f"{x:.1f}"


def scatter(points: list[Point], size: int = 360) -> Markup:
    """Item-F1 (y) against Row-F1 (x), the diagonal drawn; points at one spot share one label of their numbers."""
    m = 44
    span = size - 2 * m

    def px(v: float) -> float:
        return m + v * span

    def py(v: float) -> float:
        return size - m - v * span

    out = [f'<svg class="chart scatter" role="img" viewBox="0 0 {size} {size}" width="{size}" height="{size}" '
           f'aria-labelledby="scatter-title"><title id="scatter-title">Item-F1 versus Row-F1, one point per agent</title>',
           f'<rect class="plot-area" x="{m}" y="{m}" width="{span}" height="{span}"/>']
    for t in (0.0, 0.25, 0.5, 0.75, 1.0):
        out += [f'<line class="grid" x1="{_f(px(t))}" y1="{_f(py(0))}" x2="{_f(px(t))}" y2="{_f(py(1))}"/>',
                f'<line class="grid" x1="{_f(px(0))}" y1="{_f(py(t))}" x2="{_f(px(1))}" y2="{_f(py(t))}"/>',
                f'<text class="tick" x="{_f(px(t))}" y="{_f(py(0) + 16)}" text-anchor="middle">{t:g}</text>',
                f'<text class="tick" x="{_f(px(0) - 6)}" y="{_f(py(t) + 4)}" text-anchor="end">{t:g}</text>']
    out += [f'<line class="diagonal" x1="{_f(px(0))}" y1="{_f(py(0))}" x2="{_f(px(1))}" y2="{_f(py(1))}"/>',
            f'<text class="axis" x="{size / 2}" y="{size - 8}" text-anchor="middle">Row-F1</text>',
            f'<text class="axis" x="12" y="{size / 2}" text-anchor="middle" transform="rotate(-90 12 {size / 2})">Item-F1</text>']
    spots: dict[tuple[float, float], list[Point]] = defaultdict(list)
    for p in points:
        spots[(round(p.row_f1, 2), round(p.item_f1, 2))].append(p)
    for (x, y), group in spots.items():
        for p in group:
            out.append(f'<circle class="point" data-agent="{escape(p.agent)}" cx="{_f(px(p.row_f1))}" cy="{_f(py(p.item_f1))}" '
                       f'r="5"><title>{escape(p.agent)}: Item-F1 {p.item_f1:.3f}, Row-F1 {p.row_f1:.3f}</title></circle>')
        label = ",".join(str(p.number) for p in group)
        anchor, dx = ("end", -8) if x > 0.8 else ("start", 8)
        out.append(f'<text class="point-label" x="{_f(px(x) + dx)}" y="{_f(py(y) - 6)}" text-anchor="{anchor}">{label}</text>')
    out.append("</svg>")
    return Markup("".join(out))


@dataclass
class Bar:
    """One agent's failure categories (counts over its labelled episodes)."""

    agent: str
    counts: dict[str, int]

    @property
    def total(self) -> int:
        """Labelled failures in all."""
        return sum(self.counts.values())


def stacked_bars(bars: list[Bar], width: int = 640) -> Markup:
    """Per agent, each failure category's share of its failures (100 % bars), sorted by scope-drift share."""
    bars = sorted(bars, key=lambda b: (-(b.counts.get("scope_drift", 0) / b.total if b.total else -1), b.agent))
    left, right, h, gap = 210, 90, 22, 10
    span = width - left - right
    height = len(bars) * (h + gap) + 40
    out = [f'<svg class="chart bars" role="img" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
           f'aria-labelledby="bars-title"><title id="bars-title">Share of each failure category within each agent\'s '
           f'failures</title>']
    for t in (0, 0.5, 1):
        x = left + t * span
        out += [f'<line class="grid" x1="{_f(x)}" y1="0" x2="{_f(x)}" y2="{height - 30}"/>',
                f'<text class="tick" x="{_f(x)}" y="{height - 14}" text-anchor="middle">{int(t * 100)} %</text>']
    for i, bar in enumerate(bars):
        y = i * (h + gap) + 4
        out.append(f'<g class="bar" data-agent="{escape(bar.agent)}">'
                   f'<text class="bar-label" x="{left - 8}" y="{y + h * 0.7:.1f}" text-anchor="end">{escape(bar.agent)}</text>')
        x = float(left)
        for cat in CATEGORIES:
            n = bar.counts.get(cat, 0)
            if not n:
                continue
            w = span * n / bar.total
            out.append(f'<rect class="segment cat-{cat}" data-category="{cat}" x="{_f(x)}" y="{y}" width="{_f(w)}" '
                       f'height="{h}"><title>{escape(bar.agent)}: {cat} {n} of {bar.total}</title></rect>')
            x += w
        note = f"{bar.total} failure{'s' * (bar.total != 1)}" if bar.total else "no failures"
        out.append(f'<text class="bar-note" x="{left + span + 8}" y="{y + h * 0.7:.1f}">{note}</text></g>')
    out.append("</svg>")
    return Markup("".join(out))


@dataclass
class CostPoint:
    """One summary row (agent and variant) in the cost / Item-F1 plane: its cost per episode and its Item-F1."""

    number: int
    group: str
    cost: float
    item_f1: float
    pareto: bool = False


def pareto_front(points: list[CostPoint]) -> list[CostPoint]:
    """The points no other point beats on both cost (lower) and Item-F1 (higher), cheapest first; each is marked."""
    front: list[CostPoint] = []
    for p in sorted(points, key=lambda p: (p.cost, -p.item_f1)):
        if not front or p.item_f1 > front[-1].item_f1:
            front.append(p)
    for p in points:  # a point tying a front point on both is on the front too
        p.pareto = any(q.cost == p.cost and q.item_f1 == p.item_f1 for q in front)
    return front


def _nice_max(x: float) -> float:
    """The smallest of 1, 2, 2.5 or 5 times a power of ten at or above `x` (the axis's end)."""
    if x <= 0:
        return 1.0
    scale = 10 ** math.floor(math.log10(x))
    return next(m * scale for m in (1, 2, 2.5, 5, 10) if m * scale >= x * (1 - 1e-9))


def cost_scatter(points: list[CostPoint], size: int = 360) -> Markup:
    """Item-F1 (y) against the cost per episode in US dollars (x, from 0), the Pareto front (cheapest for its
    Item-F1) joined by a step line and its points marked."""
    m, span = 52, size - 2 * 52
    top = _nice_max(max((p.cost for p in points), default=0.0))

    def px(v: float) -> float:
        return m + v / top * span

    def py(v: float) -> float:
        return size - m - v * span

    out = [f'<svg class="chart cost-scatter" role="img" viewBox="0 0 {size} {size}" width="{size}" height="{size}" '
           f'aria-labelledby="cost-title"><title id="cost-title">Item-F1 versus cost per episode, one point per agent '
           f'and variant, the Pareto front marked</title>',
           f'<rect class="plot-area" x="{m}" y="{m}" width="{span}" height="{span}"/>']
    for t in (0.0, 0.25, 0.5, 0.75, 1.0):
        cost = t * top
        out += [f'<line class="grid" x1="{_f(px(cost))}" y1="{_f(py(0))}" x2="{_f(px(cost))}" y2="{_f(py(1))}"/>',
                f'<line class="grid" x1="{_f(px(0))}" y1="{_f(py(t))}" x2="{_f(px(top))}" y2="{_f(py(t))}"/>',
                f'<text class="tick" x="{_f(px(cost))}" y="{_f(py(0) + 16)}" text-anchor="middle">{cost:.3g}</text>',
                f'<text class="tick" x="{_f(px(0) - 6)}" y="{_f(py(t) + 4)}" text-anchor="end">{t:g}</text>']
    out += [f'<text class="axis" x="{size / 2}" y="{size - 10}" text-anchor="middle">Cost per episode (USD)</text>',
            f'<text class="axis" x="12" y="{size / 2}" text-anchor="middle" transform="rotate(-90 12 {size / 2})">'
            'Item-F1</text>']
    front = pareto_front(points)
    if front:  # a step line: from each front point right to the next one's cost, then up to its Item-F1
        path = [f"M{_f(px(front[0].cost))},{_f(py(front[0].item_f1))}"]
        for a, b in zip(front, front[1:]):
            path += [f"H{_f(px(b.cost))}", f"V{_f(py(b.item_f1))}"]
        path.append(f"H{_f(px(top))}")
        out.append(f'<path class="pareto-line" d="{" ".join(path)}"/>')
    for p in points:
        kind = "point pareto" if p.pareto else "point"
        front_note = ", on the Pareto front" if p.pareto else ""
        out.append(f'<circle class="{kind}" data-group="{escape(p.group)}" cx="{_f(px(p.cost))}" '
                   f'cy="{_f(py(p.item_f1))}" r="5"><title>{escape(p.group)}: Item-F1 {p.item_f1:.3f}, '
                   f'${p.cost:.4g} per episode{front_note}</title></circle>')
        anchor, dx = ("end", -8) if px(p.cost) > m + 0.8 * span else ("start", 8)
        out.append(f'<text class="point-label" x="{_f(px(p.cost) + dx)}" y="{_f(py(p.item_f1) - 6)}" '
                   f'text-anchor="{anchor}">{p.number}</text>')
    out.append("</svg>")
    return Markup("".join(out))
