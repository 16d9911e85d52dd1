"""Scoring an episode's steps: every recorded action re-driven (`replay.redrive`) against the episode's own archive
or a snapshot frozen from it, each step captured again by the recorder and compared with the recorded one."""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from playwright.async_api import Browser

from recorders import WARC_FILE, Recorder, Step
from replay import REPLAY_CONTEXT_OPTIONS, attach_replay, load_index
from replay.freeze import move_origin
from replay.index import ArchiveIndex
from replay.perform import PERFORMED
from replay.redrive import redrive
from replay.report import RecordedStep
from rig.episode_dir import EpisodeDir
from rig.errors import InputError
from rig.qa.capture import Seen, Tracked, recorded_images, replay_options, seen_of
from rig.qa.pages import Scored, score_page
from rig.qa.requests import RequestLog
from rig.runner.adapters import episode_adapters
from rig.sites import bundled_adapters
from rig.tasks.loader import task_of


#: The steps scored: page actions, checkpoints and answers (the page as the previous action left it, where the answer
#: was read).
SCORED = PERFORMED | {"checkpoint", "answer"}


@dataclass(frozen=True)
class EpisodeScore:
    """An episode's scored steps, what it recorded of every step (documents are compared with those), and notes."""

    pages: list[Scored]
    recorded: list[tuple[Step, Seen]]
    notes: list[str]


@dataclass(frozen=True)
class EpisodeUnderQa:
    """An episode to score: its directory, the archive it is replayed against (its own, or a snapshot's) and the
    origins its recorded URLs moved to in that archive (`rig freeze`: its sites server onto the frozen origin)."""

    episode: EpisodeDir
    against: ArchiveIndex | None = None
    moves: Mapping[str, str] | None = None


def recorded_steps(ed: EpisodeDir) -> tuple[ArchiveIndex, list[Step]]:
    """The episode's archive (texts included) and steps; InputError when there is nothing to score."""
    for path in (ed.trajectory_file, ed.warc_file):
        if not path.is_file():
            raise InputError(str(ed.path), path.name, "missing: not an episode directory (see `rig record`)")
    index = ed.archive(strict=False)
    steps = ed.steps()
    if not steps:
        raise InputError(str(ed.trajectory_file), None, "holds no step: there is nothing to score")
    return index, steps


def _moved(step: Step, moves: Mapping[str, str]) -> RecordedStep:
    """A recorded step as re-driving reads it, its URLs (the page's, a goto's) on the archive's origins."""
    action = step.action.model_dump(include={"type", "target", "value"})
    if action["type"] == "goto":
        for k in ("value", "target"):
            if isinstance(action[k], str):
                action[k] = move_origin(action[k], moves)
    return RecordedStep(step=step.step, url=move_origin(step.url, moves), action=action, state=dict(step.state),
                        text_hash=step.text_hash, tab=step.tab)


def _adapters(ed: EpisodeDir) -> list:  # type: ignore[type-arg]
    """The adapters the episode recorded with (its task's own, then the bundled sites')."""
    try:
        found = task_of(ed.read_episode(), ed.path)
    except InputError:
        found = None
    return episode_adapters(found[0] if found else None, bundled_adapters())


def recorded_pages(ed: EpisodeDir, index: ArchiveIndex, steps: list[Step],
                   moves: Mapping[str, str]) -> list[tuple[Step, Seen]]:
    """Each recorded step and what it showed (text record, image, state), its URL on the archive's origins."""
    images = recorded_images(steps, ed.path)
    return [(s, replace(seen_of(s, index.texts, ed.path, images.get(s.step)), url=move_origin(s.url, moves)))
            for s in steps]


async def score_episode(browser: Browser, target: EpisodeUnderQa, *, threshold: float,
                        timeout_s: float = 10.0) -> EpisodeScore:
    """Re-drive every recorded step against the archive and score each (images where the recording has them). A step
    whose action is no page action (a tool call's: `web_fetch`, `run_sql`, ...) is re-driven as nothing and not
    scored; the pages it loaded are scored as the snapshot's documents."""
    ed = target.episode
    index, steps = recorded_steps(ed)
    moves = dict(target.moves or {})
    back = {v: k for k, v in moves.items()}
    against = target.against if target.against is not None else index
    recorded = recorded_pages(ed, index, steps, moves)
    with tempfile.TemporaryDirectory(prefix="rig-qa-") as scratch_dir:
        scratch = Path(scratch_dir)
        context = await browser.new_context(**REPLAY_CONTEXT_OPTIONS)
        try:
            session = await attach_replay(context, against)
            log = RequestLog(context, lambda m, u, b, c: index.lookup(m, move_origin(u, back), b, c),
                             lambda: session.tag)
            rec = await Recorder.attach(context, scratch, options=replay_options(any(r.image for _, r in recorded)),
                                        adapters=_adapters(ed))
            capture = Tracked(rec, session)
            report = await redrive([_moved(s, moves) for s in steps], context, session, capture,
                                   archive_texts=index.step_text, timeout_s=timeout_s)
            await rec.close()
        finally:
            await context.close()
        texts = load_index(scratch / WARC_FILE, texts=True).texts
        errors = {m["step"]: m["diff"]["error"] for m in report.mismatches if "error" in m["diff"]}
        out = []
        skipped = [s.step for s, _ in recorded if s.action.type not in SCORED]
        for s, seen in recorded:
            if s.action.type not in SCORED:
                continue
            got = capture.captured.get(s.step)
            notes = [f"the action failed: {errors[s.step]}"] if s.step in errors else []
            out.append(score_page(
                seen.url, s.step, seen, seen_of(got, texts, scratch) if got is not None else None,
                log.outcomes.get(s.step, []), log.counts.get(s.step, 0), kind="step", source=str(ed.path),
                threshold=threshold, replay_index=against, notes=notes))
        notes = [f"{ed.path}: {len(skipped)} steps are no page action (tool calls) and are not scored: "
                 + ", ".join(map(str, skipped[:10])) + (" ..." if len(skipped) > 10 else "")] if skipped else []
        return EpisodeScore(out, recorded, notes)
