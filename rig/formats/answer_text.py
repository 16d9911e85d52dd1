"""Reading answer tables from text (CONTRACTS.md "Answer-table text") into an `Answer`.

Formats, tried in this order: JSON (an `answer.json` object, or a bare list of row objects), a
pipe-delimited table with a header row (Markdown tables included), TSV, then CSV. In the text
formats the first table wins and surrounding prose is ignored; a Markdown link in a cell keeps its
text and becomes a citation for that row, a bare URL stays in the cell and becomes a citation too,
and links listed under a "Sources"/"References" line after the table cite the whole answer.
"""

from __future__ import annotations

import csv
import json
import re
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from rig.errors import RigError
from rig.formats.answer import Answer, Citation

_JSON_START = re.compile(r'^(\{|\[\s*([\[{"\]\d-]|$))')
_PIPE = re.compile(r"(?<!\\)\|")
_ALIGN = re.compile(r"^:?-+:?$")
_LINK = re.compile(r"\[([^\]]*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_AUTOLINK = re.compile(r"<(https?://[^>\s]+)>")
_URL = re.compile(r"https?://[^\s<>\"'\[\]|]+")
_SOURCES = re.compile(r"^\s*(#{1,6}\s*)?[*_]*\s*(sources?|references?)\s*:?\s*[*_]*\s*:?\s*$", re.IGNORECASE)
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)]|\[\w+\]:?)\s+(.*)$")
_SENTENCE_END = (".", "!", "?", ":")


class ParseFailureRecord(BaseModel):
    """`answer_parse_failure.json`: a handed-in answer text held no answer table, and why."""

    format: Literal["sgr-rig/parse-failure/1"] = "sgr-rig/parse-failure/1"
    source: str = Field(description="where the text came from (a file name, or `pasted answer`)")
    reason: str


class ParseFailure(RigError):
    """The text holds no readable answer table: a status for the episode, never a score."""

    def __init__(self, source: str, reason: str) -> None:
        self.source, self.reason = source, reason
        super().__init__(f"{source}: {reason}")


def parse_table(text: str, source: str) -> Answer:
    """Parse the first answer table in `text`; `source` names the text in error messages."""
    text = text.lstrip("\ufeff")
    stripped = text.strip()
    if not stripped:
        return Answer(columns=[], rows=[])
    if _JSON_START.match(stripped):
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError as e:
            raise ParseFailure(source, f"invalid JSON at line {e.lineno} column {e.colno}: {e.msg}") from None
        return _from_json(data, source)
    lines = text.splitlines()
    found = _pipe_table(lines) or _delimited(lines, "\t", "TSV", source) or _delimited(lines, ",", "CSV", source)
    if found is None:
        raise ParseFailure(source, "no table found: expected a pipe or Markdown table with a header row, "
                                   "TSV or CSV with a header, or answer.json")
    header, body, end = found
    return _with_citations(header, body, lines[end:])


def _json_cell(value: Any, where: str) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, (bool, int, float)):
        return json.dumps(value)
    raise ValueError(f"{where}: a cell must be a string, number, boolean or null, got {type(value).__name__}")


def _from_json(data: Any, source: str) -> Answer:
    try:
        if isinstance(data, list):
            if not all(isinstance(obj, dict) for obj in data):
                bad = next(i for i, obj in enumerate(data) if not isinstance(obj, dict))
                raise ValueError(f"a JSON list must hold row objects; item {bad} is {type(data[bad]).__name__}")
            columns = list(dict.fromkeys(k for obj in data for k in obj))
            return Answer(columns=columns, rows=[[_json_cell(obj.get(c), f"[{i}].{c}") for c in columns]
                                                 for i, obj in enumerate(data)])
        if "columns" not in data and "records" not in data:
            raise ValueError("JSON object has neither a 'columns' nor a 'records' field (answer.json: "
                             "{\"columns\": [...], \"rows\": [[...]]} and/or {\"records\": [...]})")
        rows = data.get("rows") or []
        if not isinstance(rows, list) or not all(isinstance(r, list) for r in rows):
            raise ValueError("'rows' must be a list of lists of cells")
        return Answer.model_validate({**data, "rows": [[_json_cell(c, f"rows[{i}][{j}]") for j, c in enumerate(r)]
                                                       for i, r in enumerate(rows)]})
    except ValidationError as e:
        err = e.errors()[0]
        raise ParseFailure(source, f"answer.json field {'.'.join(map(str, err['loc']))}: {err['msg']}") from None
    except ValueError as e:
        raise ParseFailure(source, str(e)) from None


def _split_pipes(line: str) -> list[str]:
    s = line.strip()
    cells = _PIPE.split(s)
    if s.startswith("|"):
        cells = cells[1:]
    if len(s) > 1 and s.endswith("|") and not s.endswith("\\|"):
        cells = cells[:-1]
    return [c.strip().replace("\\|", "|") for c in cells]


