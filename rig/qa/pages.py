"""One scored page: both sides' captures and the replay's requests turned into a `QaPage` (`replay.qa` scores)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass

from replay.index import ArchiveIndex
from replay.qa import (
    RequestOutcome,
    combine,
    fuzzy_hint,
    image_match,
    resources_score,
    state_match,
    text_similarity,
)
from rig.formats.qa import QaPage, QaReport, QaRequest
from rig.qa.capture import Seen

_DIFF_LINES = 40


@dataclass(frozen=True)
class Scored:
    """A page's QA, with what both sides captured when it is below the threshold (for the `--out` pages)."""

    page: QaPage
    recorded: Seen | None
    replayed: Seen | None


@dataclass(frozen=True)
class Scoring:
    """One scored target (a snapshot or an episode): its report and its pages with their captures."""

    report: QaReport
    pages: list[Scored]


def score_page(url: str, step: int | None, recorded: Seen | None, replayed: Seen | None,
               outcomes: Iterable[RequestOutcome], requests: int, *, kind: str, source: str, threshold: float,
               replay_index: ArchiveIndex, notes: list[str] | None = None) -> Scored:
    """Score one page: each part from what both sides captured (None where either side has nothing to compare), the
    score, the failed requests (with a fuzzy rule that would answer a missed one) and, under `threshold`, a text
    diff."""
    notes = list(notes or [])
    outcomes = list(outcomes)
    text = image = state = None
    state_diff: dict[str, list[object]] = {}
    if replayed is None:
        notes.append("the replay captured no page")
        if recorded is not None:
            text = 0.0 if recorded.text is not None else None
            state = 0.0 if recorded.state is not None else None
    elif recorded is not None:
        if recorded.text is not None and replayed.text is not None:
            text = text_similarity(recorded.text, replayed.text)
        if recorded.image is not None and replayed.image is not None:
            try:
                image = image_match(recorded.image, replayed.image)
            except ValueError as exc:
                notes.append(f"images not compared: {exc}")
        elif recorded.image is not None:
            notes.append("images not compared: the replay drew no image of this page in time")
        if recorded.state is not None and replayed.state is not None:
            state, diff = state_match(recorded.state, replayed.state)
            state_diff = {k: list(v) for k, v in diff.items()}
    resources = resources_score(outcomes)
    score, worst = combine({"text": text, "image": image, "resources": resources, "state": state})
    failed = [QaRequest(method=o.method, url=o.url, kind=o.kind, outcome=o.outcome,  # type: ignore[arg-type]
                        status=o.status, recorded_status=o.recorded_status, reason=o.reason,
                        fuzzy=fuzzy_hint(replay_index, o.method, o.url) if o.outcome == "missed" else [])
              for o in outcomes if o.bad]
    diff_text = None
    if score < threshold and recorded is not None and recorded.text is not None:
        diff_text = text_diff(recorded.text, replayed.text if replayed is not None else "") or None
    page = QaPage(url=url, step=step, score=score, text=text, image=image, resources=resources, state=state,
                  worst=worst, kind=kind, source=source, requests=requests, failed=failed,  # type: ignore[arg-type]
                  state_diff=state_diff, text_diff=diff_text, notes=notes)
    low = score < threshold  # only a low page's captures are shown (`--out`): the others' are not kept
    return Scored(page, recorded if low else None, replayed if low else None)


def text_diff(recorded: str, replayed: str) -> str:
    """A short unified diff of the recorded (-) and replayed (+) texts, line by line."""
    lines = list(difflib.unified_diff(recorded.splitlines(), replayed.splitlines(), "recorded", "replayed", n=1,
                                      lineterm=""))
    if len(lines) > _DIFF_LINES:
        lines = lines[:_DIFF_LINES] + [f"... {len(lines) - _DIFF_LINES} more lines"]
    return "\n".join(lines)
