"""Why a page did not load, in words, and whose failure that is: the site's (DNS, refused, TLS, a timeout, a
connection the proxy could not make) or the rig's (its proxy, its browser)."""

from __future__ import annotations

from typing import Literal

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeout

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
    "ERR_EMPTY_RESPONSE": "the server sent nothing",
    "ERR_TUNNEL_CONNECTION_FAILED": "the connection to the server could not be made",
}
#: How an origin was not reached at all: by its host name, its address, or its certificate.
Unreachable = Literal["dns", "connect", "tls"]
_DNS = ("ERR_NAME_NOT_RESOLVED", "ERR_NAME_RESOLUTION_FAILED")
_CONNECT = ("ERR_CONNECTION_REFUSED", "ERR_CONNECTION_RESET", "ERR_CONNECTION_CLOSED", "ERR_CONNECTION_FAILED",
            "ERR_CONNECTION_TIMED_OUT", "ERR_ADDRESS_UNREACHABLE", "ERR_ADDRESS_INVALID", "ERR_INTERNET_DISCONNECTED",
            "ERR_EMPTY_RESPONSE", "ERR_PROXY_CONNECTION_FAILED", "ERR_TUNNEL_CONNECTION_FAILED")
#: Errors that are the site's when its page does not load (the rig's proxy failing is ERR_PROXY_CONNECTION_FAILED).
SITE_ERRORS = frozenset(NET_ERRORS) - {"ERR_ABORTED", "ERR_INTERNET_DISCONNECTED"}
#: The site's failures that may pass if the page is asked for again (a timeout is one too).
TRANSIENT_ERRORS = frozenset({"ERR_CONNECTION_REFUSED", "ERR_CONNECTION_RESET", "ERR_CONNECTION_CLOSED",
                              "ERR_CONNECTION_TIMED_OUT", "ERR_TIMED_OUT", "ERR_EMPTY_RESPONSE"})


class SiteUnreachable(Exception):
    """A live site's page did not load within the episode's budget (scored as the task's failure, never infra)."""


def net_error(error: BaseException | str | None) -> str | None:
    """Chromium's `ERR_...` code in a Playwright error or an error text (`net::ERR_CONNECTION_REFUSED at ...`)."""
    text = (str(error).splitlines() or [""])[0] if error is not None else ""
    return next((w.removeprefix("net::") for w in text.split() if w.startswith("net::ERR_")), None)


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


def is_site_failure(exc: BaseException) -> bool:
    """Whether a navigation failed for the site's reasons (a timeout, DNS, refused, TLS, ...), not the rig's."""
    if isinstance(exc, PlaywrightTimeout):
        return True
    code = net_error(exc) if isinstance(exc, PlaywrightError) else None
    return code is not None and (code in SITE_ERRORS or code.startswith(("ERR_CERT_", "ERR_SSL_")))


def is_transient(exc: BaseException) -> bool:
    """Whether a navigation failed in a way that asking again may mend (a timeout, a refused or dropped connection)."""
    return isinstance(exc, PlaywrightTimeout) or (isinstance(exc, PlaywrightError) and net_error(exc) in TRANSIENT_ERRORS)


def failure_reason(exc: Exception, timeout_s: float, proxy_reason: str | None = None) -> str:
    """Why a page could not be loaded, in words (DNS, TLS, refused, timeout, blocked, ...). `proxy_reason`: what
    the context's proxy said of the page's host (the browser only sees that a tunnel failed)."""
    if isinstance(exc, PlaywrightTimeout):
        return f"timed out: no page within {timeout_s:g} s"
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    code = net_error(exc)
    if code in ("ERR_TUNNEL_CONNECTION_FAILED", "ERR_EMPTY_RESPONSE") and proxy_reason is not None:
        return f"{proxy_reason} ({code})"
    return describe(code) or f"the page could not be loaded: {text}"
