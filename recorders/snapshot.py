"""Per-step DOM snapshots (CDP `DOMSnapshot.captureSnapshot`: keeps live form values), redacted."""

from __future__ import annotations

import json
from typing import Any

from playwright.async_api import CDPSession

from recorders.redact import REDACTED, Redactor


async def capture_dom(cdp: CDPSession) -> dict[str, Any]:
    """The DOM snapshot of a page and its frames (no computed styles)."""
    return await cdp.send("DOMSnapshot.captureSnapshot", {"computedStyles": [], "includeDOMRects": False})


def redact_dom(snap: dict[str, Any], redactor: Redactor) -> bytes:
    """The snapshot as JSON, with password and secret-named inputs' values and secret URL parameters redacted."""
    strings: list[str] = snap.get("strings", [])
    secret_idx: set[int] = set()
    for doc in snap.get("documents", []):
        nodes = doc.get("nodes", {})
        names, attrs = nodes.get("nodeName", []), nodes.get("attributes", [])
        input_vals = dict(zip(nodes.get("inputValue", {}).get("index", []), nodes.get("inputValue", {}).get("value", [])))
        for i, name_idx in enumerate(names):
            if strings[name_idx] != "INPUT" or i >= len(attrs):
                continue
            pairs = attrs[i]
            a = {strings[pairs[j]].lower(): pairs[j + 1] for j in range(0, len(pairs) - 1, 2)}
            is_pw = "type" in a and strings[a["type"]].lower() == "password"
            if is_pw or ("name" in a and redactor.secret_param(strings[a["name"]])):
                if "value" in a:
                    secret_idx.add(a["value"])
                if i in input_vals:
                    secret_idx.add(input_vals[i])
    out = [REDACTED if i in secret_idx and s else redactor.url(s) if "=" in s else redactor.text(s) for i, s in enumerate(strings)]
    return json.dumps({**snap, "strings": out}, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
