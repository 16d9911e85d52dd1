"""`rig qa`: replay fidelity measured on real episodes frozen into real snapshots, replayed by real Chromium.

A test site (served on 127.0.0.1) has one page per thing that makes replays unfaithful: a table filled by an XHR, a
stylesheet, a fetch with a timestamp cache-buster, a timestamp and random-id script, a cookie banner a script shows
until the visitor accepts, a service worker. One episode visits them all (recorded once, with step images), and is
frozen with a fuzzy rule for the cache-buster: a faithful snapshot, scored at the ceiling. The same snapshot with the
XHR's and the stylesheet's records removed, without the fuzzy rule and with one page's body held cut scores below the
threshold on exactly those pages, each with the right part named. A GraphQL filter POST replays by its body. The scoring functions are checked on images and texts made here.
"""

from __future__ import annotations

import gzip
import io
import json
import shutil
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from PIL import Image, ImageDraw
from server import TestServer
from typer.testing import CliRunner
from warcio.archiveiterator import ArchiveIterator
from warcio.warcwriter import WARCWriter

from replay.index import load_index
from replay.keys import MatchRules
from replay.qa import (
    RequestOutcome,
    combine,
    fuzzy_hint,
    image_match,
    resources_score,
    state_match,
    text_similarity,
)
from rig.cli import app
from rig.formats.qa import QaReport

PROSE = " ".join(f"Survey note {i}: the coastal transect was walked at low tide and every plot was counted twice."
                 for i in range(10))

BANNER = """<script>
if (!localStorage.getItem('consent')) {
  const d = document.createElement('div');
  d.id = 'consent-banner'; d.setAttribute('role', 'dialog'); d.setAttribute('aria-label', 'Cookie consent');
  d.style.cssText = 'position:fixed;left:0;right:0;bottom:0;background:#222;color:#fff;padding:60px 20px';
  d.innerHTML = '<p>We use cookies and similar technologies to measure visits, remember your choices, keep you ' +
    'signed in and show you content you may like. You can accept them all, refuse them, or choose which ones.</p>' +
    '<button id="accept">Accept all cookies</button>';
  document.body.append(d);
  d.querySelector('#accept').onclick = () => { localStorage.setItem('consent', 'yes'); d.remove(); };
}
</script>"""


def _page(title: str, body: str, head: str = "") -> str:
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{title}</title>{head}</head>"
            f"<body><h1>{title}</h1>{body}</body></html>")


ROWS = [{"site": f"Plot {i:02d}", "count": (i * 37) % 90, "species": ["kelp", "sedge", "thrift"][i % 3]}
        for i in range(40)]

PAGES = {
    "/qa/welcome": _page("Welcome", f"<p>{PROSE}</p>{BANNER}"),
    "/qa/article": _page("Article", f"<p>Methods.</p>{BANNER}"),
    "/qa/table": _page("Counts", "<table id=rows><tbody></tbody></table><script>fetch('/qa/rows.json')"
                       ".then(r => r.json()).then(rows => { document.querySelector('#rows tbody').innerHTML = rows.map("
                       "r => `<tr><td>${r.site}</td><td>${r.count}</td><td>${r.species}</td></tr>`).join(''); });"
                       "</script>"),
    "/qa/styled": _page("Styled", f"<p>{PROSE}</p>", '<link rel="stylesheet" href="/qa/style.css">'),
    "/qa/busted": _page("Status", f"<p>{PROSE}</p><p id=status>status: waiting</p><script>fetch('/qa/ping.json?_ts=' "
                        "+ Date.now()).then(r => r.json()).then(d => { document.getElementById('status').textContent = "
                        "'status: ' + d.status; });</script>"),
    "/qa/clock": _page("Clock", f"<p>{PROSE}</p><p id=now></p><script>document.getElementById('now').textContent = "
                       "'Generated ' + new Date().toISOString() + ', request ' + Math.random().toString(36).slice(2);"
                       "</script>"),
    "/qa/graphql": _page("Query", "<ul id=hits></ul><script>fetch('/qa/api/graphql', {method: 'POST', headers: "
                         "{'content-type': 'application/json'}, body: JSON.stringify({query: 'query Hits($kind: String) "
                         "{ hits(kind: $kind) }', variables: {kind: 'kelp'}})}).then(r => r.json()).then(d => { "
                         "document.getElementById('hits').innerHTML = d.data.hits.map(h => `<li>${h}</li>`).join(''); "
                         "});</script>"),
    "/qa/sw": _page("Offline", f"<p>{PROSE}</p><script>navigator.serviceWorker.register('/qa/sw.js')"
                    ".then(() => document.body.dataset.sw = 'registered', e => document.body.dataset.sw = e.name);"
                    "</script>"),
}
CSS = "body { background: #1d4e89; color: #fff; font-size: 22px; } h1 { color: #ffd166; }"
SW = "self.addEventListener('install', () => self.skipWaiting());"


