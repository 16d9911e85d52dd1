"""evidence.warc.gz: WARC 1.1, one gzip member per record, written by a background thread one record at a time.

Records (built by `rigwarc.build`, in the rig's dialect, `rigwarc.dialect`): `warcinfo` first; per exchange a
`response` and a `request` (its `WARC-Concurrent-To` names the response; a response whose body could not be read
holds none and says why in `WARC-Rig-Missing`, one whose body was cut says so in `WARC-Truncated`); per step a
`conversion` record of the page's visible text (`text/plain`) and one of its DOM snapshot, both with
`WARC-Target-URI` = the page URL and `WARC-Rig-Step` = the step; and `resource` records a driver adds (a tool
server's result texts: `WARC-Target-URI` a `urn:`, `WARC-Rig-Capture: tool`, `WARC-Rig-Step` its step).
Each record is one `write()` call, so a killed process leaves every earlier record intact.
"""

from __future__ import annotations

import asyncio
import os
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from loguru import logger
from warcio.recordloader import ArcWarcRecord

from rigwarc import build
from rigwarc.dialect import CAPTURE_HEADER, STEP_HEADER  # noqa: F401  (re-exported: tests/test_report.py imports them here)
from rigwarc.dialect import TOOL, View, warc_date
from rigwarc.members import RECORDER_LEVEL, RecordEncoder


@dataclass
class Exchange:
    """One request and (unless it failed) its response, already redacted."""

    url: str
    method: str
    request_headers: list[tuple[str, str]]
    request_body: bytes
    request_date: float
    request_id: str
    response_id: str | None = None
    status: int = 0
    reason: str = ""
    response_headers: list[tuple[str, str]] = field(default_factory=list)
    response_body: bytes = b""
    response_date: float = 0.0
    truncated: str | None = None  # WARC-Truncated reason: "length", "time", ...
    missing: str | None = None  # why the body could not be read (WARC-Rig-Missing): the record holds none


@dataclass
class Capture:
    """A per-step record: the page's text or DOM snapshot at one step."""

    record_id: str
    kind: str  # "text" | "dom"
    url: str
    step: int
    date: float
    content_type: str
    data: bytes | Callable[[], bytes]  # a callable is run on the writer thread (e.g. serialising a DOM snapshot)
    refers_to: str | None = None
    concurrent_to: str | None = None
    view: View | None = None  # a DOM snapshot's viewport and scroll offset (WARC-Rig-View)


@dataclass
class Resource:
    """A `resource` record a driver adds: content with no HTTP exchange (a tool call's result)."""

    record_id: str
    uri: str
    step: int | None
    date: float
    content_type: str
    data: bytes
    kind: str = TOOL


class WarcArchive:
    """Appends records to a gzipped WARC from a background thread; `close()` drains the queue."""

    def __init__(self, path: Path, clock: Callable[[], float], ids: Callable[[], str], software: str) -> None:
        self.path = path
        self._ids, self._clock = ids, clock
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self._encoder = RecordEncoder()
        self._queue: queue.Queue[Exchange | Capture | Resource | None] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="recorders-warc", daemon=True)
        self.errors = 0
        self._write_info(software)
        self._thread.start()

    def new_id(self) -> str:
        """A record id from the archive's id source."""
        return self._ids()

    def put(self, item: Exchange | Capture | Resource) -> None:
        """Queue a record (or exchange) for writing; never blocks."""
        self._queue.put(item)

    async def close(self) -> None:
        """Write everything queued, then close the file."""
        self._queue.put(None)
        await asyncio.to_thread(self._thread.join)
        os.fsync(self._fd)
        os.close(self._fd)

    def _write_info(self, software: str) -> None:
        info = {
            "software": software,
            "format": "WARC File Format 1.1",
            "conformsTo": "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/",
        }
        self._emit([build.warcinfo(self.path.name, info, record_id=self._ids(), date=warc_date(self._clock()))])

    def _run(self) -> None:
        while (item := self._queue.get()) is not None:
            try:
                self._emit(_records(item))
            except Exception as exc:  # a bad record must not stop the archive
                self.errors += 1
                logger.warning("recorders: a WARC record could not be written: {}", type(exc).__name__)

    def _emit(self, records: list[ArcWarcRecord]) -> None:
        for rec in records:
            os.write(self._fd, self._encoder.member(rec, RECORDER_LEVEL))


def _records(item: Exchange | Capture | Resource) -> list[ArcWarcRecord]:
    """The records of a queued item: a resource, a per-step capture, or an exchange's response (if any) and request."""
    if isinstance(item, Resource):
        return [build.resource(item.uri, item.data, item.content_type, record_id=item.record_id,
                               date=warc_date(item.date), step=item.step, kind=item.kind)]
    if isinstance(item, Capture):
        data = item.data() if callable(item.data) else item.data
        return [build.capture(item.kind, item.url, data, item.content_type, step=item.step, record_id=item.record_id,
                              date=warc_date(item.date), refers_to=item.refers_to, concurrent_to=item.concurrent_to,
                              view=item.view)]
    out = []
    if item.response_id is not None:
        out.append(build.response(item.url, item.status, item.reason, item.response_headers, item.response_body,
                                  record_id=item.response_id, date=warc_date(item.response_date),
                                  truncated=item.truncated, missing=item.missing))
    out.append(build.request(item.url, item.method, item.request_headers, item.request_body, record_id=item.request_id,
                             date=warc_date(item.request_date), concurrent_to=item.response_id))
    return out
