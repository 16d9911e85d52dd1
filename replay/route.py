"""Answering every request of a Playwright context from an archive index, never from the network.

    context = await browser.new_context(**REPLAY_CONTEXT_OPTIONS)   # service workers blocked
    session = await attach_replay(context, load_index("evidence.warc.gz"))
    ...
    session.misses   # requests the archive could not answer (each got a deterministic 404)

Sequence: when one key was recorded several times (a "load more" that POSTs the same body, a paginated
POST on one URL), the n-th matching request of the context gets the n-th recorded response; once the
recorded sequence is exhausted the last response is served again (a page that re-polls keeps its last view).

Redirects: Chromium would send the follow-up of a fulfilled 3xx past the route handler, to the network. So a
navigation answered by a recorded redirect gets a tiny page that `location.replace`s itself with the target
(no history entry; the target is then answered from the archive), and a subresource's redirect chain is
followed inside the archive and answered with its final response.

Bodies that are not whole: a response archived with its body cut (`WARC-Truncated`) or without it
(`WARC-Rig-Missing`) is never served as if it were complete. The request gets a deterministic 502 page saying what
the archive holds of it and why (`x-replay: truncated` or `x-replay: missing`), and counts as a miss whose `reason`
says so: the page sees a failed answer, as it would from a server that broke off, never a short one passed off as whole.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

from playwright.async_api import BrowserContext, Route
from playwright.async_api import Error as PlaywrightError

from replay.index import ArchiveIndex, Exchange
from replay.keys import Key

#: Context options a replay context must be created with: service workers would answer requests
#: themselves, out of the route handler's sight.
REPLAY_CONTEXT_OPTIONS: dict[str, Any] = {"service_workers": "block"}

#: Belt and braces for a context created without REPLAY_CONTEXT_OPTIONS: registering a service worker fails.
_NO_SERVICE_WORKERS = """(() => {
  const c = globalThis.ServiceWorkerContainer;
  if (c && c.prototype) c.prototype.register = () => Promise.reject(new DOMException('blocked during replay', 'SecurityError'));
})();"""

#: Init script for contexts that must reach nothing outside their rules (replay, frozen and allow-listed runs):
#: WebRTC peer connections (STUN/TURN, UDP or TCP, to any address) and WebTransport (QUIC) never pass the route
#: handler, so in every window and frame they refuse to be created. Dedicated workers get no init script (their
#: WebTransport is not blocked); Chromium launched with `rig.browser.SEALED_FLAGS` also sends no WebRTC UDP.
NO_UNROUTED_CHANNELS = """(() => {
  const refuse = (name) => function () {
    throw new DOMException(name + ' is blocked in this run: it would bypass request routing', 'NotAllowedError');
  };
  for (const name of ['RTCPeerConnection', 'webkitRTCPeerConnection', 'WebTransport']) {
    if (name in globalThis) Object.defineProperty(globalThis, name, {value: refuse(name), writable: false, configurable: false});
  }
})();"""

#: The seed of `Math.random` in a replayed page (`seeded_random`).
RANDOM_SEED = 0x5EED


def seeded_random(seed: int = RANDOM_SEED) -> str:
    """Init script making `Math.random` a seeded generator (mulberry32) that starts again with every document: a
    page's random ids and cache-busters come out the same on every replay (never what the live site drew)."""
    return f"""(() => {{
  let a = {seed & 0xFFFFFFFF} >>> 0;
  Math.random = function random() {{
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }};
}})();"""


_DROP = {"content-encoding", "content-length", "transfer-encoding", "connection", "keep-alive"}
_MAX_REDIRECTS = 10


@dataclass(frozen=True)
class Miss:
    """A request the archive held no answer for (it got a 404), or only one whose body is not whole (a 502; `reason`
    says why: `truncated (length): 4096 bytes archived`, `missing: body not readable: ...`)."""

    method: str
    url: str
    tag: Any = None
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        """A JSON form: method, url, (when set) the tag active at the time, e.g. the step, and the reason."""
        out: dict[str, Any] = {"method": self.method, "url": self.url}
        if self.tag is not None:
            out["step"] = self.tag
        if self.reason is not None:
            out["reason"] = self.reason
        return out


