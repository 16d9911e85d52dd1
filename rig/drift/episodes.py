"""An episode re-driven live: its recorded actions performed again on the live origins (`replay.redrive`, a scratch
recording capturing each step's visible text), each step's text compared with the text the archive holds for it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from playwright.async_api import Browser

from recorders import Recorder, RecorderOptions, Step
from replay.redrive import redrive
from replay.report import RecordedStep
from rig.drift.compare import archived_status, gone_reason, text_diff
from rig.drift.live import LiveSide
from rig.drift.plan import EpisodeCheck
from rig.formats.drift import DriftItem
from rig.runner.redrive import scratch_recording

#: The live recorder captures each step's visible text and nothing else.
TEXT_ONLY = RecorderOptions(screenshots="off", dom_snapshot=False, record_text=True, fsync=False)


class _Tap:
    """The recorder as `redrive` sees it, noting which capture belongs to which recorded step."""

    def __init__(self, rec: Recorder, steps: list[RecordedStep]) -> None:
        self.rec, self._order, self._i = rec, [s.step for s in steps], -1
        self.by_step: dict[int, Step] = {}

    @property
    def steps(self) -> int:
        return self.rec.steps

    @property
    def last_step(self) -> Step | None:
        return self.rec.last_step

    @asynccontextmanager
    async def action(self, info: dict[str, Any]) -> AsyncIterator[None]:
        self._i += 1
        before = self.rec.steps
        async with self.rec.action(info):
            yield
        if self.rec.steps > before and self.rec.last_step is not None:
            self.by_step[self._order[self._i]] = self.rec.last_step

    async def checkpoint(self, note: str) -> Step | None:
        step = await self.rec.checkpoint(note)
        if step is not None and 0 <= self._i < len(self._order):
            self.by_step[self._order[self._i]] = step
        return step


async def episode_drift(browser: Browser, live_side: LiveSide, check: EpisodeCheck) -> list[DriftItem]:
    """Re-drive an episode's steps live; one item per step (all `unreachable` when an origin it went to is)."""
    ed, index, steps = check.episode, check.index, check.steps
    await live_side.probe(browser, check.origins)
    if (why := live_side.blocked(check.origins)) is not None:
        return [DriftItem(url=s.url, step=s.step, status="unreachable", kind="step", source=str(ed.path), reason=why)
                for s in steps]
    opts = live_side.opts
    async with scratch_recording(browser, TEXT_ONLY, context_options=live_side.context_options,
                                 prepare=live_side.prepare, read_back=True) as scratch:
        tap = _Tap(scratch.recorder, steps)
        result = await redrive(steps, scratch.context, None, tap, archive_texts=index.step_text,
                               timeout_s=opts.timeout_s, rechecks=opts.rechecks)
    live = scratch.archive
    assert live is not None  # read back when the recording ended
    errors = {m["step"]: m["diff"]["error"] for m in result.mismatches if "error" in m["diff"]}
    items = []
    for step in steps:
        captured = tap.by_step.get(step.step)
        rid = index.text_ids.get(step.step)
        archived_text = index.texts.get(rid) if rid else None
        item = DriftItem(url=step.url, step=step.step, status="unchanged", kind="step", source=str(ed.path))
        if step.step in errors or captured is None:
            item.status, item.reason = "gone", errors.get(step.step) or "no step was captured after the action"
            items.append(item)
            continue
        item.live_url = captured.url
        live_rid = captured.snapshot.warc_record_id if captured.snapshot else None
        live_text = live.texts.get(live_rid) if live_rid else None
        item.http_status = archived_status(live, captured.url)
        gone = gone_reason(item.http_status, archived_status(index, step.url), captured.url)
        if gone:
            item.status, item.reason = "gone", gone
        elif archived_text is None or live_text is None:
            item.status = "unchanged" if step.text_hash == captured.text_hash else "changed"
            item.diff = None if item.status == "unchanged" else "the archive holds no text for this step: its hash differs"
        elif archived_text != live_text:
            item.status, item.diff = "changed", text_diff(archived_text, live_text)
        items.append(item)
    return items
