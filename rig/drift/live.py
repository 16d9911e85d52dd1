"""How `rig drift` reaches the live origins: contexts that accept certificate errors when asked, carry the rig's user
agent and share one politeness gate; and each origin probed once, before anything of it is compared."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from playwright.async_api import Browser, BrowserContext
from playwright.async_api import Error as PlaywrightError

from replay.redrive import RECHECKS
from rig.network.failures import describe, net_error, unreachable
from rig.network.politeness import PoliteGate, Politeness
from rig.network.resolve import HostMapping

#: What to do about an origin that could not be reached, by how it failed.
_HINTS = {
    "dns": "its host name does not resolve here: map it with --resolve HOST=ADDR:PORT",
    "connect": "nothing answered there: check that it is up, or send its requests elsewhere with --resolve "
               "HOST=ADDR:PORT",
    "tls": "its certificate is not trusted: --ignore-https-errors accepts self-signed ones",
}


@dataclass
class DriftOptions:
    """How the live origin is reached."""

    resolve: list[HostMapping] = field(default_factory=list)
    ignore_https_errors: bool = False
    headless: bool = True
    timeout_s: float = 15.0
    #: A differing step is captured again this often (100 ms apart) before it counts: the live page may still load.
    rechecks: int = RECHECKS
    #: Requests to each host are rate-limited and capped as in live runs (None: not held back).
    politeness: Politeness | None = field(default_factory=Politeness)


@dataclass
class LiveSide:
    """The live side of one check: how its contexts are made, and the origins found unreachable (origin -> why)."""

    opts: DriftOptions
    gate: PoliteGate | None = None
    user_agent: str | None = None
    unreachable: dict[str, str] = field(default_factory=dict)
    _probed: set[str] = field(default_factory=set)

    @classmethod
    async def start(cls, browser: Browser, opts: DriftOptions) -> LiveSide:
        """The live side of a check on `browser` (reading the browser's user agent once, for politeness)."""
        if opts.politeness is None:
            return cls(opts)
        probe = await browser.new_context()
        try:
            agent = await (await probe.new_page()).evaluate("navigator.userAgent")
        finally:
            await probe.close()
        return cls(opts, PoliteGate(opts.politeness), opts.politeness.user_agent(agent))

    @property
    def context_options(self) -> dict[str, Any]:
        """Options of a context reaching the live origins."""
        extra = {"user_agent": self.user_agent} if self.user_agent else {}
        return {"ignore_https_errors": self.opts.ignore_https_errors, "service_workers": "block", **extra}

    async def prepare(self, context: BrowserContext) -> None:
        """Route a new live context through the check's politeness gate."""
        if self.gate is not None:
            await self.gate.attach(context)

    async def context(self, browser: Browser) -> BrowserContext:
        """A new context reaching the live origins."""
        context = await browser.new_context(**self.context_options)
        await self.prepare(context)
        return context

    async def probe(self, browser: Browser, origins: dict[str, str]) -> None:
        """Load a URL of each origin not probed yet (`origins`: origin -> URL); an origin whose request fails at
        DNS, TLS or connect is noted as unreachable, with what to do about it."""
        todo = {o: u for o, u in origins.items() if o not in self._probed}
        if not todo:
            return
        self._probed |= set(todo)
        context = await self.context(browser)
        try:
            page = await context.new_page()
            for origin, url in todo.items():
                try:
                    await page.goto(url, timeout=self.opts.timeout_s * 1000)
                except PlaywrightError as exc:  # a timeout or an abort is no verdict: the check itself will tell
                    code = net_error(str(exc))
                    if (kind := unreachable(code)) is not None:
                        self.unreachable[origin] = f"{describe(code) or code}; {_HINTS[kind]}"
        finally:
            await context.close()

    def blocked(self, origins: dict[str, str]) -> str | None:
        """Why items on these origins cannot be re-checked (the first unreachable one), or None."""
        return next((f"cannot reach {o}: {self.unreachable[o]}" for o in origins if o in self.unreachable), None)
