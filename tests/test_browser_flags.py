"""The rig's Chromium flags as Chromium itself reads them: its one `--disable-features` keeps every feature Playwright
turns off, adds the rig's own and a caller's, a new context opens no address-bar WebUI renderer, and a page that failed
to load is not loaded again behind its driver's back."""

from __future__ import annotations

import base64
import json

from playwright.async_api import Browser, BrowserContext, Error, Route

from rig.browser import chromium_path, launch
from rig.network.flags import OFFLINE_FLAGS, PLAYWRIGHT_DISABLED_FEATURES, RIG_DISABLED_FEATURES, launch_args
from waiting import wait_until


async def _disabled_features(browser: Browser) -> set[str]:
    """The features Chromium turned off from its command line, as chrome://version shows them."""
    context = await browser.new_context()
    try:
        page = await context.new_page()
        await page.goto("chrome://version")
        variations = json.loads(base64.b64decode(await page.get_attribute("#variations-cmd", "data-value") or ""))
        return set(variations["disable-features"].split(","))
    finally:
        await context.close()


async def _ui_targets(browser: Browser) -> list[str]:
    """The URLs of the browser-UI targets (WebUI the browser builds for itself, not pages) after a new context."""
    cdp = await browser.new_browser_cdp_session()
    context = await browser.new_context()
    try:
        await context.new_page()
        targets = (await cdp.send("Target.getTargets"))["targetInfos"]
        return [t["url"] for t in targets if t["type"] == "browser_ui"]
    finally:
        await context.close()
        await cdp.detach()


async def test_playwright_turns_off_the_features_the_rig_repeats(playwright):
    """If a Playwright upgrade changes its list, `PLAYWRIGHT_DISABLED_FEATURES` must follow, or the rig's one
    `--disable-features` would turn Playwright's back on."""
    plain = await playwright.chromium.launch(executable_path=chromium_path(), args=OFFLINE_FLAGS)
    try:
        assert await _disabled_features(plain) == set(PLAYWRIGHT_DISABLED_FEATURES)
        assert any("omnibox-popup" in url for url in await _ui_targets(plain)), "the cost the rig's flag removes"
    finally:
        await plain.close()


async def test_the_rig_keeps_playwrights_features_off_with_its_own_and_a_callers(playwright):
    browser = await launch(playwright, extra_args=["--disable-features=Translate,AimEnabled"])
    try:
        wanted = {*PLAYWRIGHT_DISABLED_FEATURES, *RIG_DISABLED_FEATURES, "Translate"}
        assert await _disabled_features(browser) == wanted
        assert await _ui_targets(browser) == [], "no address-bar drop-down is built for a new context"
    finally:
        await browser.close()


async def _fail_a_navigation(context: BrowserContext) -> list[str]:
    """Open a page of `context` whose load fails (its connection refused, by a route); the URLs the context asks for
    from then on, as long as it stays open."""
    asked: list[str] = []

    async def refuse(route: Route) -> None:
        asked.append(route.request.url)
        await route.abort("connectionrefused")

    await context.route("**/*", refuse)
    page = await context.new_page()
    try:
        await page.goto("http://127.0.0.1:9/gone")
    except Error as exc:
        assert "ERR_CONNECTION_REFUSED" in str(exc), exc
    return asked


async def test_a_page_that_failed_to_load_is_not_loaded_again_by_the_browser_itself(playwright, context):
    """Chromium reloads a failed page by itself after a second (then 5 s, 30 s...): a request no driver made, which
    recorded a hop the allow-list refused twice under load. Beside a browser with that reload left on, which shows
    it happening, the rig's browser (the session's, whose page failed first) asks once."""
    reloading = await playwright.chromium.launch(
        executable_path=chromium_path(), args=[a for a in launch_args() if a != "--disable-auto-reload"])
    try:
        rig_asked = await _fail_a_navigation(context)
        control_asked = await _fail_a_navigation(await reloading.new_context())
        await wait_until(lambda: len(control_asked) >= 2, timeout=60, message="the control browser reloads by itself")
        assert rig_asked == ["http://127.0.0.1:9/gone"], rig_asked
    finally:
        await reloading.close()
