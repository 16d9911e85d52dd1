"""The rig's forward proxy for one browser context: every connection the browser makes, on any port, by name or
address, loopback included (Playwright proxies loopback unless told not to), goes through it.

An asyncio HTTP proxy on 127.0.0.1: `CONNECT host:port` tunnels (HTTPS, WebSockets) and absolute-form plain HTTP
requests (one a connection; h11 frames them). Each connection's target is checked against the episode's `Policy`
by name, the `--resolve` mappings are applied here (Chromium resolves no name it sends to a proxy), a name is
resolved once and every address it resolves to checked, and only then is the upstream connection made, to the
address that was checked (no second lookup a rebinding name could answer differently). A refused target is counted
and never connected: a tunnel gets 403 (Chromium: ERR_TUNNEL_CONNECTION_FAILED), a plain HTTP request no response at
all (ERR_EMPTY_RESPONSE), so no page of the proxy's own is ever taken for the site's. An upstream that cannot be
reached gets 502 (a tunnel) or no response (plain HTTP), and why is kept (`failure`).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from dataclasses import dataclass

import h11
from loguru import logger

from rig.network.hosts import Target, is_address, split_host, url_target
from rig.network.policy import Policy

#: How long the proxy waits for an upstream connection.
CONNECT_TIMEOUT_S = 30.0
#: The most a request's head may take.
MAX_HEAD = 64 * 1024
_CHUNK = 64 * 1024
#: Headers that concern one hop only (RFC 9110 7.6.1), dropped on the way through.
_HOP = {b"connection", b"proxy-connection", b"keep-alive", b"proxy-authorization", b"te", b"trailer", b"upgrade"}


class Refused(Exception):
    """The policy refuses this target (its message says why)."""


class Unreachable(Exception):
    """The target's server could not be reached (its message says why, in words)."""


@dataclass
class Refusal:
    """A connection the proxy refused."""

    target: str
    reason: str


