"""Reading WARCs into a lookup: (method, normalised URL, body digest) -> the recorded responses, in recorded order.

Records are streamed once (warcio's ArchiveIterator). `request` records are joined to their `response`
by `WARC-Concurrent-To`; a request without a response (it failed while recording) is kept as a failure.
A response the recorder archived without its body (`WARC-Rig-Missing`) answers nothing: it and its request are
left out (counted in `missing_bodies`), so replaying that request is a miss, never an empty answer.
Per-step text records (`WARC-Rig-Capture: text`) are kept only as digests; DOM snapshots are skipped.
"""

from __future__ import annotations

import bisect
import hashlib
import io
import time
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed

from replay.errors import ReplayError
from replay.keys import Key, KeyMaker, MatchRules, redacted_names

#: Header naming the trajectory step of a per-step record (the recorder's WARC format).
STEP_HEADER = "WARC-Rig-Step"
#: Header saying what a per-step record holds: `text` or `dom`.
CAPTURE_HEADER = "WARC-Rig-Capture"
#: Header of a response record the recorder archived without its body (its value says why): no answer to replay.
MISSING_HEADER = "WARC-Rig-Missing"
#: Header of a DOM snapshot record: `width height x y`, the viewport it was shown in and its scroll offset.
VIEW_HEADER = "WARC-Rig-View"
#: Archives up to this size (compressed) are inflated once and parsed as plain records; larger ones are streamed by
#: warcio's own gzip reader, so that the decompressed copy never has to fit in memory at once.
_INFLATE_ONCE_MAX = 64 * 1024 * 1024


@dataclass(frozen=True)
class Response:
    """A recorded response: status, headers and the (decoded) body."""

    status: int
    reason: str
    headers: tuple[tuple[str, str], ...]
    body: bytes

    def same_as(self, other: Response) -> bool:
        """Same status, content type and body (headers such as Date may differ)."""
        return (self.status, self.content_type, self.body) == (other.status, other.content_type, other.body)

    @property
    def content_type(self) -> str:
        """The Content-Type header, or ''."""
        return next((v for k, v in self.headers if k.lower() == "content-type"), "")


@dataclass(frozen=True)
class Exchange:
    """One recorded request and its response (None when the request failed while recording)."""

    method: str
    url: str
    request_headers: tuple[tuple[str, str], ...]
    body: bytes
    date: str
    response: Response | None
    order: tuple[int, str, int] = (0, "", 0)  # (file, request date, position): the recorded order
    response_id: str | None = None

    @property
    def content_type(self) -> str | None:
        """The request's Content-Type, if any."""
        return next((v for k, v in self.request_headers if k.lower() == "content-type"), None)


@dataclass
class ArchiveIndex:
    """Every recorded exchange of one or more WARCs, grouped by lookup key in recorded order."""

    keys: KeyMaker
    exchanges: dict[Key, list[Exchange]] = field(default_factory=dict)
    #: sha256 of each step's text record (the recorder's `text_hash` of that step), by step number.
    step_text: dict[int, str] = field(default_factory=dict)
    #: With `load_index(..., texts=True)`: each text record's text by its WARC-Record-ID, and the record ID by step.
    texts: dict[str, str] = field(default_factory=dict)
    text_ids: dict[int, str] = field(default_factory=dict)
    #: The earliest WARC-Date in the archive(s): when the recording started.
    recorded_at: datetime | None = None
    records: int = 0
    load_seconds: float = 0.0
    #: Problems that did not stop loading (a torn last record of a killed recording).
    errors: list[str] = field(default_factory=list)
    #: Responses recorded without their body (`WARC-Rig-Missing`): left out with their requests, which replay as misses.
    missing_bodies: int = 0
    #: Where reading stopped short of the end, and why: a record that is not WARC in the middle of an archive.
    stopped: tuple[int, str] | None = None

    def lookup(self, method: str, url: str, body: bytes | None = None, content_type: str | None = None) -> list[Exchange]:
        """The recorded exchanges answering this request, in recorded order (empty when none)."""
        return self.exchanges.get(self.keys.key(method, url, body, content_type), [])

    def key(self, method: str, url: str, body: bytes | None = None, content_type: str | None = None) -> Key:
        """The lookup key of a request under this index's rules and masked names."""
        return self.keys.key(method, url, body, content_type)

    @classmethod
    def empty(cls) -> ArchiveIndex:
        """An index of no archive."""
        return cls(KeyMaker(MatchRules()))

    def __len__(self) -> int:
        return sum(len(v) for v in self.exchanges.values())

    def all(self) -> Iterator[Exchange]:
        """Every exchange, in recorded order."""
        return iter(sorted((x for v in self.exchanges.values() for x in v), key=lambda x: x.order))


