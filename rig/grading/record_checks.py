"""Verdicts on evidence records against the episode's own captured pages (never a live re-fetch), and their rollup.

For each submitted record (`rig.grading.records.SubmittedRecord`):
- captured: its URL was loaded in the episode (matched as `rig verify` matches citation URLs: a URL without a
  fragment covers every step of its document, one with a fragment that exact fragment first, then the document;
  a URL fetched but never displayed is searched in its response bodies);
- each excerpt is faithful when it occurs in the text captured for that URL after NFKC and whitespace
  collapsing (docs/grading.md); an excerpt found only casefolded, or by rapidfuzz partial ratio >= FUZZY_NEAR_MISS,
  is a near miss: reported, never credited;
- facts supported: every required fact (item axes and/or the answer, `records.facts`) shows, as a whole value,
  in a faithful excerpt or in the page text captured for that URL; and when the task lists `records.gold`, the
  record matches a gold record (same branch, each axis equal after the axis rules or near-identical as the axis
  policy allows, answer equal after `answer_rules`).
The verdicts roll up into soft and hard precision, recall and F1 by `rig.grading.records.score_task`.
"""

from __future__ import annotations

from urllib.parse import urljoin

from pydantic import BaseModel, Field
from rapidfuzz import fuzz

from recorders.models import Step
from rig.formats.answer import Answer
from rig.formats.canonical import Canonicalizer, RuleError
from rig.formats.grade import ExcerptCheck, RecordCheck
from rig.formats.records import RecordVerdict, RollupScores, SubmittedRecord
from rig.formats.task import RecordsSpec
from rig.formats.vocabulary import norm
from rig.grading.evidence import CellForms, Evidence, PageText
from rig.grading.records import score_task
from rig.grading.spans import highlight
from rig.grading.urls import displayed, same_page

#: rapidfuzz partial ratio (0-100) at or above which an excerpt not found verbatim is reported as a near miss.
FUZZY_NEAR_MISS = 90.0


class RecordGrade(BaseModel):
    """Per-record verdicts and the task's soft and hard precision, recall and F1."""

    records: list[RecordCheck] = Field(default_factory=list)
    scores: RollupScores


def _page_texts(url: str, steps: list[Step], evidence: Evidence) -> tuple[bool, list[tuple[int | None, PageText]]]:
    """Whether the URL was captured, and its captured texts (per displaying step, else its response bodies)."""
    idx = displayed(steps, url)
    if idx:
        return True, [(steps[i].step, evidence.texts.at(steps[i].step)) for i in idx]
    if not any(same_page(u, url) for u in evidence.loaded):
        return False, []
    return True, [(None, t) for _, t in evidence.response_texts(lambda u: same_page(u, url))]


def _excerpt(excerpt: str, pages: list[tuple[int | None, PageText]]) -> ExcerptCheck:
    found = [(m, step, page) for step, page in pages if (m := page.find(excerpt))]
    for level in ("exact", "normalised", "casefold"):
        hits = [(step, page) for m, step, page in found if m == level]
        if hits:
            step, page = next(((s, p) for s, p in hits if s is not None), hits[0])
            return ExcerptCheck(excerpt=excerpt, faithful=level != "casefold", match=level, step=step,
                                highlight=highlight(step, page.raw, excerpt) if step is not None else None)
    want = norm(excerpt).casefold()
    best = max(((fuzz.partial_ratio(want, page.loose), step) for step, page in pages if page.loose and want),
               default=(0.0, None), key=lambda x: x[0])
    if best[0] >= FUZZY_NEAR_MISS:
        return ExcerptCheck(excerpt=excerpt, faithful=False, match="fuzzy", ratio=round(best[0], 1), step=best[1])
    return ExcerptCheck(excerpt=excerpt, faithful=False, match=None)


class _Gold:
    """Matching records against the task's gold records."""

    def __init__(self, spec: RecordsSpec) -> None:
        self.spec, self.h = spec, spec.hierarchy
        self.answer = Canonicalizer({"default": spec.answer_rules})
        self._axes: dict[str, Canonicalizer] = {}  # built once per axis, not per comparison

    def _canon(self, axis: str, value: str) -> str:
        c = self._axes.get(axis) or self._axes.setdefault(axis, Canonicalizer({"default": self.h.policy(axis).rules}))
        try:
            return c.cell(axis, value)
        except (RuleError, ValueError):
            return value

    def _same(self, axis: str, a: str, b: str) -> bool:
        ca, cb = self._canon(axis, a), self._canon(axis, b)
        threshold = self.h.policy(axis).fuzzy
        return ca == cb or (threshold is not None and fuzz.ratio(ca, cb) >= threshold)

    def _answer(self, value: str) -> str:
        try:
            return self.answer.cell("answer", value)
        except (RuleError, ValueError):
            return norm(value)

    def match(self, rec: SubmittedRecord) -> bool | None:
        """Whether the record matches a gold record (None when the task lists no gold)."""
        if self.spec.gold is None:
            return None
        return any(g.subtask == rec.subtask and all(self._same(a, rec.item.get(a, ""), v) for a, v in g.item.items())
                   and self._answer(g.answer) == self._answer(rec.answer) for g in self.spec.gold)


