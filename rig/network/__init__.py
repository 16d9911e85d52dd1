"""Network policy, in one place: how the rig's browsers may reach the network and what they are refused.

| module | concept |
|---|---|
| `hosts` | the one host parser (names, addresses, `[v6]`, ports, URLs' `host:port`), loopback |
| `resolve` | `--resolve HOST=ADDR:PORT` mappings, Chromium's host-resolver rules |
| `flags` | Chromium's flags: offline-safe, loopback-only, sealed, archive-only |
| `settings` | a run's network settings (`Network`: `--live`, `--resolve`, certificate errors, politeness) |
| `policy` | which connections one episode may make (allow-list, loopback closed to live runs) |
| `proxy` | the forward proxy a guarded context's every connection goes through |
| `guard` | a context's proxy and routes together, and the record of what they refused |
| `politeness` | per-host rate limit, concurrency cap, backoff; the rig's own polite navigations |
| `failures` | why a page did not load, in words, and whether that is the site's failure |

`rig.browser` launches Chromium with these flags.
"""

from rig.network.failures import SiteUnreachable, failure_reason, is_site_failure
from rig.network.flags import SEALED_FLAGS, archive_only_flags, launch_args
from rig.network.guard import GUARDED_CONTEXT_OPTIONS, NetworkGuard
from rig.network.hosts import Target, is_loopback, parse_host, url_target
from rig.network.policy import Policy, episode_policy, parse_hosts, task_hosts
from rig.network.politeness import PoliteGate, Politeness, polite_goto
from rig.network.resolve import HostMapping, parse_resolve, resolver_rules
from rig.network.settings import (
    Network,
    check_reachable,
    check_record_reachable,
    off_loopback,
)

__all__ = [
    "GUARDED_CONTEXT_OPTIONS", "SEALED_FLAGS", "HostMapping", "Network", "NetworkGuard", "Policy", "PoliteGate",
    "Politeness", "SiteUnreachable", "Target", "archive_only_flags", "check_reachable", "check_record_reachable",
    "episode_policy", "failure_reason", "is_loopback", "is_site_failure", "launch_args", "off_loopback",
    "parse_host", "parse_hosts", "parse_resolve", "polite_goto", "resolver_rules", "task_hosts", "url_target",
]