class GuardProxy:
    """A forward proxy enforcing one `Policy` (see the module's docstring); what it refused and what failed."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        #: Connections refused, in order (the count covers them all; the first ones are kept).
        self.refusals: list[Refusal] = []
        self.refused = 0
        #: `host:port` -> why the last connection to it was refused (by the policy) or failed (its server could not be
        #: reached); cleared when one succeeds.
        self.refused_at: dict[str, str] = {}
        self.unreachable: dict[str, str] = {}
        self.connections = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task] = set()

    @property
    def url(self) -> str:
        """`http://127.0.0.1:PORT`, for Playwright's `proxy={"server": ...}`."""
        assert self._server is not None, "the proxy is not started"
        return f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    async def start(self) -> GuardProxy:
        """Listen on a free port of 127.0.0.1."""
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, limit=MAX_HEAD)
        return self

    async def close(self) -> None:
        """Stop listening and end every open connection."""
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=5)
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 5)

    def refusal(self, url: str) -> str | None:
        """Why the policy refused the last connection to `url`'s host and port; None: it did not."""
        target = url_target(url)
        return self.refused_at.get(str(target)) if target is not None else None

    def failure(self, url: str) -> str | None:
        """Why the last connection to `url`'s host and port was refused or failed; None: it did not."""
        target = url_target(url)
        key = str(target) if target is not None else ""
        return self.refused_at.get(key) or self.unreachable.get(key)

    # --- deciding and connecting ---------------------------------------------------------------------------

    def _refuse(self, target: Target, reason: str) -> Refused:
        self.refused += 1
        if len(self.refusals) < 100:
            self.refusals.append(Refusal(str(target), reason))
        self.refused_at[str(target)] = reason
        logger.debug("proxy refused {}: {}", target, reason)
        return Refused(reason)

    async def _addresses(self, target: Target) -> list[tuple[str, int]]:
        """Where a connection to `target` goes once every check passed (Refused, Unreachable)."""
        if (reason := self.policy.by_name(target)) is not None:
            raise self._refuse(target, reason)
        port = target.port or 80
        mapping = self.policy.mapped(target.host)
        if mapping is not None:
            return [(mapping.address.strip("[]"), mapping.port)]
        if is_address(target.host):
            addresses = [target.bare]
        else:
            try:
                infos = await asyncio.get_running_loop().getaddrinfo(target.bare, port, type=socket.SOCK_STREAM)
            except socket.gaierror as exc:
                reason = f"DNS: the host name does not resolve ({exc.strerror})"
                self.unreachable[str(target)] = reason
                raise Unreachable(reason) from None
            addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
        for address in addresses:
            if (reason := self.policy.by_address(target, address)) is not None:
                raise self._refuse(target, f"{reason}: {target.host} resolves to {address}")
        return [(a, port) for a in addresses]

    async def _connect(self, target: Target) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """An upstream connection to an allowed target (Refused, Unreachable)."""
        error: Exception | None = None
        for address, port in await self._addresses(target):
            try:
                conn = await asyncio.wait_for(asyncio.open_connection(address, port, limit=_CHUNK), CONNECT_TIMEOUT_S)
            except (OSError, TimeoutError) as exc:
                error = exc
                continue
            self.refused_at.pop(str(target), None)
            self.unreachable.pop(str(target), None)
            self.connections += 1
            return conn
        reason = _unreachable(error)
        self.unreachable[str(target)] = reason
        raise Unreachable(reason)

    # --- serving -------------------------------------------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            method, _, rest = head.partition(b" ")
            if method == b"CONNECT":
                await self._tunnel(rest.split(b" ", 1)[0].decode("latin-1"), reader, writer)
            else:
                await self._forward(head, reader, writer)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, h11.ProtocolError):
            pass  # the browser went away, or sent what no browser sends
        except asyncio.CancelledError:
            pass
        finally:
            writer.close()
            self._tasks.discard(task)

    async def _tunnel(self, authority: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        target = split_host(authority)
        if target is None or target.port is None:
            writer.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            return
        try:
            up_reader, up_writer = await self._connect(target)
        except Refused:
            writer.write(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
            return
        except Unreachable:
            writer.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
            return
        writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
        try:
            await _splice(reader, writer, up_reader, up_writer)
        finally:
            up_writer.close()

    async def _forward(self, head: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """One plain HTTP request (absolute form), then the connection is closed (`Connection: close`)."""
        browser = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD)
        browser.receive_data(head)
        request = browser.next_event()
        if not isinstance(request, h11.Request):
            return
        target = url_target(request.target.decode("latin-1"))
        if target is None:
            return
        try:
            up_reader, up_writer = await self._connect(target)
        except (Refused, Unreachable):
            return  # no response at all: nothing of the proxy's is taken for the site's
        try:
            await self._exchange(request, browser, reader, writer, up_reader, up_writer)
        finally:
            up_writer.close()

    async def _exchange(self, request: h11.Request, browser: h11.Connection, reader: asyncio.StreamReader,
                        writer: asyncio.StreamWriter, up_reader: asyncio.StreamReader,
                        up_writer: asyncio.StreamWriter) -> None:
        server = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEAD)
        parts = request.target.split(b"/", 3)
        path = b"/" + (parts[3] if len(parts) > 3 else b"")
        headers = [(k, v) for k, v in request.headers if k.lower() not in _HOP]
        up_writer.write(server.send(h11.Request(method=request.method, target=path,
                                                headers=[*headers, (b"Connection", b"close")])))
        while True:  # the request's body
            event = browser.next_event()
            if event is h11.NEED_DATA:
                browser.receive_data(await reader.read(_CHUNK))
                continue
            if isinstance(event, h11.Data):
                up_writer.write(server.send(event))
            elif isinstance(event, h11.EndOfMessage):
                up_writer.write(server.send(event))
                break
        await up_writer.drain()
        while True:  # the response, back to the browser
            event = server.next_event()
            if event is h11.NEED_DATA:
                server.receive_data(await up_reader.read(_CHUNK))
                continue
            if isinstance(event, h11.InformationalResponse):
                continue
            if isinstance(event, h11.Response):
                kept = [(k, v) for k, v in event.headers if k.lower() not in _HOP]
                writer.write(browser.send(h11.Response(status_code=event.status_code, reason=event.reason,
                                                       headers=[*kept, (b"Connection", b"close")])))
            elif isinstance(event, h11.Data):
                writer.write(browser.send(event))
                await writer.drain()
            elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
                if isinstance(event, h11.EndOfMessage):
                    writer.write(browser.send(event) or b"")
                await writer.drain()
                return


async def _splice(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, up_reader: asyncio.StreamReader,
                  up_writer: asyncio.StreamWriter) -> None:
    """Copy bytes both ways until either side closes."""
    pumps = [asyncio.ensure_future(_pump(reader, up_writer)), asyncio.ensure_future(_pump(up_reader, writer))]
    try:
        await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for p in pumps:
            p.cancel()
        await asyncio.gather(*pumps, return_exceptions=True)


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError, OSError):
        while data := await reader.read(_CHUNK):
            writer.write(data)
            await writer.drain()


def _unreachable(error: Exception | None) -> str:
    """An upstream connection's failure in words (as `rig.network.failures` words the browser's)."""
    if isinstance(error, ConnectionRefusedError):
        return "the server refused the connection"
    if isinstance(error, TimeoutError):
        return "the connection timed out"
    if isinstance(error, OSError) and error.strerror:
        return f"the server could not be reached ({error.strerror})"
    return "the server could not be reached"
