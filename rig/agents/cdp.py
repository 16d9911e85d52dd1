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
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any, TextIO

from pydantic import ValidationError

from rig.answer import Answer
from rig.episode import EPISODE_FILE
from rig.errors import InputError
from rig.grading.parse import ParseFailure, parse_table

ANSWER_FILE = "answer.json"
#: The text `rig submit` was given, kept as handed in.
SUBMITTED_FILE = "submitted_answer.txt"
#: Written instead of `answer.json` when the handed-in text holds no readable table: `{"source", "reason"}`.
PARSE_FAILURE_FILE = "answer_parse_failure.json"


def announce(cdp_url: str, episode_dir: str | Path, out: TextIO) -> None:
    """Print the `CDP endpoint:` and `Episode:` lines (CONTRACTS.md) and flush, before waiting."""
    out.write(f"CDP endpoint: {cdp_url}\nEpisode: {Path(episode_dir)}\n")
    out.flush()


def submit_text(episode_dir: str | Path, text: str, source: str) -> Path:
    """Hand in an answer text (what `rig submit` does): keep it, parse it and write `answer.json`.

    Text with no readable table is handed in as a parse failure (the waiting episode ends with status
    `parse_failure`) and the `ParseFailure` is raised. An episode that has ended, or already has an
    answer, takes none.
    """
    episode = _episode_dir(episode_dir)
    if (episode / EPISODE_FILE).exists():
        status = json.loads((episode / EPISODE_FILE).read_text(encoding="utf-8")).get("status")
        if status != "incomplete":
            raise InputError(str(episode), None, f"the episode has already ended ({status}); start a new one with `rig run`")
    if (episode / ANSWER_FILE).exists() or (episode / PARSE_FAILURE_FILE).exists():
        raise InputError(str(episode), None, "an answer was already handed in for this episode")
    _write_atomic(episode, SUBMITTED_FILE, text)
    try:
        answer = parse_table(text, source)
    except ParseFailure as exc:
        _write_atomic(episode, PARSE_FAILURE_FILE, json.dumps({"source": exc.source, "reason": exc.reason}))
        raise
    return submit_answer(episode, answer)


def submit_answer(episode_dir: str | Path, answer: Answer | dict[str, Any]) -> Path:
    """Validate an answer and write it to the episode's `answer.json` atomically."""
    episode = _episode_dir(episode_dir)
    try:
        parsed = answer if isinstance(answer, Answer) else Answer.model_validate(answer)
    except ValidationError as exc:
        raise InputError("answer", None, f"not an answer.json object: {exc.errors()[0]['msg']}") from None
    return _write_atomic(episode, ANSWER_FILE, parsed.model_dump_json(indent=2))


def _episode_dir(episode_dir: str | Path) -> Path:
    episode = Path(episode_dir)
    if not episode.is_dir():
        raise InputError(str(episode), None, "is not an episode directory; use the path `rig run` printed after `Episode:`")
    return episode


def _write_atomic(directory: Path, name: str, text: str) -> Path:
    """Write a file so that a poller never reads half of it."""
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{name}-")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, directory / name)
    return directory / name


async def wait_for_answer(
    episode_dir: str | Path, *, timeout_s: float, poll_s: float = 0.1
) -> Answer | ParseFailure | None:
    """Wait until the episode's `answer.json` holds a valid answer, or an unparseable text was handed in
    (returned as its `ParseFailure`); None when `timeout_s` passes first."""
    path = Path(episode_dir) / ANSWER_FILE
    failed = Path(episode_dir) / PARSE_FAILURE_FILE
    deadline = time.monotonic() + timeout_s
    while True:
        if failed.exists():
            info = json.loads(failed.read_text(encoding="utf-8"))
            return ParseFailure(info.get("source", SUBMITTED_FILE), info.get("reason", "no readable answer table"))
        if path.exists():
            try:
                return Answer.model_validate(json.loads(path.read_text(encoding="utf-8")))
            except (ValueError, ValidationError):
                pass  # a writer that is not atomic may be half-way; look again
        if time.monotonic() >= deadline:
            return None
        await asyncio.sleep(poll_s)
