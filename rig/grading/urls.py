"""Comparing the URLs an answer cites with the URLs an episode loaded and displayed (one place for the rules)."""

from __future__ import annotations

from functools import lru_cache
from urllib.parse import unquote, urldefrag

from recorders.models import Step


def same_url(a: str, b: str) -> bool:
    """Whether two URLs are the same once percent-escapes are decoded."""
    return unquote(a) == unquote(b)


def defrag(url: str) -> str:
    """The URL without its fragment."""
    return urldefrag(url)[0]


@lru_cache(maxsize=16384)
def _page(url: str) -> str:
    """The URL without its fragment, percent-escapes decoded (what `same_page` compares; memoised: grading compares
    the same few URLs many times)."""
    return unquote(defrag(url))


def same_page(a: str, b: str) -> bool:
    """Whether two URLs name the same page, fragments aside."""
    return _page(a) == _page(b)


def displaying(steps: list[Step], url: str) -> list[list[int]]:
    """Indexes of the steps that displayed `url`'s document, in the order they are searched: a URL without a
    fragment covers every state of the document (a single-page app rewrites its fragment as it goes); with a
    fragment, the steps at that exact fragment come first, then the document's other steps."""
    document = [i for i, s in enumerate(steps) if same_page(s.url, url)]
    if not urldefrag(url)[1]:
        return [document] if document else []
    exact = [i for i in document if same_url(steps[i].url, url)]
    rest = [i for i in document if i not in exact]
    return [tier for tier in (exact, rest) if tier]


def displayed(steps: list[Step], url: str) -> list[int]:
    """Indexes of the steps that displayed `url`'s document, those at its exact fragment first (`displaying`)."""
    return [i for tier in displaying(steps, url) for i in tier]
