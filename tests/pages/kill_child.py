"""Child of the SIGKILL test: records a never-ending scripted episode, printing the step count after each pair."""

from __future__ import annotations

import asyncio
import sys

from playwright.async_api import async_playwright

from recorders import Recorder, RecorderOptions
from rig.browser import launch


async def main(base: str, out: str) -> None:
    async with async_playwright() as pw:
        browser = await launch(pw)
        context = await browser.new_context()
        page = await context.new_page()
        rec = await Recorder.attach(context, out, options=RecorderOptions(screenshots="every"))
        i = 0
        while True:
            url = f"{base}/catalog.html?page={i % 5 + 1}"
            async with rec.action({"type": "goto", "target": url, "value": None}):
                await page.goto(url)
            async with rec.action({"type": "click", "target": "#details", "value": None}):
                await page.click("#details")
            print(rec.steps, flush=True)
            i += 1


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
