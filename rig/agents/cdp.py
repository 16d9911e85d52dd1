"""Helpers for the `cdp` agent: an outside program drives the rig's browser over CDP and hands in an answer.

The runner launches Chromium with `rig.browser.launch_for_cdp`, prints `announce(...)`, records while the
outside driver works, and waits with `wait_for_answer` until `rig submit` (`submit_text`) writes the
episode's `answer.json` or the time budget ends. `rig submit` keeps the text it was given
(`submitted_answer.txt`); text with no readable table is handed in too, as `answer_parse_failure.json`,
and the episode ends with status `parse_failure`. `python -m rig.agents.cdp_client_example` is a tiny
outside driver to copy from.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any, TextIO

from pydantic import ValidationError

from rig.episode_dir import EpisodeDir
from rig.errors import InputError
from rig.formats.answer import Answer
from rig.formats.answer_text import ParseFailure
from rig.tools.answers import AnswerTooLarge, read_answer


def announce(cdp_url: str, episode_dir: str | Path, out: TextIO) -> None:
    """Print the `CDP endpoint:` and `Episode:` lines (docs/runner.md, "Agents") and flush, before waiting."""
    out.write(f"CDP endpoint: {cdp_url}\nEpisode: {Path(episode_dir)}\n")
    out.flush()


def submit_text(episode_dir: str | Path, text: str, source: str) -> Path:
    """Hand in an answer text (what `rig submit` does): keep it, parse it and write `answer.json`.

    Text with no readable table is handed in as a parse failure (the waiting episode ends with status
    `parse_failure`) and the `ParseFailure` is raised. An episode that has ended, or already has an
    answer, takes none; nor is an answer over the limits of `rig.tools.answers` taken (InputError).
    """
    ed = _episode_dir(episode_dir)
    if ed.exists():
        status = ed.read_episode().status
        if status != "incomplete":
            raise InputError(str(ed.path), None, f"the episode has already ended ({status}); start a new one with `rig run`")
    if ed.has_answer():
        raise InputError(str(ed.path), None, "an answer was already handed in for this episode")
    try:
        answer = read_answer(text, source)  # refused over its limits (rows, cells, bytes) before anything is kept
    except AnswerTooLarge as exc:
        raise InputError(source, None, str(exc).removeprefix(f"{source}: ")) from None
    ed.write_submitted(text)
    if isinstance(answer, ParseFailure):
        ed.write_parse_failure(answer)
        raise answer
    return submit_answer(ed.path, answer)


def submit_answer(episode_dir: str | Path, answer: Answer | dict[str, Any]) -> Path:
    """Validate an answer and write it to the episode's `answer.json` atomically."""
    ed = _episode_dir(episode_dir)
    try:
        parsed = answer if isinstance(answer, Answer) else Answer.model_validate(answer)
    except ValidationError as exc:
        raise InputError("answer", None, f"not an answer.json object: {exc.errors()[0]['msg']}") from None
    return ed.write_answer(parsed)


def _episode_dir(episode_dir: str | Path) -> EpisodeDir:
    ed = EpisodeDir(episode_dir)
    if not ed.path.is_dir():
        raise InputError(str(ed.path), None, "is not an episode directory; use the path `rig run` printed after `Episode:`")
    return ed


async def wait_for_answer(
    episode_dir: str | Path, *, timeout_s: float, poll_s: float = 0.1
) -> Answer | ParseFailure | None:
    """Wait until the episode's `answer.json` holds a valid answer, or an unparseable text was handed in
    (returned as its `ParseFailure`); None when `timeout_s` passes first."""
    ed = EpisodeDir(episode_dir)
    deadline = time.monotonic() + timeout_s
    while True:
        failed = ed.read_parse_failure()
        if failed is not None:
            return failed
        if ed.answer_file.exists():
            try:
                return Answer.model_validate_json(ed.answer_file.read_bytes())
            except (ValueError, ValidationError):
                pass  # a writer that is not atomic may be half-way; look again
        if time.monotonic() >= deadline:
            return None
        await asyncio.sleep(poll_s)
