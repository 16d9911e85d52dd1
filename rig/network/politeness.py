"""Politeness for live runs: a per-host request rate limit and concurrency cap, backing off after 429/503.

`PoliteGate.attach(context)` routes every http(s) request of a browser context (as `rig.network.guard` routes for
the network rules): a request waits until its host has a free slot (at most `max_per_host` requests in flight), a
token of the host's bucket (`rate_per_host` a second, bursts of `burst`, by default one second's worth) and the end
of any backoff; then it goes on unchanged. A 429 or 503 response makes its host wait `Retry-After` seconds (capped at `max_backoff_s`), else an
exponentially growing pause from `backoff_s`. A request is never held longer than `max_hold_s` (a long poll that
never finishes cannot hold its host's slot for ever). Playwright routes only the first request of a redirect chain:
each later hop is accounted against its host when the browser sends it (a token taken, a slot held until it ends,
`redirect_hops`), without holding it back, and a 429/503 anywhere in a chain backs its host off like any other.
The rig's own navigations (the start page, the operator's captures) are retried with tenacity after 429/503 and
after the site's failures (a timeout, DNS, refused, ...), within the episode's deadline (`polite_goto`). What the
gate did goes to `episode.json` (`politeness`, a `rig.formats.episode.PolitenessRecord`).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from loguru import logger
from playwright.async_api import BrowserContext, Page, Request, Response, Route
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, retry_if_result

from rig import __version__
from rig.formats.episode import PolitenessRecord
from rig.network.failures import SiteUnreachable, failure_reason, is_transient

#: The least time worth another attempt at a page: no retry starts with less left before the deadline.
MIN_ATTEMPT_S = 1.0
#: Statuses that mean "too many requests, slow down".
BACKOFF_STATUSES = (429, 503)
#: What the rig adds to the browser's user agent in live runs.
USER_AGENT_SUFFIX = f"sgr-rig/{__version__} (+research evaluation)"


@dataclass(frozen=True)
class Politeness:
    """How gently a live run treats each host (`rig run --rate-limit`, `--max-per-host`)."""

    rate_per_host: float = 4.0
    #: Requests a host may take at once before the rate applies (None: one second's worth, at least 1).
    burst: int | None = None
    max_per_host: int = 4
    backoff_s: float = 1.0
    max_backoff_s: float = 30.0
    max_hold_s: float = 60.0
    retries: int = 3
    user_agent_suffix: str = USER_AGENT_SUFFIX

    @property
    def bucket(self) -> int:
        """The burst size in force."""
        return self.burst if self.burst is not None else max(1, math.ceil(self.rate_per_host))

    def user_agent(self, browser_user_agent: str) -> str:
        """The browser's own user agent with the rig's suffix."""
        return f"{browser_user_agent} {self.user_agent_suffix}".strip()


def _host(url: str) -> str | None:
    parts = urlsplit(url)
    return parts.hostname if parts.scheme in ("http", "https") and parts.hostname else None


@dataclass
class _HostState:
    tokens: float
    refilled: float
    in_flight: int = 0
    max_in_flight: int = 0
    not_before: float = 0.0
    backoffs: int = 0
    changed: asyncio.Event = field(default_factory=asyncio.Event)


class PoliteGate:
    """Holds a context's requests back per host (see the module's docstring) and counts what it did."""

    def __init__(self, politeness: Politeness, user_agent: str | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.p, self.clock = politeness, clock
        self.record = PolitenessRecord(rate_per_host=politeness.rate_per_host, burst=politeness.bucket,
                                       max_per_host=politeness.max_per_host, user_agent=user_agent)
        self._hosts: dict[str, _HostState] = {}
        self._open: dict[Request, str] = {}

    async def attach(self, context: BrowserContext) -> PoliteGate:
        """Route `context`'s requests through the gate and watch their ends and statuses."""
        await context.route("**/*", self._route)
        context.on("request", self._hop)
        context.on("requestfinished", self._finished)
        context.on("requestfailed", self._finished)
        context.on("response", self._response)
        return self

    def _state(self, host: str) -> _HostState:
        if host not in self._hosts:
            self._hosts[host] = _HostState(tokens=float(self.p.bucket), refilled=self.clock())
        return self._hosts[host]

    def _wait_needed(self, s: _HostState) -> float:
        """Seconds until a request to this host may go (0: now); refills the bucket first."""
        now = self.clock()
        if self.p.rate_per_host > 0:
            s.tokens = min(float(self.p.bucket), s.tokens + (now - s.refilled) * self.p.rate_per_host)
        s.refilled = now
        waits = [s.not_before - now]
        if self.p.rate_per_host > 0 and s.tokens < 1:
            waits.append((1 - s.tokens) / self.p.rate_per_host)
        return max(0.0, *waits)

    async def admit(self, host: str) -> float:
        """Wait until a request to `host` may go; take its slot and token; the seconds it was held."""
        s = self._state(host)
        started = self.clock()
        deadline = started + self.p.max_hold_s
        while True:
            wait = self._wait_needed(s)
            full = self.p.max_per_host > 0 and s.in_flight >= self.p.max_per_host
            if (wait <= 0 and not full) or self.clock() >= deadline:
                break
            s.changed.clear()
            timeout = min(wait if wait > 0 else self.p.max_hold_s, deadline - self.clock())
            try:
                await asyncio.wait_for(s.changed.wait(), timeout=max(timeout, 0.001))
            except TimeoutError:
                pass
        if self.p.rate_per_host > 0:
            s.tokens -= 1
        s.in_flight += 1
        s.max_in_flight = max(s.max_in_flight, s.in_flight)
        held = self.clock() - started
        r = self.record
        r.requests += 1
        r.max_in_flight[host] = s.max_in_flight
        if held > 0.001:
            r.delayed += 1
            r.waited_s = round(r.waited_s + held, 3)
        return held

    def release(self, host: str) -> None:
        """A request to `host` ended: free its slot."""
        s = self._state(host)
        s.in_flight = max(0, s.in_flight - 1)
        s.changed.set()

    def back_off(self, host: str, retry_after: str | None) -> float:
        """`host` answered 429/503: it gets no request for a while; the pause in seconds."""
        s = self._state(host)
        s.backoffs += 1
        pause = _retry_after(retry_after)
        if pause is None:
            pause = self.p.backoff_s * 2 ** (s.backoffs - 1)
        pause = min(pause, self.p.max_backoff_s)
        s.not_before = max(s.not_before, self.clock() + pause)
        self.record.backoffs += 1
        self.record.backoff_hosts[host] = s.backoffs
        logger.info("{} asked the rig to slow down: no request for {:g} s", host, pause)
        return pause

    async def _route(self, route: Route) -> None:
        request = route.request
        host = _host(request.url)
        if host is None:
            await route.fallback()
            return
        await self.admit(host)
        self._open[request] = host
        try:
            await route.fallback()
        except Exception:  # the page went away while the request waited: free its slot
            self._forget(request)
            raise

    def account(self, host: str) -> None:
        """A request to `host` the gate could not hold back (a redirect hop): take its token and slot now."""
        s = self._state(host)
        self._wait_needed(s)  # refill first
        if self.p.rate_per_host > 0:
            s.tokens -= 1  # may go below zero: the host's next requests wait for it
        s.in_flight += 1
        s.max_in_flight = max(s.max_in_flight, s.in_flight)
        self.record.requests += 1
        self.record.redirect_hops += 1
        self.record.max_in_flight[host] = max(self.record.max_in_flight.get(host, 0), s.max_in_flight)

    def _hop(self, request: Request) -> None:
        if request.redirected_from is None or (host := _host(request.url)) is None:
            return
        self.account(host)
        self._open[request] = host

    def _forget(self, request: Request) -> None:
        host = self._open.pop(request, None)
        if host is not None:
            self.release(host)

    def _finished(self, request: Request) -> None:
        self._forget(request)

    def _response(self, response: Response) -> None:
        if response.status in BACKOFF_STATUSES and (host := _host(response.url)) is not None:
            self.back_off(host, response.headers.get("retry-after"))