def miss_body(method: str, url: str) -> bytes:
    """The deterministic 404 page served for a request with no recorded answer."""
    what = html.escape(f"{method} {url}")
    return (
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Not in the archive</title></head>"
        f"<body><h1>404: not in the archive</h1><p>This state was not recorded: <code>{what}</code></p></body></html>"
    ).encode()


def incomplete_body(method: str, url: str, why: str) -> bytes:
    """The deterministic 502 page served for a request whose archived answer's body is not whole."""
    what, because = html.escape(f"{method} {url}"), html.escape(why)
    return (
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Not whole in the archive</title></head>"
        f"<body><h1>502: not whole in the archive</h1><p>The archived answer to <code>{what}</code> has no complete "
        f"body ({because}); it is not served as if it had one.</p></body></html>"
    ).encode()


def incomplete_reason(x: Exchange) -> str | None:
    """Why an archived answer's body is not whole (None when it is): what `Miss.reason` says of it."""
    r = x.response
    if r is None:
        return None
    if r.missing is not None:
        return f"missing: {r.missing}"
    if r.truncated:
        return f"truncated ({r.truncated}): {len(r.body)} bytes archived"
    return None


@dataclass
class ReplaySession:
    """One context's replay: its per-key cursors, the requests it served and the ones it missed."""

    index: ArchiveIndex
    on_miss: Callable[[Miss], None] | None = None
    #: Set by the caller (e.g. the step being re-driven); recorded with each miss.
    tag: Any = None
    misses: list[Miss] = field(default_factory=list)
    served: int = 0
    _cursors: dict[Key, int] = field(default_factory=dict)

    @property
    def miss_count(self) -> int:
        """How many requests the archive could not answer: each got the replay 404, or its 502 (a body not whole)."""
        return len(self.misses)

    def pick(self, method: str, url: str, body: bytes | None, content_type: str | None) -> Exchange | None:
        """The recorded exchange for the next such request (advancing its cursor); else the one recorded without its
        body (`ArchiveIndex.missing_answer`); else None."""
        key = self.index.key(method, url, body, content_type)
        recorded = self.index.exchanges.get(key)
        if not recorded:
            return self.index.missing_answer(key)
        n = self._cursors.get(key, 0)
        self._cursors[key] = n + 1
        return recorded[min(n, len(recorded) - 1)]

    async def handle(self, route: Route) -> None:
        """The route handler: fulfil from the archive, abort a recorded failure, or log a miss (404; 502 for an answer
        whose body is not whole)."""
        req = route.request
        try:
            found = self.pick(req.method, req.url, req.post_data_buffer, req.headers.get("content-type"))
            if found is None:
                await self._miss(route, req.method, req.url)
                return
            if found.response is None:
                await route.abort("failed")
                return
            target = _location(found, req.url)
            if target and req.is_navigation_request():
                # Chromium follows a fulfilled redirect itself and the follow-up escapes the route (it would reach
                # the network): a navigation gets a page that replaces itself with the target instead.
                self.served += 1
                await route.fulfill(status=200, body=redirect_body(target),
                                    headers={"content-type": "text/html; charset=utf-8", "x-replay": "redirect"})
                return
            if target:
                found = self._follow(found, target, req.post_data_buffer, req.headers.get("content-type"))
                if found is None or found.response is None:
                    await self._miss(route, req.method, req.url)
                    return
            why = incomplete_reason(found)
            if why is not None:
                await self._miss(route, req.method, req.url, found, why)
                return
            self.served += 1
            r = found.response
            await route.fulfill(status=r.status, headers=self._headers(found, req.url), body=r.body)
        except PlaywrightError:
            pass  # the page or context closed while answering

    def _follow(self, x: Exchange, target: str, body: bytes | None, ctype: str | None) -> Exchange | None:
        """A subresource's redirect chain resolved inside the archive (bounded): the final exchange, or None."""
        for _ in range(_MAX_REDIRECTS):
            keep = x.response is not None and x.response.status in (307, 308)
            nxt = self.pick(x.method if keep else "GET", target, body if keep else None, ctype if keep else None)
            if nxt is None or nxt.response is None:
                return None
            x = nxt
            target = _location(x, target)
            if not target:
                return x
        return None

    async def _miss(self, route: Route, method: str, url: str, found: Exchange | None = None, why: str | None = None) -> None:
        """Count a miss and answer it: a 404 when nothing was archived, a 502 when `found`'s body is not whole (`why`)."""
        miss = Miss(method, url, self.tag, why)
        self.misses.append(miss)
        if self.on_miss is not None:
            self.on_miss(miss)
        if found is None or why is None:
            await route.fulfill(status=404, body=miss_body(method, url),
                                headers={"content-type": "text/html; charset=utf-8", "x-replay": "miss"})
            return
        kind = "missing" if found.response is not None and found.response.missing is not None else "truncated"
        await route.fulfill(status=502, body=incomplete_body(method, url, why),
                            headers={"content-type": "text/html; charset=utf-8", "x-replay": kind})

    @staticmethod
    def _headers(x: Exchange, url: str) -> dict[str, str]:
        out: dict[str, str] = {}
        for k, v in x.response.headers if x.response else ():
            lk = k.lower()
            if lk not in _DROP:
                out[lk] = f"{out[lk]}, {v}" if lk in out else v
        return out


