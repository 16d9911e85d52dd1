"""Outside drivers on a browser the rig launched: a CDP client process, browser-use with a scripted model.

Everything runs against a page served here on 127.0.0.1; the `no_internet` fixture fails a test whose
Python process tries to reach any other address (Chromium itself runs with `--host-resolver-rules`).
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import socket
import sys
import urllib.request
from pathlib import Path

import pytest
from scripted_llm import ScriptedLLM, ScriptError, find_index
from waiting import wait_until

from rig.agents.cdp import announce, submit_answer, wait_for_answer
from rig.browser import launch_for_cdp
from rig.errors import InputError

FORM = b"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Carrier form</title></head><body>
<form id="f" action="/form" method="get">
  <label for="carrier">Carrier</label>
  <select id="carrier" name="carrier">
    <option value="">Any</option><option value="AA">American</option><option value="UA">United</option>
  </select>
  <label for="q">Destination</label> <input id="q" name="q" type="text">
  <button id="go" type="submit">Show result</button>
</form>
<a id="csv" href="/rows.csv" download>CSV</a>
<p id="out" role="status"></p>
<script>
  const params = new URLSearchParams(location.search);
  if (params.has("carrier")) {
    document.getElementById("carrier").value = params.get("carrier");
    document.getElementById("q").value = params.get("q") || "";
    document.getElementById("out").textContent = "Result: " + params.get("carrier") + " " + (params.get("q") || "");
  }
</script>
</body></html>"""

#: Installed by the rig on its context, as a recorder would: every click anywhere calls the rig back.
#: Idempotent per document, as the recorder's observer is: when the rig's connection attaches to a tab
#: an outside client already navigated, Playwright runs the script in the current document as well as
#: on new documents, so it can run twice in one document; the listener must still be added once.
RIG_INIT = """
window.__rigInit = (window.__rigInit || 0) + 1;
if (window.__rigInit === 1) {
  document.addEventListener('click', e => window.__rigClick({id: e.target.id || null, tag: e.target.tagName}), true);
}
"""

#: A second outside client: opens its own tab in the rig's browser and clicks there.
NEW_TAB_CLIENT = """
import asyncio, json, sys
from playwright.async_api import async_playwright
async def main():
    async with async_playwright() as pw:
        browser = await pw.chromium.connect_over_cdp(sys.argv[1])
        page = await browser.contexts[0].new_page()
        await page.goto(sys.argv[2])
        init = await page.evaluate("window.__rigInit")
        await page.click("#q")  # a click that does not navigate
        print(json.dumps({"init": init, "url": page.url}))
asyncio.run(main())
"""


@pytest.fixture
def form_url(pages_server):
    """URL of the test form: /form and its /rows.csv, routes of the test pages' server for one test."""
    pages_server.set_route("/form", lambda ex: ex.send(200, FORM))
    pages_server.set_route("/rows.csv", lambda ex: ex.send(200, b"carrier,flights\nUA,3\n", "text/csv",
                                                           {"Content-Disposition": "attachment; filename=rows.csv"}))
    return f"{pages_server.url}/form"


def _is_loopback(host: object) -> bool:
    return isinstance(host, str) and (host in ("localhost", "::1") or host.startswith("127."))


@pytest.fixture
def no_internet(monkeypatch):
    """Refuse (and fail the test on) any connection or name lookup from this process beyond loopback."""
    attempts: list[str] = []
    real_connect, real_getaddrinfo = socket.socket.connect, socket.getaddrinfo

    def connect(sock, address):
        if sock.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address[0]):
            attempts.append(f"connect {address}")
            raise OSError(f"test forbids connecting to {address}")
        return real_connect(sock, address)

    def getaddrinfo(host, *args, **kwargs):
        if host is not None and not _is_loopback(host):
            attempts.append(f"lookup {host}")
            raise socket.gaierror(f"test forbids looking up {host}")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield attempts
    assert attempts == [], f"the test tried to reach beyond 127.0.0.1: {attempts}"


@pytest.fixture
async def rig(playwright, tmp_path):
    """A rig browser open to outside drivers, observing clicks through an exposed binding."""
    context, cdp_url = await launch_for_cdp(playwright, tmp_path / "profile")
    clicks: list[dict] = []
    opened: list = []
    await context.expose_binding("__rigClick", lambda source, info: clicks.append({"url": source["page"].url, **info}))
    await context.add_init_script(RIG_INIT)
    context.on("page", lambda page: opened.append(page))
    yield {"context": context, "cdp_url": cdp_url, "clicks": clicks, "opened": opened}
    await context.close()


