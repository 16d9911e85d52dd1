"""`rig run --allow-host`: a live episode's browser context reaches only the task's site and the hosts allowed.

Every request and WebSocket of the context is routed; one to another host is aborted before it leaves the
browser and counted (`episode.json`: `allowed_hosts`, `blocked_requests`, `blocked_urls`). A host is a
name or address (any port) or `host:port` (that port only); the sites server's own `host:port` is always
allowed. Service workers are blocked in such contexts, since their requests bypass routing, and so are WebRTC
peer connections and WebTransport (`replay.NO_UNROUTED_CHANNELS`; the browser is launched sealed too).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from urllib.parse import urlsplit

from loguru import logger
from playwright.async_api import BrowserContext, Route, WebSocketRoute

from replay.route import NO_UNROUTED_CHANNELS
from rig.errors import InputError

#: Context options an allow-listed context needs (service-worker requests are not routed).
ALLOW_LIST_CONTEXT_OPTIONS = {"service_workers": "block"}
#: How many blocked URLs `episode.json` keeps (the count covers them all).
KEEP_URLS = 10
_HOST = re.compile(r"^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_.-]+)(:\d{1,5})?$")


def parse_hosts(hosts: Iterable[str]) -> list[str]:
    """Check `--allow-host` values (`name`, `address`, `host:port`, `[v6]:port`); return them lower-cased."""
    out = []
    for h in hosts:
        if not _HOST.match(h.strip()):
            raise InputError("--allow-host", None, f"{h!r} is not a host: give a name or address, optionally with "
                                                   ":port (no scheme, no path), e.g. 127.0.0.1:8765 or data.example.org")
        out.append(h.strip().lower())
    return out


def _netloc(url: str) -> tuple[str, str] | None:
    """(host, host:port) of an http(s)/ws(s) URL, the port made explicit; None for other schemes."""
    parts = urlsplit(url)
    default = {"http": 80, "ws": 80, "https": 443, "wss": 443}.get(parts.scheme)
    if default is None or not parts.hostname:
        return None
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return host, f"{host}:{parts.port or default}"


class HostGuard:
    """Aborts a context's requests to hosts outside the allow-list; counts and keeps (redacted) the first URLs."""

    def __init__(self, allowed: Iterable[str], redact: Callable[[str], str] = lambda u: u) -> None:
        self.allowed = frozenset(allowed)
        self.redact = redact
        self.blocked = 0
        self.urls: list[str] = []

    def allows(self, url: str) -> bool:
        """Whether a request to `url` may leave the browser (non-network schemes always may)."""
        where = _netloc(url)
        return where is None or where[0] in self.allowed or where[1] in self.allowed

    async def attach(self, context: BrowserContext) -> HostGuard:
        """Route every request and WebSocket of `context` through the allow-list; block the unrouted channels."""
        await context.add_init_script(script=NO_UNROUTED_CHANNELS)
        await context.route("**/*", self._route)
        await context.route_web_socket(re.compile(".*"), self._web_socket)
        return self

    def _block(self, url: str) -> None:
        self.blocked += 1
        if len(self.urls) < KEEP_URLS:
            self.urls.append(self.redact(url))
        logger.debug("blocked by the allow-list: {}", self.redact(url))

    async def _route(self, route: Route) -> None:
        if self.allows(route.request.url):
            await route.fallback()
            return
        self._block(route.request.url)
        await route.abort("blockedbyclient")

    async def _web_socket(self, ws: WebSocketRoute) -> None:
        if self.allows(ws.url):
            ws.connect_to_server()
            return
        self._block(ws.url)
        await ws.close(code=1008, reason="blocked by the run's allow-list")
