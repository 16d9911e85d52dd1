"""Serving the bundled sites on 127.0.0.1, in the foreground or in a background thread."""

from __future__ import annotations

import socket
import threading
import time

import uvicorn

from rig.errors import InfraError
from rig.sites.registry import bundled_sites, create_app


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def warm_sites() -> None:
    """Load every bundled site's data now rather than on its first request."""
    for site in bundled_sites():
        if site.warm is not None:
            site.warm()


def _config(port: int) -> uvicorn.Config:
    return uvicorn.Config(create_app(), host="127.0.0.1", port=port, log_level="warning", access_log=False, lifespan="off")


def serve(port: int = 8765) -> None:
    """Serve the bundled sites until interrupted."""
    warm_sites()
    uvicorn.Server(_config(port)).run()


class SitesServer:
    """The bundled sites in a background thread: `with SitesServer() as srv: srv.url`."""

    def __init__(self, port: int | None = None, start_timeout_s: float = 60.0, warm: bool = True) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._server = uvicorn.Server(_config(self.port))
        self._thread = threading.Thread(target=self._server.run, name="rig-sites", daemon=True)
        self._timeout = start_timeout_s
        self._warm = warm

    def start(self) -> "SitesServer":
        """Load every site's data, start serving, and return once the server accepts connections."""
        if self._warm:
            warm_sites()
        self._thread.start()
        deadline = time.monotonic() + self._timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise InfraError(f"the sites server did not start on 127.0.0.1:{self.port}")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        """Stop serving and wait for the thread."""
        self._server.should_exit = True
        self._thread.join(timeout=10)

    def __enter__(self) -> "SitesServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
