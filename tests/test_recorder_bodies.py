"""Response bodies in the evidence: kept past the navigation that follows them, else archived as missing (and
counted), cut ones marked so, and never replayed as a complete answer (a 502 saying why). Real Chromium, the real
test server, the WARC read back by warcio."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fpdf import FPDF
from playwright.async_api import Response
from waiting import wait_until
from warcio.archiveiterator import ArchiveIterator

from recorders import MISSING_HEADER, Recorder, RecorderOptions
from replay import REPLAY_CONTEXT_OPTIONS, attach_replay, load_index

WARCIO = Path(sys.executable).with_name("warcio")
#: The JSON body the pages POST to /api/echo.
POST = json.dumps({"query": "boiga", "year": 1890}, separators=(",", ":")).encode()

#: A page whose button POSTs, reads the answer and navigates away at once: the body's renderer copy is gone
#: as soon as page2 commits.
POST_AND_GO = b"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Post and go</title></head>
<body><button id="go">Go</button><script>
document.getElementById('go').addEventListener('click', async () => {
  const r = await fetch('/api/echo', {method: 'POST', headers: {'Content-Type': 'application/json'},
    body: JSON.stringify({query: 'boiga', year: 1890})});
  await r.json();
  location.href = 'page2.html';
});
</script></body></html>"""