def qa_site() -> TestServer:
    """The test site: the pages above and what they load."""
    routes = {path: (lambda ex, body=body: ex.send(200, body)) for path, body in PAGES.items()}
    routes["/qa/rows.json"] = lambda ex: ex.send_json(ROWS)
    routes["/qa/style.css"] = lambda ex: ex.send(200, CSS, "text/css")
    routes["/qa/ping.json"] = lambda ex: ex.send_json({"status": "ok"})
    routes["/qa/sw.js"] = lambda ex: ex.send(200, SW, "text/javascript")
    routes["/qa/api/graphql"] = lambda ex: ex.send_json({"data": {"hits": [
        f"{json.loads(ex.request.body)['variables']['kind']} plot {i}" for i in range(12)]}})
    return TestServer(routes=routes)


def rig(*args: object, stdout: bool = False) -> tuple[int, str]:
    """Run the `rig` command in-process: its exit status and its output (with `stdout`: stdout alone)."""
    res = CliRunner().invoke(app, [str(a) for a in args])
    return res.exit_code, res.stdout if stdout else res.output


def without(snapshot: Path, out: Path, paths: set[str], cut: set[str] = frozenset(), rules: dict | None = None) -> Path:
    """A copy of a snapshot without the records of some URL paths, with the responses of others marked cut as the
    recorder marks a body cut at its size limit (`WARC-Truncated: length`), and with other match rules, if given."""
    shutil.copytree(snapshot, out)
    warc = out / "snapshot.warc.gz"
    buf = io.BytesIO()
    writer = WARCWriter(buf, gzip=True)
    with (snapshot / "snapshot.warc.gz").open("rb") as fh:
        for record in ArchiveIterator(fh):
            path = urlsplit(record.rec_headers.get_header("WARC-Target-URI") or "").path
            if path in cut and record.rec_type == "response":
                record.rec_headers.add_header("WARC-Truncated", "length")
            if path not in paths:
                writer.write_record(record)
    warc.write_bytes(buf.getvalue())
    (out / "qa.json").unlink()
    if rules is not None:
        manifest = json.loads((out / "manifest.json").read_text())
        manifest["rules"] = rules
        (out / "manifest.json").write_text(json.dumps(manifest))
    return out


@pytest.fixture(scope="module")
def site():
    with qa_site() as srv:
        yield srv


@pytest.fixture(scope="module")
def frozen(site, tmp_path_factory):
    """One recorded episode of every page (step images on), frozen with a fuzzy rule for the cache-buster: the
    freeze's own QA is in qa.json."""
    root = tmp_path_factory.mktemp("qa")
    script = root / "visit.json"
    script.write_text(json.dumps([{"goto": f"{site.url}/qa/welcome"}, {"click": "#accept"},
                                  *({"goto": p} for p in ("/qa/article", "/qa/table", "/qa/styled", "/qa/busted",
                                                          "/qa/clock", "/qa/graphql", "/qa/sw"))]))
    # live step images: the QA's image part compares the replay with what the page showed while it was recorded
    code, out = rig("record", "--script", script, "--out", root / "ep", "--step-images", "live")
    assert code == 0, out
    assert site.requests_to("/qa/sw.js"), "the service worker was not registered while recording"
    code, out = rig("freeze", root / "ep", "--out", root / "snap", "--fuzzy", "_ts@/qa/ping.json")
    assert code == 0, out
    assert "replay QA" in out, out
    return root, out


