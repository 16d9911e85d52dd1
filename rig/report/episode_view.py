"""What the episode page shows, computed from one episode's files: timeline rows with per-step events and
constraint marks, the answer table aligned with the gold table, and the citations with their text pages."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recorders.models import Step
from rig.report.load import ConstraintMark, EpisodeData


def text_page(eid: str, step: int) -> str:
    """Path of a step's captured-text page, relative to the report root."""
    return f"text/{eid}/step-{step:04d}.html"


def screenshot_file(e: EpisodeData, step: Step) -> Path | None:
    """The step's screenshot file, if it exists inside the episode directory."""
    if not step.screenshot:
        return None
    path = (e.dir / step.screenshot).resolve()
    return path if path.is_relative_to(e.dir.resolve()) and path.is_file() else None


def screen_paths(eid: str, step: Step) -> tuple[str, str]:
    """(thumbnail, full image) paths relative to the report root for a step's screenshot."""
    suffix = Path(step.screenshot or "").suffix.lower()
    full = f"{step.step:04d}{suffix if suffix in ('.jpg', '.jpeg', '.png', '.webp') else '.jpg'}"
    return f"screens/{eid}/thumb/{step.step:04d}.jpg", f"screens/{eid}/full/{full}"


@dataclass
class Event:
    """Something that happened at a step, shown as a badge: kind is a CSS class."""

    kind: str
    text: str


@dataclass
class TimelineRow:
    """One step of the timeline."""

    step: Step
    screens: tuple[str, str] | None
    marks: dict[str, list[ConstraintMark]]
    held: list[str]
    events: list[Event] = field(default_factory=list)

    @property
    def classes(self) -> str:
        """CSS classes of the row: the kinds of its events."""
        return " ".join(sorted({e.kind for e in self.events}))


