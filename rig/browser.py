"""Launching Debian's (or Playwright's) Chromium with the flags of `rig.network.flags`: offline, or able to reach
the network (`local_only=False`: live runs), with `--resolve HOST=ADDR:PORT` host mappings in either mode."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from loguru import logger
from playwright.async_api import Browser, BrowserContext, Page, Playwright

from rig.network.flags import launch_args
from rig.network.resolve import HostMapping

DEBIAN_CHROMIUM = "/usr/lib/chromium/chromium"


def chromium_path() -> str | None:
    """The Chromium executable to launch: `RIG_CHROMIUM`, else Debian's, else None (Playwright's own)."""
    env = os.environ.get("RIG_CHROMIUM")
    if env:
        if not Path(env).exists() and not shutil.which(env):
            from rig.errors import InfraError

            raise InfraError(f"RIG_CHROMIUM={env!r} does not exist; point it at a Chromium binary")
        return env
    if Path(DEBIAN_CHROMIUM).exists():
        return DEBIAN_CHROMIUM
    return None


async def launch(
    pw: Playwright,
    *,
    headless: bool = True,
    local_only: bool = True,
    extra_args: list[str] | None = None,
    timeout_s: float = 30.0,
    sealed: bool = False,
    resolve: Sequence[HostMapping] = (),
    archive_only: bool = False,
) -> Browser:
    """Launch Chromium for the rig (offline flags unless `local_only=False`, configurable executable; `sealed` for
    allow-listed runs; `archive_only` (sealed too) for frozen and replayed ones; `resolve` maps host names to
    addresses)."""
    return await pw.chromium.launch(
        executable_path=chromium_path(),
        headless=headless,
        args=launch_args(local_only, extra_args, sealed, resolve, archive_only),
        timeout=timeout_s * 1000,
    )


async def launch_for_cdp(
    pw: Playwright,
    user_data_dir: str | Path,
    *,
    port: int | None = None,
    headless: bool = True,
    local_only: bool = True,
    timeout_s: float = 30.0,
    sealed: bool = False,
    resolve: Sequence[HostMapping] = (),
    archive_only: bool = False,
    **context_options: Any,
) -> tuple[BrowserContext, str]:
    """Launch a persistent Chromium context that outside drivers can reach over CDP on 127.0.0.1.

    `context_options` go to `launch_persistent_context` (e.g. `service_workers="block"` for replay).

    Returns the context and the CDP endpoint (`http://127.0.0.1:P`). With `port=None` Chromium picks a
    free port itself and the port is read from `DevToolsActivePort` in the profile (no race).
    Pages an outside CDP client opens belong to this context: `context.pages`, `context.on("page")`,
    init scripts and exposed bindings apply to them.
    """
    profile = Path(user_data_dir)
    (profile / "DevToolsActivePort").unlink(missing_ok=True)
    extra = [f"--remote-debugging-port={port or 0}", "--remote-debugging-address=127.0.0.1"]
    context = await pw.chromium.launch_persistent_context(
        profile,
        executable_path=chromium_path(),
        headless=headless,
        args=launch_args(local_only, extra, sealed, resolve, archive_only),
        timeout=timeout_s * 1000,
        **context_options,
    )
    try:
        actual = await _devtools_port(profile, port, time.monotonic() + timeout_s)
    except BaseException:
        await context.close()
        raise
    return context, f"http://127.0.0.1:{actual}"


async def _devtools_port(profile: Path, port: int | None, deadline: float) -> int:
    """The DevTools port once it answers (Chromium writes `DevToolsActivePort` only for port 0)."""
    from rig.errors import InfraError

    active = profile / "DevToolsActivePort"
    while True:
        if port is None and active.exists() and "\n" in (text := active.read_text()):
            port = int(text.split()[0])
        if port is not None:
            try:
                body = await asyncio.to_thread(_read_local, f"http://127.0.0.1:{port}/json/version")
                if "webSocketDebuggerUrl" in json.loads(body):
                    return port
            except (OSError, ValueError):
                pass
        if time.monotonic() > deadline:
            raise InfraError(f"Chromium's DevTools port ({port or active}) did not answer in time; is the port taken?")
        await asyncio.sleep(0.02)


def _read_local(url: str) -> bytes:
    """GET a loopback URL, ignoring any proxy settings in the environment."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url, timeout=2) as resp:
        return resp.read()


#: How long a context's close may take before its pages' targets are asked to close again, and how often then.
_CLOSE_ASK_S = 2.0
_CLOSE_TRIES = 8


async def close_context(context: BrowserContext) -> None:
    """Close `context` and make sure it closed (a close that fails raises as `context.close()` does; one that never
    ends is logged). A page whose close races a navigation commit (a page refreshing itself) may never close:
    Chromium acknowledges the close of its target and drops it (crbug.com/536385539, microsoft/playwright#42366) and
    Playwright waits forever. Such a context left in a shared browser would go on loading its page until the browser
    closes, so its pages' targets are asked to close again over CDP, once a second, as Playwright's own proposed fix
    does."""
    closing = asyncio.ensure_future(context.close())
    done, _ = await asyncio.wait({closing}, timeout=_CLOSE_ASK_S)
    if not done:
        browser = context.browser
        targets = [t for t in [await _target_id(context, page) for page in context.pages] if t]
        cdp = await browser.new_browser_cdp_session() if browser is not None and browser.is_connected() else None
        for _ in range(_CLOSE_TRIES if cdp is not None else 0):
            for target in targets:
                with contextlib.suppress(Exception):  # closed meanwhile: nothing to ask
                    await cdp.send("Target.closeTarget", {"targetId": target})
            done, _ = await asyncio.wait({closing}, timeout=1.0)
            if done:
                break
        if cdp is not None:
            with contextlib.suppress(Exception):
                await cdp.detach()
        if not done:
            closing.cancel()
            logger.warning("a browser context did not close within {:g} s: its pages {} stay open in the browser",
                           _CLOSE_ASK_S + _CLOSE_TRIES, [page.url for page in context.pages])
            return
    closing.result()


async def _target_id(context: BrowserContext, page: Page) -> str | None:
    """The CDP target id of `page` (None: it went away)."""
    try:
        session = await asyncio.wait_for(context.new_cdp_session(page), 5)
        try:
            return (await asyncio.wait_for(session.send("Target.getTargetInfo"), 5))["targetInfo"]["targetId"]
        finally:
            with contextlib.suppress(Exception):
                await session.detach()
    except Exception:  # closed meanwhile, or not Chromium
        return None
