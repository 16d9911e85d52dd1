"""Per-step JPEG screenshots (CDP `Page.captureScreenshot` on Chromium, Playwright's screenshot elsewhere)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from playwright.async_api import CDPSession, Page


async def capture_jpeg(page: Page, cdp: CDPSession | None, quality: int, scale: float) -> bytes:
    """A JPEG of the page's viewport."""
    if cdp is None:
        return await page.screenshot(type="jpeg", quality=quality, animations="disabled", caret="hide")
    params: dict[str, Any] = {"format": "jpeg", "quality": quality, "optimizeForSpeed": True}
    if scale < 1:
        vp = await page.evaluate("() => ({x: scrollX, y: scrollY, width: innerWidth, height: innerHeight})")
        params["clip"] = {**vp, "scale": scale}
    res = await cdp.send("Page.captureScreenshot", params)
    return base64.b64decode(res["data"])


def screen_path(step: int) -> str:
    """The screenshot's path relative to the episode directory."""
    return f"screens/{step:04d}.jpg"


def save(out_dir: Path, step: int, data: bytes) -> str:
    """Write a step's screenshot; return its relative path."""
    rel = screen_path(step)
    (out_dir / rel).write_bytes(data)
    return rel
