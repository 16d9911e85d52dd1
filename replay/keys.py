"""Lookup keys: method, normalised URL (query order-insensitive, cache-busters dropped) and a digest of the body.

Redaction tolerance: the recorder replaces the values of secret parameters (URL query, form and JSON fields)
with `[redacted]`. Parameter names seen with that value anywhere in an archive are *masked* on both sides
(recorded and replayed request): their value is compared as `[redacted]`, whatever the browser sends.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit

from rigwarc.dialect import REDACTED

#: A lookup key: (method, normalised URL, body digest).
Key = tuple[str, str, str]


@dataclass(frozen=True)
class ParamRule:
    """Query parameters to ignore (cache-busters) on URLs whose path starts with `path_prefix` (and host, if given)."""

    params: frozenset[str]
    path_prefix: str = "/"
    host: str | None = None

    def applies(self, host: str, path: str) -> bool:
        """Whether this rule covers a URL with this host (`name:port`) and path."""
        return path.startswith(self.path_prefix) and (self.host is None or self.host == host)


@dataclass(frozen=True)
class MatchRules:
    """How requests are matched to recorded ones.

    `ignore_params` are dropped from every URL (default: jQuery's `_` cache-buster); `site_params` add
    per-site rules. With `ignore_origin` only path and query count: a snapshot recorded on one port
    replays on any other.
    """

    ignore_params: frozenset[str] = frozenset({"_"})
    site_params: tuple[ParamRule, ...] = ()
    ignore_origin: bool = False

    def ignored(self, host: str, path: str) -> frozenset[str]:
        """The parameter names dropped from a URL with this host and path."""
        names = set(self.ignore_params)
        for rule in self.site_params:
            if rule.applies(host, path):
                names |= rule.params
        return frozenset(names)

    def to_json(self) -> dict[str, Any]:
        """A JSON form (for a snapshot manifest)."""
        return {
            "ignore_params": sorted(self.ignore_params),
            "site_params": [{"params": sorted(r.params), "path_prefix": r.path_prefix, "host": r.host} for r in self.site_params],
            "ignore_origin": self.ignore_origin,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MatchRules:
        """Rules from their JSON form."""
        rules = tuple(ParamRule(frozenset(r["params"]), r.get("path_prefix", "/"), r.get("host")) for r in data.get("site_params", []))
        return cls(frozenset(data.get("ignore_params", ["_"])), rules, bool(data.get("ignore_origin", False)))


@dataclass
class KeyMaker:
    """Builds lookup keys under match rules and a set of masked (redacted) parameter names."""

    rules: MatchRules = field(default_factory=MatchRules)
    masked: frozenset[str] = frozenset()

    def key(self, method: str, url: str, body: bytes | None, content_type: str | None) -> Key:
        """The lookup key of one request."""
        return (method.upper(), self.url(url), self.body(body, content_type))

    def url(self, url: str) -> str:
        """The URL without fragment, with sorted query pairs, ignored parameters dropped and masked ones masked."""
        parts = urlsplit(url)
        host = (parts.hostname or "").lower() + (f":{parts.port}" if parts.port else "")
        path = parts.path or "/"
        drop = self.rules.ignored(host, path)
        pairs = sorted(self._mask(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k not in drop)
        query = "&".join(f"{quote(k, safe='')}={quote(v, safe='')}" for k, v in pairs)
        origin = "" if self.rules.ignore_origin else f"{parts.scheme.lower()}://{host}"
        return f"{origin}{path}" + (f"?{query}" if query else "")

    def body(self, body: bytes | None, content_type: str | None) -> str:
        """A digest of the body's canonical form: JSON with sorted keys, form pairs sorted, else the raw bytes."""
        if not body:
            return ""
        return hashlib.sha256(self.canonical_body(body, content_type)).hexdigest()[:32]

    def canonical_body(self, body: bytes, content_type: str | None) -> bytes:
        """The body as compared: order-insensitive for JSON objects and form pairs, masked fields masked."""
        ct = (content_type or "").lower()
        text = _utf8(body)
        if text is None:
            return body
        stripped = text.lstrip()
        if "json" in ct or (stripped[:1] in ("{", "[") and not ct.startswith("text/")):
            try:
                parsed = json.loads(text)
            except ValueError:
                return body
            return json.dumps(self._mask_json(parsed), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
        if "x-www-form-urlencoded" in ct:
            pairs = sorted(self._mask(k, v) for k, v in parse_qsl(text, keep_blank_values=True))
            return "&".join(f"{quote(k, safe='')}={quote(v, safe='')}" for k, v in pairs).encode()
        return body

    def _mask(self, name: str, value: str) -> tuple[str, str]:
        return (name, REDACTED) if name.lower() in self.masked else (name, value)

    def _mask_json(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: REDACTED if str(k).lower() in self.masked else self._mask_json(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._mask_json(v) for v in value]
        return value


def redacted_names(url: str, body: bytes | None, content_type: str | None) -> set[str]:
    """Names of URL, form or JSON parameters whose recorded value is the redaction placeholder."""
    names = {k.lower() for k, v in parse_qsl(urlsplit(url).query, keep_blank_values=True) if v == REDACTED}
    text = _utf8(body or b"")
    if not text or "redacted" not in text:  # the placeholder, raw or percent-encoded
        return names
    ct = (content_type or "").lower()
    if "x-www-form-urlencoded" in ct:
        names |= {k.lower() for k, v in parse_qsl(text, keep_blank_values=True) if v == REDACTED}
    else:
        try:
            names |= set(_json_redacted(json.loads(text)))
        except ValueError:
            pass
    return names


def _json_redacted(value: Any) -> Iterable[str]:
    if isinstance(value, dict):
        for k, v in value.items():
            if v == REDACTED:
                yield str(k).lower()
            else:
                yield from _json_redacted(v)
    elif isinstance(value, list):
        for v in value:
            yield from _json_redacted(v)


def _utf8(data: bytes) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