def _retry_after(value: str | None) -> float | None:
    """A `Retry-After` header in seconds (a number of seconds; an HTTP date is taken as 'unknown')."""
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


async def polite_goto(page: Page, url: str, politeness: Politeness | None, record: PolitenessRecord | None,
                      timeout_ms: float = 30_000, deadline: float | None = None,
                      clock: Callable[[], float] = time.monotonic) -> Response | None:
    """`page.goto(url)`, retried with tenacity while the answer is 429/503 (waiting `Retry-After`, capped, else an
    exponential pause) and, given a `deadline`, after a transient failure (a timeout, a refused or dropped
    connection); the last response. Every attempt and wait ends by `deadline` (a `clock()` time, e.g. the end of the
    episode's budget): SiteUnreachable when it comes first, the page still failing. Without politeness: one plain
    `goto`, within the deadline too."""

    def remaining_ms() -> float:
        left = timeout_ms if deadline is None else min(timeout_ms, (deadline - clock()) * 1000)
        if left <= 0:
            raise SiteUnreachable(f"{url}: no time left in the episode's budget to load it")
        return left

    if politeness is None:
        return await page.goto(url, timeout=remaining_ms())

    def wait(state: RetryCallState) -> float:
        response = state.outcome.result() if state.outcome is not None and not state.outcome.failed else None
        after = _retry_after(response.headers.get("retry-after")) if response is not None else None
        pause = after if after is not None else politeness.backoff_s * 2 ** (state.attempt_number - 1)
        return min(pause, politeness.max_backoff_s)

    def stop(state: RetryCallState) -> bool:
        if state.attempt_number >= politeness.retries + 1:
            return True  # the last answer stands (give_up)
        if deadline is not None and clock() + state.upcoming_sleep + MIN_ATTEMPT_S >= deadline:
            raise SiteUnreachable(f"{url} did not load within the episode's budget ({_outcome(state, timeout_ms)}, "
                                  f"{state.attempt_number} attempt{'s' * (state.attempt_number > 1)})")
        return False

    def give_up(state: RetryCallState) -> Response | None:
        return state.outcome.result() if state.outcome is not None else None

    async for attempt_state in AsyncRetrying(
        retry=retry_if_result(lambda r: r is not None and r.status in BACKOFF_STATUSES) | retry_if_exception(
            lambda exc: deadline is not None and is_transient(exc)), stop=stop, wait=wait, retry_error_callback=give_up,
    ):
        with attempt_state:
            if attempt_state.retry_state.attempt_number > 1:
                if record is not None:
                    record.retries += 1
                logger.info("retrying {} ({})", url, _outcome(attempt_state.retry_state, timeout_ms))
            response = await page.goto(url, timeout=remaining_ms())
        if not attempt_state.retry_state.outcome.failed:
            attempt_state.retry_state.set_result(response)
    return response


def _outcome(state: RetryCallState, timeout_ms: float) -> str:
    """What the last attempt gave, in words."""
    outcome = state.outcome
    if outcome is None:
        return "not tried"
    if outcome.failed:
        exc = outcome.exception()
        return failure_reason(exc, timeout_ms / 1000) if isinstance(exc, Exception) else type(exc).__name__
    response = outcome.result()
    return f"HTTP {response.status}" if response is not None else "no response"
