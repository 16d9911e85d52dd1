"""The recorder against real Chromium and local test pages: every state mechanism, agent and observed steps."""

from __future__ import annotations

import io
import itertools
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from waiting import wait_until

from replay import load_index
from recorders import (
    Dimension,
    PageFact,
    Recorder,
    RecorderError,
    RecorderOptions,
    SiteAdapter,
    Step,
    read_trajectory,
)


def _image_distance(a: bytes, b: bytes) -> float:
    """Mean absolute grey-level difference of two images."""
    x, y = (Image.open(io.BytesIO(d)).convert("L").resize((320, 180)) for d in (a, b))
    return sum(abs(p - q) for p, q in zip(x.tobytes(), y.tobytes(), strict=True)) / (320 * 180)


async def wait_steps(rec: Recorder, n: int, timeout_s: float = 30.0) -> None:
    """Wait until the recorder has written at least n steps."""
    await wait_until(lambda: rec.steps >= n, timeout_s, message=lambda: f"only {rec.steps} steps written, expected {n}")


def agent(rec: Recorder) -> Callable[[dict[str, Any], Callable[[], Awaitable[Any]]], Awaitable[Step]]:
    """Run one reported action through `rec.action` and return the step it wrote."""

    async def run(info: dict[str, Any], body: Callable[[], Awaitable[Any]]) -> Step:
        before = rec.steps
        async with rec.action({"target": None, "value": None, **info}):
            await body()
        assert rec.steps == before + 1 and rec.last_step is not None
        return rec.last_step

    return run


async def test_agent_steps_cover_every_state_mechanism(context, page, pages_url, tmp_path):
    rec = await Recorder.attach(context, tmp_path / "ep", options=RecorderOptions(screenshots="every"))
    act = agent(rec)
    s = await act({"type": "goto", "target": f"{pages_url}/index.html"}, lambda: page.goto(f"{pages_url}/index.html"))
    assert s.step == 0 and s.action.source == "agent" and s.action.type == "goto"
    assert s.state["url.path"] == "/index.html"
    assert s.state["form.year"] == "" and s.state["form.region"] == [] and s.state["form.sort"] == ["name"]
    assert s.state["form.shadow_q"] == "" and s.state["form.frame_unit"] == "km"
    assert s.state["aria.tab.Table"] == "selected" and "aria.tab.Chart" not in s.state
    assert s.state["aria.treeitem.Reptilia"] == "collapsed" and s.state["aria.button.More filters"] == "collapsed"
    assert s.state["aria.group.Notes"] == "collapsed" and "aria.button.Dark mode" not in s.state
    assert s.state_diff.added == s.state and s.screenshot == "screens/0000.jpg"

    async def expect(info: dict[str, Any], body: Callable[[], Awaitable[Any]], **changes: Any) -> Step:
        step = await act(info, body)
        for key, value in changes.items():
            key = key.replace("__", ".").replace("_SP_", " ")
            assert step.state.get(key) == value, (key, step.state.get(key))
        return step

    s = await expect(
        {"type": "select", "target": "#year", "value": "1890"},
        lambda: page.select_option("#year", "1890"),
        form__year="1890",
    )
    assert s.state_diff.changed == {"form.year": ["", "1890"]} and s.action.value == "1890"
    await expect(
        {"type": "select"}, lambda: page.select_option("#cols", ["Species", "Family"]), form__cols=["Family", "Species"]
    )
    await expect({"type": "check"}, lambda: page.check("input[name=region][value=Asia]"), form__region=["Asia"])
    await expect(
        {"type": "check"}, lambda: page.check("input[name=region][value=Africa]"), form__region=["Africa", "Asia"]
    )
    await expect({"type": "check"}, lambda: page.check("input[name=sort][value=year]"), form__sort=["year"])
    await expect({"type": "check"}, lambda: page.check("#unnamed-check"), **{"form__unnamed-check": ["on"]})
    await expect({"type": "fill"}, lambda: page.fill("#q", "boiga"), form__q="boiga")
    await expect({"type": "fill"}, lambda: page.fill("#limit", "10"), form__limit="10")
    await expect({"type": "fill"}, lambda: page.fill("#from", "2024-05-01"), form__from="2024-05-01")
    set_range = (
        "() => { const r = document.querySelector('#zoom'); r.value = '8'; r.dispatchEvent(new Event('input')); }"
    )
    await expect({"type": "fill"}, lambda: page.evaluate(set_range), form__zoom="8")
    await expect({"type": "fill"}, lambda: page.fill("#sq", "shadowed"), form__shadow_q="shadowed")
    frame_select = page.frame_locator("#frame").locator("#unit")
    await expect({"type": "select"}, lambda: frame_select.select_option("mi"), form__frame_unit="mi")
    s = await expect({"type": "click"}, lambda: page.click("#tab-chart"), aria__tab__Chart="selected")
    assert s.state_diff.removed == ["aria.tab.Table"]
    await expect({"type": "click"}, lambda: page.click("#reptilia > span"), aria__treeitem__Reptilia="expanded")
    await expect({"type": "click"}, lambda: page.click("#snakes"), aria__treeitem__Snakes="selected")
    await expect({"type": "click"}, lambda: page.click("#more"), aria__button__More_SP_filters="expanded")
    await expect({"type": "click"}, lambda: page.click("#dark"), aria__button__Dark_SP_mode="pressed")
    await expect({"type": "click"}, lambda: page.click("#notes > summary"), aria__group__Notes="expanded")
    s = await expect(
        {"type": "click", "target": None},
        lambda: page.click("#set-hash"),
        url__fragment__view="table",
        url__fragment__page="2",
    )
    assert s.url.endswith("#view=table&page=2")
    s = await expect({"type": "click"}, lambda: page.click("#push"), url__query__page="3")
    assert s.state["url.path"] == "/index.html" and s.state["form.year"] == "1890"
    before = rec.last_step
    s = await act({"type": "click", "target": "#post"}, lambda: page.click("#post"))
    assert s.text_hash != before.text_hash  # the fetched count is shown once the POST settled
    s = await act({"type": "click", "target": "#next"}, lambda: page.click("#next"))
    assert s.state == {"url.path": "/page2.html"} and set(s.state_diff.removed) >= {"form.year", "aria.tab.Chart"}
    await rec.close()
    # the screenshot of a step that navigated shows the new page, not the one the click happened on
    reference = await page.screenshot(type="jpeg", quality=60)
    shots = [(tmp_path / "ep" / x).read_bytes() for x in (before.screenshot, s.screenshot)]
    assert _image_distance(shots[1], reference) < 2 < _image_distance(shots[0], reference)

    steps = read_trajectory(tmp_path / "ep" / "trajectory.jsonl")
    assert [x.step for x in steps] == list(range(len(steps))) and len(steps) == 23
    assert all(x.action.source == "agent" and x.settled for x in steps)
    assert all((tmp_path / "ep" / x.screenshot).read_bytes()[:2] == b"\xff\xd8" for x in steps if x.screenshot)
    assert all(x.snapshot and x.snapshot.warc_record_id and x.snapshot.dom_record_id for x in steps)
    same = [x.action.target for prev, x in itertools.pairwise(steps) if prev.dom_hash == x.dom_hash]
    assert same == [None]  # every action changed the live DOM or a value, except setting the URL fragment


