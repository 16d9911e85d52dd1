"""Serving an ASGI app on 127.0.0.1 with uvicorn: the one start/wait/stop helper of every local server of the rig
(the sites server, `rig view`, an episode's MCP tool server).

`LocalServer(app, port)` binds its socket at once (a free port for `port=0`), so a taken port is an `InfraError`
naming `127.0.0.1:PORT` before anything starts, and `url` is known before serving. Then it serves in one of three
ways, each returning once uvicorn has started (its `startup` finished: the socket accepts and the app answers) and
raising `InfraError` when it cannot start (the app's lifespan failed, or no start within `start_timeout_s`):

    with LocalServer(app) as srv:            # in a thread of its own
        urlopen(srv.url)
    async with LocalServer(app) as srv:      # in the running event loop (an app that shares the loop's objects)
        ...
    LocalServer(app, 8765).run()             # in the foreground until Ctrl-C or SIGTERM (`rig sites serve`)

Stopping is bounded: uvicorn's graceful shutdown gets `stop_timeout_s` (open connections may finish), then it is
forced and the thread or task is left to end on its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Literal, Self

import uvicorn
from starlette.types import ASGIApp

from rig.errors import InfraError

HOST = "127.0.0.1"
#: How long a server may take to start, and to stop gracefully.
START_TIMEOUT_S, STOP_TIMEOUT_S = 30.0, 5.0


def free_port() -> int:
    """A free TCP port on 127.0.0.1 (free now: another process may take it before it is used)."""
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def bind(port: int | None, what: str) -> socket.socket:
    """A listening socket on 127.0.0.1:`port` (0 or None: a free one); InfraError naming the address when taken."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port or 0))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise InfraError(f"cannot serve {what} on {HOST}:{port}: {exc.strerror or exc} (another process listens "
                         "there: choose another port, or 0 for a free one)") from None
    return sock


_INTERRUPTED = ("CancelledError", "KeyboardInterrupt")


class _NotOnInterrupt(logging.Filter):
    """Drops uvicorn's lifespan traceback when the lifespan was only cancelled (Ctrl-C cancels every task of the
    rig's event loop, and the rig says in one line what an interrupt left): logged with the exception, or as the
    app's "lifespan.shutdown.failed" message, a traceback ending in the cancellation."""

    def filter(self, record: logging.LogRecord) -> bool:
        kind = record.exc_info[0] if record.exc_info else None
        if kind is not None and issubclass(kind, (asyncio.CancelledError, KeyboardInterrupt)):
            return False
        text = record.getMessage().rstrip()
        return not (text.startswith("Traceback") and text.endswith(_INTERRUPTED))


def _quiet_on_interrupt() -> None:
    logger = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, _NotOnInterrupt) for f in logger.filters):
        logger.addFilter(_NotOnInterrupt())


class _Uvicorn(uvicorn.Server):
    """uvicorn telling when it has started, and taking signals only when asked (a server inside the rig's own
    process leaves Ctrl-C to the rig)."""

    def __init__(self, config: uvicorn.Config, on_started: Callable[[], None], signals: bool) -> None:
        super().__init__(config)
        self._on_started, self._signals = on_started, signals

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            self._on_started()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        if self._signals:
            with super().capture_signals():
                yield
        else:
            yield


