"""Vocabularies every stage shares, so that the grader, the summaries and the report say the same thing: the failure
categories in their order, how column names are compared, and the text normal form excerpts are compared in."""

from __future__ import annotations

import unicodedata
from typing import get_args

from rig.formats.canonical import apply_rule
from rig.formats.task import FailureKind

#: SGR-Bench's failure categories (App. G), upstream before downstream: the order of every table and chart.
CATEGORIES: tuple[FailureKind, ...] = get_args(FailureKind)


def norm(text: str) -> str:
    """NFKC with whitespace collapsed to single spaces and trimmed (the contract's comparison form)."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


def column_name(name: str) -> str:
    """The form in which column names are compared: NFKC, no Markdown emphasis, collapsed spaces, casefolded."""
    return " ".join(apply_rule("strip_markdown", unicodedata.normalize("NFKC", name)).split()).casefold()