async def test_observed_steps_without_the_hook(context, page, pages_url, tmp_path):
    rec = await Recorder.attach(context, tmp_path / "ep", options=RecorderOptions(observe_idle_ms=150))
    await page.goto(f"{pages_url}/index.html")  # not reported: the first step is an observed "load"
    await wait_steps(rec, 1)
    assert rec.last_step.action.type == "load" and rec.last_step.action.source == "observed"

    cdp = await context.new_cdp_session(page)  # an external CDP client clicking
    box = await page.locator("#tab-chart").bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    for kind in ("mousePressed", "mouseReleased"):
        await cdp.send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1})
    await wait_steps(rec, 2)
    s = rec.last_step
    assert (s.action.type, s.action.target, s.action.source) == ("click", "#tab-chart", "observed")
    assert s.state["aria.tab.Chart"] == "selected"

    box = await page.locator("input[name=region][value=Europe]").bounding_box()
    await page.mouse.click(box["x"] + 3, box["y"] + 3)  # a person's click on a checkbox
    await wait_steps(rec, 3)
    s = rec.last_step
    assert (s.action.type, s.action.target) == ("check", 'input[name="region"][value="Europe"]')
    assert s.state_diff.changed == {"form.region": [[], ["Europe"]]}

    await page.locator("#q").click()
    await page.keyboard.type("boa", delay=10)  # typing in one burst is one step
    await wait_until(lambda: rec.steps >= 4 and rec.last_step.state.get("form.q") == "boa", 30,
                     message=lambda: f"last step {rec.last_step.action}")
    assert (rec.last_step.action.type, rec.last_step.action.value) == ("fill", "boa")
    # A loaded machine may pause longer than observe_idle_ms after the click or between two keys: then the
    # click into the field is a step of its own and the burst is two steps, each a fill of what the field held
    # by then. Count them, so the steps after are numbered from here.
    after = list(read_trajectory(tmp_path / "ep" / "trajectory.jsonl"))[3:]
    if after[0].action.type == "click":
        assert after.pop(0).action.target == "#q"
    assert all(s.action.type == "fill" and "boa".startswith(s.action.value) for s in after), after
    n = rec.steps

    async with rec.action({"type": "select", "target": "#year", "value": "1900"}):  # a reported action in between
        await page.select_option("#year", "1900")
    assert rec.last_step.action.source == "agent" and rec.steps == n + 1

    await page.evaluate("history.pushState({}, '', '?page=9')")
    await wait_steps(rec, n + 2)
    assert rec.last_step.action.type == "pushState" and rec.last_step.state["url.query.page"] == "9"
    await page.evaluate("location.hash = 'view=chart'")
    await wait_steps(rec, n + 3)
    assert rec.last_step.action.type == "hashchange" and rec.last_step.state["url.fragment.view"] == "chart"

    async with context.expect_page() as popup_info:  # a second tab
        await page.evaluate("window.open('/page2.html')")
    popup = await popup_info.value
    await popup.wait_for_load_state()
    await wait_steps(rec, n + 4)
    s = rec.last_step
    assert (s.tab, s.action.type, s.state["url.path"]) == (1, "load", "/page2.html")

    await page.click("#next")  # a click that navigates: one step, the click
    await wait_steps(rec, n + 5)
    s = rec.last_step
    assert (s.tab, s.action.type, s.action.target, s.url) == (0, "click", "#next", f"{pages_url}/page2.html")
    await rec.close()
    assert [x.step for x in read_trajectory(tmp_path / "ep" / "trajectory.jsonl")] == list(range(n + 5))


