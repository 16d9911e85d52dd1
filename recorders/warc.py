"""evidence.warc.gz: WARC 1.1, one gzip member per record, written by a background thread one record at a time.

Records: `warcinfo` first; per exchange a `response` and a `request` (its `WARC-Concurrent-To` names the
response; a response whose body could not be read holds none and says why in `WARC-Rig-Missing`); per step
a `conversion` record of the page's visible text (`text/plain`) and one of its DOM snapshot (`application/json`),
both with `WARC-Target-URI` = the page URL and `WARC-Rig-Step` = the step; and `resource` records a driver adds
(a tool server's result texts: `WARC-Target-URI` a `urn:`, `WARC-Rig-Capture: tool`, `WARC-Rig-Step` its step).
Each record is one `write()` call, so a killed process leaves every earlier record intact.
"""

from __future__ import annotations

import asyncio
import os
import queue
import threading
import uuid
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from io import BytesIO
from pathlib import Path
from urllib.parse import urlsplit

from loguru import logger
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

#: Header naming the trajectory step of a per-step record.
STEP_HEADER = "WARC-Rig-Step"
#: Header saying what a per-step record holds: `text` or `dom`.
CAPTURE_HEADER = "WARC-Rig-Capture"
#: Header of a response record archived without its body, saying why (`body not readable: <reason>`): the record
#: holds no body (its `WARC-Truncated` says so too) and is no answer to replay.
MISSING_HEADER = "WARC-Rig-Missing"
#: Header of a DOM snapshot record: the viewport it was shown in and its scroll offset, `width height x y` (CSS px).
VIEW_HEADER = "WARC-Rig-View"
_GZIP_LEVEL = 6  # warcio's own wrapper uses 9: several times slower for a few percent


def new_record_id() -> str:
    """A fresh `<urn:uuid:...>` WARC record id."""
    return f"<urn:uuid:{uuid.uuid4()}>"


def warc_date(ts: float) -> str:
    """A WARC 1.1 date (UTC, microseconds) for a Unix timestamp."""
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


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
    view: tuple[int, int, int, int] | None = None  # a DOM snapshot's viewport and scroll offset (VIEW_HEADER)


@dataclass
class Resource:
    """A `resource` record a driver adds: content with no HTTP exchange (a tool call's result)."""

    record_id: str
    uri: str
    step: int | None
    date: float
    content_type: str
    data: bytes
    kind: str = "tool"


class WarcArchive:
    """Appends records to a gzipped WARC from a background thread; `close()` drains the queue."""

    def __init__(self, path: Path, clock: Callable[[], float], ids: Callable[[], str], software: str) -> None:
        self.path = path
        self._ids, self._clock = ids, clock
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self._buf = BytesIO()
        self._writer = WARCWriter(self._buf, gzip=False, warc_version="1.1")  # gzipped here, per record, at level 6
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
        rec = self._writer.create_warcinfo_record(self.path.name, info)
        rec.rec_headers.replace_header("WARC-Record-ID", self._ids())
        rec.rec_headers.replace_header("WARC-Date", warc_date(self._clock()))
        self._emit([rec])

    def _run(self) -> None:
        while (item := self._queue.get()) is not None:
            try:
                self._emit(self._records(item))
            except Exception as exc:  # a bad record must not stop the archive
                self.errors += 1
                logger.warning("recorders: a WARC record could not be written: {}", type(exc).__name__)

    def _records(self, item: Exchange | Capture | Resource) -> list:  # type: ignore[type-arg]
        w = self._writer
        if isinstance(item, Resource):
            headers = {"WARC-Record-ID": item.record_id, "WARC-Date": warc_date(item.date), CAPTURE_HEADER: item.kind}
            if item.step is not None:
                headers[STEP_HEADER] = str(item.step)
            return [w.create_warc_record(item.uri, "resource", payload=BytesIO(item.data), length=len(item.data),
                                         warc_content_type=item.content_type, warc_headers_dict=headers)]
        if isinstance(item, Capture):
            headers = {
                "WARC-Record-ID": item.record_id,
                "WARC-Date": warc_date(item.date),
                STEP_HEADER: str(item.step),
                CAPTURE_HEADER: item.kind,
            }
            if item.refers_to:
                headers["WARC-Refers-To"] = item.refers_to
            if item.concurrent_to:
                headers["WARC-Concurrent-To"] = item.concurrent_to
            if item.view:
                headers[VIEW_HEADER] = " ".join(str(v) for v in item.view)
            data = item.data() if callable(item.data) else item.data
            rec = w.create_warc_record(
                item.url,
                "conversion",
                payload=BytesIO(data),
                length=len(data),
                warc_content_type=item.content_type,
                warc_headers_dict=headers,
            )
            return [rec]
        out = []
        if item.response_id is not None:
            status = StatusAndHeaders(
                f"{item.status} {item.reason}".strip(), item.response_headers, protocol="HTTP/1.1"
            )
            headers = {"WARC-Record-ID": item.response_id, "WARC-Date": warc_date(item.response_date)}
            if item.truncated:
                headers["WARC-Truncated"] = item.truncated
            if item.missing:
                headers[MISSING_HEADER] = item.missing
            body = item.response_body
            out.append(
                w.create_warc_record(
                    item.url,
                    "response",
                    payload=BytesIO(body),
                    length=len(body),
                    http_headers=status,
                    warc_headers_dict=headers,
                )
            )
        parts = urlsplit(item.url)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        req = StatusAndHeaders(f"{item.method} {target} HTTP/1.1", item.request_headers, is_http_request=True)
        headers = {"WARC-Record-ID": item.request_id, "WARC-Date": warc_date(item.request_date)}
        if item.response_id is not None:
            headers["WARC-Concurrent-To"] = item.response_id
        body = item.request_body
        out.append(
            w.create_warc_record(
                item.url,
                "request",
                payload=BytesIO(body),
                length=len(body),
                http_headers=req,
                warc_headers_dict=headers,
            )
        )
        return out

    def _emit(self, records: list) -> None:  # type: ignore[type-arg]
        for rec in records:
            self._buf.seek(0)
            self._buf.truncate()
            self._writer.write_record(rec)
            gz = zlib.compressobj(_GZIP_LEVEL, zlib.DEFLATED, 31)  # wbits 31: a gzip member
            os.write(self._fd, gz.compress(self._buf.getvalue()) + gz.flush())
