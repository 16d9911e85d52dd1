"""The recorder's evidence: the WARC (warcio check/index), redaction of secrets everywhere, SIGKILL safety, units."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import io
import json
import os
import signal
import subprocess
import sys
import time
import zlib
from pathlib import Path
from typing import Any

from conftest import PAGES
from loguru import logger
from waiting import wait_until
from warcio.archiveiterator import ArchiveIterator

from recorders import (
    MISSING_HEADER,
    STEP_HEADER,
    Recorder,
    RecorderOptions,
    read_trajectory,
)
from recorders.adapter import Dimension, SiteAdapter
from recorders.inference import infer_action
from recorders.redact import Redactor
from recorders.state import build_state, form_state, url_state
from recorders.warc import Capture, Exchange, WarcArchive
from rig.agents.scripted import ScriptRunner
from rig.formats.actions import parse_actions

ROOT = Path(__file__).parents[1]
WARCIO = Path(sys.executable).with_name("warcio")


def records(path: Path) -> list[Any]:
    """Every record of a WARC as (type, headers, http headers, payload bytes)."""
    out = []
    with path.open("rb") as f:
        for r in ArchiveIterator(f):
            out.append((r.rec_type, r.rec_headers, r.http_headers, r.content_stream().read()))
    return out


def warcio_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(WARCIO), *args], capture_output=True, text=True, timeout=60)


async def test_warc_has_exchanges_and_per_step_text(browser, context, page, pages_url, tmp_path):
    rec = await Recorder.attach(context, tmp_path / "ep")
    async with rec.action({"type": "goto", "target": "/index.html", "value": None}):
        await page.goto(f"{pages_url}/index.html")
    async with rec.action({"type": "fill", "target": "#sq", "value": "in shadow"}):
        await page.fill("#sq", "in shadow")
    async with rec.action({"type": "click", "target": "#post", "value": None}):
        await page.click("#post")
    async with rec.action({"type": "goto", "target": "/redirect", "value": None}):
        await page.goto(f"{pages_url}/redirect")
    await rec.close()
    steps = read_trajectory(tmp_path / "ep" / "trajectory.jsonl")
    warc = tmp_path / "ep" / "evidence.warc.gz"
    recs = records(warc)
    assert recs[0][0] == "warcinfo" and {r[1].get_header("WARC-Record-ID") for r in recs}.__len__() == len(recs)
    by_id = {r[1].get_header("WARC-Record-ID"): r for r in recs}

    responses = {r[1].get_header("WARC-Target-URI"): r for r in recs if r[0] == "response"}
    requests = [r for r in recs if r[0] == "request"]
    assert {
        f"{pages_url}/index.html",
        f"{pages_url}/frame.html",
        f"{pages_url}/api/echo",
        f"{pages_url}/redirect",
    } <= set(responses)
    for req in requests:  # every request names its response, which has the same URI
        resp = by_id[req[1].get_header("WARC-Concurrent-To")]
        assert resp[0] == "response" and resp[1].get_header("WARC-Target-URI") == req[1].get_header("WARC-Target-URI")
    post = next(r for r in requests if r[2].protocol == "POST")
    assert json.loads(post[3]) == {"query": "boiga", "year": 1890}
    assert json.loads(responses[f"{pages_url}/api/echo"][3])["count"] == 42
    assert responses[f"{pages_url}/redirect"][2].get_statuscode() == "302"
    # every body was read, the POST's too though the next action navigated away (tests/test_recorder_bodies.py)
    assert rec.missing_bodies == 0 and not any(r[1].get_header(MISSING_HEADER) for r in responses.values())

    texts, doms = {}, {}
    for step in steps:
        text = by_id[step.snapshot.warc_record_id]
        assert text[0] == "conversion" and text[1].get_header(STEP_HEADER) == str(step.step)
        assert text[1].get_header("WARC-Target-URI") == step.url and text[1].get_header("Content-Type").startswith(
            "text/plain"
        )
        assert text[1].get_header("WARC-Refers-To") in by_id
        texts[step.step] = text[3].decode()
        dom = by_id[step.snapshot.dom_record_id]
        assert dom[1].get_header("WARC-Concurrent-To") == step.snapshot.warc_record_id
        assert dom[1].get_header("Content-Type").startswith("text/html")
        doms[step.step] = dom[3].decode()
    for needle in ("Shadow text inside", "Slotted light text", "Iframe text here", "Table panel text"):
        assert needle in texts[0], needle
    assert "Chart panel text" not in texts[0] and "Hidden notes text" not in texts[0]  # hidden text is not visible
    assert "Results: 0 rows" in texts[1] and "Results: 42 rows" in texts[2]
    assert steps[3].url == f"{pages_url}/page2.html" and "Welcome to page two." in texts[3]
    # the live DOM: open shadow root as a declarative template with the typed value, the iframe inlined
    shadow = '<template shadowrootmode="open"><label for="sq">Shadow search</label>'
    assert shadow + '<input id="sq" name="shadow_q" type="text" value="in shadow">' in doms[1]
    assert 'value="in shadow"' not in doms[0] and "srcdoc=" in doms[0] and "Iframe text here" in doms[0]
    static = await browser.new_context(java_script_enabled=False)  # the snapshot re-renders the recorded state
    try:
        view = await static.new_page()
        await view.set_content(doms[1])
        assert await view.input_value("#sq") == "in shadow" and await view.input_value("#year") == ""
        assert await view.frame_locator("#frame").locator("#unit").input_value() == "km"
    finally:
        await static.close()

    check = warcio_cli("check", "-v", str(warc))
    assert check.returncode == 0, check.stdout + check.stderr
    index = warcio_cli("index", "-f", "warc-type,warc-target-uri,offset", str(warc))
    assert index.returncode == 0 and index.stderr == ""
    lines = [json.loads(x) for x in index.stdout.splitlines()]
    assert len(lines) == len(recs) and lines[0]["warc-type"] == "warcinfo"


SECRETS = ["SECRETCOOKIE123", "SECRETAUTH456", "SECRETTOKEN789", "SECRETPASS000", "SECRETPIN321", "SECRETPLANTED654"]


#: An adapter whose dimension reads secret parameters: what it gives must be redacted like its sources.
LEAKY_ADAPTER = SiteAdapter(
    site="login",
    path_prefix="/",
    dimensions={"access": Dimension(tag="scope", keys=["url.query.token", "url.query.pin"])},
)


async def test_secrets_never_reach_any_artifact(context, page, pages_url, tmp_path):
    await context.add_cookies([{"name": "planted", "value": "SECRETPLANTED654", "url": pages_url}])
    await context.set_extra_http_headers({"Authorization": "Bearer SECRETAUTH456"})
    log = io.StringIO()
    logger.enable("recorders")
    sink = logger.add(log, level="DEBUG")
    try:
        rec = await Recorder.attach(
            context,
            tmp_path / "ep",
            options=RecorderOptions(screenshots="every", observe_idle_ms=100, body_timeout_ms=300),
            adapters=[LEAKY_ADAPTER],
        )
        await page.goto(f"{pages_url}/set-cookie")  # unreported; Set-Cookie, then a redirect to the login page
        url = f"{pages_url}/login.html?token=SECRETTOKEN789"
        async with rec.action({"type": "goto", "target": url, "value": None}):
            await page.goto(url)
        async with rec.action({"type": "fill", "target": "#pw", "value": "SECRETPASS000"}):
            await page.fill("#pw", "SECRETPASS000")
        await page.fill("#user", "bob")  # unreported typing
        await asyncio.sleep(0.3)
        async with rec.action({"type": "click", "target": "#auth-fetch", "value": None}):
            await page.click("#auth-fetch")  # Authorization + cookies + ?api_key=<token> + password in a POST body
        # the page reads that fetch's status, never its body: it is given up on after body_timeout_ms (before the
        # page navigates away, which would end it otherwise)
        await wait_until(lambda: rec.missing_bodies >= 1, message="the unread fetch body was never given up on")
        await page.locator("#pw2").press_sequentially("SECRETPIN321")  # unreported typing into a password field
        async with rec.action({"type": "press", "target": "#pw2", "value": "Enter"}):
            await page.press("#pw2", "Enter")  # a GET form: ?pin=<secret> in the URL
        async with rec.action({"type": "goto", "target": f"{pages_url}/login.html", "value": None}):
            await page.goto(f"{pages_url}/login.html")
        async with rec.action({"type": "fill", "target": "#pw", "value": "SECRETPASS000"}):
            await page.fill("#pw", "SECRETPASS000")
        async with rec.action({"type": "click", "target": "text=Sign in", "value": None}):
            await page.click('role=button[name="Sign in"]')  # a POST form with the password field
        await rec.close()
    finally:
        logger.remove(sink)
        logger.disable("recorders")

    ep = tmp_path / "ep"
    artifacts = {p.name: p.read_bytes() for p in ep.rglob("*") if p.is_file()}
    artifacts["evidence.warc (decompressed)"] = gzip.decompress(artifacts["evidence.warc.gz"])
    artifacts["log"] = log.getvalue().encode()
    assert len(artifacts) >= 10 and "step 2" in log.getvalue()
    for name, data in artifacts.items():
        for secret in SECRETS:
            assert secret.encode() not in data, f"{secret} found in {name}"

    steps = read_trajectory(ep / "trajectory.jsonl")
    assert (
        steps[1].action.target.endswith("/login.html?token=%5Bredacted%5D")
        and steps[1].state["url.query.token"] == "[redacted]"
        and steps[1].state["dim.access"] == "[redacted]"  # a dimension read from a secret is the redacted value
    )
    assert steps[2].action.value == "[redacted]" and steps[2].state["form.pw"] == "[redacted]"
    assert any(s.state.get("url.query.pin") == "[redacted]" for s in steps)
    warc = artifacts["evidence.warc (decompressed)"].decode("utf-8", "replace")
    assert "Authorization" not in warc and "Cookie:" not in warc and "Set-Cookie" not in warc
    assert "user=&pw=%5Bredacted%5D" in warc and "password=%5Bredacted%5D&q=ok" in warc
    # the page never read that fetch's body: archived as missing, saying so, without a stall
    assert "WARC-Truncated: time" in warc and f"{MISSING_HEADER}: body not readable: not finished: nothing arrived for 0.3 s" in warc
    assert rec.missing_bodies >= 1


def test_sigkill_leaves_complete_steps_and_records(pages_url, tmp_path):
    out = tmp_path / "ep"
    child = subprocess.Popen(
        [sys.executable, str(PAGES / "kill_child.py"), pages_url, str(out)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 40
        while time.monotonic() < deadline:
            line = child.stdout.readline()
            if not line or int(line) >= 8:
                break
        time.sleep(0.05)  # land somewhere inside the next step
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=10)
    finally:
        with_group = child.pid  # the browser and Playwright driver it started share its session
        with contextlib.suppress(ProcessLookupError):
            os.killpg(with_group, signal.SIGKILL)
    assert child.returncode == -signal.SIGKILL

    lines = (out / "trajectory.jsonl").read_text().split("\n")
    complete = [json.loads(x) for x in lines[:-1]]  # every newline-terminated line parses
    steps = read_trajectory(out / "trajectory.jsonl")
    assert len(steps) >= 8 and len(steps) == len(complete)

    ids = []
    with (out / "evidence.warc.gz").open("rb") as f:
        try:
            for r in ArchiveIterator(f):
                r.content_stream().read()
                ids.append(r.rec_headers.get_header("WARC-Record-ID"))
        except (EOFError, zlib.error, OSError):
            pass  # a torn last gzip member
    assert len(ids) > 2 * len(steps)
    written = set(ids)
    assert all(s.snapshot.warc_record_id in written for s in steps[:-2])
    # a step's JPEG is written once the next action began: only the last ones may be missing
    assert all(s.screenshot and (out / s.screenshot).read_bytes()[:2] == b"\xff\xd8" for s in steps[:-2])


def test_warc_writer_is_deterministic_with_injected_clock_and_ids(tmp_path):
    async def write(path: Path) -> bytes:
        n = iter(range(1000))
        archive = WarcArchive(
            path, clock=lambda: 1_700_000_000.5, ids=lambda: f"<urn:uuid:{next(n):08d}>", software="test"
        )
        ex = Exchange(url="http://h/a?b=1", method="POST", request_headers=[("Host", "h")], request_body=b"x=1",
                      request_date=1.0, request_id=archive.new_id(), response_id=archive.new_id(), status=200,
                      reason="OK", response_headers=[("Content-Type", "text/html")], response_body=b"<p>hi</p>",
                      response_date=2.0)  # fmt: skip
        archive.put(ex)
        archive.put(Capture(archive.new_id(), "text", "http://h/a?b=1", 0, 3.0, "text/plain; charset=utf-8", b"hi"))
        await archive.close()
        return path.read_bytes()

    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    a = asyncio.run(write(tmp_path / "a" / "evidence.warc.gz"))
    b = asyncio.run(write(tmp_path / "b" / "evidence.warc.gz"))
    assert a == b and warcio_cli("check", str(tmp_path / "a" / "evidence.warc.gz")).returncode == 0
    kinds = [r[0] for r in records(tmp_path / "a" / "evidence.warc.gz")]
    assert kinds == ["warcinfo", "response", "request", "conversion"]


def test_redactor_units():
    r = Redactor(["token", "password"], ["cookie", "authorization"])
    assert (
        r.url("http://h/p?q=1&Token=abc#token=x&v=2") == "http://h/p?q=1&Token=%5Bredacted%5D#token=%5Bredacted%5D&v=2"
    )
    assert r.headers([("Cookie", "a=b"), ("Authorization", "x"), ("Referer", "http://h/?token=t")]) == [
        ("Referer", "http://h/?token=%5Bredacted%5D")
    ]
    assert r.body(b'{"password": "p", "n": 1}', "application/json") == b'{"password": "[redacted]", "n": 1}'
    assert r.body(b'{"n":  1}', "application/json") == b'{"n":  1}'  # untouched bodies stay byte-exact
    r.learn_param("pin")
    r.learn_secret("hunt", "f")
    r.learn_secret("hunter22", "f")  # typing: the prefix is replaced
    r.commit()
    assert r.body(b"pin=1234&q=hunter22", "application/x-www-form-urlencoded") == b"pin=%5Bredacted%5D&q=[redacted]"
    assert r.state({"form.pin": "1234", "form.q": "", "url.query.token": "t"}) == {
        "form.pin": "[redacted]", "form.q": "", "url.query.token": "[redacted]"
    }  # fmt: skip
    # a page fact holding a query string (an adapter's `parse: query`), and the keys parsed from it
    assert r.state({"page.scope": "q=a&token=t", "page.scope.token": "t", "page.scope.q": "a", "page.count": "3"}) == {
        "page.scope": "q=a&token=%5Bredacted%5D", "page.scope.token": "[redacted]", "page.scope.q": "a",
        "page.count": "3",
    }  # fmt: skip


def test_state_units():
    assert url_state("http://h/s?b=2&a=1&b=1#view=t&p=2") == {
        "url.path": "/s", "url.query.b": ["1", "2"], "url.query.a": "1", "url.fragment.view": "t", "url.fragment.p": "2"
    }  # fmt: skip
    assert url_state("http://h/#top") == {"url.path": "/", "url.fragment": "top"}
    controls = [
        {"k": "region", "t": "checkbox", "v": "Europe", "on": True},
        {"k": "region", "t": "checkbox", "v": "Asia", "on": True},
        {"k": "q", "t": "text", "v": "a"},
        {"k": "q", "t": "search", "v": "b"},
        {"k": "", "t": "text", "v": "ignored"},
        {"k": "cols", "t": "select-multiple", "v": ["b", "a"]},
    ]
    assert form_state(controls) == {
        "form.q": "a",
        "form.q#2": "b",
        "form.cols": ["a", "b"],
        "form.region": ["Asia", "Europe"],
    }


def test_dimensions_are_read_from_the_redacted_state():
    raw = {"controls": [{"k": "api_key", "t": "text", "v": "SECRETKEY123"}, {"k": "q", "t": "text", "v": "ok"}]}
    adapter = SiteAdapter(
        site="s",
        path_prefix="/",
        dimensions={
            "access": Dimension(tag="scope", keys=["form.api_key"]),
            "scope": Dimension(tag="scope", keys=["form.q", "form.api_key"], join="|"),
        },
    )
    cur = build_state(raw, "http://h/s", adapter, Redactor(["api_key"], []).state)
    assert cur["form.api_key"] == cur["dim.access"] == "[redacted]" and cur["dim.scope"] == "ok|[redacted]"


def test_inference_units():
    r = Redactor([], [])
    burst = [
        {"type": "click", "target": "#cb", "tag": "input", "kind": "checkbox"},
        {"type": "input", "target": "#cb", "kind": "checkbox", "checked": True},
        {"type": "change", "target": "#cb", "kind": "checkbox", "checked": True},
    ]
    assert infer_action(burst, first=False, redactor=r).type == "check"
    typing = [{"type": "input", "target": "#q", "value": v, "kind": "text"} for v in ("a", "ab")]
    typing += [
        {"type": "keydown", "target": "#q", "value": "Enter"},
        {"type": "submit", "target": "#f"},
        {"type": "navigate"},
    ]
    a = infer_action(typing, first=False, redactor=r)
    assert (a.type, a.value, a.source) == ("press", "Enter", "observed")
    assert infer_action([{"type": "navigate", "value": "http://h/"}], first=True, redactor=r).type == "load"
    assert (
        infer_action(
            [{"type": "pushState", "value": "http://h/?p=2"}, {"type": "navigate"}], first=False, redactor=r
        ).type
        == "pushState"
    )


def test_trajectory_is_fsynced_behind_each_step_and_fully_on_close(tmp_path, monkeypatch):
    from recorders.models import Action, StateDiff, Step
    from recorders.trajectory import TrajectoryWriter

    synced: list[int] = []  # the file's size at each fsync
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(os.fstat(fd).st_size), real_fsync(fd))[1])
    path = tmp_path / "trajectory.jsonl"
    writer = TrajectoryWriter(path)
    for n in range(5):
        step = Step(step=n, t=n, url="http://127.0.0.1/", action=Action(type="goto", source="agent"), state={},
                    state_diff=StateDiff(), dom_hash="d", text_hash="t")
        writer.write(step)
        assert read_trajectory(path)[-1].step == n  # written before write() returns, whatever the fsync thread does
    writer.close()
    writer.close()
    assert synced and synced[-1] == path.stat().st_size, "close() fsyncs everything written"
    assert [s.step for s in read_trajectory(path)] == [0, 1, 2, 3, 4]


def test_secret_names_by_their_word_parts():
    from recorders.redact import base_name, secret_name

    secret = ["X-Api-Key", "accessToken", "auth_key", "X-Amz-Signature", "sig", "AWSAccessKeyId", "client_secret",
              "sessionid", "new-password", "csrfmiddlewaretoken", "X-Goog-Credential", "authToken", "tokenizer",
              "X-API-Key2", "X-Api-Key-2", "api_key_v2", "AUTH_TOKEN3", "apiKey2", "pass1", "sig2", "s3key", "pass_word"]
    plain = ["monkey", "keyword", "author", "authority", "signal", "signup", "passenger", "page", "q", "sort",
             "page2", "keyword2", "oauth2", "v2", "year2013", "h264", "utf8", "sigma2", "compass_west", "author_id"]
    assert [n for n in secret if not secret_name(n)] == [] and [n for n in plain if secret_name(n)] == []
    strong = ["api_key", "API-Key2", "apiKey", "x_api_key_v2", "pass_word", "auth_code", "access_key", "AUTH_TOKEN3"]
    assert [n for n in strong if not secret_name(n, strong=True)] == []
    assert [n for n in ["key", "sig", "pass", "key2", "keyword"] if secret_name(n, strong=True)] == []
    assert {base_name(n) for n in ["api_key", "API-Key", "apiKey", "api_key2", "X-Api-Key-v2"]} == {"api key"}
    assert [base_name(n) for n in ["Cookie2", "Set-Cookie2", "X-Authorization", "X-Cookie-Consent", "v2"]] == [
        "cookie", "set cookie", "authorization", "cookie consent", ""]
    r = Redactor([], ["authorization"])
    assert r.url("https://bob:Hunter2Secret@h/p?X-Amz-Signature=abc123def456&keyword=shoes") == (
        "https://bob:%5Bredacted%5D@h/p?X-Amz-Signature=%5Bredacted%5D&keyword=shoes")
    assert r.headers([("X-Api-Key", "K3y-0123456"), ("Authorization", "Bearer Auth0123456"),
                      ("Access-Control-Allow-Credentials", "true")]) == [
        ("X-Api-Key", "[redacted]"), ("Access-Control-Allow-Credentials", "true")]
    body = b'{"access_token": "Oauth0123456", "token_type": "Bearer", "expires_in": 3600, "columns": [{"key": "year"}]}'
    assert json.loads(r.response_body(body, "application/json")) == {
        "access_token": "[redacted]", "token_type": "[redacted]", "expires_in": 3600, "columns": [{"key": "year"}]}
    # learned once redacted by name: scrubbed from any later text; short or word-like values are not learned
    assert r.prose("saw Hunter2Secret, abc123def456, K3y-0123456, Auth0123456, Oauth0123456 and Bearer") == (
        "saw [redacted], [redacted], [redacted], [redacted], [redacted] and Bearer")


async def test_a_cookie_a_response_sets_is_scrubbed_from_its_own_body(context, page, pages_server, tmp_path):
    """The response's headers are redacted before its body: the session cookie it sets is learned first, so the
    body printing that cookie is archived scrubbed."""
    secret = "SECRETCOOKIE8431"
    pages_server.set_route("/session.html", lambda ex: ex.send(
        200, f"<p>your session is {secret}</p>", headers={"Set-Cookie": f"sessionid={secret}; Path=/"}))
    rec = await Recorder.attach(context, tmp_path / "ep")
    async with rec.action({"type": "goto", "target": "/session.html", "value": None}):
        await page.goto(f"{pages_server.url}/session.html")
    await rec.close()
    warc = gzip.decompress((tmp_path / "ep" / "evidence.warc.gz").read_bytes())
    assert b"your session is [redacted]" in warc, "the body was not archived scrubbed"
    assert secret.encode() not in warc


#: Secrets under names that carry a number, a version or a prefix (`X-API-Key2`, `api_key_v2`, `AUTH_TOKEN3`, ...),
#: each in one place only, so each must be redacted there by its name: a value is scrubbed elsewhere only once learned.
NUMBERED = {
    "SECRETNUMTYPED1": "typed into <input name=api_key2>: the form's GET query, the DOM snapshot",
    "SECRETNUMHIDDEN2": "hidden <input name=AUTH_TOKEN3>: the query, the DOM snapshot",
    "SECRETNUMQUERY3": "query parameter api_key_v2 of a fetch",
    "SECRETNUMHDR4": "request header X-API-Key2",
    "SECRETNUMHDR5": "request header X-Api-Key-2",
    "SECRETNUMHDR6": "request header X-Authorization",
    "SECRETNUMJSON7": "JSON request field apiKey2",
    "SECRETNUMJSON8": "JSON request field auth_token_v2",
    "SECRETNUMFORM9": "form body field Api-Key-2",
    "SECRETNUMRESP10": "JSON response field api_key",
    "SECRETNUMRESP11": "JSON response field API-Key2",
    "SECRETNUMCOOKIE12": "response header Set-Cookie2",
    "SECRETNUMRESPHDR13": "response header X-Auth-Token-2",
}
_NUMBERED_PAGE = (
    "<!doctype html><title>Numbered</title><form action=numbered-done.html method=get>"
    "<input id=k name=api_key2><input id=t name=AUTH_TOKEN3 type=hidden>"
    "<input name=keyword2 type=hidden value=shoes><input name=page2 type=hidden value=7>"
    "<button id=go type=submit>Go</button></form><button id=send type=button>Send</button><p id=done></p>"
    "<script>const s = (n) => 'SECRET' + 'NUM' + n;"  # no secret literally in the page
    "document.getElementById('t').value = s('HIDDEN2');"
    "document.getElementById('send').onclick = async () => {"
    "  const r = await fetch('api/numbered?api_key_v2=' + s('QUERY3') + '&page2=3', {method: 'POST', headers: {"
    "    'Content-Type': 'application/json', 'X-API-Key2': s('HDR4'), 'X-Api-Key-2': s('HDR5'),"
    "    'X-Authorization': 'Bearer ' + s('HDR6')},"
    "    body: JSON.stringify({apiKey2: s('JSON7'), auth_token_v2: s('JSON8'), keyword2: 'shoes'})});"
    "  const got = await r.json();"
    "  await fetch('api/numbered-form', {method: 'POST', headers: {'Content-Type': 'application/x-www-form-urlencoded'},"
    "    body: 'Api-Key-2=' + s('FORM9') + '&page2=4'});"
    "  document.getElementById('done').textContent = 'done ' + got.rows; };</script>")


async def test_secret_names_with_numbers_versions_and_prefixes_are_redacted_everywhere(context, page, pages_server,
                                                                                       tmp_path):
    """`X-API-Key2` was archived as sent while `X-API-Key` was redacted: a secret word followed by digits (or a
    version, or behind a prefix) is redacted alike in headers, query parameters, form fields and JSON bodies, sent
    and received, and in the DOM snapshots; `keyword2`, `page2` and a data API's `{"key": "year"}` are kept."""
    srv = pages_server
    srv.set_route("/numbered.html", lambda ex: ex.send(200, _NUMBERED_PAGE, headers={
        "Set-Cookie2": "sid=SECRETNUMCOOKIE12", "X-Auth-Token-2": "SECRETNUMRESPHDR13"}))
    srv.set_route("/api/numbered", lambda ex: ex.send_json(
        {"api_key": "SECRETNUMRESP10", "API-Key2": "SECRETNUMRESP11", "key": "year", "rows": 2}))
    srv.set_route("/api/numbered-form", lambda ex: ex.send_json({"ok": True}))
    srv.set_route("/numbered-done.html", lambda ex: ex.send(200, "<!doctype html><title>Done</title><p id=finished>Done</p>"))
    rec = await Recorder.attach(context, tmp_path / "ep")
    await ScriptRunner(page, srv.url, hook=rec).run(parse_actions([
        {"goto": "/numbered.html"}, {"fill": {"selector": "#k", "value": "SECRETNUMTYPED1"}}, {"click": "#send"},
        {"wait_for": "#done:not(:empty)"}, {"click": "#go"}, {"wait_for": "#finished"}]))
    await rec.close()

    sent = json.dumps([[r.target, dict(r.headers), r.body.decode("utf-8", "replace")] for r in srv.requests])
    for secret in [s for s in NUMBERED if "RESP" not in s and "COOKIE" not in s]:
        assert secret in sent, f"{secret} ({NUMBERED[secret]}) was not planted"
    ep = tmp_path / "ep"
    archived = b"".join(bytes(str(h), "utf-8") + bytes(str(http or ""), "utf-8") + payload
                        for _, h, http, payload in records(ep / "evidence.warc.gz"))
    files = {p.name: p.read_bytes() for p in ep.rglob("*") if p.is_file() and p.suffix != ".gz"}
    for name, data in {"evidence.warc.gz (read by warcio)": archived, **files}.items():
        for secret, where in NUMBERED.items():
            assert secret.encode() not in data, f"{secret} ({where}) found in {name}"

    recs = records(ep / "evidence.warc.gz")
    post = next(r for r in recs if r[0] == "request" and r[1].get_header("WARC-Target-URI").startswith(
        f"{srv.url}/api/numbered?"))
    assert (post[2].get_header("X-API-Key2"), post[2].get_header("X-Api-Key-2")) == ("[redacted]", "[redacted]")
    assert post[2].get_header("X-Authorization") is None  # dropped, as Authorization is
    assert json.loads(post[3]) == {"apiKey2": "[redacted]", "auth_token_v2": "[redacted]", "keyword2": "shoes"}
    assert post[1].get_header("WARC-Target-URI").endswith("?api_key_v2=%5Bredacted%5D&page2=3")
    answer = next(r for r in recs if r[0] == "response" and r[1].get_header("WARC-Target-URI") == post[1].get_header(
        "WARC-Target-URI"))
    assert json.loads(answer[3]) == {"api_key": "[redacted]", "API-Key2": "[redacted]", "key": "year", "rows": 2}
    form = next(r for r in recs if r[0] == "request" and r[1].get_header("WARC-Target-URI").endswith("/api/numbered-form"))
    assert form[3] == b"Api-Key-2=%5Bredacted%5D&page2=4"
    page_rec = next(r for r in recs if r[0] == "response" and r[1].get_header("WARC-Target-URI").endswith("/numbered.html"))
    assert page_rec[2].get_header("Set-Cookie2") is None and page_rec[2].get_header("X-Auth-Token-2") == "[redacted]"
    done = next(s for s in read_trajectory(ep / "trajectory.jsonl") if "numbered-done" in s.url)
    assert (done.state["url.query.api_key2"], done.state["url.query.AUTH_TOKEN3"]) == ("[redacted]", "[redacted]")
    assert (done.state["url.query.keyword2"], done.state["url.query.page2"]) == ("shoes", "7")
    doms = [r[3].decode() for r in recs if r[0] == "conversion" and r[1].get_header("Content-Type").startswith("text/html")]
    typed = next(d for d in doms if 'id="send"' in d and "done 2" in d)  # the form page after the fill and the fetch
    assert 'name="keyword2" type="hidden" value="shoes"' in typed and 'name="page2" type="hidden" value="7"' in typed
    assert '<input id="k" name="api_key2">' in typed and '<input id="t" name="AUTH_TOKEN3" type="hidden">' in typed