def load_index(paths: str | Path | Iterable[str | Path], rules: MatchRules | None = None, *, dedupe: bool = False,
               texts: bool = False) -> ArchiveIndex:
    """Read WARC files (in the order given) into an index.

    With `dedupe`, a response identical to one already held for the same key (status, content type, body)
    is dropped: merged crawls keep one copy of each distinct answer, still in first-recorded order.
    With `texts`, the per-step text records are kept whole (`texts`, `text_ids`), not only as digests.
    """
    start = time.perf_counter()
    files = [Path(paths)] if isinstance(paths, (str, Path)) else [Path(p) for p in paths]
    raw: list[Exchange] = []
    index = ArchiveIndex(KeyMaker(rules or MatchRules()))
    dates: list[str] = []
    for n, path in enumerate(files):
        _read(path, n, raw, index, dates, texts)
    add_exchanges(index, raw, dedupe=dedupe)
    if dates:
        index.recorded_at = datetime.fromisoformat(min(dates))
    index.load_seconds = time.perf_counter() - start
    return index


def add_exchanges(index: ArchiveIndex, exchanges: Iterable[Exchange], *, dedupe: bool = False) -> None:
    """Group exchanges into `index` by lookup key, in recorded order (`Exchange.order`); parameters redacted in any
    of them are masked in every key. With `dedupe`, an answer identical to one already held for its key is dropped."""
    raw = list(exchanges)
    masked: set[str] = set(index.keys.masked)
    for x in raw:
        masked |= redacted_names(x.url, x.body, x.content_type)
    index.keys.masked = frozenset(masked)
    for x in sorted(raw, key=lambda x: x.order):
        held = index.exchanges.setdefault(index.key(x.method, x.url, x.body, x.content_type), [])
        if dedupe and any(_same(x, h) for h in held):
            continue
        held.append(x)


def _same(a: Exchange, b: Exchange) -> bool:
    if a.response is None or b.response is None:
        return a.response is b.response
    return a.response.same_as(b.response)


def whole_gzip_members(data: bytes, chunk: int = 4096) -> int:
    """How many leading bytes of `data` are whole gzip members: a torn (or corrupt) member and all after it are not."""
    return _gunzip_members(data, chunk).end


@dataclass
class _Members:
    """The leading whole gzip members of a file, decompressed: their content, and where each began in it and in the file."""

    content: list[bytes] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)  # each member's offset in the joined content
    offsets: list[int] = field(default_factory=list)  # each member's offset in the file
    end: int = 0  # bytes of the file that are whole members

    def offset_in_file(self, at: int) -> int:
        """The file offset of the member holding byte `at` of the joined content (a record's start: its member's)."""
        return self.offsets[max(0, bisect.bisect_right(self.starts, at) - 1)] if self.offsets else at


def _gunzip_members(data: bytes, chunk: int = 4096, keep: bool = False) -> _Members:
    """Decompress `data` member by member up to a torn (or corrupt) member; with `keep`, keep what each one held."""
    view, out, size = memoryview(data), _Members(), 0
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


