"""Step images: each step's JPEG shows that step's state, never the next action's nor the previous one's; a step
ended by an event nothing could hold back, before its screenshot came back, has none."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Awaitable, Callable
from typing import Any

from PIL import Image
from test_recorder import wait_steps

import recorders.screens
from recorders import Recorder, RecorderOptions, read_trajectory

#: The colours of tests/pages/colours.html, state n showing COLOURS[n % 10] over the whole viewport.
COLOURS = [
    (0xE0, 0, 0), (0, 0xC0, 0), (0, 0, 0xE0), (0xE0, 0xE0, 0), (0xE0, 0, 0xE0),
    (0, 0xE0, 0xE0), (0, 0, 0), (0xFF, 0xFF, 0xFF), (0xE0, 0x80, 0), (0x80, 0, 0xE0),
]  # fmt: skip


def shown(jpeg: bytes) -> int:
    """Which colour (state number mod 10) an image shows in the middle of the viewport."""
    im = Image.open(io.BytesIO(jpeg)).convert("RGB")
    px = im.getpixel((im.width // 2, im.height // 2))
    dist = [sum(abs(a - b) for a, b in zip(px, c, strict=True)) for c in COLOURS]
    best = min(range(len(COLOURS)), key=dist.__getitem__)
    assert dist[best] < 60, px
    return best


async def test_each_step_image_shows_its_state_not_the_next_actions(context, page, pages_url, tmp_path):
    rec = await Recorder.attach(
        context, tmp_path / "ep", options=RecorderOptions(screenshots="every", observe_idle_ms=100)
    )
    expected: list[int] = []

    async def act(state: int, body: Callable[[], Awaitable[Any]], kind: str = "click") -> None:
        async with rec.action({"type": kind, "target": None, "value": None}):
            await body()
        expected.append(state % 10)

    def show(n: int) -> Callable[[], Awaitable[Any]]:
        return lambda: page.evaluate(f"show({n})")

    await act(0, lambda: page.goto(f"{pages_url}/colours.html"), "goto")
    for n in range(1, 16):  # each change dispatched by JS the moment the previous step is written
        await act(n, show(n))
    await act(16, lambda: page.evaluate("setTimeout(() => show(16), 20)"))  # painted after the action returned
    await act(16, lambda: page.evaluate("document.body.dataset.x = '1'"))  # a change that paints nothing
    await act(16, lambda: page.locator("#block").inner_text(), "extract_text")  # no change at all
    await act(17, lambda: page.click("#next"))  # real input
    await act(17, lambda: page.evaluate("scrollTo(0, 5)"))  # a scroll of a page that cannot scroll
    # another site: a renderer of its own
    await act(18, lambda: page.goto(f"{pages_url.replace('127.0.0.1', 'localhost')}/colours.html?n=18"), "goto")
    await act(19, show(19))
    await page.click("#next")  # a person's click: an observed step, then a reported action right after it
    await wait_steps(rec, len(expected) + 1)
    expected.append(0)
    await act(21, show(21))
    await page.click("#next")  # observed again, the recorder closed right after
    await wait_steps(rec, len(expected) + 1)
    expected.append(2)
    await rec.close()

    steps = read_trajectory(tmp_path / "ep" / "trajectory.jsonl")
    assert len(steps) == len(expected) and all(s.screenshot == f"screens/{s.step:04d}.jpg" for s in steps)
    # The agent steps the person's clicks ended right away: when their screenshot was not back by then (a busy
    # machine), nothing could be pictured in time, and they have no image rather than a wrong one.
    unheld = {len(expected) - 4, len(expected) - 2}
    got = [shown(f.read_bytes()) if (f := tmp_path / "ep" / s.screenshot).exists() else None for s in steps]
    assert all(g is not None or n in unheld for n, g in enumerate(got)), got
    assert [g for g in got if g is not None] == [e for g, e in zip(got, expected, strict=True) if g is not None], (
        f"{got} != {expected}"
    )
    assert [s.action.source for s in steps[-3:]] == ["observed", "agent", "observed"]


async def test_slow_screenshots_picture_their_own_step_or_none(context, page, pages_url, tmp_path, monkeypatch):
    """Every screenshot takes 0.3 s to come back (a busy machine): each step still gets an image of its own state
    (the next action waits for it), or, ended by a person's input first, none at all."""
    capture = recorders.screens.capture_jpeg

    async def slow(*args: Any) -> bytes | None:
        jpeg = await capture(*args)
        await asyncio.sleep(0.3)
        return jpeg

    monkeypatch.setattr(recorders.screens, "capture_jpeg", slow)
    rec = await Recorder.attach(
        context, tmp_path / "ep", options=RecorderOptions(screenshots="every", observe_idle_ms=100)
    )
    expected: list[int | None] = []

    async def act(state: int | None, script: str | None) -> None:
        async with rec.action({"type": "click" if script else "goto", "target": None, "value": None}):
            await (page.evaluate(script) if script else page.goto(f"{pages_url}/colours.html"))
        expected.append(state)

    await act(0, None)
    await act(1, "show(1)")
    await act(1, "document.body.dataset.x = '1'")  # a change that paints nothing
    await act(3, "show(3)")
    await page.click("#next")  # a person's click at once: the step before may have no image, never a wrong one
    await wait_steps(rec, len(expected) + 1)
    expected.append(4)
    await act(5, "show(5)")
    await rec.close()

    steps = read_trajectory(tmp_path / "ep" / "trajectory.jsonl")
    assert [s.action.source for s in steps] == ["agent"] * 4 + ["observed", "agent"]
    assert all(s.screenshot == f"screens/{s.step:04d}.jpg" for s in steps)
    got = [shown(f.read_bytes()) if (f := tmp_path / "ep" / s.screenshot).exists() else None for s in steps]
    assert got[3] in (3, None) and got[:3] + got[4:] == [0, 1, 1, 4, 5], got


async def test_scaled_images_and_unchanged_steps_share_an_image(context, page, pages_url, tmp_path):
    rec = await Recorder.attach(context, tmp_path / "ep", options=RecorderOptions(screenshot_scale=0.5))
    for script in (None, "show(3)", "document.body.dataset.x = '1'", "void 0", "show(4)"):
        async with rec.action({"type": "click" if script else "goto", "target": None, "value": None}):
            await (page.evaluate(script) if script else page.goto(f"{pages_url}/colours.html"))
    await rec.close()
    steps = read_trajectory(tmp_path / "ep" / "trajectory.jsonl")
    paths = [s.screenshot for s in steps]
    assert paths == ["screens/0000.jpg", "screens/0001.jpg", "screens/0002.jpg", "screens/0002.jpg", "screens/0004.jpg"]
    images = {p: (tmp_path / "ep" / p).read_bytes() for p in set(paths)}
    assert [shown(images[p]) for p in paths] == [0, 3, 3, 3, 4]
    size = page.viewport_size
    assert Image.open(io.BytesIO(images[paths[0]])).size == (size["width"] // 2, size["height"] // 2)
