"""The operator agent on the (offline) real web: a product's answer cites portal pages, a page that moved to another
host, a page that is gone and a host that refuses connections; `rig run --agent operator --live` captures every
cited page into the episode's WARC (read back here with warcio) and records each uncapturable one with its reason."""

from __future__ import annotations

import gzip
import socket
import subprocess
import sys
from pathlib import Path

import yaml
from warcio.archiveiterator import ArchiveIterator

from rig.episode_dir import EpisodeDir

RIG = Path(sys.executable).parent / "rig"


def rig(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(RIG), *args], check=False, capture_output=True, text=True, timeout=300)


def closed_port() -> int:
    """A loopback port nobody listens on (bound, then released; connections to it are refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def task_file(tmp_path: Path, rows: list[list[str]]) -> Path:
    path = tmp_path / "product-datasets.yaml"
    path.write_text(yaml.safe_dump({
        "id": "product-datasets", "family": "environment", "start_url": "https://portal.example.org/search",
        "start_hidden": True, "origins": ["portal.example.org"],
        "prompts": {"constraint": "List the survey datasets from 2020 on (ID, Title, Year), citing each record page.",
                    "goal": "Which survey datasets date from 2020 or later?"},
        "output": {"columns": ["ID", "Title", "Year"], "key": ["ID"], "order": "by ID"},
        "gold": {"rows": rows}}, sort_keys=False), encoding="utf-8")
    return path


def warc_records(ed: EpisodeDir) -> list[tuple[str, str, int | None, str, bytes]]:
    """(WARC type, target URI, HTTP status, content type, payload) of every record of the episode's archive."""
    out = []
    with gzip.open(ed.warc_file, "rb") as raw, open(ed.warc_file, "rb") as stream:
        assert raw.read(4) == b"WARC"
        for rec in ArchiveIterator(stream):
            status = int(rec.http_headers.get_statuscode()) if rec.http_headers and rec.rec_type == "response" else None
            out.append((rec.rec_type, rec.rec_headers.get_header("WARC-Target-URI"), status,
                        rec.rec_headers.get_header("Content-Type") or "", rec.content_stream().read()))
    return out


def test_operator_captures_cited_pages_live_and_records_the_dead_ones(liveweb, tmp_path):
    rows = [[r[0], r[1], r[4]] for r in liveweb.data.matching(kind="dataset", year_from=2020)]
    moved, gone_doc, refused = (liveweb.archive.url("/moved/13"), liveweb.archive.url("/doc/99"),
                                "https://gone.example.net/report")
    answer = tmp_path / "answer.md"
    answer.write_text(liveweb.product_answer(extra_citations=[moved, gone_doc, refused]), encoding="utf-8")
    runs = tmp_path / "runs"
    res = rig("run", "--task", str(task_file(tmp_path, rows)), "--agent", "operator", "--answer-file", str(answer),
              "--variant", "goal", "--out", str(runs), "--live", *liveweb.resolve_args(),
              "--resolve", f"gone.example.net=127.0.0.1:{closed_port()}", "--ignore-https-errors")
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-3000:]
    [ed] = [EpisodeDir(p.parent) for p in runs.glob("*/*/*/trial-0/episode.json")]
    ep = ed.read_episode()
    assert (ep.status, ep.start_url, ep.live) == ("ok", "about:blank", True)
    got = ed.read_answer()
    assert got.rows == [[f"{r[0]}", r[1], r[2]] for r in rows]
    by_url = {c.url: c for c in got.citations}
    records = [liveweb.portal.url(f"/record/{r[0]}") for r in rows]
    assert set(by_url) == {*records, liveweb.archive.url("/doc/1"), moved, gone_doc, refused}
    for url in [*records, liveweb.archive.url("/doc/1")]:
        c = by_url[url]
        assert (c.captured, c.capture_reason, c.capture_status, c.final_url, c.redirects) == (True, None, 200, url, [])
    m = by_url[moved]
    assert (m.captured, m.capture_status, m.final_url, m.redirects) == \
        (True, 200, liveweb.portal.url("/record/13"), [moved]), "a redirect to another host is followed and kept"
    g = by_url[gone_doc]
    assert (g.captured, g.capture_status, g.capture_reason) == (False, 404, "HTTP 404 Not Found")
    r = by_url[refused]
    assert r.captured is False and r.capture_status is None and "refused the connection" in r.capture_reason

    recs = warc_records(ed)
    responses = {(uri, status) for kind, uri, status, _, _ in recs if kind == "response"}
    texts = {uri: body.decode() for kind, uri, _, ctype, body in recs if kind == "conversion" and "text/plain" in ctype}
    for row, url in zip(rows, records):
        assert (url, 200) in responses
        assert row[1] in texts[url], f"the visible text of {url} is archived"
    assert (moved, 301) in responses and (liveweb.portal.url("/record/13"), 200) in responses
    assert "We use cookies." in texts[liveweb.archive.url("/doc/1")], "a cookie banner is recorded like anything else"
    assert (gone_doc, 404) in responses
    assert not any("gone.example.net" in (uri or "") for kind, uri, *_ in recs if kind == "response")
    assert ed.prompt_file.exists() and "portal.example.org" not in ed.prompt_file.read_text()


