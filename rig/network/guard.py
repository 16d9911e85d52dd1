"""One browser context's network rules, enforced twice: a `GuardProxy` every connection of the context goes through,
and routes that abort what the rules refuse by name before it leaves the browser (with the clearer
ERR_BLOCKED_BY_CLIENT). What either refused is recorded with its redirect chain (`episode.json`: `blocked_requests`,
`blocked_urls`, `blocked`, `refused_connections`).

Playwright calls a route handler only for the first URL of a redirect chain and follows the later hops itself;
service workers' requests and a few others (a favicon) are never routed. The proxy sees them all: a hop to a refused
host is refused there, and the browser's `requestfailed` for it (whose `redirected_from` links give the chain) is
recorded here. Service workers are blocked in such contexts (`GUARDED_CONTEXT_OPTIONS`), and so are WebRTC peer
connections and WebTransport (`replay.NO_UNROUTED_CHANNELS`; the browser is launched sealed too).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Literal

from loguru import logger
from playwright.async_api import BrowserContext, Request, Route, WebSocketRoute

from replay.route import NO_UNROUTED_CHANNELS
from rig.formats.episode import BlockedRequest
from rig.network.policy import Policy
from rig.network.proxy import GuardProxy

#: Context options a guarded context needs (service-worker requests are not routed).
GUARDED_CONTEXT_OPTIONS = {"service_workers": "block"}
#: How many blocked URLs and requests `episode.json` keeps (the count covers them all).
KEEP_URLS = 10
#: How the browser reports a request the proxy refused: a tunnel's 403, a plain request answered with nothing.
_PROXY_REFUSED = ("ERR_TUNNEL_CONNECTION_FAILED", "ERR_EMPTY_RESPONSE")


def redirect_chain(request: Request) -> list[str]:
    """How the browser came to `request`, first URL first: the page that sent the browser on (its chain's first
    request's `Referer`, as a meta refresh, a script or a link sends it; a URL typed or given to `goto` has none),
    then every hop of its HTTP redirect chain, the request's own URL last."""
    hops: list[str] = []
    r: Request | None = request
    first = request
    while r is not None:
        hops.insert(0, r.url)
        first, r = r, r.redirected_from
    left = first.headers.get("referer", "") if first.is_navigation_request() else ""
    if left.startswith(("http://", "https://")) and left != hops[0]:
        hops.insert(0, left)
    return hops


class NetworkGuard:
    """Enforces one `Policy` on a browser context (see the module's docstring) and records what it refused."""

    def __init__(self, policy: Policy, redact: Callable[[str], str] = lambda u: u) -> None:
        self.policy = policy
        self.redact = redact
        self.proxy = GuardProxy(policy)
        self.blocked = 0
        self.urls: list[str] = []
        self.records: list[BlockedRequest] = []
        #: Each URL of a blocked request's chain -> why the chain was refused (the latest), for `failure`.
        self._refused_chains: dict[str, str] = {}

    async def start(self) -> NetworkGuard:
        """Start the context's proxy (before the context is made: it is one of its options)."""
        await self.proxy.start()
        return self

    async def close(self) -> None:
        """Stop the proxy."""
        await self.proxy.close()

    @property
    def proxy_option(self) -> dict[str, str]:
        """Playwright's `proxy=` option for the context (Playwright sends loopback through it too)."""
        return {"server": self.proxy.url}

    def allows(self, url: str) -> bool:
        """Whether a request to `url` may leave the browser by its name (non-network schemes always may)."""
        return self.policy.url_refused(url) is None

    def failure(self, url: str) -> str | None:
        """Why a navigation to `url` failed, as far as the guard knows: a refused hop of a chain through `url`, else
        what the proxy said of `url`'s host and port last time; None: neither."""
        return self._refused_chains.get(url) or self.proxy.failure(url)

    async def attach(self, context: BrowserContext) -> NetworkGuard:
        """Route every request and WebSocket of `context` through the rules; block the unrouted channels; record
        the requests the proxy refused."""
        await context.add_init_script(script=NO_UNROUTED_CHANNELS)
        await context.route("**/*", self._route)
        await context.route_web_socket(re.compile(".*"), self._web_socket)
        context.on("requestfailed", self._failed)
        return self

    def _block(self, url: str, chain: list[str], reason: str, by: Literal["browser", "proxy"]) -> None:
        self.blocked += 1
        self._refused_chains.update(dict.fromkeys(chain, reason))
        if len(self.urls) < KEEP_URLS:
            self.urls.append(self.redact(url))
        if len(self.records) < KEEP_URLS:
            self.records.append(BlockedRequest(url=self.redact(url), chain=[self.redact(u) for u in chain],
                                               reason=reason, by=by))
        logger.debug("blocked ({}): {}", reason, self.redact(url))

    async def _route(self, route: Route) -> None:
        request = route.request
        reason = self.policy.url_refused(request.url)
        if reason is None:
            await route.fallback()
            return
        self._block(request.url, redirect_chain(request), reason, "browser")
        await route.abort("blockedbyclient")

    async def _web_socket(self, ws: WebSocketRoute) -> None:
        reason = self.policy.url_refused(ws.url)
        if reason is None:
            ws.connect_to_server()
            return
        self._block(ws.url, [ws.url], reason, "browser")
        await ws.close(code=1008, reason="blocked by the run's network rules")

    def _failed(self, request: Request) -> None:
        error = request.failure or ""
        if not any(code in error for code in _PROXY_REFUSED):
            return
        reason = self.proxy.refusal(request.url)
        if reason is not None:
            self._block(request.url, redirect_chain(request), reason, "proxy")
