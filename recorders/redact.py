"""Redaction: secrets (cookies, auth headers, secret URL/form parameters, password values) never reach an artifact."""

from __future__ import annotations

import contextlib
import json
import re
from typing import Any
from urllib.parse import quote, quote_plus

#: What a redacted value becomes (percent-encoded inside URLs and form bodies).
REDACTED = "[redacted]"
_REDACTED_URL = quote(REDACTED, safe="")
_MIN_SECRET = 4  # shorter typed values are not scrubbed as literals (they would hit ordinary text)
_TEXTUAL = re.compile(r"(?i)text/|json|javascript|xml")
_PARAM_KEYS = ("form.", "url.query.", "url.fragment.")
_FACT_KEY = "page."
_MULTIPART_FIELD = re.compile(r'(name="([^"]*)"[^\r\n]*\r?\n(?:[^\r\n]+\r?\n)*\r?\n)(.*?)(\r?\n--)', re.S)


class Redactor:
    """Redacts headers, URLs, bodies, state and text; learns password values and field names as it goes."""

    def __init__(self, params: list[str], headers: list[str]) -> None:
        self._params = {p.lower() for p in params}
        self._headers = {h.lower() for h in headers}
        self._typing: dict[str, str] = {}
        self._committed: set[str] = set()
        self._secrets: tuple[str, ...] = ()  # replaced, never mutated: the WARC thread reads it
        self._param_re = self._compile()

    def _compile(self) -> re.Pattern[str]:
        names = "|".join(sorted((re.escape(p) for p in self._params), key=len, reverse=True))
        return re.compile(rf"(?i)((?:^|[?&#;])(?:{names})=)([^&#;\s\"'<>]*)")

    @property
    def params(self) -> list[str]:
        """The parameter names whose values are redacted (configured and learned)."""
        return sorted(self._params)

    def secret_param(self, name: str) -> bool:
        """Whether values of a parameter (or form field) with this name are redacted."""
        return name.lower() in self._params

    def learn_param(self, name: str) -> None:
        """Redact this parameter name from now on (e.g. the name of a password input)."""
        if name and name.lower() not in self._params:
            self._params.add(name.lower())
            self._param_re = self._compile()

    def learn_secret(self, value: str, field: str = "") -> None:
        """Scrub this literal (a typed password) from everything written from now on.

        Values of the same `field` replace each other until `commit()` (typing reports every prefix).
        """
        self._typing[field] = value
        self._refresh()

    def commit(self) -> None:
        """Keep the fields' current values as secrets for good (called once a step is written)."""
        self._committed |= {v for v in self._typing.values() if len(v) >= _MIN_SECRET}
        self._refresh()

    def _refresh(self) -> None:
        self._secrets = tuple(self._committed | {v for v in self._typing.values() if len(v) >= _MIN_SECRET})

    def text(self, text: str, replacement: str = REDACTED) -> str:
        """Scrub learned secrets (raw or percent-encoded) from text."""
        for s in self._secrets:
            for form in {s, quote(s, safe=""), quote_plus(s)}:
                text = text.replace(form, replacement)
        return text

    def url(self, url: str) -> str:
        """The URL with secret query/fragment parameter values replaced, otherwise unchanged."""
        return self._param_re.sub(lambda m: m.group(1) + _REDACTED_URL, self.text(url, _REDACTED_URL))

    def headers(self, headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """Headers without secret ones; URLs in the rest redacted."""
        return [(k, self.url(v)) for k, v in headers if k.lower() not in self._headers]

    def body(self, body: bytes, content_type: str | None) -> bytes:
        """A request body with secret form/JSON fields and learned secrets redacted."""
        if not body:
            return body
        ct = (content_type or "").lower()
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            return self._scrub_bytes(body)
        if "json" in ct:
            try:
                parsed = json.loads(text)
            except ValueError:
                parsed = None
            redacted = self._json(parsed)
            if redacted != parsed:  # re-serialise only when a field was redacted: keep bodies byte-exact for replay
                text = json.dumps(redacted, ensure_ascii=False)
        if "x-www-form-urlencoded" in ct:
            text = self._param_re.sub(lambda m: m.group(1) + _REDACTED_URL, "?" + text)[1:]
        elif "multipart/form-data" in ct:
            text = self._multipart(text)
        return self.text(text).encode("utf-8")

    def response_body(self, body: bytes, content_type: str | None) -> bytes:
        """A response body with learned secrets scrubbed and, in text bodies, secret URL parameters redacted."""
        if self._secrets:
            body = self._scrub_bytes(body)
        if _TEXTUAL.search(content_type or "") and b"=" in body:
            with contextlib.suppress(UnicodeDecodeError):
                body = self.url(body.decode("utf-8")).encode("utf-8")
        return body

    def state(self, state: dict[str, Any]) -> dict[str, Any]:
        """State values of secret form fields, URL parameters and query-string page facts redacted."""
        out: dict[str, Any] = {}
        for k, v in state.items():
            prefix = next((p for p in _PARAM_KEYS if k.startswith(p)), None)
            name = k[len(prefix) :].split("#", 1)[0] if prefix else None
            if k.startswith(_FACT_KEY) and k.count(".") >= 2:  # `page.<fact>.<name>`: a fact parsed as a query
                name = k.rsplit(".", 1)[1]
            if name is not None and self.secret_param(name) and v not in ("", []):
                v = REDACTED
            elif isinstance(v, str):
                v = self.url(v) if k.startswith(_FACT_KEY) else self.text(v)  # a fact may hold a query string
            elif isinstance(v, list):
                v = [self.text(x) if isinstance(x, str) else x for x in v]
            out[k] = v
        return out

    def _json(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: REDACTED if self.secret_param(str(k)) else self._json(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._json(v) for v in value]
        return value

    def _multipart(self, text: str) -> str:
        def repl(m: re.Match[str]) -> str:
            return m.group(1) + REDACTED + m.group(4) if self.secret_param(m.group(2)) else m.group(0)

        return _MULTIPART_FIELD.sub(repl, text)

    def _scrub_bytes(self, data: bytes) -> bytes:
        for s in self._secrets:
            for form in {s, quote(s, safe=""), quote_plus(s)}:
                data = data.replace(form.encode("utf-8"), REDACTED.encode("utf-8"))
        return data
