"""A tiny HTTP server for the recorder tests and benchmark: serves this folder plus a few test endpoints.

Endpoints: POST /api/echo (JSON {"count", "received"}), GET /set-cookie (sets a cookie, redirects to /login.html),
GET /redirect (302 to /page2.html), GET /hang (answers after 5 s), POST /login (a page saying "signed in").
"""

from __future__ import annotations

import json
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).parent


class _Handler(SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def __init__(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        super().__init__(*args, directory=str(ROOT), **kwargs)

    def log_message(self, *args: object) -> None:  # quiet
        pass

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def _send(self, status: int, body: bytes, ctype: str, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path.startswith("/set-cookie"):
            self._send(
                302,
                b"",
                "text/plain",
                {"Set-Cookie": "session_blob=SECRETCOOKIE123; Path=/", "Location": "/login.html"},
            )
        elif self.path.startswith("/hang"):  # a long poll that answers after 5 s
            time.sleep(5)
            self._send(200, b"{}", "application/json")
        elif self.path.startswith("/redirect"):
            self._send(302, b"", "text/plain", {"Location": "/page2.html"})
        elif self.path.endswith(".py"):
            self._send(404, b"not found", "text/plain")
        else:
            super().do_GET()

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        if self.path.startswith("/api/echo"):
            out = json.dumps({"count": 42, "received": len(body)}).encode()
            self._send(200, out, "application/json")
        elif self.path.startswith("/login"):
            self._send(200, b"<!doctype html><title>Signed in</title><p>signed in</p>", "text/html; charset=utf-8")
        else:
            self._send(404, b"not found", "text/plain")


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:  # a browser gave up on a request: fine
        pass


class PageServer:
    """Serve tests/pages on 127.0.0.1 (a free port) in a background thread."""

    def __init__(self) -> None:
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="test-pages", daemon=True)

    def __enter__(self) -> PageServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


if __name__ == "__main__":
    with PageServer() as srv:
        print(srv.url, flush=True)
        while True:
            time.sleep(3600)
