"""rig.local_server: one ASGI app on 127.0.0.1 in a thread, in the running loop or in the foreground; it answers once
started, stops within its bound even with a request hanging, and names a taken port or a failed start."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from waiting import wait_until_sync
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from rig.errors import InfraError
from rig.local_server import LocalServer


def _app(hang: threading.Event | None = None) -> Starlette:
    async def hello(request: Request) -> PlainTextResponse:
        return PlainTextResponse("hello")

    async def slow(request: Request) -> PlainTextResponse:
        while hang is not None and not hang.is_set():
            await asyncio.sleep(0.05)
        return PlainTextResponse("late")

    return Starlette(routes=[Route("/", hello), Route("/slow", slow)])


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as resp:
        return resp.read().decode()


def _refused(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


def test_in_a_thread_it_answers_once_started_and_frees_its_port_when_stopped():
    with LocalServer(_app(), what="the test app") as srv:
        assert srv.url == f"http://127.0.0.1:{srv.port}" and srv.port > 0
        assert _get(srv.url + "/") == "hello"
    assert _refused(srv.port)


async def test_in_the_running_loop_it_answers_and_stops():
    async with LocalServer(_app(), what="the test app") as srv:
        body = await asyncio.to_thread(_get, srv.url + "/")
        assert body == "hello"
    assert _refused(srv.port)


def test_a_taken_port_is_refused_with_its_address():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        with pytest.raises(InfraError, match=rf"cannot serve the test app on 127\.0\.0\.1:{port}: .*another process"):
            LocalServer(_app(), port, what="the test app")


def test_a_given_free_port_is_used():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with LocalServer(_app(), port) as srv:
        assert srv.port == port and _get(f"http://127.0.0.1:{port}/") == "hello"


@asynccontextmanager
async def _failing_lifespan(app: Starlette) -> AsyncIterator[None]:
    raise RuntimeError("the database is missing")
    yield


def test_an_app_that_cannot_start_is_an_infra_error_in_a_thread():
    app = Starlette(routes=[], lifespan=_failing_lifespan)
    srv = LocalServer(app, what="the failing app", lifespan="on")
    with pytest.raises(InfraError, match=rf"the failing app did not start on {srv.url}: the app's startup failed"):
        srv.start()
    assert _refused(srv.port)


async def test_an_app_that_cannot_start_is_an_infra_error_in_the_loop():
    app = Starlette(routes=[], lifespan=_failing_lifespan)
    srv = LocalServer(app, what="the failing app", lifespan="on")
    with pytest.raises(InfraError, match="the failing app did not start"):
        await srv.astart()
    assert _refused(srv.port)
    await asyncio.sleep(0)  # the loop still runs: uvicorn's exit did not escape into it


def test_stopping_is_bounded_while_a_request_hangs():
    hang = threading.Event()
    srv = LocalServer(_app(hang), stop_timeout_s=1).start()
    client = threading.Thread(target=lambda: _swallow(lambda: _get(srv.url + "/slow")), daemon=True)
    client.start()
    wait_until_sync(lambda: srv._server.server_state.tasks, timeout=30, message="the slow request never arrived")
    began = time.monotonic()
    srv.stop()
    took = time.monotonic() - began
    hang.set()
    assert took < 10, f"stop took {took:.1f} s"
    assert _refused(srv.port)


def _swallow(call: object) -> None:
    try:
        call()  # type: ignore[operator]
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        pass


def test_in_the_foreground_it_serves_until_interrupted():
    code = ("from starlette.applications import Starlette\nfrom starlette.responses import PlainTextResponse\n"
            "from starlette.routing import Route\nfrom rig.local_server import LocalServer\n"
            "async def hi(r): return PlainTextResponse('hi')\n"
            "srv = LocalServer(Starlette(routes=[Route('/', hi)]))\n"
            "srv.run(on_started=lambda: print(srv.url, flush=True))\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), proc.stderr.read()
        assert _get(url + "/") == "hi"
        proc.terminate()  # SIGTERM: uvicorn stops serving, then the signal ends the process
        assert proc.wait(timeout=60) != 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert _refused(int(url.rsplit(":", 1)[1]))
