"""Which connections one episode's browser may make: the run's allow-list (`--allow-host`), loopback closed to live
runs except what the episode names, loopback only for runs that are not live, and the `--resolve` mappings.

A decision is made twice: by name (`Policy.by_name`, in the browser's routes and again in the proxy) and, in the
proxy, by the address a name resolves to (`Policy.by_address`): a public name that resolves to 127.0.0.1 is loopback.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from rig.formats.task import Task
from rig.network.hosts import Target, is_address, is_loopback, parse_host, url_target
from rig.network.resolve import HostMapping

#: Why a connection was refused (`episode.json`'s `blocked[].reason`).
NOT_ALLOWED = "not on the run's allow-list"
LOOPBACK_CLOSED = "loopback is closed to live runs (no task origin names it and no --resolve maps it)"
OFF_LOOPBACK = "off loopback in a loopback-only run"
UNRESOLVED = "a name other than loopback does not resolve in a loopback-only run"


def parse_hosts(hosts: Iterable[str]) -> list[str]:
    """Check `--allow-host` values (`name`, `address`, `host:port`, `[v6]:port`); return them lower-cased."""
    return [str(parse_host(h, "--allow-host")) for h in hosts]


def _names(target: Target, entries: frozenset[str]) -> bool:
    """Whether `entries` name the target's host (any port) or its `host:port`."""
    return target.host in entries or str(target) in entries


@dataclass(frozen=True)
class Policy:
    """One episode's connection rules (see the module's docstring)."""

    live: bool = False
    mappings: tuple[HostMapping, ...] = ()
    #: The allow-list (hosts or `host:port`s); None: no allow-list.
    allowed: frozenset[str] | None = None
    #: Loopback hosts (or `host:port`s) a live episode may reach: its start page's and its task's origins.
    loopback_open: frozenset[str] = frozenset()

    def mapped(self, host: str) -> HostMapping | None:
        """The `--resolve` mapping of a host name, if any."""
        return next((m for m in self.mappings if m.host == host), None)

    def opens(self, target: Target) -> bool:
        """Whether the episode names this loopback target (its start page, its task's origins, the allow-list)."""
        return _names(target, self.loopback_open) or (self.allowed is not None and _names(target, self.allowed))

    def by_name(self, target: Target) -> str | None:
        """Why a connection to `target` is refused by its name or literal address alone; None: not by name."""
        if self.allowed is not None and not _names(target, self.allowed):
            return NOT_ALLOWED
        if self.mapped(target.host) is not None:
            return None
        if target.loopback:
            return LOOPBACK_CLOSED if self.live and not self.opens(target) else None
        if not self.live:
            return OFF_LOOPBACK if is_address(target.host) else UNRESOLVED
        return None

    def by_address(self, target: Target, address: str) -> str | None:
        """Why a connection to `target`, its name resolved to `address`, is refused; None: it may go."""
        if self.live and is_loopback(address) and not self.opens(target):
            return LOOPBACK_CLOSED
        if not self.live and not is_loopback(address):
            return OFF_LOOPBACK
        return None

    def url_refused(self, url: str) -> str | None:
        """Why a request for `url` is refused by name (non-network schemes never are)."""
        target = url_target(url)
        return self.by_name(target) if target is not None else None


def task_hosts(task: Task | None) -> list[str]:
    """The hosts a task's episodes start on and take evidence from (its start page's `host:port`, its origins):
    allowed in an allow-listed run, and open on loopback in a live one."""
    if task is None:
        return []
    out = [(urlsplit(o).hostname or "") if "://" in o else o.strip().lower() for o in task.origins]
    out = [o for o in out if o]
    if task.start_url is not None and (start := url_target(task.start_url)) is not None:
        out.append(str(start))
    return out


def url_hosts(urls: Sequence[str | None]) -> list[str]:
    """The `host:port` of each http(s) URL given (an episode's start page, a recording's base URL)."""
    return [str(t) for u in urls if u and (t := url_target(u)) is not None]


def episode_policy(live: bool, mappings: Sequence[HostMapping], allow_hosts: Sequence[str] | None, task: Task | None,
                   start_urls: Sequence[str | None]) -> Policy:
    """The rules of one episode: the run's allow-list (with the episode's own start and task hosts added) and, live,
    loopback open only to those hosts."""
    own = {*task_hosts(task), *url_hosts(start_urls)}
    allowed = frozenset({*allow_hosts, *own}) if allow_hosts is not None else None
    return Policy(live=live, mappings=tuple(mappings), allowed=allowed, loopback_open=frozenset(own))


