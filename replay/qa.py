"""Replay fidelity, scored: how close a page rendered from an archive alone came to what was recorded (`rig qa`).

Pure functions on what the two sides captured (visible texts, JPEG images, the replay's requests, retrieval states);
no browser, no file. Each part is in [0, 1], or None when it could not be measured (no recorded image, no recorded
text); a page's score is its worst measured part, so one broken aspect breaks the page whatever the others say:

- `text`: the Indel similarity (rapidfuzz's `fuzz.ratio`) of the two visible texts after NFKC and whitespace
  collapsing;
- `image`: the share of pixels that match within `IMAGE_TOLERANCE` per channel of some pixel in the other image's
  3x3 neighbourhood (anti-aliasing and one-pixel shifts of an edge match), the worse of the two directions;
- `resources`: 1, halved by every request the replay made that the archive failed (not held: a 404; held with a body
  not whole: a 502; or answered with another status than recorded) when it can change what the page shows or holds
  (document, stylesheet, script, XHR, fetch, ...), and reduced by a tenth for an image, font or media file;
- `state`: 1 when the retrieval state read on the replayed page equals the recorded one (every key), else 0.
"""

from __future__ import annotations

import io
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import parse_qsl, urlsplit

from PIL import Image, ImageChops, ImageFilter
from rapidfuzz import fuzz

from replay.index import ArchiveIndex
from replay.report import VOLATILE_KEYS

#: The parts of a page's score, in the order they are reported (and named first on a tie for the worst).
PARTS = ("text", "image", "resources", "state")
#: Per-channel difference (0-255) still counted as the same colour: JPEG noise and anti-aliased edges.
IMAGE_TOLERANCE = 32
#: Request kinds (Playwright's `resource_type`) whose failure can change what a page shows or holds.
CRITICAL_KINDS = frozenset({"document", "stylesheet", "script", "xhr", "fetch", "eventsource", "websocket", "manifest",
                            "other"})
#: What one failed request leaves of the resources part: critical kinds, and images, fonts and media.
CRITICAL_FACTOR = 0.5
MINOR_FACTOR = 0.9
#: Scores are rounded to this many decimals, so two runs that saw the same pages report the same numbers.
DECIMALS = 4

Outcome = Literal["good", "missed", "status", "incomplete"]


@dataclass(frozen=True)
class RequestOutcome:
    """One request the replayed page made and how the archive answered it."""

    method: str
    url: str
    kind: str
    outcome: Outcome
    status: int | None = None
    recorded_status: int | None = None
    reason: str | None = None

    @property
    def bad(self) -> bool:
        """Whether the archive failed it."""
        return self.outcome != "good"


def normalise_text(text: str) -> str:
    """Visible text as compared: NFKC, every run of whitespace one space, trimmed."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


def text_similarity(recorded: str, replayed: str) -> float:
    """How alike two visible texts are, in [0, 1] (1: equal after `normalise_text`; two empty texts are equal)."""
    a, b = normalise_text(recorded), normalise_text(replayed)
    if a == b:
        return 1.0
    return round(fuzz.ratio(a, b) / 100, DECIMALS)


def _rgb(data: bytes) -> Image.Image:
    with Image.open(io.BytesIO(data)) as im:
        return im.convert("RGB")


def _matching(a: Image.Image, b: Image.Image, tolerance: int) -> float:
    """The share of `a`'s pixels within `tolerance` of the range of `b`'s 3x3 neighbourhood, in every channel."""
    lo, hi = b.filter(ImageFilter.MinFilter(3)), b.filter(ImageFilter.MaxFilter(3))
    off = ImageChops.lighter(ImageChops.subtract(lo, a), ImageChops.subtract(a, hi))  # how far outside, per channel
    r, g, bl = off.split()
    worst = ImageChops.lighter(ImageChops.lighter(r, g), bl)
    bad = worst.point(lambda v: 255 if v > tolerance else 0).histogram()[255]
    return 1 - bad / (a.width * a.height)


def image_match(recorded: bytes, replayed: bytes, tolerance: int = IMAGE_TOLERANCE) -> float:
    """The pixel match of two images in [0, 1]: the share of pixels that match within `tolerance` per channel of a
    pixel in the other's 3x3 neighbourhood, the worse direction of the two. A replayed image of another size is
    scaled to the recorded one's first. ValueError when either is not an image Pillow reads."""
    try:
        a, b = _rgb(recorded), _rgb(replayed)
    except OSError as exc:
        raise ValueError(f"not an image: {exc}") from None
    if b.size != a.size:
        b = b.resize(a.size, Image.Resampling.BILINEAR)
    return round(min(_matching(a, b, tolerance), _matching(b, a, tolerance)), DECIMALS)


def resources_score(outcomes: Iterable[RequestOutcome]) -> float:
    """1, times `CRITICAL_FACTOR` for each failed request of a critical kind and `MINOR_FACTOR` for each other one."""
    score = 1.0
    for o in outcomes:
        if o.bad:
            score *= CRITICAL_FACTOR if o.kind in CRITICAL_KINDS else MINOR_FACTOR
    return round(score, DECIMALS)


def state_match(recorded: Mapping[str, Any], replayed: Mapping[str, Any],
                ignore: frozenset[str] = VOLATILE_KEYS) -> tuple[float, dict[str, list[Any]]]:
    """1 when every state key has the recorded value on the replayed page, else 0; and key -> [recorded, replayed]
    for the keys that differ (None: absent)."""
    keys = (set(recorded) | set(replayed)) - ignore
    diff = {k: [recorded.get(k), replayed.get(k)] for k in sorted(keys) if recorded.get(k) != replayed.get(k)}
    return (0.0 if diff else 1.0), diff


def combine(parts: Mapping[str, float | None]) -> tuple[float, str | None]:
    """A page's score (its worst measured part; 1 when none was measured) and that part's name (None when every
    measured part is 1)."""
    measured = [(parts[p], p) for p in PARTS if parts.get(p) is not None]
    if not measured:
        return 1.0, None
    score = min(v for v, _ in measured)  # type: ignore[type-var]
    worst = next(p for v, p in measured if v == score)
    return round(float(score), DECIMALS), (worst if score < 1 else None)  # type: ignore[arg-type]


def fuzzy_hint(index: ArchiveIndex, method: str, url: str) -> list[str]:
    """The query parameters whose values alone keep a missed request from a recorded one of the same method, origin,
    path and parameter names, where both values look made up per request (a cache-buster, a timestamp): a fuzzy rule
    ignoring them would answer it. Empty when there is none."""
    parts = urlsplit(url)
    mine = parse_qsl(parts.query, keep_blank_values=True)
    names = sorted(k for k, _ in mine)
    found: set[str] = set()
    for x in index.all():
        other = urlsplit(x.url)
        if x.method != method.upper() or other.path != parts.path:
            continue
        if not index.keys.rules.ignore_origin and other.netloc != parts.netloc:
            continue
        theirs = parse_qsl(other.query, keep_blank_values=True)
        if sorted(k for k, _ in theirs) != names:
            continue
        a, b = dict(mine), dict(theirs)
        differ = {k for k in names if a.get(k) != b.get(k)}
        if differ and all(_volatile(a[k]) and _volatile(b[k]) for k in differ):
            found |= differ
    return sorted(found)


_VOLATILE = re.compile(r"[0-9A-Za-z._-]{8,}")


def _volatile(value: str) -> bool:
    """Whether a parameter value looks made up per request: eight or more characters with digits (`Date.now()`,
    `Math.random()`, a random id), not a filter's word or a page number."""
    return bool(_VOLATILE.fullmatch(value)) and any(c.isdigit() for c in value)
