"""Reading the rig's WARCs record by record, the rig's headers decoded.

    reader = ArchiveReader(Path("evidence.warc.gz"))   # WarcError when it is no WARC at all
    for record in reader:
        record.type, record.step, record.capture, record.truncated, record.content
    reader.torn_at, reader.stopped                       # where a torn tail begins; where reading stopped, and why

A gzipped archive is read up to its last whole gzip member (a killed recording's torn last record would otherwise be
handed out as if it were whole); one up to `INFLATE_ONCE_MAX` is inflated once and parsed as plain records, a larger
one streamed by warcio's own gzip reader, so that its decompressed copy never has to fit in memory at once. A record
that is not WARC after the first stops reading there (`stopped`); the records before it are read.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed
from warcio.recordloader import ArcWarcRecord
from warcio.statusandheaders import StatusAndHeaders

from rigwarc.dialect import (
    CAPTURE_HEADER,
    MISSING_HEADER,
    STEP_HEADER,
    TRUNCATED_HEADER,
    VIEW_HEADER,
    View,
    parse_step,
    parse_view,
)
from rigwarc.members import GZIP_MAGIC, Members, gunzip_members

INFLATE_ONCE_MAX = 64 * 1024 * 1024


class WarcError(Exception):
    """The file is no readable WARC at all; the message says what it is instead and how to check it."""


@dataclass(frozen=True)
class Record:
    """One WARC record: its WARC and HTTP headers, its content (decoded as HTTP says), and the rig's headers."""

    type: str
    headers: StatusAndHeaders
    http: StatusAndHeaders | None
    content: bytes
    #: `WARC-Rig-Step` and `WARC-Rig-Capture` of a per-step or tool record; `WARC-Rig-View` of a DOM snapshot.
    step: int | None
    capture: str | None
    view: View | None
    #: `WARC-Truncated`: why the body is not whole; `WARC-Rig-Missing`: why the record holds none.
    truncated: str | None
    missing: str | None

    @classmethod
    def of(cls, rec: ArcWarcRecord) -> Record:
        """The record warcio read, its content read whole."""
        h = rec.rec_headers
        return cls(rec.rec_type, h, rec.http_headers, rec.content_stream().read(), parse_step(h.get_header(STEP_HEADER)),
                   h.get_header(CAPTURE_HEADER), parse_view(h.get_header(VIEW_HEADER)), h.get_header(TRUNCATED_HEADER),
                   h.get_header(MISSING_HEADER))

    @property
    def record_id(self) -> str | None:
        """`WARC-Record-ID`."""
        return self.headers.get_header("WARC-Record-ID")

    @property
    def target_uri(self) -> str | None:
        """`WARC-Target-URI`."""
        return self.headers.get_header("WARC-Target-URI")

    @property
    def date(self) -> str:
        """`WARC-Date`, or ''."""
        return self.headers.get_header("WARC-Date") or ""

    @property
    def concurrent_to(self) -> str | None:
        """`WARC-Concurrent-To`: a request's response."""
        return self.headers.get_header("WARC-Concurrent-To")


@dataclass(frozen=True)
class Stop:
    """Where reading stopped short of the end (a file offset), why (warcio's message), and the error as it was."""

    at: int
    reason: str
    error: str


class ArchiveReader:
    """The records of one WARC file, gzipped per record or plain (see the module docstring)."""

    def __init__(self, path: Path, *, inflate_max: int = INFLATE_ONCE_MAX) -> None:
        self.path = path
        self._data = path.read_bytes()
        data = self._data
        if data and data[:2] != GZIP_MAGIC and not data.startswith(b"WARC/"):
            raise WarcError(f"not a WARC file (it starts with neither a gzip header nor 'WARC/'); "
                            f"check it with `warcio check {path}`")
        self._members: Members | None = (gunzip_members(data, keep=len(data) <= inflate_max)
                                         if data[:2] == GZIP_MAGIC else None)
        self.size = len(data)
        #: Bytes of the file that are whole records' (all of it, unless a torn or corrupt gzip member ends it).
        self.end = self._members.end if self._members is not None else len(data)
        #: Records read so far.
        self.records = 0
        #: Set when reading stopped at a record that is not WARC (the records before it were read).
        self.stopped: Stop | None = None

    @property
    def torn_at(self) -> int | None:
        """Where a torn or corrupt last gzip member begins, if one ends the file."""
        return self.end if 0 < self.end < self.size else None

    def __iter__(self) -> Iterator[Record]:
        members, data = self._members, self._data
        inflated = members is not None and bool(members.offsets)
        pos, records = -1, None
        try:
            with io.BytesIO(b"".join(members.content) if inflated else data[:self.end] if self.end else data) as fh:
                records = ArchiveIterator(fh, arc2warc=True)
                for pos, rec in enumerate(records):
                    if rec.format != "warc" or not rec.rec_type:
                        raise ValueError(f"record {pos} is not a WARC record")
                    record = Record.of(rec)
                    self.records += 1
                    yield record
        except (ArchiveLoadFailed, OSError, ValueError, AttributeError, EOFError) as exc:
            error = str(exc) or type(exc).__name__
            if pos <= 0 or records is None:
                raise WarcError(f"not a readable WARC ({error}); check it with `warcio check {self.path}`") from None
            at = members.offset_in_file(records.offset) if inflated and members is not None else records.offset
            self.stopped = Stop(at, str(getattr(exc, "msg", exc) or type(exc).__name__).strip(), error)
        if pos < 0 and self.size > 0:
            raise WarcError(f"no WARC record in it (bad gzip?); check it with `warcio check {self.path}`")
