"""Text an episode captured (per-step WARC text records, response bodies) and finding values in it.

Comparisons follow docs/grading.md: Unicode NFKC and whitespace collapsing (`norm`), with casefolding as a
looser second level. Table rows arrive as one line of tab-separated cells, so a row of values is looked
for on one line first (`PageText.row_on_line`) and anywhere on the page second (`PageText.row_on_page`).
"""

from __future__ import annotations

import json
import re
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from html.parser import HTMLParser
from typing import ClassVar

from loguru import logger

from recorders.models import Step
from replay.index import ArchiveIndex
from rig.episode_dir import step_texts
from rig.formats.canonical import Canonicalizer
from rig.formats.vocabulary import norm

_TEXT_TYPES = ("text/", "application/json", "application/xml", "application/xhtml")


@lru_cache(maxsize=4096)
def _token_re(needle: str) -> re.Pattern[str]:
    # a value must not run on into a longer word, number or date: "1" never matches inside "12", "1.5" or "1,982",
    # "2014-03" never inside "2014-03-02"
    return re.compile(rf"(?<!\w)(?<!\d[.,-]){re.escape(needle)}(?!\w)(?![.,-]\d)")


def has_token(haystack: str, needle: str) -> bool:
    """Whether `needle` occurs in `haystack` as a whole value (not inside a longer word or number)."""
    return bool(needle) and needle in haystack and _token_re(needle).search(haystack) is not None


class PageText:
    """One captured page text, pre-split into normalised lines and tab-separated cells."""

    def __init__(self, text: str) -> None:
        self.raw = text
        self.norm = norm(text)
        self.loose = self.norm.casefold()
        self.lines = [[norm(c) for c in line.split("\t")] for line in text.splitlines() if line.strip()]
        self.table_lines = [cells for cells in self.lines if len(cells) >= 2]
        self._line_loose = [" \t ".join(cells).casefold() for cells in self.lines]
        self._canon_cache: dict[tuple[str, str], list[set[str]]] = {}
        self._rows: dict[tuple[str, str, tuple[tuple[str, str], ...]], bool] = {}

    def find(self, excerpt: str) -> str | None:
        """How `excerpt` occurs: `exact`, `normalised`, `casefold`, or None. `...`/`…` mark elisions."""
        if not excerpt.strip():
            return None
        if excerpt in self.raw:
            return "exact"
        parts = [p for p in re.split(r"\s*\.\.\.\s*", norm(excerpt)) if p]
        if _in_order(self.norm, parts):
            return "normalised"
        if _in_order(self.loose, [p.casefold() for p in parts]):
            return "casefold"
        return None

    def row_on_line(self, row: list[tuple[str, str]], forms: CellForms) -> bool:
        """Whether every (column, value) of `row` shows on one line of the page."""
        key = ("line", forms.key, tuple(row))
        if key not in self._rows:
            self._rows[key] = self._row_on_line(row, forms)
        return self._rows[key]

    def _row_on_line(self, row: list[tuple[str, str]], forms: CellForms) -> bool:
        wanted = [(c, norm(v)) for c, v in row if norm(v)]
        if not wanted:
            return False
        checks = [(v.casefold(), forms.cell(c, v), self._canon_lines(forms, c)) for c, v in wanted]
        if any(canons is None and v not in self.loose for v, _, canons in checks):
            return False  # a value that is nowhere on the page is on no line of it
        lines: Iterable[int] = range(len(self._line_loose))
        for v, want, canons in checks:  # narrow the lines value by value: those showing every value so far
            lines = [i for i in lines if has_token(self._line_loose[i], v) or (canons is not None and want in canons[i])]
            if not lines:
                return False
        return True

    def row_on_page(self, row: list[tuple[str, str]], forms: CellForms) -> bool:
        """Whether every (column, value) of `row` shows somewhere on the page."""
        key = ("page", forms.key, tuple(row))
        if key not in self._rows:
            wanted = [(c, norm(v)) for c, v in row if norm(v)]
            self._rows[key] = bool(wanted) and all(self.has_value(col, v, forms) for col, v in wanted)
        return self._rows[key]

    def has_value(self, column: str, value: str, forms: CellForms) -> bool:
        """Whether one value shows anywhere on the page (as a whole value, or canonically equal to a table cell)."""
        v = norm(value)
        if has_token(self.loose, v.casefold()):
            return True
        canons = self._canon_lines(forms, column)
        want = forms.cell(column, v)
        return canons is not None and any(want in cells for cells in canons)

    def _canon_lines(self, forms: CellForms, column: str) -> list[set[str]] | None:
        """Per line, the canonical forms of its cells under `column`'s rules (table lines only); None when the
        rules add nothing to the token comparison."""
        if not forms.active(column):
            return None
        key = (forms.key, column)
        if key not in self._canon_cache:
            self._canon_cache[key] = [{forms.cell(column, c) for c in cells} if len(cells) >= 2 else set()
                                      for cells in self.lines]
        return self._canon_cache[key]

    def same_column(self, a: str, b: str) -> bool:
        """Whether values `a` and `b` both show in the same column of this page's tables (e.g. two ranked rows)."""
        a, b = a.casefold(), b.casefold()
        cols_a = {j for cells in self.table_lines for j, c in enumerate(cells) if has_token(c.casefold(), a)}
        return any(j in cols_a and has_token(c.casefold(), b) for cells in self.table_lines for j, c in enumerate(cells))


