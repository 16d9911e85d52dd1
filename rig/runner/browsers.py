"""One shared Chromium per executor, relaunched when it dies; CDP browsers launched per episode."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from contextlib import asynccontextmanager
from typing import AsyncIterator

from playwright.async_api import Browser, BrowserContext, Playwright

from rig.browser import close_context, launch, launch_for_cdp
from rig.errors import InfraError
from rig.network.settings import Network


class BrowserPool:
    """Hands out the executor's browser, relaunching it after a crash."""

    def __init__(self, pw: Playwright | None, headless: bool = True, context_options: dict | None = None,
                 sealed: bool = False, network: Network | None = None, archive_only: bool = False) -> None:
        self.pw, self.headless = pw, headless
        #: Launch flags (`rig.browser.launch`): sealed for allow-listed runs, archive-only for frozen ones.
        self.sealed, self.archive_only = sealed, archive_only
        #: How the browser reaches the network (loopback only, or live), host mappings, certificate errors.
        self.network = network or Network()
        #: Extra options for every new context (frozen replay blocks service workers).
        self.context_options = {**self.network.context_options(), **(context_options or {})}
        #: The user agent contexts send (a live run's politeness adds the rig's suffix); None: the browser's own.
        self.user_agent: str | None = None
        self._browser: Browser | None = None
        self._lock = asyncio.Lock()
        self._owned = True
        self.launches = 0

    @classmethod
    def around(cls, browser: Browser, network: Network | None = None, context_options: dict | None = None
               ) -> BrowserPool:
        """A pool that hands out a browser someone else launched (and closes it never); `network` and
        `context_options` give its contexts' options (certificate errors, politeness's user agent, blocked service
        workers), the launch having set the rest. A CDP driver cannot run in it (it needs a browser of its own)."""
        pool = cls(None, network=network, context_options=context_options)
        pool._browser, pool._owned = browser, False
        return pool

    async def get(self) -> Browser:
        """A connected browser (launching one if needed)."""
        async with self._lock:
            if self._browser is None or not self._browser.is_connected():
                if self.pw is None:
                    raise InfraError("the browser this recording was given is gone")
                self._browser = await launch(self.pw, headless=self.headless, sealed=self.sealed,
                                             archive_only=self.archive_only, local_only=self.network.local_only,
                                             resolve=self.network.resolve)
                self.launches += 1
            return self._browser

    async def _learn_user_agent(self) -> None:
        """With politeness, read the browser's own user agent once and add the rig's suffix to every context's."""
        polite = self.network.politeness
        if polite is None or self.user_agent is not None:
            return
        ctx = await (await self.get()).new_context()
        try:
            page = await ctx.new_page()
            self.user_agent = polite.user_agent(await page.evaluate("navigator.userAgent"))
        finally:
            await _quiet_close(ctx)
        self.context_options["user_agent"] = self.user_agent

    @asynccontextmanager
    async def context(self, cdp: bool, proxy: dict[str, str] | None = None
                      ) -> AsyncIterator[tuple[BrowserContext, str | None, Browser | None]]:
        """A fresh context: in the shared browser, or (for CDP drivers) in a browser of its own; `proxy` (Playwright's
        option) sends its every connection through an episode's guard (`rig.network.guard`)."""
        await self._learn_user_agent()
        options = {**self.context_options, **({"proxy": proxy} if proxy is not None else {})}
        if not cdp:
            browser = await self.get()
            ctx = await browser.new_context(**options)
            try:
                yield ctx, None, browser
            finally:
                await _quiet_close(ctx)
            return
        if self.pw is None:
            raise InfraError("a CDP driver needs a browser of its own; this pool only holds one it was given")
        profile = tempfile.mkdtemp(prefix="rig-cdp-profile-")
        try:
            ctx, url = await launch_for_cdp(self.pw, profile, headless=self.headless, sealed=self.sealed,
                                            archive_only=self.archive_only,
                                            local_only=self.network.local_only, resolve=self.network.resolve,
                                            **options)
            try:
                yield ctx, url, ctx.browser
            finally:
                await _quiet_close(ctx)
        finally:
            shutil.rmtree(profile, ignore_errors=True)

    async def close(self) -> None:
        """Close the shared browser."""
        if self._owned and self._browser is not None and self._browser.is_connected():
            await self._browser.close()


async def _quiet_close(ctx: BrowserContext) -> None:
    try:
        await asyncio.wait_for(close_context(ctx), timeout=30)
    except Exception:  # the browser may already be gone; nothing left to close
        pass
