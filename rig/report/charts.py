"""The overview's figures as inline SVG, drawn in Python (SGR-Bench figures 2a and 4): no script, no styles
inline (colours come from classes in report.css), every label escaped."""

from __future__ import annotations

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