def _pages(report: QaReport, path: str) -> list:
    return [p for p in report.pages if urlsplit(p.url).path == path]


def test_a_faithful_snapshot_scores_at_the_ceiling(frozen):
    root, out = frozen
    report = QaReport.read(root / "snap" / "qa.json")
    assert report.summary.below == [], out
    steps = [p for p in report.pages if p.kind == "step"]
    documents = [p for p in report.pages if p.kind == "document"]
    assert len(steps) == 9 and len(documents) == 8
    assert report.line() in out
    for p in report.pages:
        assert p.failed == [], p
        if urlsplit(p.url).path != "/qa/clock":  # the recorded live clock is not the replay's pinned one
            assert p.score == 1.0, p
        assert p.resources == 1.0 and p.state in (1.0, None)
    assert all(p.text is not None and p.image is not None and p.state is not None for p in steps)
    # the page that registered a service worker live replays from the archive, its worker blocked
    assert [p.score for p in _pages(report, "/qa/sw")] == [1.0, 1.0]
    # a GraphQL filter POST is answered by its body
    assert [(p.score, p.requests) for p in _pages(report, "/qa/graphql")] == [(1.0, 2), (1.0, 2)]


def test_a_consent_banner_the_recording_did_not_show_is_hidden(frozen):
    root, _ = frozen
    report = QaReport.read(root / "snap" / "qa.json")
    article = [p for p in _pages(report, "/qa/article") if p.kind == "document"]
    assert len(article) == 1 and article[0].score == 1.0
    assert any("consent overlay hidden" in n and "We use cookies" in n for n in article[0].notes), article[0].notes
    welcome = [p for p in _pages(report, "/qa/welcome") if p.kind == "document"]
    assert welcome[0].notes == [] and welcome[0].score == 1.0  # recorded with its banner: kept


def test_a_timestamp_page_scores_the_same_on_two_runs(frozen):
    root, _ = frozen
    first = QaReport.read(root / "snap" / "qa.json")
    code, out = rig("qa", root / "snap", "--json", stdout=True)
    assert code == 0, out
    second = QaReport.model_validate_json(out)
    assert set(json.loads(out)) >= {"pages", "summary"}
    assert set(json.loads(out)["summary"]) >= {"pages", "mean", "min", "threshold", "below"}
    clock = _pages(first, "/qa/clock")
    assert len(clock) == 2 and all(p.text is not None and p.text < 1 for p in clock)  # live time vs pinned time
    assert [(p.url, p.step, p.score, p.text, p.image) for p in second.pages] == \
           [(p.url, p.step, p.score, p.text, p.image) for p in first.pages]


@pytest.fixture(scope="module")
def broken(frozen):
    """The snapshot without the table's XHR, without the stylesheet, without the fuzzy rule, and with the clock page's
    body held cut: `rig qa` on it."""
    root, _ = frozen
    snap = without(root / "snap", root / "broken", {"/qa/rows.json", "/qa/style.css"}, cut={"/qa/clock"},
                   rules=MatchRules(ignore_origin=False).to_json())
    code, out = rig("qa", snap, "--out", root / "html")
    return snap, code, out