async def test_adapter_dimensions_and_page_facts(context, page, pages_url, tmp_path):
    adapter = SiteAdapter(
        site="test",
        path_prefix="/index",
        dimensions={
            "time_window": Dimension(tag="scope", keys=["form.year"]),
            "regions": Dimension(tag="scope", keys=["form.region"], map={"Asia": "AS"}),
            "view": Dimension(tag="view", keys=["aria.tab.Chart"], map={"selected": "chart"}),
        },
        page={"result_count": PageFact(selector="#count"), "title": PageFact(selector="h1", regex=r"(\w+)s$")},
    )
    other = SiteAdapter(
        site="other", path_prefix="/elsewhere/", dimensions={"x": Dimension(tag="view", keys=["form.q"])}
    )
    rec = await Recorder.attach(context, tmp_path / "ep", adapters=[other, adapter])
    act = agent(rec)
    s = await act({"type": "goto"}, lambda: page.goto(f"{pages_url}/index.html"))
    assert s.state["page.result_count"] == "0" and s.state["page.title"] == "Mechanism"
    assert not any(k.startswith("dim.") for k in s.state)
    s = await act({"type": "select"}, lambda: page.select_option("#year", "1890"))
    assert s.state["dim.time_window"] == "1890" and s.state_diff.added == {"dim.time_window": "1890"}
    s = await act({"type": "check"}, lambda: page.check("input[name=region][value=Asia]"))
    assert s.state["dim.regions"] == ["AS"]
    s = await act({"type": "click"}, lambda: page.click("#tab-chart"))
    assert s.state["dim.view"] == "chart"
    s = await act({"type": "click"}, lambda: page.click("#post"))
    assert s.state_diff.changed == {"page.result_count": ["0", "42"]}
    s = await act({"type": "goto"}, lambda: page.goto(f"{pages_url}/page2.html"))  # no adapter applies: raw keys only
    assert s.state == {"url.path": "/page2.html"}
    await rec.close()
    assert next(iter(s.state)) == "url.path"


async def test_checkpoint_clock_and_ids_are_injectable(context, page, pages_url, tmp_path):
    ticks = iter(range(1_700_000_000, 1_700_100_000))
    ids = (f"<urn:uuid:00000000-0000-4000-8000-{n:012d}>" for n in range(100_000))
    rec = await Recorder.attach(context, tmp_path / "ep", clock=lambda: float(next(ticks)), ids=lambda: next(ids))
    async with rec.action({"type": "goto", "target": "/index.html", "value": None}):
        await page.goto(f"{pages_url}/index.html")
    step = await rec.checkpoint("before answering")
    await rec.close()
    assert step is not None and (step.action.type, step.action.value) == ("checkpoint", "before answering")
    assert step.state_diff.changed == {} and step.t == float(int(step.t)) and step.t > 0
    assert step.snapshot.warc_record_id.startswith("<urn:uuid:00000000-0000-4000-8000-")


def test_recorders_import_without_rig():
    code = "import recorders, sys; bad = [m for m in sys.modules if m.split('.')[0] == 'rig']; assert not bad, bad"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).parents[1])


