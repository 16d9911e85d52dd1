"""Step images drawn after the episode from the archived DOM snapshots (`screenshot_source: dom`, `rig render`):
nothing is pictured while the driver acts, and each drawn image shows its own step, however fast the next change
came, from the archive alone."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from playwright.async_api import BrowserContext
from playwright.async_api import Error as PlaywrightError
from pydantic import ValidationError
from test_recorder import wait_steps
from test_recorder_screens import shown
from typer.testing import CliRunner

from recorders import Recorder, RecorderOptions, read_trajectory
from replay.render import read_dom_snapshots, render_dom_images
from rig.cli import app
from rig.report.load import episode_id
from rig.runner.config import RunConfig
from rig.runner.run import run

DOM = RecorderOptions(screenshots="every", screenshot_source="dom", observe_idle_ms=100)

#: Two viewport-high blocks: the first blue inline, the second green by the stylesheet (and a red cover for
#: browsers without scripts, which the recorded page never showed).
SCROLLED = """<!doctype html><html><head><link rel="stylesheet" href="style.css">
<style>body{margin:0} div{height:100vh}</style></head>
<body><div style="background:#0000e0"></div><div class="b"></div>
<noscript><p style="position:fixed;inset:0;margin:0;background:#e00000">enable JavaScript</p></noscript></body></html>"""


def _due(ep: Path) -> dict[int, Path]:
    return {s.step: ep / s.screenshot for s in read_trajectory(ep / "trajectory.jsonl") if s.screenshot}


async def test_each_drawn_image_shows_its_step_even_when_the_next_change_came_at_once(
    context, page, pages_url, tmp_path, browser
):
    ep = tmp_path / "ep"
    rec = await Recorder.attach(context, ep, options=DOM)
    expected: list[int] = []

    async def act(state: int, script: str | None) -> None:
        async with rec.action({"type": "click" if script else "goto", "target": None, "value": None}):
            await (page.evaluate(script) if script else page.goto(f"{pages_url}/colours.html"))
        expected.append(state % 10)

    await act(0, None)
    for n in range(1, 12):  # each change the moment the previous step is written: no frame need show it
        await act(n, f"show({n})")
    await page.click("#next")  # a person's click, then an action right after it
    await wait_steps(rec, len(expected) + 1)
    expected.append(12 % 10)
    await act(13, "show(13)")
    await page.click("#next")  # observed, and the recorder closed right after
    await wait_steps(rec, len(expected) + 1)
    expected.append(14 % 10)
    await rec.close()

    due = _due(ep)
    assert sorted(due) == list(range(len(expected)))
    assert not list((ep / "screens").glob("*.jpg")), "nothing is pictured while recording"
    assert await render_dom_images(browser, ep / "evidence.warc.gz", due) == dict.fromkeys(due)
    assert [shown(due[n].read_bytes()) for n in sorted(due)] == expected  # every step, none skipped


async def test_drawing_uses_the_archive_only_at_the_recorded_scroll(context, page, pages_url, pages_server, tmp_path,
                                                                    browser):
    pages_server.set_route("/render/page.html", lambda ex: ex.send(body=SCROLLED))
    pages_server.set_route("/render/style.css", lambda ex: ex.send(body=".b{background:#00c000}",
                                                                   content_type="text/css"))
    ep = tmp_path / "ep"
    rec = await Recorder.attach(context, ep, options=DOM)
    async with rec.action({"type": "goto", "target": None, "value": None}):
        await page.goto(f"{pages_url}/render/page.html")
    async with rec.action({"type": "scroll", "target": None, "value": None}):
        await page.evaluate("scrollTo(0, innerHeight)")
    await rec.close()
    # The site changes afterwards: the drawing must show what was recorded, and ask the site for nothing.
    pages_server.set_route("/render/style.css", lambda ex: ex.send(body=".b{background:#e00000}",
                                                                   content_type="text/css"))
    asked = len(pages_server.requests)

    views = {n: s.view for n, s in read_dom_snapshots(ep / "evidence.warc.gz").items()}
    assert views[0][2:] == (0, 0) and views[1][3] > 0 and views[1][:2] == views[0][:2]
    due = _due(ep)
    assert await render_dom_images(browser, ep / "evidence.warc.gz", due) == {0: None, 1: None}
    assert len(pages_server.requests) == asked
    assert [shown(due[n].read_bytes()) for n in (0, 1)] == [2, 1]  # blue at the top, the archived green below


async def test_a_live_step_image_shows_the_viewport_its_state_was_read_in(context, page, pages_url, pages_server,
                                                                          tmp_path):
    """A live screenshot is clipped to the viewport and scroll offset the step's state read gave (no round trip to ask
    the page for them again)."""
    pages_server.set_route("/render/page.html", lambda ex: ex.send(body=SCROLLED))
    pages_server.set_route("/render/style.css", lambda ex: ex.send(body=".b{background:#00c000}",
                                                                   content_type="text/css"))
    ep = tmp_path / "ep"
    rec = await Recorder.attach(context, ep, options=RecorderOptions(screenshots="every", observe_idle_ms=100))
    async with rec.action({"type": "goto", "target": None, "value": None}):
        await page.goto(f"{pages_url}/render/page.html")
    async with rec.action({"type": "scroll", "target": None, "value": None}):
        await page.evaluate("scrollTo(0, innerHeight)")
    await rec.close()
    views = {n: s.view for n, s in read_dom_snapshots(ep / "evidence.warc.gz").items()}
    assert views[0][3] == 0 and views[1][3] > 0
    due = _due(ep)
    assert [shown(due[n].read_bytes()) for n in (0, 1)] == [2, 1]  # blue at the top, green below


async def test_a_canvas_is_pictured_live_since_no_dom_shows_it(context, page, pages_url, pages_server, tmp_path):
    canvas = ("<!doctype html><body style='margin:0'><canvas width=1280 height=720></canvas><script>"
              "const c = document.querySelector('canvas').getContext('2d'); c.fillStyle = '#e00000';"
              "c.fillRect(0, 0, 1280, 720);</script></body>")
    pages_server.set_route("/render/canvas.html", lambda ex: ex.send(body=canvas))
    ep = tmp_path / "ep"
    rec = await Recorder.attach(context, ep, options=DOM)
    async with rec.action({"type": "goto", "target": None, "value": None}):
        await page.goto(f"{pages_url}/render/canvas.html")
    await rec.close()
    (step,) = read_trajectory(ep / "trajectory.jsonl")
    assert shown((ep / step.screenshot).read_bytes()) == 0  # there already: red, drawn by the page's script


def test_rig_record_then_render_draws_each_missing_image_once(pages_url, tmp_path):
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump([{"goto": f"{pages_url}/colours.html"}, {"click": "#next"}, {"click": "#next"}]))
    ep = tmp_path / "ep"
    runner = CliRunner()
    res = runner.invoke(app, ["record", "--script", str(script), "--out", str(ep)])  # dom: the default
    assert res.exit_code == 0, res.output
    steps = read_trajectory(ep / "trajectory.jsonl")
    assert steps and not list((ep / "screens").glob("*.jpg"))
    res = runner.invoke(app, ["render", str(ep)])
    assert res.exit_code == 0 and f"{len(steps)} drawn, 0 present" in res.output, res.output
    assert [shown((ep / s.screenshot).read_bytes()) for s in steps] == [0, 1, 2]
    (tmp_path / "empty").mkdir()
    res = runner.invoke(app, ["render", str(tmp_path / "empty")])
    assert res.exit_code == 2 and "holds no episode" in res.output, res.output  # bad input
    res = runner.invoke(app, ["render", str(ep)])
    assert res.exit_code == 0 and f"0 drawn, {len(steps)} present" in res.output, res.output
    res = runner.invoke(app, ["record", "--script", str(script), "--out", str(tmp_path / "x"), "--step-images", "gif"])
    assert res.exit_code != 0 and "--step-images" in res.output and "'gif'" in res.output, res.output


def test_a_run_with_dom_images_is_drawn_by_rig_render(sites_url, tmp_path):
    [ep] = run(RunConfig(["flights-03"], "reference", tmp_path / "runs", variants=["constraint"], sites_url=sites_url,
                         step_images="dom"))
    assert ep.status == "ok"
    [episode] = (tmp_path / "runs").rglob("episode.json")
    steps = read_trajectory(episode.parent / "trajectory.jsonl")
    own = {s.screenshot for s in steps if s.screenshot}
    assert own and not list(episode.parent.glob("screens/*.jpg"))
    res = CliRunner().invoke(app, ["render", str(tmp_path / "runs")])
    assert res.exit_code == 0 and f"{len(own)} drawn" in res.output, res.output
    assert all((episode.parent / p).stat().st_size > 1000 for p in own)


def test_the_report_draws_the_images_a_dom_recording_lacks_once(sites_url, tmp_path):
    runs = tmp_path / "runs"
    for task in ("flights-03", "stats-02"):  # two episodes, drawn side by side
        run(RunConfig([task], "reference", runs, variants=["constraint"], sites_url=sites_url, step_images="dom"))
    episodes = sorted(p.parent for p in runs.rglob("episode.json"))
    own = {e: sorted({s.screenshot for s in read_trajectory(e / "trajectory.jsonl") if s.screenshot}) for e in episodes}
    assert len(own) == 2 and all(own.values()) and not list(runs.rglob("screens/*.jpg"))
    runner = CliRunner()
    assert runner.invoke(app, ["grade", str(runs)]).exit_code == 0
    res = runner.invoke(app, ["report", str(runs), "--out", str(tmp_path / "report")])
    assert res.exit_code == 0, res.output
    for e, images in own.items():  # every step's own image drawn into the episode, and copied into the report
        assert all((e / p).stat().st_size > 1000 for p in images), e
        copied = tmp_path / "report" / "screens" / episode_id(runs, e) / "full"
        assert {p.name for p in copied.glob("*.jpg")} >= {Path(p).name for p in images}
    drawn = {p: p.stat().st_mtime_ns for e in episodes for p in (e / "screens").glob("*.jpg")}
    assert runner.invoke(app, ["report", str(runs), "--out", str(tmp_path / "again")]).exit_code == 0
    assert {p: p.stat().st_mtime_ns for p in drawn} == drawn  # drawn once: the second report drew nothing


def test_dom_images_need_dom_snapshots():
    with pytest.raises(ValidationError, match="needs dom_snapshot"):
        RecorderOptions(screenshot_source="dom", dom_snapshot=False)
    assert RecorderOptions(screenshot_source="dom", dom_snapshot=False, screenshots="off").screenshots == "off"


async def test_a_screenshot_refused_before_the_first_frame_is_taken_again(
    context, page, pages_url, tmp_path, browser, monkeypatch
):
    ep = tmp_path / "ep"
    rec = await Recorder.attach(context, ep, options=DOM)
    async with rec.action({"type": "goto", "target": None, "value": None}):
        await page.goto(f"{pages_url}/colours.html")
    await rec.close()
    refused: list[str] = []
    opened = BrowserContext.new_cdp_session

    class RefusesOnce:
        """A CDP session whose first screenshot gets Chromium's answer for a page with no frame yet."""

        def __init__(self, session) -> None:
            self.session = session

        async def send(self, method: str, params: dict | None = None):
            if method == "Page.captureScreenshot" and not refused:
                refused.append(method)
                raise PlaywrightError("Protocol error (Page.captureScreenshot): Unable to capture screenshot")
            return await self.session.send(method, params)

    async def new_cdp_session(self, target):
        return RefusesOnce(await opened(self, target))

    monkeypatch.setattr(BrowserContext, "new_cdp_session", new_cdp_session)
    due = _due(ep)
    assert await render_dom_images(browser, ep / "evidence.warc.gz", due) == dict.fromkeys(due)
    assert refused and [shown(due[n].read_bytes()) for n in sorted(due)] == [0]
