"""rigwarc, the rig's WARC dialect library: records built, written gzip per record, read back by warcio and by its own
reader (the rig's headers decoded), `warcio check`-clean; torn and stray tails; the atomic writer."""

from __future__ import annotations

import gzip
import io
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from rigwarc import ArchiveReader, RecordEncoder, WarcError, atomic_write, build, whole_gzip_members
from rigwarc.dialect import (
    CAPTURE_HEADER,
    DOM,
    MISSING_HEADER,
    STEP_HEADER,
    TEXT,
    TRUNCATED_HEADER,
    VIEW_HEADER,
    parse_step,
    parse_view,
    warc_date,
)
from rigwarc.members import RECORDER_LEVEL, WARCIO_LEVEL

WARCIO = Path(sys.executable).with_name("warcio")
DATE = warc_date(1_700_000_000.25)


def _ids() -> list[str]:
    return [f"<urn:uuid:00000000-0000-4000-8000-{n:012d}>" for n in range(8)]


def _records() -> list:
    i = _ids()
    page = "http://h.test/list?q=1"
    return [
        build.warcinfo("t.warc.gz", {"software": "test", "empty": ""}, record_id=i[0], date=DATE),
        build.response(page, 200, "OK", [("Content-Type", "text/html"), ("Content-Length", "5")], b"<p>1<",
                       record_id=i[1], date=DATE, truncated="length"),
        build.request(page, "GET", [("Host", "h.test")], b"", record_id=i[2], date=DATE, concurrent_to=i[1]),
        build.response("http://h.test/api", 200, "OK", [("Content-Type", "application/json")], b"", record_id=i[3],
                       date=DATE, truncated="time", missing="body not readable: the tab closed"),
        build.request("http://h.test/api", "POST", [("Host", "h.test")], b'{"a":1}', record_id=i[4], date=DATE,
                      concurrent_to=i[3]),
        build.capture(TEXT, page, "visible text é".encode(), "text/plain; charset=utf-8", step=3, record_id=i[5],
                      date=DATE, refers_to=i[1]),
        build.capture(DOM, page, b"<html><p>1</p></html>", "text/html; charset=utf-8", step=3, record_id=i[6],
                      date=DATE, refers_to=i[1], concurrent_to=i[5], view=(1280, 720, 0, 300)),
        build.resource("urn:sgr-rig:tool/4/web_search", b"1. a result", "text/plain; charset=utf-8", record_id=i[7],
                       date=DATE, step=4),
    ]


def _write(path: Path, level: int = RECORDER_LEVEL) -> bytes:
    encoder = RecordEncoder()
    data = b"".join(encoder.member(r, level) for r in _records())
    path.write_bytes(data)
    return data