def test_operator_records_a_tls_error_without_ignore_https_errors(liveweb, tmp_path):
    rows = [[r[0], r[1], r[4]] for r in liveweb.data.matching(kind="dataset", year_from=2020)]
    answer = tmp_path / "answer.md"
    answer.write_text(liveweb.product_answer(), encoding="utf-8")
    runs = tmp_path / "runs"
    res = rig("run", "--task", str(task_file(tmp_path, rows)), "--agent", "operator", "--answer-file", str(answer),
              "--variant", "goal", "--out", str(runs), "--live", *liveweb.resolve_args())
    assert res.returncode == 0, res.stderr[-3000:]
    [ed] = [EpisodeDir(p.parent) for p in runs.glob("*/*/*/trial-0/episode.json")]
    cites = ed.read_answer().citations
    assert cites and all(c.captured is False and c.capture_reason.startswith("TLS: ERR_CERT") for c in cites), \
        [c.capture_reason for c in cites]


def test_operator_captures_follow_no_redirect_out_of_the_allow_list(liveweb, tmp_path):
    """A cited page that redirects to a host the run does not allow: the capture is refused at the hop (0 requests
    arrive there), the citation says why, and episode.json keeps the blocked hop with its chain."""
    rows = [[r[0], r[1], r[4]] for r in liveweb.data.matching(kind="dataset", year_from=2020)]
    doc = liveweb.archive.url("/doc/2")
    escaping = liveweb.redirect_url("go", doc)
    answer = tmp_path / "answer.md"
    text = liveweb.product_answer().replace(f"- {liveweb.archive.url('/doc/1')}", f"- {escaping}")
    answer.write_text(text, encoding="utf-8")
    runs = tmp_path / "runs"
    res = rig("run", "--task", str(task_file(tmp_path, rows)), "--agent", "operator", "--answer-file", str(answer),
              "--variant", "goal", "--out", str(runs), "--live", *liveweb.resolve_args(), "--ignore-https-errors",
              "--allow-host", liveweb.REDIRECT)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-3000:]
    assert liveweb.archive.hits == 0, "an operator capture followed a redirect out of the allow-list"
    [ed] = [EpisodeDir(p.parent) for p in runs.glob("*/*/*/trial-0/episode.json")]
    ep = ed.read_episode()
    assert ep.status == "ok", ep.error
    by_url = {c.url: c for c in ed.read_answer().citations}
    c = by_url[escaping]
    assert c.captured is False and c.capture_reason.startswith("not on the run's allow-list"), c.capture_reason
    assert all(by_url[liveweb.portal.url(f"/record/{r[0]}")].captured for r in rows), "the allowed pages are captured"
    assert len(ep.blocked) == 1, [b.model_dump() for b in ep.blocked]  # two when Chromium reloaded the error page
    [blocked] = ep.blocked
    assert (blocked.url, blocked.chain, blocked.by) == (doc, [escaping, doc], "proxy")
    assert ep.blocked_urls == [doc] and ep.blocked_requests == 1
