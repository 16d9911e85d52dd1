"""Citations where an answer's text puts them (docs/grading.md, "Answers as written").

In a table cell: a Markdown link keeps its text and cites that row (its text is the excerpt); a bare URL stays
in the cell and cites the row (the row's text is the excerpt); a footnote marker (`[1]`, `[^1]`, `[1, 2]`, a
link whose text is a number, `[text][1]`) is stripped from the cell and cites that row through its definition
(the marked cell's value is the excerpt). Outside the table: a footnote definition (`[1]: URL`, `[1] URL`,
`1. URL`, `1. [Title](URL)`) serves the markers of its number, or, when no cell carries them, the whole answer;
every other link or URL (a "Sources:" line, a references list, the prose) supports the whole answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rig.formats.answer import Citation

LINK = re.compile(r"\[([^\]]*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_REF_LINK = re.compile(r"\[([^\]]+)\]\[\^?(\w+)\]")
_AUTOLINK = re.compile(r"<([a-zA-Z][a-zA-Z0-9+.-]*://[^>\s]+)>")
URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s<>\"'\[\]|]+")
_MARKER = re.compile(r"\s*\[\^?(\d{1,3}(?:\s*[,;–-]\s*\^?\d{1,3})*)\](?![(:\[])")
_NUMBER_LABEL = re.compile(r"^\^?\d{1,3}$")
_DEFINITION = re.compile(r"^\s*(?:[-*+]\s+)?\[\^?(\w+)\]:?\s+(.*)$")
_NUMBERED = re.compile(r"^\s*(\d{1,3})[.)]\s+(.*)$")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_LABEL = re.compile(r"^\W*(sources?|references?|citations?|links?)\s*\W*:\s*", re.IGNORECASE)
_TRIM = " \t-–—:,;()\"'*_#"


@dataclass
class Cell:
    """One table cell read for citations: its value, its links, bare URLs and footnote markers."""

    text: str
    links: list[tuple[str, str]] = field(default_factory=list)
    bare: list[str] = field(default_factory=list)
    footnotes: list[str] = field(default_factory=list)
    inline_footnotes: list[str] = field(default_factory=list)


def trim_url(url: str) -> str:
    """A URL without the sentence punctuation (or unbalanced closing parenthesis) that followed it."""
    url = url.rstrip(".,;:!?")
    while url.endswith(")") and url.count(")") > url.count("("):
        url = url[:-1].rstrip(".,;:!?")
    return url


def without_urls(text: str) -> str:
    """Text with its URLs removed and its spaces collapsed."""
    return " ".join(URL.sub(" ", text).split()).strip(_TRIM)


def _marker_keys(group: str) -> list[str]:
    """`1, 3` -> [1, 3]; `1-3` -> [1, 2, 3]."""
    keys: list[str] = []
    for part in re.split(r"\s*[,;]\s*", group):
        lo, _, hi = part.replace("–", "-").replace("^", "").partition("-")
        keys += [str(n) for n in range(int(lo), int(hi) + 1)] if hi and int(hi) - int(lo) < 50 else [lo]
    return keys


def read_cell(cell: str) -> Cell:
    """A cell's value without link markup and footnote markers, with what it cites."""
    out = Cell(text="")
    # `[13](url)` alone in a cell is the cell's value, linked; beside other text (`Value [1](url)`) it is a marker
    alone = len(LINK.findall(cell)) == 1 and not LINK.sub("", cell).strip()

    def link(m: re.Match[str]) -> str:
        label, url = m.group(1).strip(), m.group(2)
        if _NUMBER_LABEL.match(label) and not alone:
            out.inline_footnotes.append(url)
            return ""
        out.links.append((label, url))
        return m.group(1)

    def ref_link(m: re.Match[str]) -> str:
        if _NUMBER_LABEL.match(m.group(1)):  # `[1][2]`: two markers
            out.footnotes += [m.group(1).lstrip("^"), m.group(2)]
            return ""
        out.footnotes.append(m.group(2))
        return m.group(1)

    def marker(m: re.Match[str]) -> str:
        out.footnotes.extend(_marker_keys(m.group(1)))
        return ""

    out.text = _AUTOLINK.sub(r"\1", _MARKER.sub(marker, _REF_LINK.sub(ref_link, LINK.sub(link, cell)))).strip()
    out.bare = [trim_url(u) for u in URL.findall(_AUTOLINK.sub(r"\1", LINK.sub("", cell)))]
    return out


def row_citations(row: int, cells: list[Cell], footnotes: dict[str, list[tuple[int, str]]]) -> list[Citation]:
    """The citations a row's cells carry; records each footnote marker's (row, excerpt) in `footnotes`."""
    row_text = without_urls(" ".join(c.text for c in cells))
    found: list[Citation] = []
    for c in cells:
        found += [Citation(row=row, url=url, excerpt=label or row_text) for label, url in c.links]
        found += [Citation(row=row, url=url, excerpt=row_text) for url in c.bare]
        found += [Citation(row=row, url=url, excerpt=c.text or row_text) for url in c.inline_footnotes]
        for key in c.footnotes:
            footnotes.setdefault(key, []).append((row, c.text or row_text))
    return found


def _definition(line: str) -> tuple[str, list[tuple[str, str]]] | None:
    """(number or key, its sources) when the line defines a footnote: `[1]: URL`, `[1] URL`, `1. URL`; a
    `[1]:` definition may name any URL, relative ones included."""
    m = _DEFINITION.match(line) or _NUMBERED.match(line)
    if m is None:
        return None
    key, rest = m.groups()
    sources = _sources_in(rest)
    token = rest.split()[0].strip("<>") if rest.split() else ""
    if not sources and m.re is _DEFINITION and ("/" in token or ":" in token):
        sources = [(trim_url(token), without_urls(rest.split(None, 1)[1] if " " in rest.strip() else ""))]
    return (key, sources) if sources else None


def _sources_in(text: str) -> list[tuple[str, str]]:
    """(url, excerpt) for every link (its text) and URL (the line's other text, when it is the only one) in one
    line outside the table."""
    links = [(m.group(2), m.group(1).strip()) for m in LINK.finditer(text)]
    rest = _AUTOLINK.sub(r"\1", LINK.sub(" ", text))
    context = without_urls(_LABEL.sub("", _BULLET.sub("", rest)))
    links = [(url, "" if _NUMBER_LABEL.match(label) or label == url else label) for url, label in links]
    bare = [trim_url(u) for u in URL.findall(rest)]
    alone = len(links) + len(bare) == 1  # the text beside a lone URL is its title or description
    return links + [(u, context if alone else "") for u in bare]


def text_citations(lines: list[str], footnotes: dict[str, list[tuple[int, str]]]) -> list[Citation]:
    """Citations in the lines outside the table: footnote definitions bound to the rows whose cells carry their
    markers (`footnotes`: key -> (row, marked value)), every other link or URL for the whole answer."""
    found: list[Citation] = []
    for line in lines:
        definition = _definition(line)
        key, sources = definition if definition else (None, _sources_in(line))
        bound = footnotes.get(key, []) if key is not None else []
        for url, excerpt in sources:
            found += [Citation(row=row, url=url, excerpt=value) for row, value in bound] or [Citation(url=url, excerpt=excerpt)]
    return found
