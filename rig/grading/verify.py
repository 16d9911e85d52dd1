"""`rig verify`: every citation of an answer checked against the page text the episode captured.

A citation is verified when its URL was loaded in the episode (the fragment is ignored when no page with
that exact fragment was loaded) and its excerpt occurs, after NFKC and whitespace collapsing (casefolding
as a last resort; `...` marks an elision), in the text captured for that URL at some step. Pages that were
fetched but never displayed (e.g. a CSV export) are searched in their response bodies (`step` is null).
For task episodes each citation also says whether the step it was visible at satisfies a gold state.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote, urldefrag, urljoin

from pydantic import BaseModel, Field

from recorders.models import Step
from rig.answer import Answer
from rig.episode import Episode, read_episode
from rig.errors import InputError
from rig.grading.evidence import CellForms, EpisodeTexts, PageText, loaded_urls, read_step_texts, response_texts
from rig.grading.parse import ParseFailure, parse_table, read_steps
from rig.grading.states import EpisodeStates
from rig.tasks import bundled_task_paths, load_task
from rig.tasks.models import Task

TRAJECTORY_FILE = "trajectory.jsonl"
_LEVELS = ("exact", "normalised", "casefold")


class CitationCheck(BaseModel):
    """The verdict on one citation (the `rig verify --json` item, with extra detail)."""

    index: int
    url: str
    verified: bool
    step: int | None = Field(description="the first step at which the excerpt was visible (in an anchored state if any)")
    state: dict[str, Any] | None = Field(description="the trajectory state at that step")
    reason: str
    row: int | None = None
    match: Literal["exact", "normalised", "casefold"] | None = None
    steps: list[int] = Field(default_factory=list, description="every step whose text for this URL holds the excerpt")
    gold_state: str | None = Field(default=None, description="the gold state satisfied at `step` (task episodes)")
    state_anchored: bool | None = Field(default=None, description="whether `step` satisfies an answer state (whole-answer "
                                                                  "citations: any gold state); null without a task")
    supports_row: bool | None = Field(default=None, description="whether the excerpt holds every value of the cited row")


def task_for(episode: Episode, episode_dir: Path) -> tuple[Task, Path] | None:
    """The episode's task and its file: `task_path` in episode.json if present, else the bundled task by id."""
    path = getattr(episode, "task_path", None)
    if path:
        p = Path(path)
        p = p if p.is_absolute() or p.exists() else Path(episode_dir) / p
        return load_task(p), p
    if episode.task_id is None:
        return None
    for p in bundled_task_paths():
        if p.stem == episode.task_id:
            return load_task(p), p
    return None


def file_sha256(path: Path) -> str:
    """Hex SHA-256 of a file's bytes."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def read_answer(path: Path) -> Answer:
    """An answer file (answer.json, or any answer-table text `rig score` reads); ParseFailure if it holds none."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise InputError(str(path), None, f"cannot read the answer: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise ParseFailure(str(path), f"not UTF-8 text (byte {e.start})") from None
    return parse_table(text, str(path))


def same_url(a: str, b: str) -> bool:
    """Whether two URLs are the same once percent-escapes are decoded."""
    return unquote(a) == unquote(b)


def defrag(url: str) -> str:
    """The URL without its fragment."""
    return urldefrag(url)[0]


def same_page(a: str, b: str) -> bool:
    """Whether two URLs name the same page, fragments aside."""
    return same_url(defrag(a), defrag(b))


def displayed(steps: list[Step], url: str) -> list[int]:
    """Indexes of the steps that displayed `url`: with its fragment when any did, else ignoring fragments."""
    return [i for i, s in enumerate(steps) if same_url(s.url, url)] or [
        i for i, s in enumerate(steps) if same_page(s.url, url)
    ]


def check_citations(episode_dir: Path, steps: list[Step], texts: EpisodeTexts, answer: Answer,
                    states: EpisodeStates | None = None, base_url: str | None = None) -> list[CitationCheck]:
    """Check every citation of `answer` against the episode's captured text."""
    forms = states.forms if states else CellForms()
    loaded: set[str] | None = None
    out = []
    for n, cite in enumerate(answer.citations):
        url = urljoin(base_url, cite.url) if base_url else cite.url
        check = CitationCheck(index=n, url=cite.url, row=cite.row, verified=False, step=None, state=None, reason="")
        if cite.row is not None and 0 <= cite.row < len(answer.rows):
            check.supports_row = PageText(cite.excerpt).row_on_page(list(zip(answer.columns, answer.rows[cite.row])), forms)
        idx = displayed(steps, url)
        if not cite.excerpt.strip():
            check.reason = "the citation has no excerpt to check"
        elif idx:
            _on_steps(check, cite.excerpt, idx, steps, texts, states, cite.row is not None)
        else:
            loaded = loaded if loaded is not None else loaded_urls(episode_dir)
            _in_responses(check, cite.excerpt, url, episode_dir, loaded)
        out.append(check)
    return out


def _on_steps(check: CitationCheck, excerpt: str, idx: list[int], steps: list[Step], texts: EpisodeTexts,
              states: EpisodeStates | None, for_row: bool) -> None:
    found = {i: m for i in idx if (m := texts.at(steps[i].step).find(excerpt))}
    if not found:
        check.reason = f"the excerpt is not in the text captured for this URL (steps {_span([steps[i].step for i in idx])})"
        return
    best = min(found.values(), key=_LEVELS.index)
    hits = [i for i in idx if found.get(i) == best]
    names = (states.answer_names if for_row else states.order) if states else []
    anchored = [(i, n) for i in hits for n in names if states and states.held[n][i]]
    i, name = anchored[0] if anchored else (hits[0], None)
    check.verified, check.match, check.step, check.state = True, best, steps[i].step, steps[i].state
    check.steps, check.gold_state = [steps[j].step for j in hits], name
    check.state_anchored = bool(anchored) if states else None
    check.reason = f"excerpt found ({best}) at step {steps[i].step}" + (
        "" if states is None else f", in gold state `{name}`" if name else ", in no gold state: not state-anchored")


def _in_responses(check: CitationCheck, excerpt: str, url: str, episode_dir: Path, loaded: set[str]) -> None:
    if not any(same_page(u, url) for u in loaded):
        check.reason = "the URL was not loaded in the episode"
        return
    bodies = response_texts(episode_dir, lambda u: same_page(u, url))
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
    episode_dir = Path(episode_dir)
    episode = read_episode(episode_dir)
    if task is None:
        found = task_for(episode, episode_dir)
        task = found[0] if found else None
    answer = read_answer(Path(answer_path))
    steps = read_steps(episode_dir / TRAJECTORY_FILE)
    texts = read_step_texts(episode_dir, steps)
    states = EpisodeStates(task, steps, texts, answer) if task else None
    checks = check_citations(episode_dir, steps, texts, answer, states, episode.start_url)
    return {"citations": [c.model_dump(mode="json") for c in checks]}
