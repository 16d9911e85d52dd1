"""The tests' own HTTP server (tests/server.py) and polling helper (tests/waiting.py)."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
import urllib.error
import urllib.request

import pytest
from server import PAGES, TestServer
from waiting import wait_until, wait_until_sync


def fetch(url: str, data: bytes | None = None, headers: dict[str, str] | None = None) -> tuple[int, dict, bytes]:
    """Status, headers and body of one request (an HTTP error status is returned too); redirects are followed."""
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=data, headers=headers or {}), timeout=10) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


@pytest.fixture
def server():
    with TestServer(static=PAGES, routes={"/site": lambda ex: ex.send(200, "site route")}) as srv:
        yield srv


def test_static_files_routes_and_reset(server):
    status, headers, body = fetch(f"{server.url}/index.html")
    assert status == 200 and headers["Content-Type"] == "text/html" and body == (PAGES / "index.html").read_bytes()
    assert headers["Cache-Control"] == "no-store"
    assert fetch(f"{server.url}/")[2] == body
    assert fetch(f"{server.url}/kill_child.py")[0] == 404  # the helper scripts beside the pages are never served
    assert fetch(f"{server.url}/../conftest.py")[0] == 404
    assert fetch(f"{server.url}/site?x=1")[2] == b"site route"

    server.set_route("/api/x", lambda ex: ex.send_json({"got": ex.request.body.decode(), "q": ex.request.query}))
    server.set_route("/index.html", lambda ex: ex.send(200, "replaced"))  # a route wins over a file
    server.set_redirect("/old", "/api/x?from=old")
    server.set_headers("/api/x", {"X-Test": "yes"})
    status, headers, body = fetch(f"{server.url}/old", data=b"")
    assert (status, headers["X-Test"], body) == (200, "yes", b'{"got": "", "q": {"from": ["old"]}}')
    assert fetch(f"{server.url}/index.html")[2] == b"replaced"
    assert [r.target for r in server.requests] == ["/index.html", "/", "/kill_child.py", "/../conftest.py", "/site?x=1",
                                                   "/old", "/api/x?from=old", "/index.html"]

    server.reset()  # the test's routes, headers and requests go; the site's routes stay
    assert server.requests == []
    assert fetch(f"{server.url}/index.html")[2] == (PAGES / "index.html").read_bytes()
    assert fetch(f"{server.url}/api/x")[0] == 404 and "X-Test" not in fetch(f"{server.url}/api/x")[1]
    assert fetch(f"{server.url}/site")[2] == b"site route"


async def test_wait_for_request_sees_what_arrived(server):
    got = asyncio.create_task(server.wait_for_request("/api/post"))
    await asyncio.to_thread(fetch, f"{server.url}/api/post?a=1", b"payload", {"X-Secret": "s1"})
    request = await got
    assert (request.method, request.path, request.query) == ("POST", "/api/post", {"a": ["1"]})
    assert request.body == b"payload"
    assert request.headers["x-secret"] == "s1"
    assert await server.wait_for_request("/api/post") is request  # it already arrived: at once
    with pytest.raises(AssertionError, match=r"no request for /never reached http://127.0.0.1:\d+ within 0.2 s"):
        await server.wait_for_request("/never", timeout=0.2)


async def test_a_slow_response_holds_up_no_other_request(server):
    server.set_route("/stuck", lambda ex: ex.hang())
    server.set_delay("/index.html", 0.3)
    dropped: list[Exception] = []

    def stuck_fetch() -> None:
        try:
            fetch(f"{server.url}/stuck")
        except ConnectionError as e:
            dropped.append(e)

    stuck = threading.Thread(target=stuck_fetch, daemon=True)
    stuck.start()
    await server.wait_for_request("/stuck")
    start = time.monotonic()
    assert (await asyncio.to_thread(fetch, f"{server.url}/index.html"))[0] == 200
    assert time.monotonic() - start >= 0.3  # delayed, and answered while /stuck still waits
    assert stuck.is_alive()
    server.reset()  # the test ends: the stuck response ends too
    await asyncio.to_thread(stuck.join, 10)
    assert not stuck.is_alive() and len(dropped) == 1  # dropped unanswered


def test_a_request_that_is_not_http_is_recorded_and_stop_closes_connections():
    srv = TestServer(fallback=lambda ex: ex.send(200, "ok", "text/plain")).start()
    with socket.create_connection(("127.0.0.1", srv.port)) as s:
        s.sendall(b"\x16\x03\x01 not http\r\n\r\n")
        assert b"Error code: 400" in s.makefile("rb").read()
    assert [r.target for r in srv.requests] == ["\x16\x03\x01 not http"]
    idle = socket.create_connection(("127.0.0.1", srv.port))  # a keep-alive connection waiting for its next request
    idle.settimeout(10)
    idle.sendall(b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
    answer = b""
    while not answer.endswith(b"\r\n\r\nok"):
        answer += idle.recv(1000)
    assert answer.startswith(b"HTTP/1.1 200 OK")
    srv.stop()
    assert idle.recv(100) == b""  # closed by the stop: nothing answers on it any more
    idle.close()


def test_a_route_that_raises_answers_500_and_its_error_is_kept():
    with TestServer(routes={"/bug": lambda ex: 1 / 0}) as srv:
        status, _, body = fetch(f"{srv.url}/bug")
        assert status == 500 and b"ZeroDivisionError" in body
        assert len(srv.errors) == 1 and "ZeroDivisionError" in srv.errors[0]


async def test_wait_until_returns_the_value_or_says_what_it_waited_for():
    seen: list[int] = []
    asyncio.get_running_loop().call_later(0.1, seen.append, 1)
    assert await wait_until(lambda: seen) == [1]

    async def visible() -> bool:
        return bool(seen)

    assert await wait_until(visible) is True
    with pytest.raises(AssertionError, match=r"not true within 0.1 s: 1 seen, expected 2"):
        await wait_until(lambda: len(seen) >= 2, timeout=0.1, message=lambda: f"{len(seen)} seen, expected 2")
    assert wait_until_sync(lambda: seen[0]) == 1
    with pytest.raises(AssertionError, match="not true within 0.1 s: never"):
        wait_until_sync(lambda: False, timeout=0.1, message="never")
