"""The rig's WARC dialect: the header names and values its archives carry beyond WARC 1.1, and its ids and dates.

| header | on | value |
|---|---|---|
| `WARC-Rig-Step` (`STEP_HEADER`) | per-step `conversion` records, `resource` records | the trajectory step |
| `WARC-Rig-Capture` (`CAPTURE_HEADER`) | the same | what the record holds: `text`, `dom`, `tool` |
| `WARC-Rig-View` (`VIEW_HEADER`) | a DOM snapshot | `width height x y`: its viewport and scroll offset (CSS px) |
| `WARC-Truncated` (`TRUNCATED_HEADER`, WARC 1.1's own) | a `response` | why its body is not whole: `length`, `time`, `unspecified` |
| `WARC-Rig-Missing` (`MISSING_HEADER`) | a `response` | why it holds no body at all (`body not readable: <reason>`) |

A secret's value (a token in a URL, a password field) is written as `REDACTED`, `[redacted]`.

A response with `WARC-Rig-Missing` holds no body (and no `Content-Length` in its HTTP headers) and also carries
`WARC-Truncated`: it is no answer to replay. One with `WARC-Truncated` alone holds the first bytes of its body.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

#: Header naming the trajectory step of a per-step record.
STEP_HEADER = "WARC-Rig-Step"
#: Header saying what a per-step record holds: `text`, `dom` or `tool`.
CAPTURE_HEADER = "WARC-Rig-Capture"
#: Header of a response record archived without its body, saying why (`body not readable: <reason>`): the record
#: holds no body (its `WARC-Truncated` says so too) and is no answer to replay.
MISSING_HEADER = "WARC-Rig-Missing"
#: Header of a DOM snapshot record: the viewport it was shown in and its scroll offset, `width height x y` (CSS px).
VIEW_HEADER = "WARC-Rig-View"
#: WARC 1.1's header of a record whose block is not whole, saying why (`length`, `time`, `disconnect`, `unspecified`).
TRUNCATED_HEADER = "WARC-Truncated"

#: What the recorder writes in place of a secret value (percent-encoded inside URLs and form bodies); replay masks
#: a parameter it finds so in every lookup key.
REDACTED = "[redacted]"

#: `WARC-Rig-Capture` values: a step's visible text, its DOM snapshot, a tool result a driver archived.
TEXT, DOM, TOOL = "text", "dom", "tool"

#: A view: (width, height, scroll x, scroll y) in CSS pixels.
View = tuple[int, int, int, int]


def new_record_id() -> str:
    """A fresh `<urn:uuid:...>` WARC record id."""
    return f"<urn:uuid:{uuid.uuid4()}>"


def content_record_id(namespace: uuid.UUID, *parts: object) -> str:
    """A `<urn:uuid:...>` record id derived from `parts` (the same parts give the same id: deterministic archives)."""
    return f"<urn:uuid:{uuid.uuid5(namespace, '|'.join(map(str, parts)))}>"


def warc_date(ts: float) -> str:
    """A WARC 1.1 date (UTC, microseconds) for a Unix timestamp."""
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def warc_second(when: datetime) -> str:
    """A WARC date to the second (UTC) for a datetime: what a snapshot's records carry as their build date."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def format_view(view: View) -> str:
    """A `WARC-Rig-View` value."""
    return " ".join(str(v) for v in view)


def parse_view(value: str | None) -> View | None:
    """A `WARC-Rig-View` value read back; None when absent or not four integers with a positive width and height."""
    try:
        w, h, x, y = (int(v) for v in (value or "").split())
    except ValueError:
        return None
    return (w, h, x, y) if w > 0 and h > 0 else None


def parse_step(value: str | None) -> int | None:
    """A `WARC-Rig-Step` value read back; None when absent or not a number."""
    return int(value) if value is not None and value.isdigit() else None