class LocalServer:
    """One ASGI app served by uvicorn on 127.0.0.1 (see the module's docstring)."""

    def __init__(self, app: ASGIApp, port: int | None = 0, *, what: str = "the app",
                 lifespan: Literal["on", "off", "auto"] = "off", sock: socket.socket | None = None,
                 start_timeout_s: float = START_TIMEOUT_S, stop_timeout_s: float = STOP_TIMEOUT_S) -> None:
        self.what = what
        #: The listening socket: bound here, or one handed over (a child process serving its parent's socket).
        self.sock = sock if sock is not None else bind(port, what)
        self.port: int = self.sock.getsockname()[1]
        self.url = f"http://{HOST}:{self.port}"
        self._app, self._lifespan = app, lifespan
        self._start_timeout_s, self._stop_timeout_s = start_timeout_s, stop_timeout_s
        self._server: _Uvicorn | None = None
        self._exit = False
        self._thread: threading.Thread | None = None
        self._task: asyncio.Task[None] | None = None
        self._failure: BaseException | None = None

    def _uvicorn(self, on_started: Callable[[], None], signals: bool = False) -> _Uvicorn:
        config = uvicorn.Config(self._app, log_level="warning", access_log=False, lifespan=self._lifespan,
                                timeout_graceful_shutdown=max(1, int(self._stop_timeout_s)))
        _quiet_on_interrupt()  # after Config: it configures uvicorn's loggers
        self._server = _Uvicorn(config, on_started, signals)
        self._server.should_exit = self._exit
        return self._server

    def _not_started(self, reason: str) -> InfraError:
        return InfraError(f"{self.what} did not start on {self.url}: {reason}")

    # ---- in a thread -----------------------------------------------------------------------------------

    def start(self) -> Self:
        """Serve in a thread of its own; return once serving (InfraError when it cannot start)."""
        started = threading.Event()
        server = self._uvicorn(started.set)

        def serve() -> None:
            try:
                server.run(sockets=[self.sock])
            except BaseException as exc:  # noqa: BLE001 - uvicorn exits (SystemExit) when its app cannot start
                self._failure = exc
            finally:
                started.set()

        self._thread = threading.Thread(target=serve, name=f"rig-server-{self.port}", daemon=True)
        self._thread.start()
        if not started.wait(self._start_timeout_s):
            self.stop()
            raise self._not_started(f"not serving within {self._start_timeout_s:g} s")
        if not server.started:
            self.stop()
            raise self._not_started(self._reason())
        return self

    def stop(self) -> None:
        """Stop serving (gracefully for `stop_timeout_s`, then forced) and free the port."""
        thread, self._thread = self._thread, None
        if thread is not None and self._server is not None:
            self._server.should_exit = True
            thread.join(self._stop_timeout_s + 1)
            if thread.is_alive():
                self._server.force_exit = True
                thread.join(self._stop_timeout_s)
        self.sock.close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- in the running event loop -------------------------------------------------------------------

    async def astart(self) -> Self:
        """Serve in the running event loop; return once serving (InfraError when it cannot start)."""
        started = asyncio.Event()
        server = self._uvicorn(started.set)

        async def serve() -> None:
            try:
                await server.serve(sockets=[self.sock])
            except SystemExit as exc:  # uvicorn exits when its app cannot start: never out of the caller's loop
                self._failure = exc

        self._task = asyncio.get_running_loop().create_task(serve())
        waiter = asyncio.ensure_future(started.wait())
        try:
            await asyncio.wait({waiter, self._task}, timeout=self._start_timeout_s,
                               return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
        if not server.started:
            reason = self._reason(self._task) if self._task.done() else (
                f"not serving within {self._start_timeout_s:g} s")
            await self.aclose()
            raise self._not_started(reason)
        return self

    async def aclose(self) -> None:
        """Stop serving (gracefully for `stop_timeout_s`, then forced) and free the port."""
        task, self._task = self._task, None
        if task is not None and self._server is not None:
            self._server.should_exit = True
            done, _ = await asyncio.wait({task}, timeout=self._stop_timeout_s + 1)
            if not done:
                self._server.force_exit = True
                task.cancel()
                with contextlib.suppress(BaseException):
                    await asyncio.wait_for(task, self._stop_timeout_s)
            elif not task.cancelled():
                task.exception()  # retrieved: a failed start was reported already
        self.sock.close()

    async def __aenter__(self) -> Self:
        return await self.astart()

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # ---- in the foreground -----------------------------------------------------------------------------

    def run(self, on_started: Callable[[], None] | None = None, signals: bool = True) -> None:
        """Serve in this thread until stopped (`should_exit`, or with `signals` Ctrl-C/SIGTERM: uvicorn stops
        serving, then raises the signal again); `on_started` is called once serving. InfraError when it cannot
        start."""
        server = self._uvicorn(on_started or (lambda: None), signals)
        try:
            server.run(sockets=[self.sock])
        except SystemExit as exc:
            if server.started or server._captured_signals:
                raise
            raise self._not_started(self._reason(failure=exc)) from None
        finally:
            self.sock.close()

    def exit(self) -> None:
        """Ask a server running in the foreground (`run`) to stop, or not to start; callable from any thread."""
        self._exit = True
        if self._server is not None:
            self._server.should_exit = True

    def _reason(self, task: asyncio.Task[None] | None = None, failure: BaseException | None = None) -> str:
        if task is not None and not task.cancelled():
            failure = task.exception()
        failure = failure or self._failure
        if isinstance(failure, SystemExit) or failure is None:
            return "the app's startup failed (its error is logged above)"
        return f"{type(failure).__name__}: {failure}"
