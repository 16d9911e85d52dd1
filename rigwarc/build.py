"""Building the rig's WARC records (warcio's `ArcWarcRecord`s), each with its id and date given: equal input gives
equal bytes.

    info = warcinfo("evidence.warc.gz", {"software": "sgr-rig 0.1"}, record_id=rid(), date=warc_date(now))
    resp = response(url, 200, "OK", headers, body, record_id=rid(), date=d, truncated="length")
    req = request(url, "GET", headers, b"", record_id=rid(), date=d, concurrent_to=resp_id)
    text = capture(TEXT, url, b"visible text", "text/plain; charset=utf-8", step=3, record_id=rid(), date=d)

Headers come in warcio's order: the record's own headers (links, the rig's headers, `WARC-Truncated`) first, then
`WARC-Type`, `WARC-Record-ID`, `WARC-Target-URI`, `WARC-Date`, the digests, `Content-Type`, `Content-Length`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from io import BytesIO
from urllib.parse import urlsplit

from warcio.recordbuilder import RecordBuilder
from warcio.recordloader import ArcWarcRecord
from warcio.statusandheaders import StatusAndHeaders

from rigwarc.dialect import CAPTURE_HEADER, MISSING_HEADER, STEP_HEADER, TOOL, TRUNCATED_HEADER, VIEW_HEADER, View, format_view

_BUILDER = RecordBuilder(warc_version="1.1")


def warcinfo(filename: str, info: Mapping[str, str], *, record_id: str, date: str) -> ArcWarcRecord:
    """The `warcinfo` record that opens an archive (`info`'s fields in order; empty ones left out)."""
    return _identified(_BUILDER.create_warcinfo_record(filename, dict(info)), record_id, date)


def response(url: str, status: int, reason: str, headers: Iterable[tuple[str, str]], body: bytes, *, record_id: str,
             date: str, truncated: str | None = None, missing: str | None = None) -> ArcWarcRecord:
    """A `response` record. `truncated`: why `body` is not whole (`WARC-Truncated`); `missing`: why the record holds
    no body at all (`WARC-Rig-Missing`; then pass `truncated` too, and no Content-Length among `headers`)."""
    own = {}
    if truncated:
        own[TRUNCATED_HEADER] = truncated
    if missing:
        own[MISSING_HEADER] = missing
    http = StatusAndHeaders(f"{status} {reason}".strip(), list(headers), protocol="HTTP/1.1")
    return _record(url, "response", body, record_id, date, own, http_headers=http)


def request(url: str, method: str, headers: Iterable[tuple[str, str]], body: bytes, *, record_id: str, date: str,
            concurrent_to: str | None = None) -> ArcWarcRecord:
    """A `request` record (its request line targets the URL's path and query); `concurrent_to`: its response's id."""
    parts = urlsplit(url)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    http = StatusAndHeaders(f"{method} {target} HTTP/1.1", list(headers), is_http_request=True)
    own = {"WARC-Concurrent-To": concurrent_to} if concurrent_to else {}
    return _record(url, "request", body, record_id, date, own, http_headers=http)


def capture(kind: str, url: str, data: bytes, content_type: str, *, step: int, record_id: str, date: str,
            refers_to: str | None = None, concurrent_to: str | None = None, view: View | None = None) -> ArcWarcRecord:
    """A per-step `conversion` record of the page at `url`: its visible text (`TEXT`) or DOM snapshot (`DOM`, with the
    `view` it was shown in); `refers_to`: the page's response record."""
    own = {STEP_HEADER: str(step), CAPTURE_HEADER: kind}
    if refers_to:
        own["WARC-Refers-To"] = refers_to
    if concurrent_to:
        own["WARC-Concurrent-To"] = concurrent_to
    if view:
        own[VIEW_HEADER] = format_view(view)
    return _record(url, "conversion", data, record_id, date, own, content_type=content_type)


def resource(uri: str, data: bytes, content_type: str, *, record_id: str, date: str, step: int | None = None,
             kind: str = TOOL) -> ArcWarcRecord:
    """A `resource` record of content with no HTTP exchange (a tool call's result, named by a `urn:`)."""
    own = {CAPTURE_HEADER: kind}
    if step is not None:
        own[STEP_HEADER] = str(step)
    return _record(uri, "resource", data, record_id, date, own, content_type=content_type)


def _record(uri: str, kind: str, payload: bytes, record_id: str, date: str, own: dict[str, str], *,
            http_headers: StatusAndHeaders | None = None, content_type: str = "") -> ArcWarcRecord:
    rec = _BUILDER.create_warc_record(uri, kind, payload=BytesIO(payload), length=len(payload), http_headers=http_headers,
                                      warc_content_type=content_type, warc_headers_dict=own)
    return _identified(rec, record_id, date)


def _identified(rec: ArcWarcRecord, record_id: str, date: str) -> ArcWarcRecord:
    """The record with its id and date (in the places warcio gave the ones it made up)."""
    rec.rec_headers.replace_header("WARC-Record-ID", record_id)
    rec.rec_headers.replace_header("WARC-Date", date)
    return rec
