"""Performing one trajectory action on a Playwright page: the one executor behind action scripts (the rig's
scripted agents) and re-driving a recorded episode (`replay.redrive`).

An action is the trajectory's `{type, target, value}`: `target` a Playwright selector, `value` the argument.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

if TYPE_CHECKING:
    from playwright.async_api import Page

#: Steps a page caused on its own (observed by the recorder): re-driving navigates only when the URL differs.
NAVIGATIONS = ("load", "navigate", "hashchange", "pushState", "replaceState", "popstate")
#: Action types that change nothing on the page: performing them only waits for their element, if any.
READS = ("extract_table", "extract_text")
WAIT_STATES = ("attached", "detached", "visible", "hidden")
#: Every kind `perform` acts on (others, such as a tool call's step, it leaves alone).
PERFORMED = frozenset({"goto", *NAVIGATIONS, "select", "check", "uncheck", "fill", "press", "click", "submit",
                       "wait_for", *READS})


def local_part(url: str) -> str:
    """A URL without scheme and origin: path, query and fragment (how re-driving compares pages)."""
    p = urlsplit(url)
    return p.path + (f"?{p.query}" if p.query else "") + (f"#{p.fragment}" if p.fragment else "")


async def perform(page: Page, action: dict[str, Any], *, base_url: str, timeout_ms: float) -> None:
    """Do `action` on `page`; relative URLs resolve against `base_url`. Kinds that change nothing on the page
    (`answer`, `checkpoint`, unknown ones) do nothing."""
    kind, target, value = action.get("type"), action.get("target"), action.get("value")
    loc = page.locator(target) if target else None
    if kind == "goto":
        await page.goto(urljoin(base_url, str(value or target or base_url)), timeout=timeout_ms)
    elif kind in NAVIGATIONS:
        want = urljoin(base_url, str(value or base_url))
        if local_part(want) != local_part(page.url):
            await page.goto(want, timeout=timeout_ms)
    elif loc is None:
        if kind == "press" and value:
            await page.keyboard.press(str(value))
    elif kind == "select":
        await loc.select_option(value, timeout=timeout_ms)
    elif kind in ("check", "uncheck"):
        await (loc.check if kind == "check" else loc.uncheck)(timeout=timeout_ms)
    elif kind == "fill":
        await loc.fill(str(value or ""), timeout=timeout_ms)
    elif kind == "press":
        await loc.press(str(value), timeout=timeout_ms)
        await parsed(page, timeout_ms)
    elif kind == "click":
        await loc.click(timeout=timeout_ms)
        await parsed(page, timeout_ms)
    elif kind == "submit":
        await loc.evaluate("f => f.requestSubmit ? f.requestSubmit() : f.submit()")
        await parsed(page, timeout_ms)
    elif kind == "wait_for":
        await loc.first.wait_for(state=value if value in WAIT_STATES else "visible", timeout=timeout_ms)
    elif kind in READS:
        await loc.first.wait_for(state="attached", timeout=timeout_ms)


async def parsed(page: Page, timeout_ms: float) -> None:
    """After an action that may have navigated: wait until the document is parsed and its blocking scripts ran
    (DOMContentLoaded), so the next action never meets a form whose listeners are not attached yet (Playwright's
    click returns once a navigation commits)."""
    # imported here: rig.tasks imports this module and must load no playwright
    from playwright.async_api import Error as PlaywrightError

    try:
        await page.wait_for_load_state("domcontentloaded", timeout=timeout_ms)
    except PlaywrightError:
        pass  # a document that never finishes parsing, a page the action closed: the next action reports it
