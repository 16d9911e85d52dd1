"""Helpers for the `cdp` agent: an outside program drives the rig's browser over CDP and hands in an answer.

The runner launches Chromium with `rig.browser.launch_for_cdp`, prints `announce(...)`, records while the
outside driver works, and waits with `wait_for_answer` until `rig submit` (`submit_answer`) writes the
episode's `answer.json` or the time budget ends. `python -m rig.agents.cdp_client_example` is a tiny
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
from rig.errors import InputError

ANSWER_FILE = "answer.json"


def announce(cdp_url: str, episode_dir: str | Path, out: TextIO) -> None:
    """Print the `CDP endpoint:` and `Episode:` lines (CONTRACTS.md) and flush, before waiting."""
    out.write(f"CDP endpoint: {cdp_url}\nEpisode: {Path(episode_dir)}\n")
    out.flush()


def submit_answer(episode_dir: str | Path, answer: Answer | dict[str, Any]) -> Path:
    """Validate an answer and write it to the episode's `answer.json` atomically (what `rig submit` does)."""
    episode = Path(episode_dir)
    if not episode.is_dir():
        raise InputError(str(episode), None, "is not an episode directory; use the path `rig run` printed after `Episode:`")
    try:
        parsed = answer if isinstance(answer, Answer) else Answer.model_validate(answer)
    except ValidationError as exc:
        raise InputError("answer", None, f"not an answer.json object: {exc.errors()[0]['msg']}") from None
    fd, tmp = tempfile.mkstemp(dir=episode, prefix=".answer-", suffix=".json")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(parsed.model_dump_json(indent=2))
    target = episode / ANSWER_FILE
    os.replace(tmp, target)
    return target


async def wait_for_answer(episode_dir: str | Path, *, timeout_s: float, poll_s: float = 0.1) -> Answer | None:
    """Wait until the episode's `answer.json` holds a valid answer; None when `timeout_s` passes first."""
    path = Path(episode_dir) / ANSWER_FILE
    deadline = time.monotonic() + timeout_s
    while True:
        if path.exists():
            try:
                return Answer.model_validate(json.loads(path.read_text(encoding="utf-8")))
            except (ValueError, ValidationError):
                pass  # a writer that is not atomic may be half-way; look again
        if time.monotonic() >= deadline:
            return None
        await asyncio.sleep(poll_s)
