"""Moved to `rig.network` (`settings`, `policy`); these names stay importable here for code on other branches."""

from rig.network.policy import task_hosts
from rig.network.settings import (
    Network,
    check_reachable,
    check_record_reachable,
    off_loopback,
)

__all__ = ["Network", "check_reachable", "check_record_reachable", "off_loopback", "task_hosts"]
