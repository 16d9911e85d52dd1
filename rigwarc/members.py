"""Gzip per record: each record one gzip member, so a reader can stop at a torn last member and keep the rest.

    encoder = RecordEncoder()
    fh.write(encoder.member(record, level=6))        # one record as one gzip member
    whole_gzip_members(path.read_bytes())            # bytes of the file that are whole members (a torn tail is not)
"""

from __future__ import annotations

import bisect
import zlib
from dataclasses import dataclass, field
from io import BytesIO

from warcio.recordloader import ArcWarcRecord
from warcio.warcwriter import WARCWriter

#: The recorder's level: warcio's own gzip wrapper uses 9, several times slower for a few percent.
RECORDER_LEVEL = 6
#: warcio's level, which the shipped snapshots were written with (their bytes stay the same).
WARCIO_LEVEL = 9
GZIP_MAGIC = b"\x1f\x8b"


class RecordEncoder:
    """Serialises records to bytes, plain or as one gzip member each (reusing one buffer)."""

    def __init__(self) -> None:
        self._buf = BytesIO()
        self._writer = WARCWriter(self._buf, gzip=False, warc_version="1.1")

    def plain(self, record: ArcWarcRecord) -> bytes:
        """The record as WARC bytes (headers, block, the two CRLFs after it)."""
        self._buf.seek(0)
        self._buf.truncate()
        self._writer.write_record(record)
        return self._buf.getvalue()

    def member(self, record: ArcWarcRecord, level: int = RECORDER_LEVEL) -> bytes:
        """The record as one gzip member, compressed at `level`."""
        gz = zlib.compressobj(level, zlib.DEFLATED, 31)  # wbits 31: a gzip member
        return gz.compress(self.plain(record)) + gz.flush()


def whole_gzip_members(data: bytes, chunk: int = 4096) -> int:
    """How many leading bytes of `data` are whole gzip members: a torn (or corrupt) member and all after it are not."""
    return gunzip_members(data, chunk).end


@dataclass
class Members:
    """The leading whole gzip members of a file, decompressed: their content, and where each began in it and in the file."""

    content: list[bytes] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)  # each member's offset in the joined content
    offsets: list[int] = field(default_factory=list)  # each member's offset in the file
    end: int = 0  # bytes of the file that are whole members

    def offset_in_file(self, at: int) -> int:
        """The file offset of the member holding byte `at` of the joined content (a record's start: its member's)."""
        return self.offsets[max(0, bisect.bisect_right(self.starts, at) - 1)] if self.offsets else at


def gunzip_members(data: bytes, chunk: int = 4096, keep: bool = False) -> Members:
    """Decompress `data` member by member up to a torn (or corrupt) member; with `keep`, keep what each one held."""
    view, out, size = memoryview(data), Members(), 0
    while out.end < len(data):
        d, pos, parts = zlib.decompressobj(31), out.end, []
        try:
            while not d.eof and pos < len(data):
                part = d.decompress(view[pos:pos + chunk])
                if keep:
                    parts.append(part)
                pos += chunk
        except zlib.error:
            return out
        if not d.eof:
            return out
        if keep:
            out.starts.append(size)
            out.offsets.append(out.end)
            out.content.extend(parts)
            size += sum(map(len, parts))
        out.end = min(pos, len(data)) - len(d.unused_data)
    return out
