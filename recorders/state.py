"""The retrieval state as flat keys (url.*, form.*, aria.*, page.*, dim.*), its diff and its hashes."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from recorders.adapter import SiteAdapter
from recorders.models import StateDiff

_ORDER = ("url.", "form.", "aria.", "page.", "dim.")


def url_state(url: str) -> dict[str, Any]:
    """`url.path`, `url.query.<name>` (repeated names: sorted list) and `url.fragment.<name>` (or `url.fragment`)."""
    parts = urlsplit(url)
    out: dict[str, Any] = {"url.path": parts.path or "/"}
    for prefix, pairs in (("url.query.", parse_qsl(parts.query, keep_blank_values=True)), ("url.fragment.", None)):
        if pairs is None:
            frag = parts.fragment
            if not frag:
                continue
            if "=" not in frag:
                out["url.fragment"] = frag
                continue
            pairs = parse_qsl(frag.lstrip("!/"), keep_blank_values=True)
        out.update(_fields(prefix, pairs))
    return out


def _fields(prefix: str, pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """`<prefix><name>` per name of query pairs: its value, or the sorted list of a repeated name's values."""
    grouped: dict[str, list[str]] = {}
    for k, v in pairs:
        grouped.setdefault(k, []).append(v)
    return {prefix + k: vs[0] if len(vs) == 1 else sorted(vs) for k, vs in grouped.items()}


def form_state(controls: list[dict[str, Any]]) -> dict[str, Any]:
    """`form.<key>` per control: checkbox/radio groups give the sorted checked values, multi-selects a sorted list.

    A key used by two different controls gets `#2`, `#3`, ... on the later ones.
    """
    groups: dict[str, list[str]] = {}
    values: dict[str, Any] = {}
    for c in controls:
        key = c.get("k") or ""
        if not key:
            continue
        if c["t"] in ("checkbox", "radio"):
            if key in values:
                key = _free(key, values, groups)
            groups.setdefault(key, [])
            if c.get("on"):
                groups[key].append(c["v"])
            continue
        if key in values or key in groups:
            key = _free(key, values, groups)
        v = c["v"]
        values[key] = sorted(v) if isinstance(v, list) else v
    values.update({k: sorted(v) for k, v in groups.items()})
    return {f"form.{k}": values[k] for k in values}


def _free(key: str, *taken: dict[str, Any]) -> str:
    n = 2
    while any(f"{key}#{n}" in t for t in taken):
        n += 1
    return f"{key}#{n}"


def aria_state(aria: list[dict[str, str]]) -> dict[str, str]:
    """`aria.<role>.<name>` -> the widget's states (space-separated when several, e.g. `selected expanded`)."""
    out: dict[str, str] = {}
    for a in aria:
        if not a["n"]:
            continue
        key = f"aria.{a['r']}.{a['n']}"
        if key in out:
            key = _free(key, out)
        out[key] = a["s"]
    return out


def fact_state(adapter: SiteAdapter | None, facts: dict[str, str | None]) -> dict[str, Any]:
    """`page.<name>` for each fact the adapter declares and the page shows (regex group 1 when given; a fact read
    from every match is the list of them), and `page.<name>.<field>` for each field of a fact parsed as a query
    string."""
    if adapter is None:
        return {}
    out: dict[str, Any] = {}
    for name, fact in adapter.page.items():
        v = facts.get(name)
        if v is None:
            continue
        if isinstance(v, list):  # a fact read from every match (`all`)
            items = [m.group(1) if m.groups() else m.group(0) for x in v
                     if (m := re.search(fact.regex or r"[\s\S]*", x))]
            out[f"page.{name}"] = [x.strip() for x in items]
            continue
        if fact.regex:
            m = re.search(fact.regex, v)
            if not m:
                continue
            v = m.group(1) if m.groups() else m.group(0)
        out[f"page.{name}"] = v.strip()
        if fact.parse == "query":
            out.update(_fields(f"page.{name}.", parse_qsl(v.strip(), keep_blank_values=True)))
    return out


def pick_adapter(adapters: list[SiteAdapter], url: str) -> SiteAdapter | None:
    """The adapter with the longest `path_prefix` matching the URL's path, if any."""
    path = urlsplit(url).path or "/"
    hits = [a for a in adapters if path.startswith(a.path_prefix)]
    return max(hits, key=lambda a: len(a.path_prefix)) if hits else None


def build_state(
    raw: dict[str, Any],
    url: str,
    adapter: SiteAdapter | None,
    redact: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The flat state of one page from the observer's raw collection, redacted by `redact`, with `dim.*` from the
    adapter (read from the redacted keys: a dimension never holds what its source keys may not)."""
    state = url_state(url)
    state.update(form_state(raw.get("controls", [])))
    state.update(aria_state(raw.get("aria", [])))
    state.update(fact_state(adapter, raw.get("facts", {})))
    if redact is not None:
        state = redact(state)
    if adapter is not None:
        state.update(adapter.dims(state))
    return ordered(state)


def ordered(state: dict[str, Any]) -> dict[str, Any]:
    """State keys grouped url, form, aria, page, dim; sorted within a group."""

    def rank(k: str) -> tuple[int, str]:
        return (next((i for i, p in enumerate(_ORDER) if k.startswith(p)), len(_ORDER)), k)

    return {k: state[k] for k in sorted(state, key=rank)}


def diff(prev: dict[str, Any] | None, cur: dict[str, Any]) -> StateDiff:
    """What changed from `prev` to `cur` (everything is `added` for the first step)."""
    prev = prev or {}
    return StateDiff(
        changed={k: [prev[k], v] for k, v in cur.items() if k in prev and prev[k] != v},
        added={k: v for k, v in cur.items() if k not in prev},
        removed=[k for k in prev if k not in cur],
    )


def dom_hash(html: str) -> str:
    """SHA-256 of the live DOM serialised with its current form values, open shadow roots and same-origin frames."""
    return hashlib.sha256(html.encode("utf-8", "surrogatepass")).hexdigest()


def text_hash(text: str) -> str:
    """SHA-256 of the visible text."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def normalize_text(text: str) -> str:
    """Visible text with trailing spaces dropped and runs of blank lines collapsed."""
    lines = [ln.rstrip() for ln in text.replace("\r\n", "\n").split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n")
