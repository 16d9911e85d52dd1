"""Word matching for the gold functions of the synthetic sites: a path of its own, independent of the sites' query
parser, FTS index and SQL (`rig/sites/querylang.py`), so that the gold answers check the sites rather than repeat
them. Words are runs of ASCII letters and digits, case folded, as the sites' index splits text."""

from __future__ import annotations

import re

import pandas as pd

_WORDS = re.compile(r"[0-9a-z]+")


def words(text: str) -> list[str]:
    """The words of a text, lower-cased."""
    return _WORDS.findall(text.lower())


def mentions(text: str, *wanted: str) -> bool:
    """Whether the text has every one of `wanted` (whole words, any order)."""
    have = set(words(text))
    return all(w in have for w in wanted)


def has_phrase(text: str, phrase: str) -> bool:
    """Whether the text has the words of `phrase` next to each other, in order."""
    want, have = words(phrase), words(text)
    return any(have[i:i + len(want)] == want for i in range(len(have) - len(want) + 1))


def unique_top(counts: pd.Series) -> str:
    """The label with the largest value; a tie would make the task ambiguous."""
    best = counts.max()
    winners = sorted(str(x) for x in counts[counts == best].index)
    if len(winners) != 1:
        raise ValueError(f"tie for the largest value ({best}): {winners}")
    return winners[0]