def test_a_broken_snapshot_is_below_the_threshold_on_exactly_the_affected_pages(broken):
    snap, code, out = broken
    assert code == 1, out
    report = QaReport.read(snap / "qa.json")
    below = {(urlsplit(b.url).path, b.step): b.worst for b in report.summary.below}
    affected = {(urlsplit(p.url).path, p.step) for p in report.pages
                if urlsplit(p.url).path in ("/qa/table", "/qa/styled", "/qa/busted", "/qa/clock")}
    assert set(below) == affected and len(affected) == 8, below
    assert {path: worst for (path, _), worst in below.items()} == {
        "/qa/table": "text", "/qa/styled": "image", "/qa/busted": "resources", "/qa/clock": "text"}
    for p in report.pages:
        path = urlsplit(p.url).path
        missed = {urlsplit(f.url).path: f for f in p.failed}
        if path == "/qa/table":
            assert missed["/qa/rows.json"].outcome == "missed" and missed["/qa/rows.json"].kind == "fetch"
            assert p.text is not None and p.text < 0.5 and p.text_diff and "Plot 01" in p.text_diff
        elif path == "/qa/styled":
            assert missed["/qa/style.css"].kind == "stylesheet" and p.text == 1.0 and p.image < 0.5
        elif path == "/qa/clock":  # its body recorded cut: replayed as a 502, never as a complete page
            assert (missed["/qa/clock"].outcome, missed["/qa/clock"].status) == ("incomplete", 502)
            assert p.resources == 0.5 and p.text < 0.5
        elif path == "/qa/busted":
            assert missed["/qa/ping.json"].fuzzy == ["_ts"]  # the rule that would answer it
            assert p.resources == 0.5 and p.text > 0.9
        else:
            assert p.failed == [] and p.score >= report.summary.threshold
    assert "rig freeze --fuzzy _ts" in out


async def test_the_qa_page_shows_the_low_pages_without_console_errors(broken, browser):
    snap, _, _ = broken
    pages = list((snap.parent / "html").glob("*.html"))
    assert len(pages) == 1
    context = await browser.new_context()
    try:
        page = await context.new_page()
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        await page.goto(pages[0].as_uri())
        assert await page.locator("section.low-page").count() == 8
        images = page.locator("section.low-page img")
        assert await images.count() == 16  # recorded and replayed, side by side
        assert all(await page.evaluate("[...document.images].map(i => i.complete && i.naturalWidth > 0)"))
        assert "rows.json" in await page.locator("ul.failed").first.inner_text() or \
            "rows.json" in await page.inner_text("body")
        assert errors == []
    finally:
        await context.close()


def test_a_frozen_run_warns_when_its_snapshot_fell_under_the_threshold(broken):
    from loguru import logger

    from rig.runner.frozen import open_frozen

    snap, _, _ = broken
    said: list[str] = []
    sink = logger.add(lambda m: said.append(str(m)), level="WARNING")
    try:
        open_frozen(snap)
    finally:
        logger.remove(sink)
    assert any("replay QA found 8 of 17 pages below 0.9" in s for s in said), said


def test_qa_refuses_bad_input(tmp_path):
    code, out = rig("qa", tmp_path / "nowhere")
    assert code == 2 and "no such snapshot, runs or episode directory" in out
    (tmp_path / "empty").mkdir()
    code, out = rig("qa", tmp_path / "empty")
    assert code == 2 and "holds no snapshot" in out
    code, out = rig("qa", tmp_path / "empty", "--threshold", "2")
    assert code == 2


# --- the scoring functions ------------------------------------------------------------------------------------


def _jpeg(draw: callable, size: tuple[int, int] = (200, 100)) -> bytes:
    im = Image.new("RGB", size, "white")
    draw(ImageDraw.Draw(im))
    buf = io.BytesIO()
    im.save(buf, "JPEG", quality=60)
    return buf.getvalue()


def test_image_match_tolerates_anti_aliasing_and_counts_what_differs():
    text = _jpeg(lambda d: d.text((10, 10), "Kelp survey 13", fill="black"))
    moved = _jpeg(lambda d: d.text((11, 10), "Kelp survey 13", fill="black"))  # one pixel over
    assert image_match(text, text) == 1.0
    assert image_match(text, moved) > 0.99
    half = _jpeg(lambda d: d.rectangle((0, 0, 99, 99), fill="#1d4e89"))
    assert 0.45 < image_match(half, _jpeg(lambda d: None)) < 0.55
    bigger = _jpeg(lambda d: d.rectangle((0, 0, 199, 199), fill="#1d4e89"), (400, 200))
    assert image_match(half, bigger) > 0.99  # the same picture twice as large: scaled to the recorded size first
    with pytest.raises(ValueError):
        image_match(text, b"not a picture")


