"""Redaction: secrets (cookies, auth headers, secret URL/form/JSON parameters, password values) never reach an artifact.

A parameter, form field, JSON key or header is secret when its name is configured (`redact_params`,
`redact_headers`) or when its word parts say so (`secret_name`). A name is split into word parts at camelCase
boundaries, where letters meet digits, and at every character that is not a letter or digit (`X-Api-Key`,
`accessToken`, `auth_key`, `X-Amz-Signature`, `X-API-Key2` give `x api key`, `access token`, `auth key`,
`x amz signature`, `x api key 2`). A part is secret when it is `key`, `auth`, `sig`, `pwd`, `pass`, `sid`, `csrf`,
`xsrf`, `otp`, `hmac` (or a plural), starts with `session`/`sessid`, is `auth`/`key`/`sig` joined to
`token`/`key`/`code`/`id`/`hash`, or contains `token`, `secret`, `passw`, `credential`, `signature` or `apikey`;
two adjacent parts are secret together when joined they are such a compound (`api key`, `pass word`, `auth code`,
`access key`, `private key`: `SECRET_PAIR`). So `monkey`, `keyword`, `author`, `signal` and `signup` are not secret
(a starts-with rule on `key`, `auth` and `sig` would take a research site's `keyword` and `author` queries), nor are
`page2`, `keyword2` or `oauth2`; `tokenizer`, `secretary`, `session_date`, `api_key_v2`, `X-Api-Key-2` and
`AUTH_TOKEN3` are. In a response's JSON the bare words (`key`, `sig`, `pass`, ...) do not count: a data API's
`{"key": "year"}` is no secret (`STRONG_PART`); the compounds do (`{"api_key": ...}`).

A configured name matches whatever separates its parts and whatever version or number it carries, with or without
an `X-` prefix (`base_name`): `api_key` configured takes `API-Key`, `apiKey`, `api_key2` and `X-Api-Key-v2`;
`Cookie` and `Authorization` take `Cookie2`, `Set-Cookie2` and `X-Authorization`.

The values redacted by name (and by `user:password@` in URLs) are learned: once seen, a value of at least
8 characters that is not a plain lower-case word is scrubbed from everything written afterwards.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
from typing import Any
from urllib.parse import quote, quote_plus, unquote_plus

from rigwarc.dialect import REDACTED

_REDACTED_URL = quote(REDACTED, safe="")
_MIN_SECRET = 4  # shorter typed values are not scrubbed as literals (they would hit ordinary text)
_TEXTUAL = re.compile(r"(?i)text/|json|javascript|xml")
_PARAM_KEYS = ("form.", "url.query.", "url.fragment.")
_FACT_KEY = "page."
_MIN_LEARNED = 8  # values redacted by name are learned from this length on (`session=true` teaches nothing)
#: One word part of a name that says its value is a secret (see the module docstring); the same source runs in the
#: page (`recorders/observer.js` gets `SECRET_PART.pattern` to keep secret-named fields out of the DOM snapshots).
SECRET_PART = re.compile(
    r"^(?:(?:key|auth|sig|pwd|pass|sid|csrf|xsrf|otp|hmac)s?|sess(?:ion|id).*|(?:auth|key|sig)(?:token|key|code|id|hash)s?"
    r"|.*(?:token|secret|passw|credential|signature|apikey).*)$"
)
#: The parts that say secret in a response's JSON, where `key`, `sig` and `pass` name ordinary fields
#: (`{"key": "year", "label": "Year"}`).
STRONG_PART = re.compile(r"^(?:sess(?:ion|id).*|(?:auth|key|sig)(?:token|key|code|id|hash)s?"
                         r"|.*(?:token|secret|passw|credential|signature|apikey).*)$")
#: Two adjacent word parts that say secret together, whatever separates them (`api_key`, `pass-word`, `AccessKey`).
SECRET_PAIR = re.compile(r"^(?:api(?:key|secret|token)|pass(?:word|wd|phrase|code)"
                         r"|(?:auth|key|sig)(?:token|key|code|id|hash)|(?:access|private)key)s?$")
#: Where a name splits into word parts besides its separators: camelCase (`apiKey`) and letters meeting digits
#: (`Key2`, `3des`). The same source runs in the page (`recorders/observer.js`).
PART_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Za-z])(?=[0-9])|(?<=[0-9])(?=[A-Za-z])")
_PARTS = re.compile(r"[^a-z0-9]+")
_PARAM = re.compile(r"((?:^|[?&#;])([^=&#;\s\"'<>?]+)=)([^&#;\s\"'<>]*)")
_USERINFO = re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://[^/?#@\s:\"'<>]*:)([^/?#@\s\"'<>]+)(@)")
_MULTIPART_FIELD = re.compile(r'(name="([^"]*)"[^\r\n]*\r?\n(?:[^\r\n]+\r?\n)*\r?\n)(.*?)(\r?\n--)', re.S)


def name_parts(name: str) -> list[str]:
    """The lower-case word parts of a parameter or header name (`XApiKey` and `x-api_key`: x, api, key; `Key2`:
    key, 2)."""
    return [p for p in _PARTS.split(PART_BOUNDARY.sub("_", name).lower()) if p]


def base_name(name: str) -> str:
    """A name as configured names are compared: its word parts without numbers, versions (`v2`) and a leading `x`,
    joined by spaces (`X-Api-Key-v2`, `api_key2`, `API-Key`: `api key`)."""
    parts = name_parts(name)
    kept = [p for i, p in enumerate(parts) if not p.isdigit() and not (p == "v" and parts[i + 1:i + 2] and
                                                                        parts[i + 1].isdigit())]
    return " ".join(kept[1:] if len(kept) > 1 and kept[0] == "x" else kept)


def secret_name(name: str, strong: bool = False) -> bool:
    """Whether a parameter, field, JSON key or header of this name holds a secret, by its word parts or two adjacent
    ones (`strong`: only by the parts that say so in a response's JSON)."""
    part = STRONG_PART if strong else SECRET_PART
    parts = name_parts(name)
    return any(part.match(p) for p in parts) or any(SECRET_PAIR.match(a + b) for a, b in zip(parts, parts[1:]))


def _learnable(value: str) -> bool:
    """Long enough and unlike an ordinary word: a value worth scrubbing wherever it shows up later."""
    return len(value) >= _MIN_LEARNED and not (value.isalpha() and value.islower()) and value != REDACTED


class Redactor:
    """Redacts headers, URLs, bodies, state and text; learns password values and field names as it goes."""

    def __init__(self, params: list[str], headers: list[str]) -> None:
        self._params = {base_name(p) for p in params} - {""}
        self._headers = {base_name(h) for h in headers} - {""}
        self._typing: dict[str, str] = {}
        self._committed: set[str] = set()
        self._learned: set[str] = set()
        self._lock = threading.Lock()  # the WARC thread learns too
        self._secrets: tuple[str, ...] = ()  # replaced, never mutated: the WARC thread reads it

    @property
    def params(self) -> list[str]:
        """The parameter names whose values are redacted (configured and learned), as `base_name`s."""
        return sorted(self._params)

    def secret_param(self, name: str) -> bool:
        """Whether values of a parameter (or form field, or JSON key) with this name are redacted."""
        return base_name(name) in self._params or secret_name(name)

    def dropped_header(self, name: str) -> bool:
        """Whether a header is dropped from the archive: a configured one (`Cookie`, and `Cookie2`, `X-Cookie`)."""
        return base_name(name) in self._headers

    def secret_header(self, name: str) -> bool:
        """Whether a header's value is redacted (dropped headers aside): its name says secret (CORS headers never:
        `Access-Control-Allow-Credentials` must replay as sent)."""
        return secret_name(name) and not name.lower().startswith("access-control-")

    def learn_param(self, name: str) -> None:
        """Redact this parameter name from now on (e.g. the name of a password input)."""
        if name and base_name(name):
            self._params.add(base_name(name))

    def learn_value(self, value: str) -> None:
        """A value that was redacted by its name: scrub it from everything written from now on (when long enough)."""
        value = value.strip()
        if _learnable(value) and value not in self._learned:
            with self._lock:
                self._learned.add(value)
                self._refresh()

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
        typed = {v for v in self._typing.values() if len(v) >= _MIN_SECRET}
        self._secrets = tuple(sorted(self._committed | self._learned | typed, key=len, reverse=True))

    def text(self, text: str, replacement: str = REDACTED) -> str:
        """Scrub learned secrets (raw or percent-encoded) from text."""
        for s in self._secrets:
            for form in {s, quote(s, safe=""), quote_plus(s)}:
                text = text.replace(form, replacement)
        return text

    def url(self, url: str) -> str:
        """The URL (or text holding URLs) with secret query/fragment parameter values and `user:password@`
        passwords replaced, otherwise unchanged; the values replaced are learned."""
        url = _USERINFO.sub(self._userinfo, url) if "@" in url else url
        return _PARAM.sub(self._param, self.text(url, _REDACTED_URL))

    def prose(self, text: str) -> str:
        """Text that may hold URLs (page text, a dialog's message): like `url`, with learned secrets as `[redacted]`."""
        text = self.text(text)
        text = _USERINFO.sub(self._userinfo, text) if "@" in text else text
        return _PARAM.sub(self._param, text) if "=" in text else text

    def _param(self, m: re.Match[str]) -> str:
        if not m.group(3) or m.group(3) == _REDACTED_URL or not self.secret_param(unquote_plus(m.group(2))):
            return m.group(0)
        self.learn_value(unquote_plus(m.group(3)))
        return m.group(1) + _REDACTED_URL

    def _userinfo(self, m: re.Match[str]) -> str:
        self.learn_value(unquote_plus(m.group(2)))
        return m.group(1) + _REDACTED_URL + m.group(3)

    def headers(self, headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """Headers without the dropped ones (their credentials learned), secret-named ones' values replaced,
        URLs in the rest redacted."""
        out = []
        for k, v in headers:
            if self.dropped_header(k):
                self._learn_header(k, v)
            elif self.secret_header(k):
                self.learn_value(v)
                out.append((k, REDACTED))
            else:
                out.append((k, self.url(v)))
        return out

    def _learn_header(self, name: str, value: str) -> None:
        """Learn the credential of a dropped header: a cookie's value when its name is secret, else the last word."""
        kind = base_name(name)
        if kind in ("cookie", "set cookie"):
            pairs = value.split("\n") if kind == "set cookie" else value.split(";")
            for pair in (p.split(";", 1)[0] for p in pairs):
                cookie, _, v = pair.partition("=")
                if self.secret_param(cookie.strip()):
                    self.learn_value(v)
        elif value.split():
            self.learn_value(value.split()[-1])

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
            text = _PARAM.sub(self._param, "?" + text)[1:]
        elif "multipart/form-data" in ct:
            text = self._multipart(text)
        return self.text(text).encode("utf-8")

    def response_body(self, body: bytes, content_type: str | None) -> bytes:
        """A response body with secret-named JSON fields (an OAuth token response) redacted and learned, learned
        secrets scrubbed and, in text bodies, secret URL parameters redacted."""
        if "json" in (content_type or "").lower() and body:
            body = self._json_body(body)
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

    def _json_body(self, body: bytes) -> bytes:
        """A JSON body with secret-named fields redacted; re-serialised only when one was (else byte-exact)."""
        try:
            parsed = json.loads(body)
        except ValueError:
            return body
        redacted = self._json(parsed, strong=True)
        return body if redacted == parsed else json.dumps(redacted, ensure_ascii=False).encode("utf-8")

    def _json(self, value: Any, strong: bool = False) -> Any:
        """`value` with secret-named fields redacted (`strong`: a response's, by `STRONG_PART` only)."""
        if isinstance(value, dict):
            secret = (lambda k: secret_name(k, strong=True)) if strong else self.secret_param
            return {k: self._secret_value(v) if secret(str(k)) else self._json(v, strong) for k, v in value.items()}
        if isinstance(value, list):
            return [self._json(v, strong) for v in value]
        return value

    def _secret_value(self, value: Any) -> Any:
        """What a secret-named JSON field keeps: nothing of a string, number or structure (empty ones stay)."""
        if value in (None, "", [], {}) or isinstance(value, bool):
            return value
        for leaf in _leaves(value):
            self.learn_value(str(leaf))
        return REDACTED

    def _multipart(self, text: str) -> str:
        def repl(m: re.Match[str]) -> str:
            return m.group(1) + REDACTED + m.group(4) if self.secret_param(m.group(2)) else m.group(0)

        return _MULTIPART_FIELD.sub(repl, text)

    def _scrub_bytes(self, data: bytes) -> bytes:
        for s in self._secrets:
            for form in {s, quote(s, safe=""), quote_plus(s)}:
                data = data.replace(form.encode("utf-8"), REDACTED.encode("utf-8"))
        return data


def _leaves(value: Any) -> list[Any]:
    """The scalar values inside a JSON value."""
    if isinstance(value, dict):
        return [x for v in value.values() for x in _leaves(v)]
    if isinstance(value, list):
        return [x for v in value for x in _leaves(v)]
    return [value]
