"""The replay index without a browser: lookup keys, recorded order, failures, redaction tolerance, snapshots."""

from __future__ import annotations

import ast
import json
from datetime import UTC, datetime
from io import BytesIO
from pathlib import Path

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

import replay
from replay import (
    KeyMaker,
    MatchRules,
    ParamRule,
    ReplayError,
    load_index,
    write_snapshot,
)
from rigwarc.dialect import CAPTURE_HEADER, STEP_HEADER

REPO = Path(__file__).resolve().parents[1]


class Warc:
    """Writes records the way the recorder does: response first, then its request (`WARC-Concurrent-To`)."""

    def __init__(self, path: Path) -> None:
        self.fh = path.open("wb")
        self.w = WARCWriter(self.fh, gzip=True, warc_version="1.1")
        self.n = 0

    def exchange(self, method: str, url: str, body: bytes = b"", answer: bytes | None = b"ok", status: int = 200,
                 ctype: str = "application/json", date: str | None = None) -> None:
        self.n += 1
        date = date or f"2024-01-01T00:00:{self.n:02d}Z"
        resp_id = f"<urn:uuid:00000000-0000-0000-0000-{self.n:012d}>"
        if answer is not None:
            http = StatusAndHeaders(f"{status} OK", [("Content-Type", "text/plain")], protocol="HTTP/1.1")
            rec = self.w.create_warc_record(url, "response", payload=BytesIO(answer), length=len(answer), http_headers=http,
                                            warc_headers_dict={"WARC-Record-ID": resp_id, "WARC-Date": date})
            self.w.write_record(rec)
        path = "/" + url.split("/", 3)[3]
        req = StatusAndHeaders(f"{method} {path} HTTP/1.1", [("Content-Type", ctype)], is_http_request=True)
        headers = {"WARC-Date": date}
        if answer is not None:
            headers["WARC-Concurrent-To"] = resp_id
        self.w.write_record(self.w.create_warc_record(url, "request", payload=BytesIO(body), length=len(body), http_headers=req,
                                                      warc_headers_dict=headers))

    def text(self, step: int, text: bytes) -> None:
        rec = self.w.create_warc_record("http://h/p", "conversion", payload=BytesIO(text), length=len(text),
                                        warc_content_type="text/plain", warc_headers_dict={STEP_HEADER: str(step), CAPTURE_HEADER: "text"})
        self.w.write_record(rec)

    def close(self) -> Path:
        self.fh.close()
        return Path(self.fh.name)


def test_query_order_fragment_and_cache_busters_do_not_matter():
    k = KeyMaker(MatchRules(site_params=(ParamRule(frozenset({"cb"}), "/eco/"),)))
    assert k.url("http://h:1/a?b=2&a=1#x") == k.url("http://h:1/a?a=1&b=2")
    assert k.url("http://h:1/a?a=1&_=123") == k.url("http://h:1/a?a=1")
    assert k.url("http://h:1/eco/x?cb=9&a=1") == k.url("http://h:1/eco/x?a=1")
    assert k.url("http://h:1/flights/x?cb=9") != k.url("http://h:1/flights/x")  # the rule is per site
    assert k.url("http://h:1/a?a=1&a=2") == k.url("http://h:1/a?a=2&a=1")
    assert k.url("http://h:1/a?a=x%2Fy") == k.url("http://h:1/a?a=x/y")
    assert k.url("http://h:1/a") != k.url("http://h:2/a")
    assert KeyMaker(MatchRules(ignore_origin=True)).url("http://h:1/a?q=1") == "/a?q=1"


def test_bodies_compare_json_and_forms_order_insensitively():
    k = KeyMaker()
    assert k.body(b'{"a": 1, "b": [1, 2]}', "application/json") == k.body(b'{"b":[1,2],"a":1}', "application/json")
    assert k.body(b'{"a": 1}', "application/json") != k.body(b'{"a": 2}', "application/json")
    form = "application/x-www-form-urlencoded"
    assert k.body(b"x=1&y=2", form) == k.body(b"y=2&x=1", form)
    assert k.body(b"", None) == k.body(None, None) == ""


