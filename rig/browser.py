"""Launching Debian's (or Playwright's) Chromium with the flags of `rig.network.flags`: offline, or able to reach
the network (`local_only=False`: live runs), with `--resolve HOST=ADDR:PORT` host mappings in either mode."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from playwright.async_api import Browser, BrowserContext, Playwright

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