async def _python(*args: str, timeout_s: float = 30) -> str:
    """Run a separate Python process and return its stdout (fail on a non-zero exit)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout_s)
    assert proc.returncode == 0, err.decode()[-2000:]
    return out.decode()


async def test_launch_for_cdp_on_a_chosen_port(playwright, tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    context, cdp_url = await launch_for_cdp(playwright, tmp_path / "profile", port=port)
    try:
        assert cdp_url == f"http://127.0.0.1:{port}"
        version = json.loads(urllib.request.urlopen(f"{cdp_url}/json/version", timeout=5).read())
        assert version["webSocketDebuggerUrl"].startswith(f"ws://127.0.0.1:{port}/devtools/browser/")
    finally:
        await context.close()


async def test_outside_process_drives_the_rig_page(rig, form_url, no_internet):
    context = rig["context"]
    page = context.pages[0]
    navigations: list[str] = []
    page.on("framenavigated", lambda frame: navigations.append(frame.url) if frame == page.main_frame else None)

    out = json.loads(await _python("-m", "rig.agents.cdp_client_example", rig["cdp_url"], form_url))

    assert out == {
        "filled": "q",
        "selected": {"carrier": "UA"},
        "clicked": "Show result",
        "url": f"{form_url}?carrier=UA&q=rig",
    }
    # The rig's own Playwright objects saw all of it: navigations, DOM, form values, clicks.
    await wait_until(lambda: rig["clicks"], message="the rig's binding saw no click")  # may still be on its way
    assert context.pages == [page]
    assert page.url == f"{form_url}?carrier=UA&q=rig"
    assert navigations == [form_url, f"{form_url}?carrier=UA&q=rig"]
    assert await page.locator("#carrier").input_value() == "UA"
    assert await page.locator("#out").text_content() == "Result: UA rig"
    assert rig["clicks"] == [{"url": form_url, "id": "go", "tag": "BUTTON"}]
    assert await page.evaluate("window.__rigInit") == 1


async def test_tabs_opened_from_outside_join_the_rig_context(rig, form_url, no_internet):
    out = json.loads(await _python("-c", NEW_TAB_CLIENT, rig["cdp_url"], form_url))

    context = rig["context"]
    await wait_until(lambda: rig["clicks"] and rig["opened"],
                     message=lambda: f"clicks {rig['clicks']}, opened {rig['opened']}")
    assert out["url"] == form_url and out["init"] >= 1  # the rig's init script ran in the outside client's tab
    assert len(context.pages) == 2 and rig["opened"] == [context.pages[1]]
    assert context.pages[1].url == form_url
    assert rig["clicks"] == [{"url": form_url, "id": "q", "tag": "INPUT"}]  # and its binding fired there


async def test_cdp_agent_answer_hand_in(tmp_path):
    out = io.StringIO()
    announce("http://127.0.0.1:9", tmp_path, out)
    assert out.getvalue().splitlines() == ["CDP endpoint: http://127.0.0.1:9", f"Episode: {tmp_path}"]
    assert await wait_for_answer(tmp_path, timeout_s=0.2, poll_s=0.05) is None

    waiter = asyncio.create_task(wait_for_answer(tmp_path, timeout_s=5, poll_s=0.05))
    await asyncio.sleep(0)  # one turn of the loop: the waiter looks, finds no answer and waits for its next look
    assert not waiter.done()
    submit_answer(tmp_path, {"columns": ["Carrier"], "rows": [["UA"]]})
    answer = await waiter
    assert answer is not None and answer.rows == [["UA"]]
    assert [p.name for p in tmp_path.iterdir()] == ["answer.json"]
    with pytest.raises(InputError, match="episode directory"):
        submit_answer(tmp_path / "missing", {"columns": []})
    with pytest.raises(InputError, match="answer"):
        submit_answer(tmp_path, {"rows": [["UA"]]})


# --- browser-use (optional extra) -------------------------------------------------------------------


async def test_browser_use_with_scripted_llm_drives_the_rig_page(rig, form_url, no_internet):
    pytest.importorskip("browser_use")
    from rig.agents.browser_use_agent import run_browser_use

    llm = ScriptedLLM(
        [
            [
                {"select_dropdown": {"index": {"match": "id=carrier"}, "text": "United"}},
                {"input": {"index": {"match": "name=q"}, "text": "BOS"}},
            ],
            [{"click": {"index": {"match": "Show result"}}}],
            [{"done": {"text": "United flies there", "success": True}}],
        ]
    )
    result = await run_browser_use(
        rig["cdp_url"], "Show United's result for BOS", llm, max_steps=6, start_url=form_url, use_vision=False
    )

    assert (result.final_text, result.done, result.success, result.errors) == ("United flies there", True, True, [])
    assert [a["name"] for a in result.actions] == ["navigate", "select_dropdown", "input", "click", "done"]
    assert result.actions[3]["target"]["attributes"]["id"] == "go"
    assert all(isinstance(a[name]["index"], int) for a in sum(llm.sent[:2], []) for name in a)
    # The rig sees browser-use's work in its own tab, its clicks through its own binding.
    context = rig["context"]
    page = context.pages[0]
    assert len(context.pages) == 1
    assert page.url == f"{form_url}?carrier=UA&q=BOS"
    assert await page.locator("#out").text_content() == "Result: UA BOS"
    assert {"url": form_url, "id": "go", "tag": "BUTTON"} in rig["clicks"]
    # browser-use left the browser as it found it (viewport, Playwright downloads) and kept out of HOME.
    assert await page.evaluate("[innerWidth, innerHeight]") == [1280, 720]
    async with page.expect_download() as download:
        await page.click("#csv")
    assert Path(await (await download.value).path()).read_text() == "carrier,flights\nUA,3\n"
    assert Path(os.environ["BROWSER_USE_CONFIG_DIR"]).name.startswith("sgr-rig-browser-use-")  # not ~/.config

    # Its decisions, replayed by the scripted model on a fresh load of the form, reach the same state.
    assert result.decisions[1] == [{"click": {"index": {"match": "id=go"}}}]
    await page.goto("about:blank")
    again = await run_browser_use(
        rig["cdp_url"], "replay", ScriptedLLM(result.decisions), max_steps=6, start_url=form_url, use_vision=False
    )
    assert (again.final_text, again.errors) == ("United flies there", [])
    assert page.url == f"{form_url}?carrier=UA&q=BOS"


async def test_scripted_llm_answers_in_browser_use_formats():
    pytest.importorskip("browser_use")
    from browser_use import Tools
    from browser_use.agent.views import AgentOutput

    state = (
        "<browser_state>\nInteractive elements:\n"
        "|SHADOW(open)|*[3]<select id=carrier expanded=false />\n"
        "[4]<input id=q name=q type=text />\n[5]<button id=gone />\n\tLeave\n"
        "[27]<button id=go type=submit />\n\tShow result\n</browser_state>"
    )
    assert [find_index(state, m) for m in ("id=carrier", "name=q", "id=go", "Show result", "Leave")] == [3, 4, 27, 27, 5]
    assert find_index(state, "<button", nth=1) == 27
    with pytest.raises(ScriptError, match="no interactive element"):
        find_index(state, "id=nothing")

    output = AgentOutput.type_with_custom_actions(Tools().registry.create_action_model())
    messages = [type("Msg", (), {"role": "user", "text": state})()]
    llm = ScriptedLLM([[{"click": {"index": {"match": "Show result"}}}], [{"no_such_action": {}}]])
    first = await llm.ainvoke(messages, output)
    assert first.completion.action[0].model_dump(exclude_none=True) == {"click": {"index": 27}}
    with pytest.raises(ScriptError, match="not valid for browser-use"):
        await llm.ainvoke(messages, output)
    llm.position = 2  # past the end: the model gives up
    last = await llm.ainvoke(messages, output)
    assert last.completion.action[0].model_dump(exclude_none=True)["done"]["success"] is False
    assert (await llm.ainvoke(messages)).completion == ""
    with pytest.raises(ScriptError, match="non-empty list"):
        ScriptedLLM([[]])


def test_make_llm_needs_a_known_provider_and_its_key(monkeypatch):
    pytest.importorskip("browser_use")
    from rig.agents.browser_use_agent import make_llm

    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(InputError, match="OPENAI_API_KEY"):
        make_llm("openai:gpt-4.1-mini")
    with pytest.raises(InputError, match="GOOGLE_API_KEY or GEMINI_API_KEY"):
        make_llm("google:gemini-2.5-flash")
    with pytest.raises(InputError, match="provider:model"):
        make_llm("gpt-4.1-mini")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    # (google's SDK takes ~10 s to import here, so its construction is left out)
    made = {spec: make_llm(spec) for spec in ("openai:gpt-4.1-mini", "anthropic:claude-sonnet-4-5", "ollama:llama3.1")}
    assert [(m.provider, m.model) for m in made.values()] == [
        ("openai", "gpt-4.1-mini"),
        ("anthropic", "claude-sonnet-4-5"),
        ("ollama", "llama3.1"),
    ]
    assert made["openai:gpt-4.1-mini"].api_key == "sk-test"
    assert made["ollama:llama3.1"].host == "http://127.0.0.1:11434"