def _facts(spec: RecordsSpec, rec: SubmittedRecord, excerpts: list[PageText],
           pages: list[tuple[int | None, PageText]]) -> dict[str, bool]:
    rules = {a: spec.hierarchy.policy(a).rules for a in rec.item}
    forms = CellForms(Canonicalizer({"columns": {**rules, "answer": spec.answer_rules}}))
    out = {}
    for fact in spec.required_facts(rec.subtask):
        value = rec.answer if fact == "answer" else rec.item.get(fact, "")
        out[fact] = bool(value.strip()) and any(t.has_value(fact, value, forms)
                                                for t in [*excerpts, *(p for _, p in pages)])
    return out


def _reason(c: RecordCheck) -> str:
    if not c.well_formed:
        return c.reason
    if not c.captured:
        return "the URL was not loaded in the episode"
    parts = []
    bad = [e for e in c.excerpts if not e.faithful]
    if not c.excerpts:
        parts.append("no excerpt")
    elif bad:
        near = sum(e.match in ("casefold", "fuzzy") for e in bad)
        parts.append(f"{len(bad)} of {len(c.excerpts)} excerpts not in the captured page"
                     + (f" ({near} near miss{'es' if near > 1 else ''}, not credited)" if near else ""))
    missing = [f for f, ok in c.facts.items() if not ok]
    if missing:
        parts.append(f"not shown on the page or in an excerpt: {', '.join(missing)}")
    if c.gold_match is False:
        parts.append("matches no gold record")
    return "; ".join(parts) or "captured, every excerpt faithful, facts supported"


def check_records(spec: RecordsSpec, answer: Answer | None, evidence: Evidence, steps: list[Step],
                  base_url: str | None = None) -> RecordGrade:
    """Judge every record of `answer` against the episode's captures and roll the verdicts up (no answer: zeros)."""
    records = answer.records if answer is not None else []
    branches = spec.hierarchy.branch_axes()
    gold = _Gold(spec)
    checks: list[RecordCheck] = []
    for n, rec in enumerate(records):
        url = urljoin(base_url, rec.url) if base_url else rec.url
        check = RecordCheck(index=n, item=rec.item, url=rec.url, answer=rec.answer, subtask=rec.subtask, captured=False,
                            verdict=RecordVerdict(captured=False, faithful_excerpts=0, total_excerpts=len(rec.excerpts),
                                                  facts_supported=False), soft=0.0, hard=0.0, reason="")
        missing = [a for a in branches.get(rec.subtask, []) if not rec.item.get(a, "").strip()]
        if rec.subtask not in branches or missing:
            check.well_formed = False
            check.reason = (f"unknown subtask {rec.subtask!r}" if rec.subtask not in branches
                            else f"item misses {missing}") + ": left out of the rollup"
            checks.append(check)
            continue
        check.captured, pages = _page_texts(url, steps, evidence)
        check.steps = sorted(s for s, _ in pages if s is not None)
        check.excerpts = [_excerpt(e, pages) for e in rec.excerpts] if check.captured else \
            [ExcerptCheck(excerpt=e, faithful=False, match=None) for e in rec.excerpts]
        faithful = [PageText(e.excerpt) for e in check.excerpts if e.faithful]
        check.facts = _facts(spec, rec, faithful, pages)
        check.gold_match = gold.match(rec)
        check.verdict = RecordVerdict(
            captured=check.captured, faithful_excerpts=len(faithful), total_excerpts=len(rec.excerpts),
            fuzzy_near_misses=sum(e.match in ("casefold", "fuzzy") for e in check.excerpts),
            facts_supported=check.captured and all(check.facts.values()) and check.gold_match is not False)
        check.soft, check.hard = check.verdict.soft, check.verdict.hard
        check.reason = _reason(check)
        checks.append(check)
    kept = [c for c in checks if c.well_formed]
    scores = score_task(spec.hierarchy, [records[c.index] for c in kept], [c.verdict for c in kept])
    return RecordGrade(records=checks, scores=scores)