def _in_order(text: str, parts: list[str]) -> bool:
    at = 0
    for part in parts:
        found = text.find(part, at)
        if found < 0:
            return False
        at = found + len(part)
    return bool(parts)


#: Canonical forms already computed in this process, per rule set (the same cells recur across a run's episodes).
_MEMOS: dict[str, dict[tuple[str, str], str]] = {}
_MEMO_LIMIT = 200_000


class CellForms:
    """A task's canonicalisation rules, memoised, for comparing answer values with page cells."""

    _PLAIN = frozenset({"nfkc", "trim", "collapse_ws", "casefold"})

    def __init__(self, canon: Canonicalizer | None = None) -> None:
        self.canon = canon or Canonicalizer()
        #: The rule set as text: forms with equal keys give equal canonical forms (memos are shared by key).
        self.key = json.dumps([self.canon.default, self.canon.columns], sort_keys=True, default=repr)
        self._memo = _MEMOS.setdefault(self.key, {})
        if len(self._memo) > _MEMO_LIMIT:
            self._memo.clear()
        self._plain_default = all(isinstance(r, str) and r in self._PLAIN for r in self.canon.default)

    def active(self, column: str) -> bool:
        """Whether `column`'s rules can make values equal that differ as text (numbers, dates, aliases, ...)."""
        return bool(self.canon.columns.get(column)) or not self._plain_default

    def cell(self, column: str, value: str) -> str:
        """The canonical form of one value under `column`'s rules (the value itself if a rule fails)."""
        key = (column, value)
        if key not in self._memo:
            try:
                self._memo[key] = self.canon.cell(column, value)
            except (ValueError, re.error):
                self._memo[key] = value
        return self._memo[key]


@dataclass
class EpisodeTexts:
    """The page text captured at each step of an episode (steps without a text record get empty text)."""

    by_step: dict[int, PageText] = field(default_factory=dict)
    missing: list[int] = field(default_factory=list)

    def at(self, step: int) -> PageText:
        """The text of one step."""
        return self.by_step.get(step) or _EMPTY


_EMPTY = PageText("")
#: Page texts already split in this process, by text: the same pages recur across a run's episodes.
_PAGES: OrderedDict[str, PageText] = OrderedDict()
_PAGES_LIMIT = 256


def page_text(text: str) -> PageText:
    """The PageText of `text`, shared by the episodes this process grades that captured the same text."""
    page = _PAGES.get(text)
    if page is None:
        page = _PAGES[text] = PageText(text)
        if len(_PAGES) > _PAGES_LIMIT:
            _PAGES.popitem(last=False)
    else:
        _PAGES.move_to_end(text)
    return page


@dataclass
class Evidence:
    """What an episode's archive holds, read once: each step's page text, every URL requested, and the text
    response bodies (HTML reduced to its text), for every check of one grading pass."""

    texts: EpisodeTexts = field(default_factory=EpisodeTexts)
    loaded: set[str] = field(default_factory=set)
    responses: list[tuple[str, str, bytes]] = field(default_factory=list, repr=False)
    _bodies: dict[int, PageText] = field(default_factory=dict, repr=False)

    @classmethod
    def from_archive(cls, archive: ArchiveIndex, steps: list[Step]) -> Evidence:
        """Index an archive's text records by step and its exchanges by URL."""
        for problem in archive.errors:
            logger.warning(problem)
        found = step_texts(archive, steps)
        texts = EpisodeTexts({n: page_text(t) for n, t in found.items()}, [s.step for s in steps if s.step not in found])
        exchanges = list(archive.all())
        responses = [(x.url, x.response.content_type.lower(), x.response.body) for x in exchanges
                     if x.response is not None and x.response.content_type.lower().startswith(_TEXT_TYPES)]
        return cls(texts, {x.url for x in exchanges if x.url}, responses)

    def response_texts(self, wanted: Callable[[str], bool]) -> list[tuple[str, PageText]]:
        """The text response bodies whose URL satisfies `wanted`, as page text (HTML reduced to its text)."""
        out = []
        for i, (url, ctype, body) in enumerate(self.responses):
            if not wanted(url):
                continue
            if i not in self._bodies:
                text = body.decode("utf-8", "replace")
                self._bodies[i] = PageText(html_text(text) if "html" in ctype else text)
            out.append((url, self._bodies[i]))
        return out


class _TextParser(HTMLParser):
    _BLOCK: ClassVar[set[str]] = {"p", "div", "tr", "li", "br", "h1", "h2", "h3", "h4", "h5", "h6", "table", "section", "dt", "dd", "caption"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style", "template"):
            self._skip += 1
        elif tag in ("td", "th"):
            self.parts.append("\t")
        elif tag in self._BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "template"):
            self._skip = max(0, self._skip - 1)
        elif tag in self._BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


def html_text(html: str) -> str:
    """A rough visible text of an HTML document: table cells tab-separated, blocks on their own lines."""
    parser = _TextParser()
    parser.feed(html)
    lines = ("\t".join(c.strip() for c in line.split("\t")).strip("\t ") for line in "".join(parser.parts).split("\n"))
    return "\n".join(line for line in lines if line)