def _is_align(cells: list[str]) -> bool:
    return bool(cells) and all(_ALIGN.match(c.replace(" ", "")) for c in cells)


def _pipe_table(lines: list[str]) -> tuple[list[str], list[list[str]], int] | None:
    i = 0
    while i < len(lines):
        if not _PIPE.search(lines[i]):
            i += 1
            continue
        j = i
        while j < len(lines) and lines[j].strip() and _PIPE.search(lines[j]):
            j += 1
        block = [_split_pipes(x) for x in lines[i:j]]
        align = next((k for k in range(1, len(block)) if _is_align(block[k])), None)
        framed = all(x.strip().startswith("|") for x in lines[i:j])
        regular = len(block) >= 2 and len({len(c) for c in block}) == 1 and len(block[0]) >= 2
        if align is not None or framed or regular:
            top = 0 if align is None else align - 1  # lines above a Markdown header row are prose
            header = block[top]
            return header, [r[: len(header)] for r in block[top + 1:] if not _is_align(r)], j
        i = j
    return None


def _delimited(lines: list[str], delim: str, name: str, source: str) -> tuple[list[str], list[list[str]], int] | None:
    nonblank = [x for x in lines if x.strip()]
    i = 0
    while i < len(lines):
        if delim not in lines[i]:
            i += 1
            continue
        j = i
        while j < len(lines) and lines[j].strip() and delim in lines[j]:
            j += 1
        counts = [len(next(csv.reader([x], delimiter=delim))) for x in lines[i:j]]
        start = next((k for k in range(len(counts) - 1) if counts[k] >= 2 and counts[k] == counts[k + 1]), None)
        if start is None and len(nonblank) == 1 and counts[0] >= 2:
            start = 0  # a header-only table is the whole text, and reads as column names, not a sentence
            cells = [c.strip() for c in next(csv.reader([lines[i]], delimiter=delim))]
            if any(not c or c.endswith(_SENTENCE_END) for c in cells):
                return None
        if start is not None:
            reader = csv.reader(lines[i + start:j], delimiter=delim, strict=True)
            try:
                table = [[c.strip() for c in row] for row in reader]
            except csv.Error as e:
                raise ParseFailure(source, f"{name} line {i + start + reader.line_num}: {e}") from None
            return table[0], [r[: len(table[0])] for r in table[1:]], j
        i = j
    return None


def _clean_cell(cell: str) -> tuple[str, list[tuple[str, str]], list[str]]:
    """Cell text without link markup, (link text, url) pairs, and bare URLs."""
    links = [(m.group(1).strip(), m.group(2)) for m in _LINK.finditer(cell)]
    text = _AUTOLINK.sub(r"\1", _LINK.sub(lambda m: m.group(1), cell))
    bare = [_trim_url(u) for u in _URL.findall(_AUTOLINK.sub(r"\1", _LINK.sub("", cell)))]
    return text.strip(), links, bare


def _trim_url(url: str) -> str:
    url = url.rstrip(".,;:!?")
    while url.endswith(")") and url.count(")") > url.count("("):
        url = url[:-1].rstrip(".,;:!?")
    return url


def _without_urls(text: str) -> str:
    return " ".join(_URL.sub(" ", text).split()).strip(" -–—:,;()")


def _with_citations(header: list[str], body: list[list[str]], after: list[str]) -> Answer:
    columns = [_clean_cell(h)[0] for h in header]
    rows: list[list[str]] = []
    citations: list[Citation] = []
    for index, raw in enumerate(body):
        cleaned = [_clean_cell(c) for c in raw]
        rows.append([text for text, _, _ in cleaned])
        row_text = _without_urls(" ".join(text for text, _, _ in cleaned))
        for _, links, bare in cleaned:
            citations += [Citation(row=index, url=url, excerpt=label or row_text) for label, url in links]
            citations += [Citation(row=index, url=url, excerpt=row_text) for url in bare]
    citations += _sources(after)
    unique = list({(c.row, c.url, c.excerpt): c for c in citations}.values())
    return Answer(columns=columns, rows=rows, citations=unique)


def _sources(lines: list[str]) -> list[Citation]:
    """Citations for the whole answer from a "Sources"/"References" list after the table."""
    start = next((k for k, x in enumerate(lines) if _SOURCES.match(x)), None)
    if start is None:
        return []
    found: list[Citation] = []
    for line in lines[start + 1:]:
        item = _ITEM.match(line)
        if item is None:
            if line.strip():
                break
            continue
        text, links, bare = _clean_cell(item.group(1))
        found += [Citation(url=url, excerpt=label or _without_urls(text)) for label, url in links]
        found += [Citation(url=url, excerpt=_without_urls(text)) for url in bare]
    return found
