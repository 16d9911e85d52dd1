"""The hostile local test site, as routes of the tests' one server (tests/server.py, `hostile_site()`): dialogs,
popups, downloads, redirect and refresh loops, a response that never ends, a 10 MB DOM and HTTP 500s.
`python tests/server.py hostile` serves it.

Pages (every one has an `<h1>` naming it and a `#ok` element once its script ran):
  /                  index linking every page
  /alert-load        alert() while loading          /dialogs        alert, confirm and prompt on click
  /dialog-storm      alert() in an endless loop      /popups         window.open() button, target=_blank link
  /popup-target      what the popups open            /download       a link to /file.csv (attachment)
  /loop              302 to itself, forever          /refresh-self   meta refresh 0 to itself
  /refresh-a, /refresh-b   meta refresh 0 to each other
  /never-ends        sends a few bytes of HTML, then never finishes (until the test ends)
  /big-dom           about 10 MB of HTML table       /error-500      HTTP 500 with an error page
  /fetch-500         fetches /api/fail (HTTP 500) and shows the status
  /hold              a button that fetches /never-ends: a page that never settles after the click
"""

from __future__ import annotations

import functools
import html
from collections.abc import Callable
from typing import Any

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
    "/hold": _page("Hold", """<button id=hold onclick="fetch('/never-ends').then(r => r.text())">Hold</button>
<p id=ok>held</p>"""),
}


#: The body of /error-500.
ERROR_500 = _page("Server error", "<p id=ok>Internal Server Error: the server failed</p>")


@functools.cache
def big_dom() -> bytes:
    """/big-dom's body, built on first use."""
    row = "<tr><td>{i}</td><td>row {i} of a very long table with filler text to make it heavy</td><td>{i}</td></tr>"
    head = "<table id=big><thead><tr><th>N</th><th>Text</th><th>Value</th></tr></thead><tbody>"
    rows, size, i = [], 0, 0
    while size < BIG_DOM_BYTES:
        r = row.format(i=i)
        rows.append(r)
        size += len(r)
        i += 1
    return _page("Big DOM", head + "".join(rows) + "</tbody></table><p id=ok>big</p>")


def never_ends(ex: Any) -> None:
    """Headers and the first bytes of a page, then nothing until the test ends; the body is never finished."""
    ex.start_chunked()
    ex.write_chunk(b"<!doctype html><html><head><title>Never ends</title></head><body><h1>Never ends</h1>"
                   b"<p id=ok>first bytes</p>" + b" " * 2048)  # enough for the parser to render it
    ex.hang()


def not_found(ex: Any) -> None:
    ex.send(404, _page("Not found", "<p id=ok>no such page</p>"))


def routes() -> dict[str, Callable[[Any], None]]:
    """Every hostile page, as a route (path: handler of an `Exchange`) of the tests' server."""
    out: dict[str, Callable[[Any], None]] = {path: functools.partial(_send_page, body) for path, body in PAGES.items()}
    out.update({
        "/loop": lambda ex: ex.redirect("/loop"),
        "/file.csv": lambda ex: ex.send(200, CSV, "text/csv",
                                        {"Content-Disposition": 'attachment; filename="hostile.csv"'}),
        "/big-dom": lambda ex: ex.send(200, big_dom()),
        "/error-500": lambda ex: ex.send(500, ERROR_500),
        "/api/fail": lambda ex: ex.send(500, b'{"error": "boom"}', "application/json"),
        "/never-ends": never_ends,
    })
    return out


def _send_page(body: bytes, ex: Any) -> None:
    ex.send(200, body)