def test_records_built_and_written_read_back_with_warcio_and_check_clean(tmp_path):
    warc = tmp_path / "t.warc.gz"
    _write(warc)
    check = subprocess.run([str(WARCIO), "check", "-v", str(warc)], capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr
    with warc.open("rb") as fh:
        got = [(r.rec_type, r.rec_headers, r.http_headers, r.content_stream().read()) for r in ArchiveIterator(fh)]
    assert [g[0] for g in got] == ["warcinfo", "response", "request", "response", "request", "conversion", "conversion",
                                   "resource"]
    assert [g[1].get_header("WARC-Record-ID") for g in got] == _ids()
    assert {g[1].get_header("WARC-Date") for g in got} == {"2023-11-14T22:13:20.250000Z"}
    assert got[0][3] == b"software: test\r\n"  # empty fields left out
    cut, gone = got[1][1], got[3][1]
    assert (cut.get_header(TRUNCATED_HEADER), cut.get_header(MISSING_HEADER)) == ("length", None)
    assert (gone.get_header(TRUNCATED_HEADER), gone.get_header(MISSING_HEADER)) == ("time", "body not readable: the tab closed")
    assert got[1][3] == b"<p>1<" and got[3][3] == b"" and got[3][2].get_header("Content-Length") is None
    assert got[2][2].protocol == "GET" and got[2][2].statusline.split()[0] == "/list?q=1"
    assert got[2][1].get_header("WARC-Concurrent-To") == _ids()[1]
    assert (got[5][1].get_header(STEP_HEADER), got[5][1].get_header(CAPTURE_HEADER)) == ("3", "text")
    assert got[6][1].get_header(VIEW_HEADER) == "1280 720 0 300" and got[6][1].get_header("WARC-Refers-To") == _ids()[1]
    assert got[7][1].get_header(CAPTURE_HEADER) == "tool" and got[7][1].get_header("WARC-Target-URI").startswith("urn:")


@pytest.mark.parametrize("level", [RECORDER_LEVEL, WARCIO_LEVEL])
def test_the_reader_decodes_the_rigs_headers(tmp_path, level):
    warc = tmp_path / "t.warc.gz"
    _write(warc, level)
    reader = ArchiveReader(warc)
    records = list(reader)
    assert reader.records == 8 and reader.torn_at is None and reader.stopped is None
    info, cut, req, gone, _, text, dom, tool = records
    assert (info.type, info.record_id, info.target_uri) == ("warcinfo", _ids()[0], None)
    assert (cut.truncated, cut.missing, cut.content, cut.http.get_statuscode()) == ("length", None, b"<p>1<", "200")
    assert (gone.truncated, gone.missing) == ("time", "body not readable: the tab closed")
    assert req.concurrent_to == _ids()[1] and req.date == "2023-11-14T22:13:20.250000Z"
    assert (text.step, text.capture, text.view, text.content.decode()) == (3, "text", None, "visible text é")
    assert (dom.step, dom.capture, dom.view) == (3, "dom", (1280, 720, 0, 300))
    assert (tool.step, tool.capture, tool.target_uri) == (4, "tool", "urn:sgr-rig:tool/4/web_search")


def test_the_same_input_gives_the_same_bytes(tmp_path):
    assert _write(tmp_path / "a.warc.gz") == _write(tmp_path / "b.warc.gz")
    plain = RecordEncoder().plain(_records()[1])
    assert plain.startswith(b"WARC/1.1\r\nWARC-Truncated: length\r\nWARC-Type: response\r\n") and plain.endswith(b"\r\n\r\n")


def test_a_torn_tail_and_stray_bytes_stop_reading_where_they_begin(tmp_path):
    warc = tmp_path / "t.warc.gz"
    data = _write(warc)
    whole = len(data)
    warc.write_bytes(data + data[:40])  # a killed writer's half member
    reader = ArchiveReader(warc)
    assert len(list(reader)) == 8 and reader.torn_at == whole == whole_gzip_members(warc.read_bytes())
    assert reader.size == whole + 40

    stray = gzip.compress(b"HTTP/1.1 200 OK\r\nnot a warc record at all\r\n\r\n")  # a whole member, no record
    warc.write_bytes(data + stray + data)
    reader = ArchiveReader(warc)
    assert len(list(reader)) == 8 and reader.torn_at is None
    assert reader.stopped is not None and reader.stopped.at == whole and reader.stopped.reason


def test_what_is_no_warc_says_so_and_how_to_check(tmp_path):
    bad = tmp_path / "bad.warc.gz"
    bad.write_bytes(b"<html>not an archive</html>")
    with pytest.raises(WarcError, match=r"not a WARC file .*warcio check"):
        ArchiveReader(bad)
    bad.write_bytes(b"\x1f\x8b\x08\x00garbage")
    with pytest.raises(WarcError, match="warcio check"):
        list(ArchiveReader(bad))
    bad.write_bytes(b"")
    assert list(ArchiveReader(bad)) == []


def test_view_and_step_values_read_back_or_none():
    assert parse_view("1280 720 0 40") == (1280, 720, 0, 40)
    assert [parse_view(v) for v in (None, "", "1 2 3", "0 720 0 0", "a b c d")] == [None] * 5
    assert (parse_step("12"), parse_step(None), parse_step("-1"), parse_step("x")) == (12, None, None, None)


def test_atomic_write_puts_text_bytes_or_a_writers_file_whole_or_not_at_all(tmp_path):
    target = tmp_path / "sub" / "f.json"
    assert atomic_write(target, "é\n") == target and target.read_bytes() == "é\n".encode()
    atomic_write(target, b"\x00\x01")
    assert target.read_bytes() == b"\x00\x01"
    atomic_write(target, lambda tmp: tmp.write_text("by the writer"), suffix=".yaml")
    assert target.read_text() == "by the writer"

    def failing(tmp: Path) -> None:
        assert tmp.name.endswith(".yaml") and tmp.parent == target.parent
        tmp.write_text("half")
        raise ValueError("the writer's own check failed")

    with pytest.raises(ValueError, match="own check"):
        atomic_write(target, failing, suffix=".yaml")
    assert target.read_text() == "by the writer" and sorted(p.name for p in target.parent.iterdir()) == ["f.json"]


def test_atomic_write_gives_an_ordinary_new_files_permissions(tmp_path):
    old = os.umask(0o022)
    try:
        path = atomic_write(tmp_path / "f.txt", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_members_are_whole_up_to_a_corrupt_one():
    encoder = RecordEncoder()
    one = encoder.member(_records()[0])
    assert whole_gzip_members(one + one) == 2 * len(one)
    corrupt = one[:20] + bytes([one[20] ^ 0xFF]) + one[21:]
    assert whole_gzip_members(one + corrupt + one) == len(one)
    assert list(ArchiveIterator(io.BytesIO(one)))[0].rec_type == "warcinfo"
