"""Where an excerpt sits in a step's captured text, as the verifier compares it (NFKC, collapsed whitespace, `...`
elisions, casefolding last): the character spans of the raw text that `grade.json` hands the report to highlight."""

from __future__ import annotations

import re
import unicodedata

from rig.formats.grade import Highlight
from rig.formats.vocabulary import norm


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


def highlight(step: int, raw: str, excerpt: str) -> Highlight:
    """The spans of `excerpt` in the text captured at `step` (none: it could not be placed in that text)."""
    return Highlight(step=step, spans=find_spans(raw, excerpt))