def test_redacted_parameters_match_whatever_value_the_browser_sends(tmp_path):
    w = Warc(tmp_path / "a.warc.gz")
    w.exchange("GET", "http://h:1/p?token=%5Bredacted%5D&q=1", answer=b"page")
    w.exchange("POST", "http://h:1/login", b'{"user": "ann", "password": "[redacted]"}', answer=b"in")
    w.exchange("POST", "http://h:1/form", b"user=ann&pwd=%5Bredacted%5D", answer=b"form", ctype="application/x-www-form-urlencoded")
    ix = load_index(w.close())
    assert ix.lookup("GET", "http://h:1/p?q=1&token=s3cret")[0].response.body == b"page"
    assert ix.lookup("POST", "http://h:1/login", b'{"password": "hunter22", "user": "ann"}', "application/json")[0].response.body == b"in"
    assert ix.lookup("POST", "http://h:1/login", b'{"password": "x", "user": "bob"}', "application/json") == []
    assert ix.lookup("POST", "http://h:1/form", b"pwd=abc&user=ann", "application/x-www-form-urlencoded")[0].response.body == b"form"


def test_repeated_requests_keep_recorded_order_and_failures(tmp_path):
    w = Warc(tmp_path / "a.warc.gz")
    w.exchange("POST", "http://h:1/more", b"{}", answer=b"batch 2", date="2024-01-01T00:00:02Z")
    w.exchange("POST", "http://h:1/more", b"{}", answer=b"batch 1", date="2024-01-01T00:00:01Z")  # finished later, started first
    w.exchange("POST", "http://h:1/more", b"{}", answer=b"batch 3", date="2024-01-01T00:00:03Z")
    w.exchange("GET", "http://h:1/gone", answer=None)
    w.text(0, b"hello")
    ix = load_index(w.close())
    assert [x.response.body for x in ix.lookup("POST", "http://h:1/more", b"{}")] == [b"batch 1", b"batch 2", b"batch 3"]
    assert ix.lookup("GET", "http://h:1/gone")[0].response is None
    assert ix.step_text == {0: "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"}
    assert ix.recorded_at == datetime(2024, 1, 1, 0, 0, 1, tzinfo=UTC)
    assert len(ix) == 4 and ix.records == 8


def test_dedupe_keeps_one_copy_of_each_distinct_answer_in_first_seen_order(tmp_path):
    a, b = Warc(tmp_path / "a.warc.gz"), Warc(tmp_path / "b.warc.gz")
    for w in (a, b):
        for body in (b"one", b"two"):
            w.exchange("GET", "http://h:1/seq", answer=body)
    ix = load_index([a.close(), b.close()], dedupe=True)
    assert [x.response.body for x in ix.lookup("GET", "http://h:1/seq")] == [b"one", b"two"]
    assert len(load_index([tmp_path / "a.warc.gz", tmp_path / "b.warc.gz"])) == 4


def test_snapshot_round_trip_is_deterministic_and_origin_free(tmp_path):
    w = Warc(tmp_path / "a.warc.gz")
    w.exchange("GET", "http://127.0.0.1:4321/eco/", answer=b"home")
    w.exchange("POST", "http://127.0.0.1:4321/eco/api", b'{"a":1}', answer=b"rows")
    w.exchange("GET", "http://127.0.0.1:4321/other/", answer=b"not this site")
    ix = load_index(w.close(), MatchRules(ignore_origin=True), dedupe=True)
    when = datetime(2025, 5, 1, tzinfo=UTC)
    kw = dict(site="eco", path_prefix="/eco/", built_at=when, rig_version="0", data_version=["d==1"], start_path="/eco/")
    m1 = write_snapshot(ix, tmp_path / "s1", **kw)
    write_snapshot(ix, tmp_path / "s2", **kw)
    assert (tmp_path / "s1/snapshot.warc.gz").read_bytes() == (tmp_path / "s2/snapshot.warc.gz").read_bytes()
    assert m1.exchanges == 2 and json.loads((tmp_path / "s1/manifest.json").read_text())["site"] == "eco"
    frozen = replay.open_snapshot(tmp_path / "s1")
    assert frozen.index.lookup("POST", "http://127.0.0.1:8799/eco/api", b'{"a": 1}', "application/json")[0].response.body == b"rows"
    assert frozen.index.lookup("GET", "http://127.0.0.1:8799/other/") == []
    assert frozen.index.recorded_at == when


@pytest.mark.parametrize("site", ["eco", "flights", "stats"])
def test_a_shipped_snapshot_written_again_is_the_same_bytes(site, tmp_path):
    """The snapshot writer (through rigwarc's builders) keeps the shipped snapshots' bytes: read one, write it again."""
    shipped = REPO / "site_snapshots" / site
    m = replay.Manifest.read(shipped)
    index = load_index(shipped / "snapshot.warc.gz", MatchRules.from_json(m.rules))
    again = write_snapshot(index, tmp_path / site, site=site, path_prefix=f"/{site}/",
                           built_at=datetime.fromisoformat(m.built_at), rig_version=m.rig_version,
                           data_version=m.data_version, start_path=m.start_path, sources=m.sources)
    assert (tmp_path / site / "snapshot.warc.gz").read_bytes() == (shipped / "snapshot.warc.gz").read_bytes()
    assert (again.exchanges, again.records, again.bytes) == (m.exchanges, m.records, m.bytes)
    assert (again.truncated_bodies, again.missing_bodies) == (0, 0)


