"""Splitting a step's captured text into plain and marked segments at the highlight spans grade.json gives (the
grader places each excerpt; the report only cuts the text there)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Segment:
    """A run of the raw text; `marks` names the highlights covering it (empty: plain text), `anchors` those that
    begin here (their first span starts at this segment)."""

    text: str
    marks: list[str] = field(default_factory=list)
    anchors: list[str] = field(default_factory=list)


def segments(raw: str, marks: dict[str, list[tuple[int, int]]]) -> list[Segment]:
    """Split `raw` at every span boundary (spans past the text's end are cut at its end); each segment lists the
    highlights marking it and those anchored at its start."""
    marks = {m: [(max(0, a), min(b, len(raw))) for a, b in spans if a < min(b, len(raw))] for m, spans in marks.items()}
    cuts = {0, len(raw)} | {x for spans in marks.values() for s in spans for x in s}
    first = {m: min(s[0] for s in spans) for m, spans in marks.items() if spans}
    bounds = sorted(cuts)
    out = []
    for a, b in zip(bounds, bounds[1:]):
        covering = sorted(m for m, spans in marks.items() if any(s <= a and b <= e for s, e in spans))
        out.append(Segment(raw[a:b], covering, sorted(m for m, x in first.items() if x == a)))
    return out or [Segment("", [], sorted(first))]
