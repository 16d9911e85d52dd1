"""Serving the bundled sites on 127.0.0.1: in the foreground (`rig sites serve`), or in a process of their own.

`SitesServer` runs the sites in a child process, as a real site runs apart from its visitors: its page rendering
and SQL never compete with the runner's event loop for one interpreter lock, so episodes run at once really run at
once. The parent binds the listening socket and hands it to the child (no port race); the child loads every site's
data, serves on that socket, says `ready` on its stdout, and exits when the parent's end of its stdin closes (so a
killed runner leaves no server behind).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time

from rig.errors import InfraError
from rig.local_server import LocalServer, bind, free_port
from rig.sites.registry import bundled_sites, create_app

__all__ = ["READY", "SitesServer", "free_port", "serve", "warm_sites"]

READY = b"ready\n"
#: Seconds a child whose parent left gives its open requests before it exits anyway.
_EXIT_GRACE_S = 5.0


def warm_sites() -> None:
    """Load every bundled site's data now rather than on its first request."""
    for site in bundled_sites():
        if site.warm is not None:
            site.warm()


def serve(port: int = 8765) -> None:
    """Serve the bundled sites until interrupted."""
    server = LocalServer(create_app(), port, what="the bundled sites")
    warm_sites()
    server.run()


def _serve_child(fd: int) -> None:
    """The child's main: serve on the inherited socket `fd`; `ready` on stdout once serving; exit when stdin closes."""
    warm_sites()
    server = LocalServer(create_app(), what="the bundled sites", sock=socket.socket(fileno=fd))

    def announce() -> None:
        sys.stdout.buffer.write(READY)
        sys.stdout.buffer.flush()

    def exit_with_parent() -> None:
        sys.stdin.buffer.read()  # returns at EOF: the parent closed its end or died
        server.exit()
        time.sleep(_EXIT_GRACE_S)
        os._exit(0)  # a request still hanging after the grace period does not keep the process alive

    threading.Thread(target=exit_with_parent, daemon=True).start()
    server.run(on_started=announce)


class SitesServer:
    """The bundled sites in a process of their own: `with SitesServer() as srv: srv.url`."""

    def __init__(self, port: int | None = None, start_timeout_s: float = 180.0) -> None:
        self._sock = bind(port, "the bundled sites")
        self.port = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._timeout = start_timeout_s
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self) -> SitesServer:
        """Start the child, and return once it has loaded every site's data and serves."""
        fd = self._sock.fileno()
        self._proc = subprocess.Popen(
            [sys.executable, "-c", f"from rig.sites.server import _serve_child; _serve_child({fd})"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, pass_fds=(fd,), close_fds=True)
        assert self._proc.stdout is not None
        line = _read_line(self._proc.stdout, self._timeout)
        if line != READY:
            code = self._proc.poll()
            self.stop()
            state = f"exited with status {code}" if code is not None else f"not ready within {self._timeout:g} s"
            raise InfraError(f"the sites server on 127.0.0.1:{self.port} did not start ({state}; its errors are "
                             "on stderr above)")
        return self

    @property
    def pid(self) -> int | None:
        """The serving process's id, while it runs."""
        return self._proc.pid if self._proc is not None else None

    def stop(self) -> None:
        """Stop the child and wait for it."""
        proc, self._proc = self._proc, None
        if proc is not None:
            if proc.stdin is not None:
                proc.stdin.close()  # the child's cue to exit
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
            if proc.stdout is not None:
                proc.stdout.close()
        self._sock.close()

    def __enter__(self) -> SitesServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _read_line(stream: object, timeout_s: float) -> bytes:
    """One line from a child's stdout, or b"" when none came within `timeout_s` (a thread does the blocking read)."""
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(stream.readline()), daemon=True)  # type: ignore[attr-defined]
    reader.start()
    reader.join(timeout_s)
    return got[0] if got else b""