def _fmt(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(map(str, value)) + "]"
    return "(unset)" if value is None else str(value)


def timeline(e: EpisodeData) -> list[TimelineRow]:
    """The step timeline, with the steps where gold states were reached, left or departed from standing out."""
    g = e.grade
    rows = []
    for s in e.steps:
        marks = e.marks(s)
        shot = screenshot_file(e, s) is not None
        rows.append(TimelineRow(step=s, screens=screen_paths(e.id, s) if shot else None, marks=marks,
                                held=[n for n, ms in marks.items() if all(m.holds for m in ms)]))
    at = {r.step.step: r for r in rows}

    def add(step: int | None, kind: str, text: str) -> None:
        if step is not None and step in at:
            at[step].events.append(Event(kind, text))

    if g is None:
        return rows
    for r in g.gold_states:
        add(r.step, "reached", f"gold state {r.name} reached")
    for d in g.drift:
        changes = "; ".join(f"{k}: {_fmt(v[0])} → {_fmt(v[1])}" for k, v in d.changes.items())
        add(d.step, "drift", f"drifted from {d.state} (reached at step {d.reached_step}): {changes}"
            + (" — recovered later" if d.recovered else ""))
    if g.first_divergence and g.first_divergence.step is not None:
        add(g.first_divergence.step, "diverged", "first departure from the reference run: " + ", ".join(g.first_divergence.keys))
    read: dict[int, list[int]] = {}
    for p in g.rows:
        if p.step is not None:
            read.setdefault(p.step, []).append(p.row)
    for step, rs in read.items():
        add(step, "read", f"answer rows {', '.join(map(str, rs))} read here")
    if g.label and g.label_step is not None:
        add(g.label_step, "labelled", f"failure label: {g.label}")
    return rows


@dataclass
class AnswerCell:
    """One slot of the answer table: `correct`, `wrong`, `missing`, `extra` (or `plain` when not graded)."""

    verdict: str
    text: str | None
    gold: str | None = None


@dataclass
class AnswerRow:
    """A gold row with the answer row aligned to it, or an answer row aligned to no gold row (extra)."""

    gold_index: int | None
    pred_index: int | None
    cells: list[AnswerCell]
    note: str = ""


def answer_table(e: EpisodeData) -> tuple[list[str], list[AnswerRow]]:
    """The answer against the gold table: columns and rows, gold rows in gold order, then the extra rows."""
    answer, _ = e.answer
    scores = e.grade.scores if e.grade else None
    if scores is None:
        if answer is None:
            return [], []
        return answer.columns, [AnswerRow(None, i, [AnswerCell("plain", c) for c in row]) for i, row in enumerate(answer.rows)]
    columns = [c.column for c in scores.gold_rows[0].cells] if scores.gold_rows else \
        [str(i + 1) for i in range(max((len(x.cells) for x in scores.extra_rows), default=0))]
    rows = [AnswerRow(rv.gold_index, rv.pred_index, [AnswerCell(c.verdict, c.pred, c.gold) for c in rv.cells],
                      "no answer row has this key" if rv.pred_index is None else "")
            for rv in scores.gold_rows]
    reasons = {"not_in_gold": "key not in the gold table", "duplicate_key": "repeats a key already answered",
               "missing_key": "a key cell is missing"}
    for x in scores.extra_rows:
        cells = [AnswerCell("extra", x.cells[i] if i < len(x.cells) else None) for i in range(len(columns))]
        rows.append(AnswerRow(None, x.pred_index, cells, reasons.get(x.reason, x.reason)))
    return columns, rows


@dataclass
class CitationRow:
    """One citation with its verdict and where its captured text is."""

    index: int
    row: int | None
    url: str
    excerpt: str
    verified: bool | None
    reason: str
    step: int | None
    gold_state: str | None
    state_anchored: bool | None
    supports_row: bool | None
    link: str | None


def citations(e: EpisodeData) -> list[CitationRow]:
    """The answer's citations with the grader's verdicts (unverified: None when the episode was not graded); each
    links to the captured text of the step grade.json highlights it at."""
    answer, _ = e.answer
    checks = {c.index: c for c in e.grade.citations} if e.grade else {}
    steps = {s.step for s in e.steps}
    out = []
    for i, cite in enumerate(answer.citations if answer else []):
        c = checks.get(i)
        step = c.highlight.step if c and c.highlight else c.step if c else None
        if step is None and c and c.steps:
            step = c.steps[0]
        out.append(CitationRow(
            index=i, row=cite.row, url=cite.url, excerpt=cite.excerpt, verified=c.verified if c else None,
            reason=c.reason if c else "not graded", step=step, gold_state=c.gold_state if c else None,
            state_anchored=c.state_anchored if c else None, supports_row=c.supports_row if c else None,
            link=f"{text_page(e.id, step)}#{cite_anchor(i)}" if step is not None and step in steps else None))
    return out


def cite_anchor(index: int) -> str:
    """The id of a citation's first highlight on a text page."""
    return f"cite-{index}"


def record_anchor(record: int, excerpt: int) -> str:
    """The id of a record excerpt's first highlight on a text page."""
    return f"record-{record}-{excerpt}"


@dataclass
class TextMark:
    """A highlight on one step's text page: its anchor id, what it marks, the excerpt, and its spans (empty: the
    grader matched the excerpt but could not place it character by character)."""

    id: str
    label: str
    excerpt: str
    spans: list[tuple[int, int]]


def text_marks(e: EpisodeData) -> dict[int, list[TextMark]]:
    """Step -> the highlights grade.json places on that step's text: the citations verified there and the record
    excerpts found there."""
    out: dict[int, list[TextMark]] = {}
    if e.grade is None:
        return out
    for c in e.grade.citations:
        if c.verified and c.highlight is not None:
            out.setdefault(c.highlight.step, []).append(
                TextMark(cite_anchor(c.index), f"citation {c.index}", _excerpt(e, c.index), list(c.highlight.spans)))
    for r in e.grade.records:
        for j, x in enumerate(r.excerpts):
            if x.highlight is not None:
                out.setdefault(x.highlight.step, []).append(
                    TextMark(record_anchor(r.index, j), f"record {r.index}, excerpt {j}"
                             + ("" if x.faithful else " (near miss, not credited)"), x.excerpt, list(x.highlight.spans)))
    return out


def _excerpt(e: EpisodeData, index: int) -> str:
    answer, _ = e.answer
    return answer.citations[index].excerpt if answer and index < len(answer.citations) else ""
