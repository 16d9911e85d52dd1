"""The one host parser: names, IPv4 and `[v6]` addresses, with or without a port, and the `host:port` of URLs."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

#: Host names that are loopback whatever a resolver says.
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})
#: Default ports of the schemes a browser's requests and WebSockets use.
DEFAULT_PORTS = {"http": 80, "ws": 80, "https": 443, "wss": 443}
_HOST = re.compile(r"^(?P<host>\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_.-]+)(?::(?P<port>\d{1,5}))?$")


@dataclass(frozen=True)
class Target:
    """A host (lower-case; an IPv6 address in brackets) and, where given, a port."""

    host: str
    port: int | None = None

    def __str__(self) -> str:
        return self.host if self.port is None else f"{self.host}:{self.port}"

    @property
    def bare(self) -> str:
        """The host as a resolver or a socket takes it (an IPv6 address without brackets)."""
        return self.host.strip("[]")

    @property
    def loopback(self) -> bool:
        """Whether the host is this machine by its name or address (not by what a resolver says)."""
        return is_loopback(self.host)


def split_host(value: str) -> Target | None:
    """`name`, `address`, `name:port` or `[v6]:port` as a Target; None when it is none of those (a port from 1 to
    65535, no scheme, no path)."""
    m = _HOST.match(value.strip())
    if m is None:
        return None
    host = m["host"].lower()
    if host.startswith("["):
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            return None
    port = int(m["port"]) if m["port"] is not None else None
    if port is not None and not 0 < port < 65536:
        return None
    return Target(host, port)


def parse_host(value: str, option: str, example: str = "127.0.0.1:8765 or data.example.org") -> Target:
    """A host given on the command line; InputError naming the option and the value when it is not one."""
    target = split_host(value)
    if target is None:
        from rig.errors import InputError

        raise InputError(option, None, f"{value!r} is not a host: give a name or address, optionally with :port "
                                       f"(no scheme, no path), e.g. {example}")
    return target


def url_target(url: str) -> Target | None:
    """The host and port (made explicit) of an http(s) or ws(s) URL; None for other schemes."""
    parts = urlsplit(url)
    default = DEFAULT_PORTS.get(parts.scheme.lower())
    if default is None or not parts.hostname:
        return None
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname.lower()
    try:
        port = parts.port or default
    except ValueError:  # a port out of range: not a URL a browser sends
        return None
    return Target(host, port)


def is_loopback(host: str) -> bool:
    """Whether a host name or address is this machine: localhost, 127.0.0.0/8, ::1, an IPv4-mapped IPv6 address of
    those, or an unspecified address (0.0.0.0, ::), which a connection takes to this machine."""
    name = host.strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback or address.is_unspecified


def is_address(host: str) -> bool:
    """Whether a host is an IP address rather than a name."""
    try:
        ipaddress.ip_address(host.strip("[]"))
        return True
    except ValueError:
        return False
