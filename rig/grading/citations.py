"""Citations checked against the page text the episode captured (`rig verify`, and the citations of `grade.json`).

A citation is verified when its URL was loaded in the episode and its excerpt occurs, after NFKC and whitespace
collapsing (casefolding as a last resort; `...` marks an elision), in the text captured for that URL at some
step. A citation of a page covers every state of that page (`rig.grading.urls.displaying`): a URL without a
fragment is looked for at every step of its document, one with a fragment at that exact fragment first, then
at the document's other steps. Pages that were
fetched but never displayed (e.g. a CSV export) are searched in their response bodies (`step` is null).
For task episodes each citation also says whether the step it was visible at satisfies a gold state.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urljoin

from recorders.models import Step
from rig.episode_dir import EpisodeDir, read_answer_file
from rig.formats.answer import Answer
from rig.formats.grade import CitationCheck
from rig.formats.task import Task
from rig.grading.evidence import CellForms, EpisodeTexts, Evidence, PageText
from rig.grading.spans import highlight
from rig.grading.states import EpisodeStates
from rig.grading.urls import displaying, same_page
from rig.tasks import task_of

_LEVELS = ("exact", "normalised", "casefold")


def check_citations(evidence: Evidence, steps: list[Step], answer: Answer, states: EpisodeStates | None = None,
                    base_url: str | None = None) -> list[CitationCheck]:
    """Check every citation of `answer` against the episode's captured text."""
    forms = states.forms if states else CellForms()
    out = []
    for n, cite in enumerate(answer.citations):
        url = urljoin(base_url, cite.url) if base_url else cite.url
        check = CitationCheck(index=n, url=cite.url, row=cite.row, verified=False, step=None, state=None, reason="")
        if cite.row is not None and 0 <= cite.row < len(answer.rows):
            check.supports_row = PageText(cite.excerpt).row_on_page(list(zip(answer.columns, answer.rows[cite.row])), forms)
        tiers = displaying(steps, url)
        if not cite.excerpt.strip():
            check.reason = "the citation has no excerpt to check"
        elif tiers:
            _on_steps(check, cite.excerpt, tiers, steps, evidence.texts, states, cite.row is not None)
        else:
            _in_responses(check, cite.excerpt, url, evidence)
        out.append(check)
    return out


def _on_steps(check: CitationCheck, excerpt: str, tiers: list[list[int]], steps: list[Step], texts: EpisodeTexts,
              states: EpisodeStates | None, for_row: bool) -> None:
    found: dict[int, str] = {}
    for idx in tiers:  # the first tier that shows the excerpt decides
        found = {i: m for i in idx if (m := texts.at(steps[i].step).find(excerpt))}
        if found:
            break
    if not found:
        shown = sorted(steps[i].step for idx in tiers for i in idx)
        check.reason = f"the excerpt is not in the text captured for this URL (steps {_span(shown)})"
        return
    best = min(found.values(), key=_LEVELS.index)
    hits = [i for i in found if found[i] == best]
    names = (states.answer_names if for_row else states.order) if states else []
    anchored = [(i, n) for i in hits for n in names if states and states.held[n][i]]
    i, name = anchored[0] if anchored else (hits[0], None)
    check.verified, check.match, check.step, check.state = True, best, steps[i].step, steps[i].state
    check.steps, check.gold_state = [steps[j].step for j in hits], name
    check.highlight = highlight(steps[i].step, texts.at(steps[i].step).raw, excerpt)
    judged = states is not None and bool(states.order)  # a task without gold states is not annotated: null
    check.state_anchored = bool(anchored) if judged else None
    check.reason = f"excerpt found ({best}) at step {steps[i].step}" + (
        "" if not judged else f", in gold state `{name}`" if name else ", in no gold state: not state-anchored")


def _in_responses(check: CitationCheck, excerpt: str, url: str, evidence: Evidence) -> None:
    if not any(same_page(u, url) for u in evidence.loaded):
        check.reason = "the URL was not loaded in the episode"
        return
    bodies = evidence.response_texts(lambda u: same_page(u, url))
    found = [m for _, text in bodies if (m := text.find(excerpt))]
    if found:
        check.verified, check.match = True, min(found, key=_LEVELS.index)
        check.reason = f"excerpt found ({check.match}) in the response body; no step displayed this URL"
    else:
        check.reason = "the URL was fetched but never displayed, and its response body does not hold the excerpt"


def _span(steps: list[int]) -> str:
    return ", ".join(map(str, steps)) if len(steps) <= 6 else f"{steps[0]}-{steps[-1]}"


def verify_episode(episode_dir: str | Path, answer_path: str | Path, task: Task | None = None) -> dict[str, Any]:
    """The `rig verify --json` document for one episode and one answer file."""
    ed = EpisodeDir(episode_dir)
    episode = ed.read_episode()
    if task is None:
        found = task_of(episode, ed.path)
        task = found[0] if found else None
    answer = read_answer_file(Path(answer_path))
    steps = ed.steps()
    evidence = Evidence.from_archive(ed.archive(), steps)
    states = EpisodeStates(task, steps, evidence.texts, answer) if task else None
    checks = check_citations(evidence, steps, answer, states, episode.start_url)
    return {"citations": [c.model_dump(mode="json") for c in checks]}