def _location(x: Exchange, current: str) -> str | None:
    """Where a recorded redirect points, moved onto the current request's origin when it pointed at the
    recorded one (a snapshot replays on another port); None when the exchange is not a redirect."""
    r = x.response
    if r is None or not 300 <= r.status < 400:
        return None
    loc = next((v for k, v in r.headers if k.lower() == "location"), None)
    if not loc:
        return None
    target, rec, cur = urlsplit(urljoin(x.url, loc)), urlsplit(x.url), urlsplit(current)
    if (target.scheme, target.netloc) == (rec.scheme, rec.netloc):
        return urlunsplit((cur.scheme, cur.netloc, target.path, target.query, target.fragment))
    return urlunsplit(target)


def redirect_body(target: str) -> bytes:
    """The page served for a recorded redirect of a navigation: it replaces itself with the target (no history entry)."""
    js = json.dumps(target).replace("</", "<\\/")
    return (f'<!doctype html><html><head><meta charset="utf-8"><title>Redirecting</title>'
            f"<script>location.replace({js})</script></head><body></body></html>").encode()


async def attach_replay(
    context: BrowserContext,
    index: ArchiveIndex,
    *,
    freeze_clock: bool = True,
    freeze_clock_at: datetime | float | None = None,
    on_miss: Callable[[Miss], None] | None = None,
    random_seed: int | None = RANDOM_SEED,
) -> ReplaySession:
    """Answer every request of `context` from `index`; return the session (cursors, misses).

    Create the context with `**REPLAY_CONTEXT_OPTIONS` (service workers blocked); registration is also
    disabled by an init script, and so are WebRTC and WebTransport (`NO_UNROUTED_CHANNELS`). The clock is fixed
    (`Date.now()`, Playwright's `clock.set_fixed_time`) at `freeze_clock_at`, by default the recording's start; timers
    keep running. `Math.random` is seeded with `random_seed` in every document (`seeded_random`; None: left alone).
    """
    session = ReplaySession(index, on_miss)
    await context.add_init_script(script=_NO_SERVICE_WORKERS)
    await context.add_init_script(script=NO_UNROUTED_CHANNELS)
    if random_seed is not None:
        await context.add_init_script(script=seeded_random(random_seed))
    await context.route("**/*", session.handle)
    if freeze_clock:
        when = freeze_clock_at if freeze_clock_at is not None else index.recorded_at
        if when is not None:
            await context.clock.set_fixed_time(when)
    return session
