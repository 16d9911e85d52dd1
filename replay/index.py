"""Reading WARCs into a lookup: (method, normalised URL, body digest) -> the recorded responses, in recorded order.

Records are read once, through `rigwarc.read.ArchiveReader` (the rig's one WARC reader: torn tails and stray bytes
stopped at, the rig's headers decoded). `request` records are joined to their `response` by `WARC-Concurrent-To`;
a request without a response (it failed while recording) is kept as a failure.
A response the recorder archived without its body (`WARC-Rig-Missing`) answers nothing: it and its request are
kept apart (`ArchiveIndex.missing`, counted in `missing_bodies`), so a lookup never returns it and replaying that
request is never an empty answer. A response whose body was cut (`WARC-Truncated`) is held with what it has and says
so (`Response.truncated`); `ArchiveIndex.truncated` names every URL whose recorded body is not whole.
Per-step text records (`WARC-Rig-Capture: text`) are kept only as digests; DOM snapshots are skipped.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

from replay.errors import ReplayError
from replay.keys import Key, KeyMaker, MatchRules, redacted_names
from rigwarc.dialect import TEXT
from rigwarc.members import whole_gzip_members  # noqa: F401  (re-exported: tests/test_bad_input.py imports it here)
from rigwarc.read import ArchiveReader, WarcError


@dataclass(frozen=True)
class Response:
    """A recorded response: status, headers and the (decoded) body."""

    status: int
    reason: str
    headers: tuple[tuple[str, str], ...]
    body: bytes
    #: Why the body is not whole (`WARC-Truncated`: `length`, `time`, ...): it holds the first bytes only, or none.
    truncated: str | None = None
    #: Why the response was archived without any body (`WARC-Rig-Missing`): it answers nothing.
    missing: str | None = None

    def same_as(self, other: Response) -> bool:
        """Same status, content type and body, equally whole (headers such as Date may differ)."""
        return ((self.status, self.content_type, self.body, self.truncated, self.missing)
                == (other.status, other.content_type, other.body, other.truncated, other.missing))

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
    #: Those exchanges by lookup key, in recorded order (each response's `missing` says why): no lookup returns them.
    missing: dict[Key, list[Exchange]] = field(default_factory=dict)
    #: Every URL with a recorded response whose body is not whole (cut, or missing): its `WARC-Truncated` reason.
    truncated: dict[str, str] = field(default_factory=dict)
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

    def missing_answer(self, key: Key) -> Exchange | None:
        """The first exchange recorded for `key` without its body, when no answer for `key` is held."""
        return None if self.exchanges.get(key) else next(iter(self.missing.get(key, ())), None)

    def unanswered(self) -> list[Exchange]:
        """The exchanges recorded without their body whose keys no answer is held for (one per key), in recorded
        order: what a snapshot keeps of them, so that replay can say the body is missing."""
        return sorted((x for k in self.missing if (x := self.missing_answer(k)) is not None), key=lambda x: x.order)

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
    of them are masked in every key. With `dedupe`, an answer identical to one already held for its key is dropped.
    An exchange whose response holds no body (`Response.missing`) goes to `index.missing`, not among the answers."""
    raw = list(exchanges)
    masked: set[str] = set(index.keys.masked)
    for x in raw:
        masked |= redacted_names(x.url, x.body, x.content_type)
    index.keys.masked = frozenset(masked)
    for x in sorted(raw, key=lambda x: x.order):
        r = x.response
        if r is not None and r.truncated:
            index.truncated.setdefault(x.url, r.truncated)
        group = index.missing if r is not None and r.missing is not None else index.exchanges
        held = group.setdefault(index.key(x.method, x.url, x.body, x.content_type), [])
        if dedupe and any(_same(x, h) for h in held):
            continue
        held.append(x)


def _same(a: Exchange, b: Exchange) -> bool:
    if a.response is None or b.response is None:
        return a.response is b.response
    return a.response.same_as(b.response)


def _read(path: Path, file_no: int, out: list[Exchange], index: ArchiveIndex, dates: list[str], texts: bool) -> None:
    if not path.is_file():
        raise ReplayError(f"{path}: no such archive; an episode directory holds evidence.warc.gz")
    responses: dict[str, tuple[Response, str, str, int]] = {}
    requests: list[Exchange] = []
    before = index.records
    try:
        reader = ArchiveReader(path)
        if reader.torn_at is not None:  # warcio would hand out the torn record's partial content as if it were whole
            index.errors.append(f"{path}: the archive ends with a torn or corrupt record at byte {reader.torn_at} of "
                                f"{reader.size}; the complete records before it are used")
        for pos, rec in enumerate(reader):
            index.records += 1
            if rec.date:
                dates.append(rec.date)
            if rec.type == "response" and rec.http is not None:
                http = rec.http
                # a missing body (WARC-Rig-Missing) answers nothing: add_exchanges keeps it apart
                resp = Response(int(http.get_statuscode() or 0), http.statusline.partition(" ")[2], tuple(http.headers),
                                b"" if rec.missing is not None else rec.content, rec.truncated, rec.missing)
                responses[rec.record_id] = (resp, rec.target_uri, rec.date, pos)
            elif rec.type == "request" and rec.http is not None:
                http = rec.http
                requests.append(Exchange(http.protocol.upper(), rec.target_uri, tuple(http.headers), rec.content,
                                         rec.date, None, (file_no, rec.date, pos), rec.concurrent_to))
            elif rec.capture == TEXT:
                if rec.step is not None:
                    index.step_text[rec.step] = hashlib.sha256(rec.content).hexdigest()
                if texts:
                    index.texts[rec.record_id] = rec.content.decode("utf-8", "replace")
                    if rec.step is not None:
                        index.text_ids[rec.step] = rec.record_id
    except WarcError as exc:
        raise ReplayError(f"{path}: {exc}") from None
    if reader.stopped is not None:
        stop = reader.stopped
        index.errors.append(f"{path}: reading stopped at byte {stop.at}, after {index.records - before} records "
                            f"({stop.error}); the records before it are used")
        index.stopped = (stop.at, stop.reason)
    index.missing_bodies += sum(r.missing is not None for r, *_ in responses.values())
    for x in requests:
        found = responses.pop(x.response_id, None) if x.response_id else None
        out.append(replace(x, response=found[0] if found else None))
    for resp, url, date, pos in responses.values():  # responses without a request record (other tools): GETs
        out.append(Exchange("GET", url, (), b"", date, resp, (file_no, date, pos)))