def _read(path: Path, file_no: int, out: list[Exchange], index: ArchiveIndex, dates: list[str], texts: bool) -> None:
    if not path.is_file():
        raise ReplayError(f"{path}: no such archive; an episode directory holds evidence.warc.gz")
    responses: dict[str, tuple[Response, str, str, int]] = {}
    missing: set[str] = set()  # record ids of responses without their body
    requests: list[Exchange] = []
    pos, before = -1, index.records
    data = path.read_bytes()
    if data and data[:2] != b"\x1f\x8b" and not data.startswith(b"WARC/"):
        raise ReplayError(f"{path}: not a WARC file (it starts with neither a gzip header nor 'WARC/'); "
                          f"check it with `warcio check {path}`")
    # gzip: the whole members decompressed once, here, and read by warcio as plain records (not inflated again)
    members = _gunzip_members(data, keep=len(data) <= _INFLATE_ONCE_MAX) if data[:2] == b"\x1f\x8b" else None
    end = members.end if members is not None else len(data)
    if 0 < end < len(data):  # warcio would hand out the torn record's partial content as if it were whole
        index.errors.append(f"{path}: the archive ends with a torn or corrupt record at byte {end} of {len(data)}; "
                            "the complete records before it are used")
    inflated = members is not None and bool(members.offsets)
    try:
        with io.BytesIO(b"".join(members.content) if inflated else data[:end] if end else data) as fh:
            records = ArchiveIterator(fh, arc2warc=True)
            for pos, rec in enumerate(records):
                if rec.format != "warc" or not rec.rec_type:
                    raise ValueError(f"record {pos} is not a WARC record")
                index.records += 1
                h = rec.rec_headers
                date = h.get_header("WARC-Date") or ""
                if date:
                    dates.append(date)
                if rec.rec_type == "response" and h.get_header(MISSING_HEADER) is not None:
                    missing.add(h.get_header("WARC-Record-ID"))  # no body: it answers nothing
                    index.missing_bodies += 1
                elif rec.rec_type == "response" and rec.http_headers is not None:
                    http = rec.http_headers
                    resp = Response(int(http.get_statuscode() or 0), http.statusline.partition(" ")[2], tuple(http.headers),
                                    rec.content_stream().read())
                    responses[h.get_header("WARC-Record-ID")] = (resp, h.get_header("WARC-Target-URI"), date, pos)
                elif rec.rec_type == "request" and rec.http_headers is not None:
                    http = rec.http_headers
                    requests.append(Exchange(http.protocol.upper(), h.get_header("WARC-Target-URI"), tuple(http.headers),
                                             rec.content_stream().read(), date, None,
                                             (file_no, date, pos), h.get_header("WARC-Concurrent-To")))
                elif h.get_header(CAPTURE_HEADER) == "text":
                    content = rec.content_stream().read()
                    step = h.get_header(STEP_HEADER)
                    if step is not None and step.isdigit():
                        index.step_text[int(step)] = hashlib.sha256(content).hexdigest()
                    if texts:
                        rid = h.get_header("WARC-Record-ID")
                        index.texts[rid] = content.decode("utf-8", "replace")
                        if step is not None and step.isdigit():
                            index.text_ids[int(step)] = rid
    except (ArchiveLoadFailed, OSError, ValueError, AttributeError, EOFError) as exc:
        if pos <= 0:
            raise ReplayError(f"{path}: not a readable WARC ({exc or type(exc).__name__}); check it with `warcio check {path}`") from None
        at = members.offset_in_file(records.offset) if inflated else records.offset
        index.errors.append(f"{path}: reading stopped at byte {at}, after {index.records - before} records "
                            f"({exc or type(exc).__name__}); the records before it are used")
        index.stopped = (at, str(getattr(exc, "msg", exc) or type(exc).__name__).strip())
    if pos < 0 and path.stat().st_size > 0:
        raise ReplayError(f"{path}: no WARC record in it (bad gzip?); check it with `warcio check {path}`")
    for x in requests:
        if x.response_id in missing:
            continue  # answered while recording, but without its body: a miss, not a failure nor an empty answer
        found = responses.pop(x.response_id, None) if x.response_id else None
        out.append(replace(x, response=found[0] if found else None))
    for resp, url, date, pos in responses.values():  # responses without a request record (other tools): GETs
        out.append(Exchange("GET", url, (), b"", date, resp, (file_no, date, pos)))