#: A page that fetches a body that never ends and reads only its headers.
STREAM = b"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Stream</title></head>
<body><p id="out"></p><script>
fetch('/api/stream').then((r) => { document.getElementById('out').textContent = 'status ' + r.status; });
</script></body></html>"""


def responses(warc: Path) -> dict[str, tuple[Any, Any, bytes]]:
    """The response records of a WARC by target URI: (WARC headers, HTTP headers, payload)."""
    out = {}
    with warc.open("rb") as f:
        for r in ArchiveIterator(f):
            data = r.content_stream().read()
            if r.rec_type == "response":
                out[r.rec_headers.get_header("WARC-Target-URI")] = (r.rec_headers, r.http_headers, data)
    return out


def records(warc: Path) -> list[tuple[str, str | None, bytes]]:
    """Every response record of a WARC, in order: (target URI, HTTP content type, payload)."""
    with warc.open("rb") as f:
        return [(r.rec_headers.get_header("WARC-Target-URI"), r.http_headers.get_header("Content-Type"),
                 r.content_stream().read()) for r in ArchiveIterator(f) if r.rec_type == "response"]


def slow_reads(monkeypatch: pytest.MonkeyPatch, url_end: str, until: asyncio.Event) -> list[str]:
    """Make the recorder read the bodies of responses to `url_end` only once `until` is set: a recorder that
    is late (a busy machine) deterministically. Returns the URLs whose bodies were read, as they are."""
    real, read = Response.body, []

    async def late(self: Response) -> bytes:
        if self.url.endswith(url_end):
            await until.wait()
        body = await real(self)
        read.append(self.url)
        return body

    monkeypatch.setattr(Response, "body", late)
    return read


async def test_a_body_read_after_the_page_navigated_away_is_archived_whole(
    context, page, pages_server, pages_url, tmp_path, monkeypatch
):
    pages_server.set_route("/post-and-go.html", lambda ex: ex.send(200, POST_AND_GO))
    gone = asyncio.Event()
    page.on("load", lambda _: gone.set() if page.url.endswith("/page2.html") else None)
    slow_reads(monkeypatch, "/api/echo", gone)  # the body is asked for only after page2 has loaded
    rec = await Recorder.attach(context, tmp_path / "ep")
    async with rec.action({"type": "goto", "target": "/post-and-go.html", "value": None}):
        await page.goto(f"{pages_url}/post-and-go.html")
    async with rec.action({"type": "click", "target": "#go", "value": None}):
        await page.click("#go")
        await page.wait_for_url("**/page2.html")
    await wait_until(gone.is_set)
    await rec.close()

    assert rec.missing_bodies == 0
    headers, http, body = responses(tmp_path / "ep" / "evidence.warc.gz")[f"{pages_url}/api/echo"]
    assert json.loads(body) == {"count": 42, "received": len(POST)}
    assert headers.get_header(MISSING_HEADER) is None and headers.get_header("WARC-Truncated") is None
    assert http.get_header("Content-Length") == str(len(body))
    assert rec.last_step is not None and rec.last_step.url == f"{pages_url}/page2.html"


def _pdf(text: str) -> bytes:
    doc = FPDF()
    doc.add_page()
    doc.set_font("helvetica", size=14)
    doc.cell(text=text)
    return bytes(doc.output())


async def test_a_pdf_opened_as_a_page_is_archived_as_the_pdf_not_its_viewer(
    context, page, pages_server, pages_url, tmp_path, monkeypatch
):
    """Chromium's PDF viewer takes a PDF page's response over: a body read once the viewer is up (a late recorder)
    can be the viewer's HTML. The recorder reads a PDF's bytes while its response is paused, before the viewer."""
    data = _pdf("Annual report")
    pages_server.set_route("/report.pdf", lambda ex: ex.send(200, data, "application/pdf"))
    shown = asyncio.Event()
    read = slow_reads(monkeypatch, "/report.pdf", shown)  # a read of it would come only once the viewer is up
    rec = await Recorder.attach(context, tmp_path / "ep")
    async with rec.action({"type": "goto", "target": "/report.pdf#page=1", "value": None}):
        response = await page.goto(f"{pages_url}/report.pdf#page=1")
    shown.set()  # the page loaded: its document is the viewer's
    assert response is not None
    assert rec.pdf_body(f"{pages_url}/report.pdf") == rec.pdf_body(response.url) == data
    other = _pdf("Second report")
    pages_server.set_route("/other.pdf", lambda ex: ex.send(200, other, "application/pdf"))
    tab = await context.new_page()  # a new tab loading a PDF at once (the tools' fetch tab does)
    await rec.watching(tab)
    await tab.goto(f"{pages_url}/other.pdf")
    assert rec.pdf_body(f"{pages_url}/other.pdf") == other
    await rec.close()

    assert f"{pages_url}/report.pdf" not in read  # never read through Response.body
    # one exchange: the one the viewer makes up for its inner document (its HTML, no server) is not evidence
    assert len(pages_server.requests_to("/report.pdf")) == 1
    assert [r for r in records(tmp_path / "ep" / "evidence.warc.gz") if r[0] == f"{pages_url}/report.pdf"] == [
        (f"{pages_url}/report.pdf", "application/pdf", data)
    ]
    assert rec.pdf_body(f"{pages_url}/page2.html") is None


def check_warc(warc: Path) -> None:
    check = subprocess.run([str(WARCIO), "check", str(warc)], check=False, capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr


async def test_a_body_that_never_finishes_is_archived_as_missing_and_replays_as_a_miss(
    browser, context, page, pages_server, pages_url, tmp_path
):
    def stream(ex: Any) -> None:  # headers and a first chunk, then nothing until the test ends
        ex.start_chunked(200, "application/json")
        ex.write_chunk(b'{"partial": ')
        ex.hang()

    pages_server.set_route("/stream.html", lambda ex: ex.send(200, STREAM))
    pages_server.set_route("/api/stream", stream)
    rec = await Recorder.attach(context, tmp_path / "ep", options=RecorderOptions(body_timeout_ms=1500))
    async with rec.action({"type": "goto", "target": "/stream.html", "value": None}):
        await page.goto(f"{pages_url}/stream.html")
    await page.wait_for_selector("text=status 200")
    await wait_until(lambda: rec.missing_bodies, message="the unfinished body was not given up on")
    await rec.close()

    warc = tmp_path / "ep" / "evidence.warc.gz"
    got = responses(warc)
    headers, http, body = got[f"{pages_url}/api/stream"]
    assert headers.get_header(MISSING_HEADER) == "body not readable: not finished: nothing arrived for 1.5 s"
    assert headers.get_header("WARC-Truncated") == "time" and body == b""  # no empty body passed off as whole
    assert http.get_statuscode() == "200" and http.get_header("Content-Length") is None
    assert rec.missing_bodies == 1
    assert got[f"{pages_url}/stream.html"][0].get_header(MISSING_HEADER) is None
    check_warc(warc)

    index = load_index(warc)  # replay: a missing body answers nothing; its request is a miss (a 502), no empty 200
    assert index.missing_bodies == 1 and index.truncated == {f"{pages_url}/api/stream": "time"}
    assert index.lookup("GET", f"{pages_url}/api/stream") == [] and index.lookup("GET", f"{pages_url}/stream.html")
    [held] = index.missing[index.key("GET", f"{pages_url}/api/stream")]
    assert held.response.missing == "body not readable: not finished: nothing arrived for 1.5 s"
    replay = await browser.new_context(**REPLAY_CONTEXT_OPTIONS)
    try:
        session = await attach_replay(replay, index)
        view = await replay.new_page()
        await view.goto(f"{pages_url}/stream.html")
        await view.wait_for_selector("text=status 502")
        assert [(m.method, m.url, m.reason) for m in session.misses] == [
            ("GET", f"{pages_url}/api/stream", "missing: body not readable: not finished: nothing arrived for 1.5 s")]
    finally:
        await replay.close()


async def test_a_body_held_back_by_a_busy_renderer_is_waited_for_not_given_up_as_stalled(
    context, page, pages_server, pages_url, tmp_path
):
    # The page's first chunk runs a script that keeps its renderer busy for 4 s, more than twice the body timeout;
    # the rest of the body is sent meanwhile but reaches the recorder only once the renderer is free again (CDP's
    # `Network.dataReceived` comes from the renderer). A 10 MB table being parsed holds bytes back the same way.
    first = (b"<!doctype html><html><head><title>Busy</title></head><body><p id=first>first</p>"
             b"<script>const t = Date.now(); while (Date.now() - t < 4000) {}</script>")
    rest = b"<p id=rest>rest</p></body></html>"

    def busy(ex: Any) -> None:
        ex.start_chunked()
        ex.write_chunk(first)
        ex.wait(0.5)  # the script is running by now: these bytes wait for the renderer
        ex.write_chunk(rest)
        ex.write_chunk(b"")

    pages_server.set_route("/busy.html", busy)
    rec = await Recorder.attach(context, tmp_path / "ep", options=RecorderOptions(body_timeout_ms=1500))
    async with rec.action({"type": "goto", "target": "/busy.html", "value": None}):
        await page.goto(f"{pages_url}/busy.html")
    assert await page.text_content("#rest") == "rest"
    await rec.close()

    headers, _, body = responses(tmp_path / "ep" / "evidence.warc.gz")[f"{pages_url}/busy.html"]
    assert headers.get_header(MISSING_HEADER) is None and headers.get_header("WARC-Truncated") is None
    assert body == first + rest and rec.missing_bodies == 0


async def test_a_body_cut_at_max_body_bytes_is_marked_and_replays_as_a_502_not_a_short_200(
    browser, context, page, pages_server, pages_url, tmp_path
):
    long = b"<!doctype html><html><head><title>Long</title></head><body>" + b"<p>row</p>" * 600 + b"</body></html>"
    pages_server.set_route("/long.html", lambda ex: ex.send(200, long))
    rec = await Recorder.attach(context, tmp_path / "ep", options=RecorderOptions(max_body_bytes=1000, screenshots="off"))
    async with rec.action({"type": "goto", "target": "/long.html", "value": None}):
        await page.goto(f"{pages_url}/long.html")
    await rec.close()

    warc = tmp_path / "ep" / "evidence.warc.gz"
    headers, http, body = responses(warc)[f"{pages_url}/long.html"]
    assert headers.get_header("WARC-Truncated") == "length" and headers.get_header(MISSING_HEADER) is None
    assert body == long[:1000] and http.get_header("Content-Length") == "1000"
    assert rec.missing_bodies == 0
    check_warc(warc)

    index = load_index(warc)
    [held] = index.lookup("GET", f"{pages_url}/long.html")
    assert (held.response.truncated, held.response.body) == ("length", long[:1000])
    assert index.truncated == {f"{pages_url}/long.html": "length"} and index.missing_bodies == 0
    replay = await browser.new_context(**REPLAY_CONTEXT_OPTIONS)
    try:
        session = await attach_replay(replay, index)
        view = await replay.new_page()
        answer = await view.goto(f"{pages_url}/long.html")
        assert answer is not None and answer.status == 502 and answer.headers["x-replay"] == "truncated"
        assert "not whole in the archive" in await view.content()
        assert [(m.url, m.reason) for m in session.misses] == [(f"{pages_url}/long.html", "truncated (length): 1000 bytes archived")]
    finally:
        await replay.close()


async def test_a_body_whose_page_closed_before_it_was_read_is_archived_as_missing(
    browser, context, page, pages_url, tmp_path, monkeypatch
):
    closed = asyncio.Event()
    read = slow_reads(monkeypatch, "/api/echo", closed)  # that body is asked for only once its tab has closed
    rec = await Recorder.attach(context, tmp_path / "ep")
    async with rec.action({"type": "goto", "target": "/index.html", "value": None}):
        await page.goto(f"{pages_url}/index.html")
    tab = await context.new_page()
    async with rec.action({"type": "goto", "target": "/index.html", "value": None, "page": tab}):
        await tab.goto(f"{pages_url}/index.html")
    async with rec.action({"type": "click", "target": "#post", "value": None, "page": tab}):
        await tab.click("#post")
        await tab.wait_for_selector("text=Results: 42 rows")
    await wait_until(lambda: len(read) == 4, message=lambda: f"bodies read: {read}")  # both tabs' documents
    await tab.close()
    closed.set()
    await rec.close()

    warc = tmp_path / "ep" / "evidence.warc.gz"
    got = responses(warc)
    headers, http, body = got[f"{pages_url}/api/echo"]
    reason = headers.get_header(MISSING_HEADER)
    assert reason.startswith("body not readable: ") and "closed" in reason, reason
    assert headers.get_header("WARC-Truncated") == "unspecified" and body == b""
    assert http.get_statuscode() == "200" and http.get_header("Content-Length") is None
    assert rec.missing_bodies == 1
    assert all(h.get_header(MISSING_HEADER) is None for url, (h, _, _) in got.items() if url != f"{pages_url}/api/echo")
    check_warc(warc)

    index = load_index(warc)
    assert index.missing_bodies == 1
    assert index.lookup("POST", f"{pages_url}/api/echo", POST, "application/json") == []
    replay = await browser.new_context(**REPLAY_CONTEXT_OPTIONS)
    try:
        session = await attach_replay(replay, index)
        view = await replay.new_page()
        await view.goto(f"{pages_url}/index.html")
        await view.click("#post")
        await wait_until(lambda: session.misses, message="no miss for the POST")
        assert [(m.method, m.url) for m in session.misses] == [("POST", f"{pages_url}/api/echo")]
        assert await view.text_content("#count") == "0"  # the page got no answer to show
    finally:
        await replay.close()
