"""Replay through `context.route`: sequences in recorded order, misses, redaction, cache-busters, redirects,
the frozen clock, blocked service workers, and isolation from whatever listens on the recorded port."""

from __future__ import annotations

import itertools
import json

import pytest
from server import TestServer

from recorders import RecorderOptions
from replay import REPLAY_CONTEXT_OPTIONS, attach_replay, load_index
from rig.formats.actions import parse_actions
from rig.commands.replay import replay_episode
from rig.runner.record import record_actions
from rig.sites.server import free_port

FEED = b"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Feed</title></head><body>
<h1>Feed</h1><p id="stamp">stamp pending</p><p id="moved">moved pending</p><ol id="items"></ol>
<button type="button" id="more">More</button>
<script>
fetch('/api/stamp?_=' + Math.random()).then(r => r.text()).then(t => { document.getElementById('stamp').textContent = t; });
fetch('/api/old').then(r => r.text()).then(t => { document.getElementById('moved').textContent = t; });
document.getElementById('more').addEventListener('click', async () => {
  const r = await fetch('/api/more', {method: 'POST', headers: {'Content-Type': 'application/json'}, body: '{"feed": "news"}'});
  const data = await r.json();
  const li = document.createElement('li');
  li.textContent = data.item;
  document.getElementById('items').append(li);
});
</script></body></html>"""

SECRET = b"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Account</title></head>
<body><h1>Account page</h1></body></html>"""


def stateful_site(port: int) -> TestServer:
    """A stateful test site: POST /api/more answers batch 1, 2, 3... to the same request."""
    batch = itertools.count(1)
    url = f"http://127.0.0.1:{port}"
    return TestServer(port=port, routes={
        "/feed.html": lambda ex: ex.send(200, FEED),
        "/api/stamp": lambda ex: ex.send(200, b"stamp ok", "text/plain"),
        "/api/old": lambda ex: ex.redirect(f"{url}/api/moved", 301),
        "/api/moved": lambda ex: ex.send(200, b"moved ok", "text/plain"),
        "/go": lambda ex: ex.redirect("/feed.html"),
        "/account.html": lambda ex: ex.send(200, SECRET),
        "/sw.js": lambda ex: ex.send(200, b"self.addEventListener('fetch', () => {});", "text/javascript"),
        "/api/more": lambda ex: ex.send_json({"item": f"batch {next(batch)}"}),
    })


def impostor_site(port: int) -> TestServer:
    """Another server on the same port: OTHER content for every request."""

    def other(ex) -> None:
        if ex.request.method == "POST":
            ex.send_json({"item": "OTHER"})
        else:
            ex.send(200, b"<!doctype html><title>Other</title><h1>OTHER CONTENT</h1>")

    return TestServer(port=port, fallback=other)


SCRIPT = [
    {"goto": "/go"},  # a redirect to /feed.html
    {"wait_for": "#stamp:text('stamp ok')"},
    {"wait_for": "#moved:text('moved ok')"},
    {"click": "#more"},
    {"wait_for": "#items li:nth-child(1)"},
    {"click": "#more"},
    {"wait_for": "#items li:nth-child(2)"},
    {"click": "#more"},
    {"wait_for": "#items li:nth-child(3)"},
    {"goto": "/account.html?token=abc123&tab=profile"},
]


@pytest.fixture(scope="module")
async def recorded(browser, tmp_path_factory):
    """An episode recorded against the stateful site; the site is stopped afterwards and its port stays known."""
    port = free_port()
    site = stateful_site(port).start()
    out = tmp_path_factory.mktemp("replay") / "episode"
    try:
        ep = await record_actions(browser, parse_actions(SCRIPT, "test"), out, agent="test", base_url=site.url,
                                  options=RecorderOptions(screenshots="off", fsync=False), adapters=[])
    finally:
        site.stop()
    assert ep.status == "ok", ep.error
    return out, port


async def _items(page) -> list[str]:
    return await page.locator("#items li").all_inner_texts()


