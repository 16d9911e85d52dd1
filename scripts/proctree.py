"""Timing a whole process tree (shared by the scripts/bench_*.py scripts): wall seconds and the CPU seconds of a command
and of every process it started, Chromium's renderers included, and the machine's load while it ran.

A process's CPU time reaches its parent's `RUSAGE_CHILDREN` only when the parent reaps it. Chromium's renderers and
zygote are often left behind by their parent as the browser exits, and are then reaped by init: their time is lost to
`time`, `os.times()` and `os.wait4` alike. So the timing process makes itself a child subreaper (Linux
`PR_SET_CHILD_SUBREAPER`): every orphan of the command's tree is re-parented to it, and it reaps each one before
reading `RUSAGE_CHILDREN`. Processes that were already running (a sites server started before) are never reaped here.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

_PR_SET_CHILD_SUBREAPER = 36
_STRAGGLERS_S = 60.0  # orphans still exiting after the command ended are waited for this long at most


@dataclass(frozen=True)
class Usage:
    """One command's run: wall seconds, CPU seconds of its whole tree (user, system), its exit code, load average."""

    wall_s: float
    user_s: float
    sys_s: float
    returncode: int
    load_before: float
    load_after: float
    stderr: str = ""

    @property
    def cpu_s(self) -> float:
        """User + system CPU seconds of the whole tree."""
        return self.user_s + self.sys_s


def become_subreaper() -> None:
    """Make this process the reaper of every orphan among its descendants (Linux; no-op elsewhere)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _children(keep: set[int]) -> list[int]:
    """This process's child processes (from /proc), except `keep`."""
    me, out = os.getpid(), []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) in keep:
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == me:
            out.append(int(entry.name))
    return out


def _reap(keep: set[int]) -> None:
    """Reap every child but `keep` (orphans of the finished command), waiting a little for those still exiting."""
    deadline = time.monotonic() + _STRAGGLERS_S
    while (left := _children(keep)) and time.monotonic() < deadline:
        for pid in left:
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                continue
            if not done:
                time.sleep(0.02)


def load_average() -> float:
    """The machine's 1-minute load average."""
    return os.getloadavg()[0]


def run_tree(cmd: list[str], env: dict[str, str] | None = None, cwd: Path | None = None,
             keep: set[int] | None = None) -> Usage:
    """Run `cmd` to its end; its wall time and the CPU time of it and every process it started (reaped here).
    `keep`: pids of long-running children of this process that are not part of the command (never waited for)."""
    become_subreaper()
    keep = set(keep or ())
    load0 = load_average()
    before = os.times()
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    wall = time.perf_counter() - start
    _reap(keep)
    after = os.times()
    return Usage(wall, after.children_user - before.children_user, after.children_system - before.children_system,
                 done.returncode, load0, load_average(), done.stderr.decode(errors="replace")[-4000:])
