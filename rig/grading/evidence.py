"""Text an episode captured (per-step WARC text records, response bodies) and finding values in it.

Comparisons follow CONTRACTS.md: Unicode NFKC and whitespace collapsing (`norm`), with casefolding as a
looser second level. Table rows arrive as one line of tab-separated cells, so a row of values is looked
for on one line first (`PageText.row_on_line`) and anywhere on the page second (`PageText.row_on_page`).
"""

from __future__ import annotations

import io
import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from html.parser import HTMLParser
from pathlib import Path

from loguru import logger
from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed

from recorders.models import Step
from recorders.warc import CAPTURE_HEADER, STEP_HEADER
from replay.index import whole_gzip_members
from rig.errors import InputError
from rig.grading.canonical import Canonicalizer

WARC_FILE = "evidence.warc.gz"
_TEXT_TYPES = ("text/", "application/json", "application/xml", "application/xhtml")


def norm(text: str) -> str:
    """NFKC with whitespace collapsed to single spaces and trimmed (the contract's comparison form)."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


@lru_cache(maxsize=4096)
def _token_re(needle: str) -> re.Pattern[str]:
    # a value must not run on into a longer word, number or date: "1" never matches inside "12", "1.5" or "1,982",
    # "2014-03" never inside "2014-03-02"
    return re.compile(rf"(?<!\w)(?<!\d[.,-]){re.escape(needle)}(?!\w)(?![.,-]\d)")


def has_token(haystack: str, needle: str) -> bool:
    """Whether `needle` occurs in `haystack` as a whole value (not inside a longer word or number)."""
    return bool(needle) and _token_re(needle).search(haystack) is not None


class PageText:
    """One captured page text, pre-split into normalised lines and tab-separated cells."""

    def __init__(self, text: str) -> None:
        self.raw = text
        self.norm = norm(text)
        self.loose = self.norm.casefold()
        self.lines = [[norm(c) for c in line.split("\t")] for line in text.splitlines() if line.strip()]
        self.table_lines = [cells for cells in self.lines if len(cells) >= 2]
        self._line_loose = [" \t ".join(cells).casefold() for cells in self.lines]
        self._canon_cache: dict[tuple[CellForms, str], list[set[str]]] = {}

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
        wanted = [(c, norm(v)) for c, v in row if norm(v)]
        if not wanted:
            return False
        checks = [(v.casefold(), forms.cell(c, v), self._canon_lines(forms, c)) for c, v in wanted]
        if any(canons is None and v not in self.loose for v, _, canons in checks):
            return False  # a value that is nowhere on the page is on no line of it
        return any(all(has_token(loose, v) or (canons is not None and want in canons[i]) for v, want, canons in checks)
                   for i, loose in enumerate(self._line_loose))

    def row_on_page(self, row: list[tuple[str, str]], forms: CellForms) -> bool:
        """Whether every (column, value) of `row` shows somewhere on the page."""
        wanted = [(c, norm(v)) for c, v in row if norm(v)]
        return bool(wanted) and all(self.has_value(col, v, forms) for col, v in wanted)

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
        key = (forms, column)
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


class CellForms:
    """A task's canonicalisation rules, memoised, for comparing answer values with page cells."""

    _PLAIN = frozenset({"nfkc", "trim", "collapse_ws", "casefold"})

    def __init__(self, canon: Canonicalizer | None = None) -> None:
        self.canon = canon or Canonicalizer()
        self._memo: dict[tuple[str, str], str] = {}
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


@lru_cache(maxsize=64)
def _readable_end(path: str, size: int, mtime_ns: int) -> int:
    """Where the archive's complete records end (checked, and warned about, once per version of the file)."""
    with open(path, "rb") as fh:
        data = fh.read()
    if data[:2] != b"\x1f\x8b":
        if data and not data.startswith(b"WARC/"):
            raise InputError(path, "byte 0", f"not a WARC file (it starts with neither a gzip header nor 'WARC/'); "
                                             f"check it with `warcio check {path}`")
        return size  # an uncompressed WARC: warcio reports its problems itself
    end = whole_gzip_members(data)
    if end == 0:
        raise InputError(path, None, f"not a readable WARC (bad gzip at byte 0); check it with `warcio check {path}`")
    if end < size:
        logger.warning("{}: the archive ends with a torn or corrupt record at byte {} of {}; the complete records "
                       "before it are used", path, end, size)
    return end


def _records(warc: Path) -> Iterator:  # type: ignore[type-arg]
    """The archive's complete records (a torn last record, from a killed recording, is left out with a warning)."""
    st = warc.stat()
    end = _readable_end(str(warc), st.st_size, st.st_mtime_ns)
    with warc.open("rb") as fh:
        it = ArchiveIterator(io.BytesIO(fh.read(end)))
        try:
            yield from it
        except ArchiveLoadFailed as exc:
            raise InputError(str(warc), f"byte {it.offset}", f"not a WARC record ({str(exc.msg).strip()}); "
                                                             f"check it with `warcio check {warc}`") from None


def read_step_texts(episode_dir: Path, steps: list[Step]) -> EpisodeTexts:
    """Read each step's visible-text record (matched by `snapshot.warc_record_id`, else by `WARC-Rig-Step`)."""
    warc = Path(episode_dir) / WARC_FILE
    by_id: dict[str, str] = {}
    by_step: dict[int, str] = {}
    if warc.exists():
        for rec in _records(warc):
            h = rec.rec_headers
            if rec.rec_type != "conversion" or h.get_header(CAPTURE_HEADER) != "text":
                continue
            text = rec.content_stream().read().decode("utf-8", "replace")
            by_id[h.get_header("WARC-Record-ID")] = text
            step = h.get_header(STEP_HEADER)
            if step is not None and step.isdigit():
                by_step[int(step)] = text
    shared: dict[str, PageText] = {}
    out = EpisodeTexts()
    for s in steps:
        rid = s.snapshot.warc_record_id if s.snapshot else None
        text = by_id.get(rid) if rid else None
        if text is None:
            text = by_step.get(s.step)
        if text is None:
            out.missing.append(s.step)
            continue
        if text not in shared:
            shared[text] = PageText(text)
        out.by_step[s.step] = shared[text]
    return out


def response_texts(episode_dir: Path, wanted: Callable[[str], bool]) -> list[tuple[str, PageText]]:
    """The bodies of text responses whose URL satisfies `wanted`, as page text (HTML reduced to its text)."""
    warc = Path(episode_dir) / WARC_FILE
    if not warc.exists():
        return []
    out = []
    for rec in _records(warc):
        url = rec.rec_headers.get_header("WARC-Target-URI") or ""
        if rec.rec_type != "response" or not wanted(url) or rec.http_headers is None:
            continue
        ctype = (rec.http_headers.get_header("Content-Type") or "").lower()
        if not ctype.startswith(_TEXT_TYPES):
            continue
        body = rec.content_stream().read().decode("utf-8", "replace")
        out.append((url, PageText(html_text(body) if "html" in ctype else body)))
    return out


def loaded_urls(episode_dir: Path) -> set[str]:
    """Every URL requested during the episode (from the WARC's request and response records)."""
    warc = Path(episode_dir) / WARC_FILE
    if not warc.exists():
        return set()
    return {rec.rec_headers.get_header("WARC-Target-URI") for rec in _records(warc)
            if rec.rec_type in ("request", "response")} - {None}


class _TextParser(HTMLParser):
    _BLOCK = {"p", "div", "tr", "li", "br", "h1", "h2", "h3", "h4", "h5", "h6", "table", "section", "dt", "dd", "caption"}

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