def test_text_resources_state_and_their_combination():
    assert text_similarity("a  b\n c", "a b c") == 1.0 and text_similarity("", "") == 1.0
    assert text_similarity("ﬁle 12", "file 12") == 1.0  # NFKC
    assert 0 < text_similarity("kelp survey 13", "kelp survey 14") < 1
    ok = RequestOutcome("GET", "http://x/a", "document", "good", 200)
    css = RequestOutcome("GET", "http://x/s.css", "stylesheet", "missed", 404)
    img = RequestOutcome("GET", "http://x/i.png", "image", "missed", 404)
    assert resources_score([ok]) == 1.0 and resources_score([ok, css]) == 0.5
    assert resources_score([img]) == 0.9 and resources_score([css, css, img]) == 0.225
    assert state_match({"a": 1}, {"a": 1}) == (1.0, {})
    assert state_match({"a": 1}, {"a": 2, "b": 3}) == (0.0, {"a": [1, 2], "b": [None, 3]})
    assert combine({"text": 0.97, "image": None, "resources": 0.5, "state": 1.0}) == (0.5, "resources")
    assert combine({"text": 1.0, "resources": 1.0}) == (1.0, None)


def test_fuzzy_hint_names_only_values_made_up_per_request(tmp_path):
    from rigwarc import build
    from rigwarc.members import WARCIO_LEVEL, RecordEncoder

    warc = tmp_path / "a.warc.gz"
    enc = RecordEncoder()
    with warc.open("wb") as fh:
        for n, url in enumerate(["http://h/api?t=1718000000123&q=kelp", "http://h/list?page=1"]):
            resp = build.response(url, 200, "OK", [("Content-Type", "application/json")], b"{}",
                                  record_id=f"<urn:uuid:00000000-0000-0000-0000-00000000000{n}>",
                                  date="2024-06-10T06:13:20Z")
            fh.write(enc.member(resp, WARCIO_LEVEL))
    index = load_index(warc)
    assert fuzzy_hint(index, "GET", "http://h/api?t=1718000009999&q=kelp") == ["t"]
    assert fuzzy_hint(index, "GET", "http://h/api?t=1718000009999&q=sedge") == []  # a filter differs too
    assert fuzzy_hint(index, "GET", "http://h/list?page=2") == []  # a page number is no cache-buster
    assert gzip.decompress(warc.read_bytes())  # a real WARC file


async def test_a_tool_call_step_is_not_re_driven_nor_scored(site, browser, tmp_path):
    from recorders import Recorder, RecorderOptions
    from rig.episode_dir import EpisodeDir
    from rig.qa.episodes import EpisodeUnderQa, score_episode

    context = await browser.new_context()
    rec = await Recorder.attach(context, tmp_path / "ep", options=RecorderOptions(screenshots="off", fsync=False))
    page = await context.new_page()
    async with rec.action({"type": "goto", "value": f"{site.url}/qa/welcome"}, page=page):
        await page.goto(f"{site.url}/qa/welcome")
    async with rec.action({"type": "answer"}, page=page):  # where an answer was read: scored as the page it is
        pass
    tab = await context.new_page()  # what the tools' web_fetch does: a page of its own, recorded as the tool's step
    async with rec.action({"type": "web_fetch", "value": f"{site.url}/qa/article"}, page=tab):
        await tab.goto(f"{site.url}/qa/article")
    await rec.close()
    await context.close()
    done = await score_episode(browser, EpisodeUnderQa(EpisodeDir(tmp_path / "ep")), threshold=0.9)
    fetch = [s.step for s, _ in done.recorded if s.action.type == "web_fetch"]
    assert len(fetch) == 1 and fetch[0] not in [p.page.step for p in done.pages]
    assert [(p.page.step, p.page.url, p.page.score) for p in done.pages] == [
        (0, f"{site.url}/qa/welcome", 1.0), (1, f"{site.url}/qa/welcome", 1.0)]
    assert len(done.notes) == 1 and "1 steps are no page action (tool calls)" in done.notes[0]