async def test_recorder_is_the_script_runners_action_hook(context, page, pages_url, tmp_path):
    from rig.agents.scripted import ScriptRunner
    from rig.formats.actions import parse_actions

    script = [
        {"goto": "/catalog.html"},
        {"select": {"selector": "#year", "value": "1890"}},
        {"check": "input[name=region][value=Asia]"},
        {"click": "#apply"},
        {"click": "#tab-chart"},
        {"extract_text": {"selector": "#count", "as": "n"}},
    ]
    rec = await Recorder.attach(context, tmp_path / "ep")
    result = await ScriptRunner(page, pages_url, rec).run(parse_actions(script))
    await rec.close()
    steps = read_trajectory(tmp_path / "ep" / "trajectory.jsonl")
    assert [s.action.type for s in steps] == ["goto", "select", "check", "click", "click", "extract_text"]
    assert {s.action.source for s in steps} == {"agent"}
    assert steps[3].state["url.query.year"] == "1890" and steps[3].state["url.query.region"] == "Asia"
    assert steps[3].state_diff.added == {
        "url.query.region": "Asia",
        "url.query.sort": "name",
        "url.query.q": "",
        "url.query.year": "1890",
    }
    assert steps[4].state["aria.tab.Chart"] == "selected" and steps[5].state_diff.model_dump() == {
        "changed": {},
        "added": {},
        "removed": [],
    }
    assert steps[5].action.target == "#count" and int(result.variables["n"]) > 0


async def test_one_recorder_per_context(context, page, tmp_path):
    rec = await Recorder.attach(context, tmp_path / "a")
    with pytest.raises(RecorderError, match="new context"):
        await Recorder.attach(context, tmp_path / "b")
    await rec.close()
    assert (tmp_path / "a" / "trajectory.jsonl").read_text() == ""


async def test_a_request_the_action_started_is_waited_for_however_long_it_takes(context, page, pages_server,
                                                                                 tmp_path):
    """On a loaded machine an ordinary fetch takes longer than `long_request_ms`: one the action started is still
    waited for (up to `max_settle_ms`), so the step holds the answered page, not "still loading" (before, the fetch
    counted as a long poll once older than `long_request_ms` and the step was written before its answer)."""
    rec = await Recorder.attach(context, tmp_path / "ep", options=RecorderOptions(long_request_ms=200))
    async with rec.action({"type": "goto", "target": "/index.html", "value": None}):
        await page.goto(f"{pages_server.url}/index.html")
    pages_server.set_delay("/api/echo", 1.0)
    async with rec.action({"type": "click", "target": "#post", "value": None}):
        await page.click("#post")
    step = rec.last_step
    assert await page.text_content("#count") == "42"
    await rec.close()
    [text] = [t for rid, t in load_index(tmp_path / "ep" / "evidence.warc.gz", texts=True).texts.items()
              if rid == step.snapshot.warc_record_id]
    assert step.settled and "42" in text.split("Post query", 1)[1], text


async def test_a_fetch_the_page_waits_for_holds_the_step_though_no_request_is_seen(context, page, pages_server,
                                                                                   tmp_path):
    """On a loaded machine the browser may tell the recorder of a request later than the page has shown "Loading…"
    for longer than both quiet windows: the page's own count of the fetches it waits for holds the step (here a body
    read the network never sees, answered after 1.5 s)."""
    rec = await Recorder.attach(context, tmp_path / "ep")
    async with rec.action({"type": "goto", "target": "/index.html", "value": None}):
        await page.goto(f"{pages_server.url}/index.html")
    await page.evaluate("""() => {
        const out = document.createElement("p"), go = document.createElement("button");
        out.id = "out"; go.id = "go"; go.textContent = "Go";
        go.onclick = () => {
            out.textContent = "Loading";
            const body = new ReadableStream({start(c) {
                setTimeout(() => { c.enqueue(new TextEncoder().encode("streamed answer")); c.close(); }, 1500);
            }});
            new Response(body).text().then(t => { out.textContent = t; });
        };
        document.body.append(out, go);
    }""")
    async with rec.action({"type": "click", "target": "#go", "value": None}):
        await page.click("#go")
    step = rec.last_step
    await rec.close()
    [text] = [t for rid, t in load_index(tmp_path / "ep" / "evidence.warc.gz", texts=True).texts.items()
              if rid == step.snapshot.warc_record_id]
    assert step.settled and "streamed answer" in text, text


async def test_a_long_poll_does_not_stall_every_step(context, page, pages_server, tmp_path):
    rec = await Recorder.attach(context, tmp_path / "ep", options=RecorderOptions(long_request_ms=300))
    async with rec.action({"type": "goto", "target": "/index.html", "value": None}):
        await page.goto(f"{pages_server.url}/index.html")
    await page.evaluate("() => { fetch('/hang'); }")  # never answers within the test
    await pages_server.wait_for_request("/hang")  # the long poll is in flight
    settled = []
    for _ in range(4):
        async with rec.action({"type": "click", "target": "#dark", "value": None}):
            await page.click("#dark")
        settled.append(rec.last_step.settled)
    # a step the long poll held up would wait out max_settle_ms and be written unsettled
    assert settled == [True] * 4
    await rec.close()
