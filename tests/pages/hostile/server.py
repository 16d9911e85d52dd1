"""A hostile local test site: dialogs, popups, downloads, redirect and refresh loops, a response that never ends,
a 10 MB DOM and HTTP 500s. Served on 127.0.0.1 (a free port) in a background thread; `python server.py` serves it.

Pages (every one has an `<h1>` naming it and a `#ok` element once its script ran):
  /                  index linking every page
  /alert-load        alert() while loading          /dialogs        alert, confirm and prompt on click
  /dialog-storm      alert() in an endless loop      /popups         window.open() button, target=_blank link
  /popup-target      what the popups open            /download       a link to /file.csv (attachment)
  /loop              302 to itself, forever          /refresh-self   meta refresh 0 to itself
  /refresh-a, /refresh-b   meta refresh 0 to each other
  /never-ends        sends a few bytes of HTML, then never finishes
  /big-dom           about 10 MB of HTML table       /error-500      HTTP 500 with an error page
  /fetch-500         fetches /api/fail (HTTP 500) and shows the status
"""

from __future__ import annotations

import html
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

#: The size of /big-dom's body.
BIG_DOM_BYTES = 10_000_000
#: The body of /file.csv.
CSV = b"name,value\nalpha,1\nbeta,2\n"


def _page(title: str, body: str, head: str = "") -> bytes:
    return (
        f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{html.escape(title)}</title>{head}</head>"
        f"<body><h1>{html.escape(title)}</h1>{body}</body></html>"
    ).encode()


_OUT = "<p id=out aria-live=polite></p>"
PAGES: dict[str, bytes] = {
    "/": _page("Hostile pages", "<ul>" + "".join(
        f"<li><a href={p}>{p}</a></li>" for p in (
            "/alert-load", "/dialogs", "/dialog-storm", "/popups", "/download", "/loop", "/refresh-self",
            "/refresh-a", "/never-ends", "/big-dom", "/error-500", "/fetch-500")
    ) + "</ul><p id=ok>ready</p>"),
    "/alert-load": _page("Alert on load", "<script>alert('hello from load')</script><p id=ok>loaded</p>"),
    "/dialogs": _page("Dialogs", _OUT + """
<button id=alert onclick="alert('plain alert'); out.textContent = 'alerted'">Alert</button>
<button id=confirm onclick="out.textContent = 'confirm: ' + confirm('Really?')">Confirm</button>
<button id=prompt onclick="out.textContent = 'prompt: ' + prompt('Your name?', 'nobody')">Prompt</button>
<p id=ok>ready</p>"""),
    "/dialog-storm": _page("Dialog storm",
                           "<p id=ok>storm</p><script>setTimeout(() => { for (;;) alert('again'); }, 50)</script>"),
    "/popups": _page("Popups", """
<button id=open onclick="window.open('/popup-target?via=open', 'pop', 'width=400,height=300')">Open popup</button>
<a id=blank href="/popup-target?via=blank" target=_blank rel=opener>New tab</a>
<p id=ok>ready</p>"""),
    # tells its opener it loaded (#seen-open, #seen-blank), so a script can wait for it
    "/popup-target": _page("Popup target", """<p id=ok>popped</p>
<script>const via = new URLSearchParams(location.search).get('via');
if (window.opener) window.opener.document.body.insertAdjacentHTML('beforeend', `<p id=seen-${via}>seen</p>`);</script>"""),
    "/download": _page("Download", "<a id=file href=/file.csv>Get the CSV</a><p id=ok>ready</p>"),
    "/refresh-self": _page("Refresh self", "<p id=ok>again</p>", "<meta http-equiv=refresh content=0>"),
    "/refresh-a": _page("Refresh A", "<p id=ok>a</p>", "<meta http-equiv=refresh content='0; url=/refresh-b'>"),
    "/refresh-b": _page("Refresh B", "<p id=ok>b</p>", "<meta http-equiv=refresh content='0; url=/refresh-a'>"),
    "/fetch-500": _page("Fetch 500", _OUT + """
<button id=fetch onclick="fetch('/api/fail').then(r => r.text().then(t => show(r.status, t)))">Fetch</button>
<p id=ok>ready</p>
<script>function show(status, text) { out.textContent = 'status ' + status + ': ' + text; }</script>"""),
}


def _big_dom() -> bytes:
    row = "<tr><td>{i}</td><td>row {i} of a very long table with filler text to make it heavy</td><td>{i}</td></tr>"
    head = "<table id=big><thead><tr><th>N</th><th>Text</th><th>Value</th></tr></thead><tbody>"
    rows, size, i = [], 0, 0
    while size < BIG_DOM_BYTES:
        r = row.format(i=i)
        rows.append(r)
        size += len(r)
        i += 1
    return _page("Big DOM", head + "".join(rows) + "</tbody></table><p id=ok>big</p>")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "_Server"

    def log_message(self, *args: object) -> None:  # quiet
        pass

    def _send(self, status: int, body: bytes, ctype: str = "text/html; charset=utf-8", **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        for k, v in headers.items():
            self.send_header(k.replace("_", "-"), v)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        self.server.hits[path] = self.server.hits.get(path, 0) + 1
        if path in PAGES:
            self._send(200, PAGES[path])
        elif path == "/loop":
            self._send(302, b"", "text/plain", Location="/loop")
        elif path == "/file.csv":
            self._send(200, CSV, "text/csv", Content_Disposition='attachment; filename="hostile.csv"')
        elif path == "/big-dom":
            self._send(200, self.server.big_dom())
        elif path == "/error-500":
            self._send(500, _page("Server error", "<p id=ok>Internal Server Error: the server failed</p>"))
        elif path == "/api/fail":
            self._send(500, b'{"error": "boom"}', "application/json")
        elif path == "/never-ends":
            self._never_ends()
        else:
            self._send(404, _page("Not found", "<p id=ok>no such page</p>"))

    def _never_ends(self) -> None:
        """Headers and the first bytes of a page, then nothing, until the server shuts down."""
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        first = b"<!doctype html><html><head><title>Never ends</title></head><body><h1>Never ends</h1>" \
                b"<p id=ok>first bytes</p>" + b" " * 2048  # enough for the parser to render it
        self.wfile.write(b"%x\r\n%s\r\n" % (len(first), first))
        self.wfile.flush()
        self.server.stopping.wait()
        self.close_connection = True


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.stopping = threading.Event()
        self.hits: dict[str, int] = {}
        self._big: bytes | None = None

    def big_dom(self) -> bytes:
        if self._big is None:
            self._big = _big_dom()
        return self._big

    def handle_error(self, request: object, client_address: object) -> None:  # a browser gave up: fine
        pass


class HostileServer:
    """Serve the hostile pages on 127.0.0.1 (a free port) in a background thread; `hits` counts GETs per path."""

    def __init__(self) -> None:
        self._httpd = _Server()
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self.hits = self._httpd.hits
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="hostile-pages", daemon=True)

    def __enter__(self) -> HostileServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()


if __name__ == "__main__":
    with HostileServer() as srv:
        print(srv.url, flush=True)
        while True:
            time.sleep(3600)
