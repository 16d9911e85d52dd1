"""Both sides of a scored page, as the recorder captures them: the recorded step (its text record, image and state)
and the replayed one (captured again by a recorder attached to the replay context, as during recording)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recorders import Recorder, RecorderOptions, Step
from replay.route import ReplaySession


@dataclass(frozen=True)
class Seen:
    """What one side captured of a page: its URL, visible text, image (JPEG bytes) and retrieval state (None: not
    captured)."""

    url: str
    text: str | None = None
    image: bytes | None = None
    state: dict[str, Any] | None = None


#: How long the replay side waits for a step's image before the next action: a step with no image would leave its
#: image part unscored, and so change the page's score from one run of `rig qa` to the next on a loaded machine.
IMAGE_WAIT_MS = 15_000


def replay_options(images: bool) -> RecorderOptions:
    """The replay side's recorder: each step's text (and, when the recording has step images, an image of every step,
    waited for), no DOM snapshot, no fsync."""
    return RecorderOptions(screenshots="every" if images else "off", screenshot_wait_ms=IMAGE_WAIT_MS,
                           dom_snapshot=False, record_text=True, fsync=False)


def seen_of(step: Step, texts: dict[str, str], root: Path, image: str | None = None) -> Seen:
    """A captured step as a `Seen`: its text record out of `texts` (by record id), its image under `root`."""
    rid = step.snapshot.warc_record_id if step.snapshot is not None else None
    path = image or step.screenshot
    picture = (root / path).read_bytes() if path and (root / path).is_file() else None
    return Seen(step.url, texts.get(rid) if rid else None, picture, dict(step.state))


def recorded_images(steps: list[Step], root: Path) -> dict[int, str | None]:
    """Each step's recorded image: its own, else (the recorder draws one only when the DOM changed) that of the last
    earlier step of its tab with the same DOM, which shows the same page."""
    out: dict[int, str | None] = {}
    last: dict[tuple[int, str], str] = {}
    for s in steps:
        own = s.screenshot if s.screenshot and (root / s.screenshot).is_file() else None
        out[s.step] = own or last.get((s.tab, s.dom_hash))
        if own:
            last[s.tab, s.dom_hash] = own
    return out


@dataclass
class Tracked:
    """The recorder as `replay.redrive`'s capture, remembering the last capture made for each page (`session.tag`,
    the recorded step being re-driven; rechecks replace the first capture)."""

    recorder: Recorder
    session: ReplaySession
    captured: dict[Any, Step] = field(default_factory=dict)

    @property
    def steps(self) -> int:
        """Steps the recorder wrote."""
        return self.recorder.steps

    @property
    def last_step(self) -> Step | None:
        """The last step the recorder wrote."""
        return self.recorder.last_step

    @asynccontextmanager
    async def action(self, info: dict[str, Any]) -> AsyncIterator[None]:
        """Wrap one re-driven action (`Recorder.action`), then note its capture."""
        before = self.recorder.steps
        try:
            async with self.recorder.action(info):
                yield
        finally:
            self._note(before)

    async def checkpoint(self, note: str) -> Step | None:
        """Capture the page again (`Recorder.checkpoint`) and note it."""
        before = self.recorder.steps
        step = await self.recorder.checkpoint(note)
        self._note(before)
        return step

    def _note(self, before: int) -> None:
        if self.recorder.steps > before and self.recorder.last_step is not None:
            self.captured[self.session.tag] = self.recorder.last_step
