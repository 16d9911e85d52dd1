"""Chromium's network errors (`net::ERR_...` in a Playwright error or a failed request), in words, and which of
them mean that an origin could not be reached at all (DNS, TLS, connect)."""

from __future__ import annotations

from typing import Literal

#: Chromium's network errors, as a person would say them.
NET_ERRORS = {
    "ERR_NAME_NOT_RESOLVED": "DNS: the host name does not resolve",
    "ERR_NAME_RESOLUTION_FAILED": "DNS: the host name could not be resolved",
    "ERR_CONNECTION_REFUSED": "the server refused the connection",
    "ERR_CONNECTION_RESET": "the server reset the connection",
    "ERR_CONNECTION_CLOSED": "the server closed the connection",
    "ERR_CONNECTION_TIMED_OUT": "the connection timed out",
    "ERR_TIMED_OUT": "the request timed out",
    "ERR_ADDRESS_UNREACHABLE": "the address is unreachable",
    "ERR_INTERNET_DISCONNECTED": "no network (is the run --live?)",
    "ERR_BLOCKED_BY_CLIENT": "blocked by the run's allow-list",
    "ERR_TOO_MANY_REDIRECTS": "too many redirects",
    "ERR_ABORTED": "the navigation was aborted (a download, or the page went away)",
}
Unreachable = Literal["dns", "connect", "tls"]
_DNS = ("ERR_NAME_NOT_RESOLVED", "ERR_NAME_RESOLUTION_FAILED")
_CONNECT = ("ERR_CONNECTION_REFUSED", "ERR_CONNECTION_RESET", "ERR_CONNECTION_CLOSED", "ERR_CONNECTION_FAILED",
            "ERR_CONNECTION_TIMED_OUT", "ERR_ADDRESS_UNREACHABLE", "ERR_ADDRESS_INVALID", "ERR_INTERNET_DISCONNECTED",
            "ERR_EMPTY_RESPONSE", "ERR_PROXY_CONNECTION_FAILED", "ERR_TUNNEL_CONNECTION_FAILED")


def net_error(text: str | None) -> str | None:
    """The `ERR_...` code an error text names (`net::ERR_CONNECTION_REFUSED at https://...`), if any."""
    return next((w.removeprefix("net::") for w in (text or "").split() if w.startswith("net::ERR_")), None)


def unreachable(code: str | None) -> Unreachable | None:
    """Whether a network error means the origin was not reached at all: by its host name (dns), its address
    (connect) or its certificate (tls); None for anything else (an abort, a block, a redirect loop)."""
    if code is None:
        return None
    if code in _DNS:
        return "dns"
    if code.startswith(("ERR_CERT_", "ERR_SSL_")) or code == "ERR_BAD_SSL_CLIENT_AUTH_CERT":
        return "tls"
    return "connect" if code in _CONNECT else None


def describe(code: str | None) -> str | None:
    """A network error in words, with its code; None for a code this module does not know."""
    if code is not None and unreachable(code) == "tls":
        return f"TLS: {code} (the certificate is not trusted; --ignore-https-errors accepts self-signed ones)"
    return f"{NET_ERRORS[code]} ({code})" if code in NET_ERRORS else None
