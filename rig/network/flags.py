"""Chromium's command-line flags for the rig's browsers: quiet and offline-safe, loopback-only or live, host
mappings, the features turned off, sealed (no WebRTC UDP) and archive-only (every request a route handler does not answer fails)."""

from __future__ import annotations

import functools
import socket
from collections.abc import Sequence

from rig.network.resolve import HostMapping, resolver_rules

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
    # Chromium loads a page that failed again by itself (after 1 s, 5 s, 30 s, ...): requests no agent made, a
    # refused hop recorded twice, an impolite live run. The rig's browsers load only what their driver asks for.
    "--disable-auto-reload",
]

#: The features Playwright 1.65.2 (pinned) turns off with its own `--disable-features`. Chromium keeps only the last
#: `--disable-features` of its command line, so the rig's one flag repeats them (`tests/test_browser_flags.py` fails if
#: a Playwright upgrade changes the list).
PLAYWRIGHT_DISABLED_FEATURES = [
    "AvoidUnnecessaryBeforeUnloadCheckSync", "DestroyProfileOnBrowserClose", "HttpsUpgrades",
    "HttpsFirstBalancedModeAutoEnable", "LensOverlay", "MediaRouter", "PaintHolding", "ThirdPartyStoragePartitioning",
    "AvoidCorsURLLoaderRestartOnRedirect", "TcpPortRandomizationWin", "OptimizationHints", "NetworkTimeServiceQuerying",
    "AimEnabled", "PreconnectToSearch", "msForceBrowserSignIn", "msEdgeUpdateLaunchServicesPreferredVersion",
]

#: Features the rig turns off: the address bar's drop-downs, which Chromium builds in WebUI renderers of their own for
#: every window, before anyone types. A headless browser has no address bar anyone types in, and opens a window for
#: every context: these cost about half a second of CPU per context (docs/benchmarks.md, "Chromium's flags").
RIG_DISABLED_FEATURES = ["WebUIOmniboxPopup", "WebUIOmniboxAimPopup"]

_DISABLE_FEATURES = "--disable-features="

#: Resolve every host name to nothing except loopback: a page cannot reach the internet.
LOCAL_ONLY_RULES = "MAP * ~NOTFOUND , EXCLUDE 127.0.0.1, EXCLUDE localhost"
LOCAL_ONLY_FLAG = f"--host-resolver-rules={LOCAL_ONLY_RULES}"

#: For runs that must reach nothing outside their rules (frozen, allow-listed, live, replayed): WebRTC sends no UDP
#: except through a proxy, and none that carries UDP is set (the rig's proxies are HTTP ones), so no STUN/TURN packet
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


def launch_args(local_only: bool = True, extra: list[str] | None = None, sealed: bool = False,
                resolve: Sequence[HostMapping] = (), archive_only: bool = False) -> list[str]:
    """Chromium command-line flags for a rig browser (`sealed`: no WebRTC UDP, see `SEALED_FLAGS`; `resolve`: host
    mappings, combined with the loopback-only rule into Chromium's one `--host-resolver-rules`; `archive_only`: no
    request reaches any server, see `archive_only_flags`). A `--disable-features` in `extra` is merged into the rig's
    one, which keeps Playwright's and the rig's features off."""
    features = [*PLAYWRIGHT_DISABLED_FEATURES, *RIG_DISABLED_FEATURES]
    extra = list(extra or [])
    for arg in [a for a in extra if a.startswith(_DISABLE_FEATURES)]:  # merged into the one flag, not dropping it
        extra.remove(arg)
        features += [f for f in arg.removeprefix(_DISABLE_FEATURES).split(",") if f and f not in features]
    args = [*OFFLINE_FLAGS, _DISABLE_FEATURES + ",".join(features)]
    if (rules := resolver_rules(local_only, resolve)) is not None:
        args.append(f"--host-resolver-rules={rules}")
    if sealed or archive_only:
        args += SEALED_FLAGS
    if archive_only:
        args += archive_only_flags()
    return args + extra
