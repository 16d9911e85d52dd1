"""Launching Debian's (or Playwright's) Chromium with flags that keep it offline, or let it reach the network
(`local_only=False`: live runs), with `--resolve HOST=ADDR:PORT` host mappings in either mode."""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import json
import os
import re
import shutil
import socket
import time
import urllib.request
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from playwright.async_api import Browser, BrowserContext, Playwright

DEBIAN_CHROMIUM = "/usr/lib/chromium/chromium"

#: Flags that keep Chromium quiet: no background calls, no component updates, no QUIC.
OFFLINE_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--disable-dev-shm-usage",
]

#: Resolve every host name to nothing except loopback: a page cannot reach the internet.
LOCAL_ONLY_RULES = "MAP * ~NOTFOUND , EXCLUDE 127.0.0.1, EXCLUDE localhost"
LOCAL_ONLY_FLAG = f"--host-resolver-rules={LOCAL_ONLY_RULES}"
#: Host names that are loopback whatever the resolver says.
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})
_RESOLVE = re.compile(r"^(?P<host>[A-Za-z0-9_.-]+)=(?P<addr>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(?P<port>\d{1,5})$")


@dataclass(frozen=True)
class HostMapping:
    """`--resolve HOST=ADDR:PORT`: the browser sends requests for HOST (any scheme, any port) to ADDR:PORT."""

    host: str
    address: str
    port: int

    @property
    def rule(self) -> str:
        """This mapping as a Chromium `--host-resolver-rules` rule."""
        return f"MAP {self.host} {self.address}:{self.port}"

    @property
    def loopback(self) -> bool:
        """Whether HOST is sent to this machine."""
        return is_loopback(self.address)


def is_loopback(host: str) -> bool:
    """Whether a host name or address is this machine (127.0.0.0/8, ::1, localhost)."""
    name = host.strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def parse_resolve(values: Iterable[str], option: str = "--resolve") -> list[HostMapping]:
    """Check `--resolve HOST=ADDR:PORT` values; InputError naming the option and the bad value."""
    from rig.errors import InputError

    out: dict[str, HostMapping] = {}
    for value in values:
        m = _RESOLVE.match(value.strip())
        port = int(m["port"]) if m else 0
        if m is None or not 0 < port < 65536:
            raise InputError(option, None, f"{value!r} is not HOST=ADDR:PORT (e.g. portal.example.org=127.0.0.1:8443; "
                                           "no scheme, no path, a port from 1 to 65535)")
        host = m["host"].lower()
        if host in out and out[host] != HostMapping(host, m["addr"], port):
            raise InputError(option, None, f"{host} is mapped twice ({out[host].address}:{out[host].port} and "
                                           f"{m['addr']}:{port})")
        out[host] = HostMapping(host, m["addr"], port)
    return list(out.values())


def resolver_rules(local_only: bool, mappings: Sequence[HostMapping] = ()) -> str | None:
    """Chromium's one `--host-resolver-rules` value: the mappings first (the first MAP that matches a host wins),
    then, for local-only browsers, every other name unresolvable except loopback. None: no rules."""
    rules = [m.rule for m in mappings]
    if local_only:
        mapped = {m.host for m in mappings}
        rules.append("MAP * ~NOTFOUND")  # EXCLUDE applies before every MAP: a mapped loopback name is not excluded
        rules += [f"EXCLUDE {name}" for name in ("127.0.0.1", "localhost") if name not in mapped]
    return " , ".join(rules) or None

#: For runs that must reach nothing outside their rules (frozen, allow-listed, replayed): WebRTC sends no UDP except
#: through a proxy, and none that carries UDP is set (archive-only browsers set an HTTP one), so no STUN/TURN packet
#: leaves even from a frame the init script that blocks peer connections (`replay.route.NO_UNROUTED_CHANNELS`) did
#: not reach. It does not stop TURN over TCP: that script does.
SEALED_FLAGS = ["--webrtc-ip-handling-policy=disable_non_proxied_udp"]


@functools.cache
def _refusing_socket() -> socket.socket:
    """A loopback port this process holds bound (the cache keeps it) and never listens on: connections are refused."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    return sock


def archive_only_flags() -> list[str]:
    """Flags for a browser whose every request a route handler answers (frozen runs, `rig replay`, `rig render`).

    Playwright lets a few requests past its routes to the network (a favicon; a request of a frame it no longer
    knows, as a page closes), and a loopback origin such as the frozen sites' is reachable whatever the host
    rules say. Here they all go to a proxy on a port the rig holds closed, loopback included, so they fail.
    """
    return [f"--proxy-server=http://127.0.0.1:{_refusing_socket().getsockname()[1]}", "--proxy-bypass-list=<-loopback>"]


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


def launch_args(local_only: bool = True, extra: list[str] | None = None, sealed: bool = False,
                resolve: Sequence[HostMapping] = (), archive_only: bool = False) -> list[str]:
    """Chromium command-line flags for a rig browser (`sealed`: no WebRTC UDP, see `SEALED_FLAGS`; `resolve`: host
    mappings, combined with the loopback-only rule into Chromium's one `--host-resolver-rules`; `archive_only`: no
    request reaches any server, see `archive_only_flags`)."""
    args = list(OFFLINE_FLAGS)
    if (rules := resolver_rules(local_only, resolve)) is not None:
        args.append(f"--host-resolver-rules={rules}")
    if sealed or archive_only:
        args += SEALED_FLAGS
    if archive_only:
        args += archive_only_flags()
    return args + list(extra or [])


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
