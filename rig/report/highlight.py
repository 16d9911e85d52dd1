"""Locating a citation's excerpt in captured page text, as the verifier compares it (NFKC, collapsed
whitespace, `...` elisions, casefold last), and splitting the text into plain and marked segments."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from rig.grading.evidence import norm


@dataclass
class Segment:
    """A run of the raw text; `marks` names the citations whose excerpt covers it (empty: plain text)."""

    text: str
    marks: list[int] = field(default_factory=list)
    anchors: list[int] = field(default_factory=list)


def _folded(raw: str, casefold: bool) -> tuple[str, list[int]]:
    """The raw text normalised char by char (NFKC, whitespace collapsed and trimmed, optionally casefolded)
    with, for each output char, the index of the raw char it came from."""
    out: list[str] = []
    where: list[int] = []
    space = True
    for i, ch in enumerate(raw):
        n = unicodedata.normalize("NFKC", ch)
        for c in n.casefold() if casefold else n:
            if c.isspace():
                if not space:
                    out.append(" ")
                    where.append(i)
                space = True
            else:
                out.append(c)
                where.append(i)
                space = False
    if out and out[-1] == " ":
        out.pop()
        where.pop()
    return "".join(out), where


def find_spans(raw: str, excerpt: str) -> list[tuple[int, int]]:
    """Raw-text spans [start, end) covered by `excerpt` (its parts around `...` in order); [] if not found."""
    if not excerpt.strip():
        return []
    at = raw.find(excerpt)
    if at >= 0:
        return [(at, at + len(excerpt))]
    parts = [p for p in re.split(r"\s*\.\.\.\s*", norm(excerpt)) if p]
    for casefold in (False, True):
        text, where = _folded(raw, casefold)
        spans, pos = [], 0
        for part in (p.casefold() for p in parts) if casefold else parts:
            hit = text.find(part, pos)
            if hit < 0:
                break
            spans.append((where[hit], where[hit + len(part) - 1] + 1))
            pos = hit + len(part)
        else:
            if spans:
                return spans
    return []


def segments(raw: str, marks: dict[int, list[tuple[int, int]]]) -> list[Segment]:
    """Split `raw` at every span boundary; each segment lists the citations marking it and those anchored at its start."""
    cuts = {0, len(raw)} | {x for spans in marks.values() for s in spans for x in s}
    first = {cite: min(s[0] for s in spans) for cite, spans in marks.items() if spans}
    bounds = sorted(cuts)
    out = []
    for a, b in zip(bounds, bounds[1:]):
        covering = sorted(c for c, spans in marks.items() if any(s <= a and b <= e for s, e in spans))
        out.append(Segment(raw[a:b], covering, sorted(c for c, x in first.items() if x == a)))
    return out or [Segment("", [], sorted(first))]
