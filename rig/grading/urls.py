"""Comparing the URLs an answer cites with the URLs an episode loaded and displayed (one place for the rules)."""

from __future__ import annotations

from urllib.parse import unquote, urldefrag

from recorders.models import Step


def same_url(a: str, b: str) -> bool:
    """Whether two URLs are the same once percent-escapes are decoded."""
    return unquote(a) == unquote(b)


def defrag(url: str) -> str:
    """The URL without its fragment."""
    return urldefrag(url)[0]


def same_page(a: str, b: str) -> bool:
    """Whether two URLs name the same page, fragments aside."""
    return same_url(defrag(a), defrag(b))


def displayed(steps: list[Step], url: str) -> list[int]:
    """Indexes of the steps that displayed `url`: with its fragment when any did, else ignoring fragments."""
    return [i for i, s in enumerate(steps) if same_url(s.url, url)] or [
        i for i, s in enumerate(steps) if same_page(s.url, url)
    ]
