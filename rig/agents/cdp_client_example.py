"""An example outside driver for `rig run --agent cdp`: connects over CDP and works in the rig's own tab.

    python -m rig.agents.cdp_client_example CDP_URL START_URL

It attaches with Playwright's `connect_over_cdp`, takes the existing context's first page (the one the
rig records), opens START_URL, then fills, selects and clicks whatever form controls the page has:
the first text input gets "rig", every `<select>` its last option, and the first submit button (or
button) is clicked. It prints one JSON line saying what it did and leaves the browser running.
"""

from __future__ import annotations

import asyncio
import json
import sys

from playwright.async_api import Page, async_playwright


async def drive(page: Page, start_url: str) -> dict[str, object]:
    """Open `start_url` in `page` and operate its form controls; return what was done."""
    done: dict[str, object] = {}
    await page.goto(start_url)
    text = page.locator("input[type=text], input[type=search], input:not([type])")
    if await text.count():
        await text.first.fill("rig")
        done["filled"] = await text.first.get_attribute("name")
    selects = page.locator("select")
    picked = {}
    for i in range(await selects.count()):
        sel = selects.nth(i)
        values = await sel.locator("option").evaluate_all("opts => opts.map(o => o.value)")
        if values:
            await sel.select_option(values[-1])
            picked[await sel.get_attribute("name") or str(i)] = values[-1]
    done["selected"] = picked
    button = page.locator("button[type=submit], input[type=submit], button")
    if await button.count():
        done["clicked"] = (await button.first.inner_text()).strip()
        await button.first.click()
    await page.wait_for_load_state()
    done["url"] = page.url
    return done


async def main(cdp_url: str, start_url: str) -> dict[str, object]:
    """Connect to the rig's browser at `cdp_url`, drive its first page, disconnect (the browser stays)."""
    async with async_playwright() as pw:
        browser = await pw.chromium.connect_over_cdp(cdp_url)
        context = browser.contexts[0]
        page = context.pages[0] if context.pages else await context.new_page()
        return await drive(page, start_url)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python -m rig.agents.cdp_client_example CDP_URL START_URL")
    print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2]))), flush=True)
