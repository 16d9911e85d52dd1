"""How a run's browser reaches the network: loopback only (the default) or live (`--live`), host mappings
(`--resolve HOST=ADDR:PORT`), certificate errors accepted (`--ignore-https-errors`), and politeness.

A task whose start page is off loopback is refused before any episode unless the run is live or frozen
(`check_reachable`); `--resolve` does not change that: the task still names an outside origin. Which connections
each episode may make is `rig.network.policy`; a live or allow-listed episode's context enforces it through its own
proxy (`rig.network.guard`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from rig.errors import InputError
from rig.formats.task import Task
from rig.network.hosts import is_loopback
from rig.network.politeness import Politeness
from rig.network.resolve import HostMapping, parse_resolve


@dataclass(frozen=True)
class Network:
    """A run's network settings (`RunConfig.network()`, `rig record`); the default is loopback only."""

    live: bool = False
    resolve: tuple[HostMapping, ...] = ()
    ignore_https_errors: bool = False
    #: Politeness of a live run (None: none, e.g. loopback-only runs).
    politeness: Politeness | None = None

    @classmethod
    def of(cls, live: bool = False, resolve: Iterable[str] = (), ignore_https_errors: bool = False,
           politeness: Politeness | None = None, frozen: bool = False) -> Network:
        """Settings from command-line values (InputError naming a bad `--resolve`, or one sending a host off loopback
        in a run that is neither live nor frozen: a frozen run answers every request itself, so there a mapping
        does not matter); politeness applies to live runs."""
        mappings = tuple(parse_resolve(resolve))
        outside = [m for m in mappings if not m.loopback]
        if outside and not live and not frozen:
            m = outside[0]
            raise InputError("--resolve", None, f"{m.host}={m.address}:{m.port} sends requests off loopback and this run "
                                                "is loopback-only: pass --live, or map the host to 127.0.0.1")
        return cls(live=live, resolve=mappings, ignore_https_errors=ignore_https_errors,
                   politeness=(politeness or Politeness()) if live else None)

    @property
    def local_only(self) -> bool:
        """Whether every host name but loopback (and the mapped ones) stays unresolvable."""
        return not self.live

    @property
    def resolve_values(self) -> list[str]:
        """The mappings as given (`HOST=ADDR:PORT`), for episode.json."""
        return [str(m) for m in self.resolve]

    def guarded(self, allow_hosts: Sequence[str] | None) -> bool:
        """Whether an episode's context goes through a guard of its own (a proxy and routes): live or allow-listed."""
        return self.live or allow_hosts is not None

    def context_options(self) -> dict[str, object]:
        """Browser-context options these settings need."""
        return {"ignore_https_errors": True} if self.ignore_https_errors else {}


def off_loopback(url: str) -> bool:
    """Whether an http(s) URL's host is not this machine."""
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and not is_loopback(parts.hostname or "")


def check_reachable(tasks: Sequence[Task], network: Network, frozen: bool) -> None:
    """Refuse, before any episode, a task whose start page is off loopback in a run that is neither live nor
    frozen: InputError naming the task, its start_url, `--live` and `--frozen`."""
    if network.live or frozen:
        return
    for task in tasks:
        if task.start_url is not None and off_loopback(task.start_url):
            raise InputError(task.source or task.id, "start_url",
                             f"{task.start_url} is off loopback and this run is loopback-only: pass --live to let the "
                             "browser reach it, or --frozen SNAPSHOT_DIR to answer it from a snapshot")


def check_record_reachable(url: str, network: Network, where: str) -> None:
    """`rig record`: refuse a script that starts off loopback without `--live` (InputError naming `--live`)."""
    if not network.live and off_loopback(url):
        raise InputError(where, None, f"{url} is off loopback and the recording is loopback-only: pass --live to let "
                                      "the browser reach it")
