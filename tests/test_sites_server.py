"""The sites server runs in a process of its own: it serves, it leaves with its parent, and a taken port is named."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import urllib.request

import pytest
from waiting import wait_until_sync

from rig.errors import InfraError
from rig.sites import SitesServer


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"  # a zombie has exited
    except FileNotFoundError:
        return False


def test_the_sites_serve_from_a_child_that_leaves_when_its_parent_dies():
    parent = subprocess.Popen(
        [sys.executable, "-c", "import os\nfrom rig.sites import SitesServer\ns = SitesServer().start()\n"
         "import urllib.request\nurllib.request.urlopen(s.url + '/flights/search').close()\n"
         "print(s._proc.pid, flush=True)\nos._exit(0)  # no cleanup: as a killed runner"],
        stdout=subprocess.PIPE, text=True)
    out, _ = parent.communicate(timeout=600)
    assert parent.returncode == 0
    child = int(out.strip())
    assert child != os.getpid()
    wait_until_sync(lambda: not _alive(child), timeout=60, message=f"the sites server {child} outlived its parent")


def test_a_port_taken_already_is_named():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        with pytest.raises(InfraError, match=f"127.0.0.1:{port}"):
            SitesServer(port=port)


def test_the_session_sites_server_is_another_process(sites_url):
    with urllib.request.urlopen(f"{sites_url}/flights/search", timeout=60) as resp:
        assert resp.status == 200
    port = int(sites_url.rsplit(":", 1)[1])
    inode = None
    with open("/proc/net/tcp") as f:  # the listening socket's inode, then which process holds it open
        for line in f.readlines()[1:]:
            parts = line.split()
            if parts[1].endswith(f":{port:04X}") and parts[3] == "0A":
                inode = parts[9]
    assert inode is not None
    holders = {pid for pid in os.listdir("/proc") if pid.isdigit() and _holds(pid, inode)}
    assert len(holders) >= 2 and str(os.getpid()) in holders, "the test process binds it, a child serves it"


def _holds(pid: str, inode: str) -> bool:
    try:
        return any(os.readlink(f"/proc/{pid}/fd/{fd}") == f"socket:[{inode}]" for fd in os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return False
