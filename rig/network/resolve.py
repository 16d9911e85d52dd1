"""`--resolve HOST=ADDR:PORT`: host mappings, and Chromium's one `--host-resolver-rules` value."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rig.network.hosts import is_loopback, split_host


@dataclass(frozen=True)
class HostMapping:
    """`--resolve HOST=ADDR:PORT`: requests for HOST (any scheme, any port) go to ADDR:PORT."""

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

    def __str__(self) -> str:
        return f"{self.host}={self.address}:{self.port}"


def parse_resolve(values: Iterable[str], option: str = "--resolve") -> list[HostMapping]:
    """Check `--resolve HOST=ADDR:PORT` values; InputError naming the option and the bad value."""
    from rig.errors import InputError

    out: dict[str, HostMapping] = {}
    for value in values:
        name, _, where = value.strip().partition("=")
        host, addr = split_host(name), split_host(where)
        if host is None or host.port is not None or addr is None or addr.port is None:
            raise InputError(option, None, f"{value!r} is not HOST=ADDR:PORT (e.g. portal.example.org=127.0.0.1:8443; "
                                           "no scheme, no path, a port from 1 to 65535)")
        mapping = HostMapping(host.host, addr.host, addr.port)
        if host.host in out and out[host.host] != mapping:
            old = out[host.host]
            raise InputError(option, None, f"{host.host} is mapped twice ({old.address}:{old.port} and "
                                           f"{mapping.address}:{mapping.port})")
        out[host.host] = mapping
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