def test_cut_and_missing_bodies_keep_their_marker_through_a_snapshot(tmp_path):
    from rigwarc import RecordEncoder, build

    i = (f"<urn:uuid:00000000-0000-4000-8000-{n:012d}>" for n in range(100))
    d = "2024-01-01T00:00:00Z"

    def exchange(url: str, body: bytes, **marks: str) -> list:
        rid = next(i)
        return [build.response(url, 200, "OK", [("Content-Type", "text/html")], body, record_id=rid, date=d, **marks),
                build.request(url, "GET", [("Host", "h")], b"", record_id=next(i), date=d, concurrent_to=rid)]

    records = [*exchange("http://h/eco/", b"home"), *exchange("http://h/eco/big", b"<p>fir", truncated="length"),
               *exchange("http://h/eco/api", b"", truncated="time", missing="body not readable: the tab closed"),
               *exchange("http://h/eco/both", b"", truncated="time", missing="body not readable: later"),
               *exchange("http://h/eco/both", b"answered once")]  # a missing body a whole answer replaces
    enc = RecordEncoder()
    (tmp_path / "a.warc.gz").write_bytes(b"".join(enc.member(r) for r in records))
    ix = load_index(tmp_path / "a.warc.gz", MatchRules(ignore_origin=True), dedupe=True)
    assert ix.missing_bodies == 2 and ix.lookup("GET", "http://h/eco/api") == []
    assert ix.truncated == {"http://h/eco/big": "length", "http://h/eco/api": "time", "http://h/eco/both": "time"}
    assert [x.url for x in ix.unanswered()] == ["http://h/eco/api"]
    when = datetime(2025, 5, 1, tzinfo=UTC)
    m = write_snapshot(ix, tmp_path / "s", site="eco", path_prefix="/eco/", built_at=when, rig_version="0",
                       data_version=[], start_path="/eco/")
    assert (m.exchanges, m.truncated_bodies, m.missing_bodies, m.records) == (3, 1, 1, 9)
    assert json.loads((tmp_path / "s/manifest.json").read_text())["truncated_bodies"] == 1
    frozen = replay.open_snapshot(tmp_path / "s").index
    [big] = frozen.lookup("GET", "http://127.0.0.1:8799/eco/big")
    assert (big.response.truncated, big.response.body) == ("length", b"<p>fir")
    assert frozen.lookup("GET", "http://127.0.0.1:8799/eco/api") == [] and frozen.missing_bodies == 1
    gone = frozen.missing_answer(frozen.key("GET", "http://127.0.0.1:8799/eco/api"))
    assert gone is not None and gone.response.missing == "body not readable: the tab closed"
    assert frozen.lookup("GET", "http://127.0.0.1:8799/eco/both")[0].response.body == b"answered once"
    assert frozen.truncated == {"http://h/eco/big": "length", "http://h/eco/api": "time"}


def test_unreadable_archives_say_what_to_do(tmp_path):
    bad = tmp_path / "bad.warc.gz"
    bad.write_bytes(b"\x1f\x8b\x08\x00garbage")
    with pytest.raises(ReplayError, match="warcio check"):
        load_index(bad)
    with pytest.raises(ReplayError, match="no such archive"):
        load_index(tmp_path / "missing.warc.gz")
    with pytest.raises(ReplayError, match="build_snapshots"):
        replay.open_snapshot(tmp_path)


def test_replay_never_imports_the_recorder_or_the_rig():
    """pywb's rule: the reader never imports the writer."""
    for path in sorted((REPO / "replay").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        assert not [n for n in names if n.split(".")[0] in ("recorders", "rig")], path.name


def test_replay_reads_the_recorders_format_constants():
    import recorders

    assert replay.REDACTED == recorders.REDACTED
    assert (recorders.STEP_HEADER, recorders.CAPTURE_HEADER) == (STEP_HEADER, CAPTURE_HEADER)  # both from rigwarc
    assert replay.__all__ == sorted(replay.__all__, key=lambda n: (not n.isupper(), not n[0].isupper(), n))