async def test_repeated_identical_posts_replay_in_recorded_order(browser, recorded):
    out, port = recorded
    index = load_index(out / "evidence.warc.gz")
    more = index.lookup("POST", f"http://127.0.0.1:{port}/api/more", b'{"feed":"news"}', "application/json")
    assert [json.loads(x.response.body)["item"] for x in more] == ["batch 1", "batch 2", "batch 3"]
    context = await browser.new_context(**REPLAY_CONTEXT_OPTIONS)
    try:
        session = await attach_replay(context, index)
        page = await context.new_page()
        await page.goto(f"http://127.0.0.1:{port}/feed.html")
        for n in range(1, 5):
            await page.click("#more")
            await page.wait_for_selector(f"#items li:nth-child({n})")
        # served in recorded order; once the recording is exhausted its last answer is served again
        assert await _items(page) == ["batch 1", "batch 2", "batch 3", "batch 3"]
        assert await page.text_content("#stamp") == "stamp ok"  # the `_` cache-buster differs from the recording
        await page.wait_for_selector("#moved:text('moved ok')")  # a fetch's redirect followed inside the archive
        assert session.misses == []
    finally:
        await context.close()


async def test_redirects_redacted_urls_and_misses(browser, recorded):
    out, port = recorded
    index = load_index(out / "evidence.warc.gz")
    assert index.lookup("GET", f"http://127.0.0.1:{port}/account.html?token=%5Bredacted%5D&tab=profile")
    context = await browser.new_context(**REPLAY_CONTEXT_OPTIONS)
    try:
        session = await attach_replay(context, index)
        session.tag = 7
        page = await context.new_page()
        await page.goto(f"http://127.0.0.1:{port}/go")
        assert page.url == f"http://127.0.0.1:{port}/feed.html"
        await page.goto(f"http://127.0.0.1:{port}/account.html?tab=profile&token=abc123")
        assert await page.text_content("h1") == "Account page"
        assert session.misses == []
        resp = await page.goto(f"http://127.0.0.1:{port}/never-recorded?x=1")
        first = await resp.body()
        assert resp.status == 404 and "not in the archive" in await page.text_content("h1")
        resp = await page.goto(f"http://127.0.0.1:{port}/never-recorded?x=1")
        assert await resp.body() == first  # deterministic
        assert [m.to_json() for m in session.misses] == [
            {"method": "GET", "url": f"http://127.0.0.1:{port}/never-recorded?x=1", "step": 7}] * 2
    finally:
        await context.close()


async def test_clock_frozen_at_recording_time_and_service_workers_blocked(browser, recorded):
    out, port = recorded
    index = load_index(out / "evidence.warc.gz")
    context = await browser.new_context(**REPLAY_CONTEXT_OPTIONS)
    try:
        await attach_replay(context, index)
        page = await context.new_page()
        await page.goto(f"http://127.0.0.1:{port}/feed.html")
        now = await page.evaluate("Date.now()")
        assert now == int(index.recorded_at.timestamp() * 1000)
        await page.wait_for_timeout(50)
        assert await page.evaluate("Date.now()") == now
        sw = "navigator.serviceWorker ? navigator.serviceWorker.register('/sw.js').then(() => 'registered', () => 'blocked') : 'blocked'"
        assert await page.evaluate(sw) == "blocked"
    finally:
        await context.close()
    context = await browser.new_context()  # even without REPLAY_CONTEXT_OPTIONS, registration is refused
    try:
        await attach_replay(context, index)
        page = await context.new_page()
        await page.goto(f"http://127.0.0.1:{port}/feed.html")
        assert await page.evaluate(sw) == "blocked"
    finally:
        await context.close()


async def test_isolation_another_server_on_the_recorded_port_is_never_asked(browser, recorded):
    out, port = recorded
    impostor = impostor_site(port).start()
    try:
        report = await replay_episode(out, browser)
        context = await browser.new_context(**REPLAY_CONTEXT_OPTIONS)
        try:
            await attach_replay(context, load_index(out / "evidence.warc.gz"))
            page = await context.new_page()
            await page.goto(f"{impostor.url}/feed.html")
            await page.click("#more")
            await page.wait_for_selector("#items li")
            assert await _items(page) == ["batch 1"]
            assert "OTHER" not in await page.content()
        finally:
            await context.close()
        import urllib.request

        with urllib.request.urlopen(f"{impostor.url}/feed.html") as r:  # the impostor is really there
            assert b"OTHER CONTENT" in r.read()
        assert len(impostor.requests) == 1
    finally:
        impostor.stop()
    assert report.ok, report.mismatches
    assert report.steps == len(SCRIPT) and report.misses == []
