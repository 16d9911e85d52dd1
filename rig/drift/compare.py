"""The comparisons of `rig drift`: which archived exchanges are compared, bodies as compared, text diffs, and when a
live page counts as gone."""

from __future__ import annotations

import difflib
import hashlib
import json
from typing import Literal

from replay.index import ArchiveIndex, Exchange

#: Lines of a changed item's diff kept (the rest is summarised).
DIFF_LINES = 40
_ASSETS = ("image/", "font/", "audio/", "video/", "text/css", "javascript", "ecmascript", "wasm", "octet-stream")


def exchange_kind(x: Exchange) -> Literal["page", "data"] | None:
    """`page` (an HTML document or redirect to GET), `data`, or None for assets that are not compared."""
    r = x.response
    if r is None:
        return None
    ctype = r.content_type.split(";")[0].strip().lower()
    if x.method == "GET" and (ctype in ("text/html", "application/xhtml+xml") or 300 <= r.status < 400):
        return "page"
    if any(a in ctype for a in _ASSETS):
        return None
    return "data"


def archived_status(index: ArchiveIndex, url: str) -> int | None:
    """The HTTP status of the last answer to `GET url` in an archive, if it holds one."""
    found = [x for x in index.lookup("GET", url) if x.response is not None]
    return found[-1].response.status if found and found[-1].response else None


def gone_reason(live: int | None, archived: int | None, live_url: str) -> str | None:
    """Why a page is gone: an HTTP error where the archive had none, or no page at all."""
    if live_url.startswith("chrome-error:"):
        return "the page did not load"
    if live is not None and live >= 400 and (archived is None or archived < 400):
        return f"HTTP {live}" + (f" (archived: HTTP {archived})" if archived else "")
    return None


def text_diff(archived: str, live: str, lines: int = DIFF_LINES) -> str:
    """A short unified diff of two texts, archived (-) against live (+)."""
    out = list(difflib.unified_diff(archived.splitlines(), live.splitlines(), "archived", "live", n=1, lineterm=""))
    if len(out) > lines:
        out = [*out[:lines], f"... {len(out) - lines} more diff lines"]
    return "\n".join(out)


def body_as_compared(body: bytes, content_type: str) -> str:
    """A body as compared: JSON re-serialised with sorted keys, text as text, anything else by its digest."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return f"(binary, sha256 {hashlib.sha256(body).hexdigest()})"
    if "json" in content_type.lower() or text.lstrip()[:1] in ("{", "["):
        try:
            return json.dumps(json.loads(text), sort_keys=True, indent=1, ensure_ascii=False)
        except ValueError:
            pass
    return text
