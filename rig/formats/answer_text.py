"""Reading answer tables from text (docs/grading.md, "Answer tables" and "Answers as written") into an `Answer`.

Formats, tried in this order: JSON (an `answer.json` object, or a bare list of row objects), a
pipe-delimited table with a header row (Markdown tables included), TSV, then CSV. In the text
formats the first table wins; a row with fewer cells than the header stays short (its missing cells
are not matched) and a row with more is cut to the header, so only text with no table at all is a
parse failure. Citations are taken from the whole text (`rig.formats.answer_citations`): links, bare
URLs and footnote markers in cells cite their row, every other link or URL the whole answer.
"""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from rig.errors import RigError
from rig.formats.answer import Answer, Citation
from rig.formats.answer_citations import read_cell, row_citations, text_citations

_JSON_START = re.compile(r'^(\{|\[\s*([\[{"\]\d-]|$))')
_PIPE = re.compile(r"(?<!\\)\|")
_ALIGN = re.compile(r"^:?-+:?$")
_SENTENCE_END = (".", "!", "?", ":")
#: An answer of this word alone (any case, a final period allowed) is zero rows, as an empty text is: SGR-Bench's
#: output formats ask for it when nothing qualifies.
NONE = "NONE"


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
    if not stripped or stripped.rstrip(".").upper() == NONE:
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
    header, body, start, end = found
    return _with_citations(header, body, lines[:start] + lines[end:])


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


def _pipe_table(lines: list[str]) -> tuple[list[str], list[list[str]], int, int] | None:
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
        headed = len(block) >= 2 and len(block[0]) >= 2 and all(block[0])  # rows may be ragged under it
        if align is not None or framed or headed:
            top = 0 if align is None else align - 1  # lines above a Markdown header row are prose
            return block[top], [r for r in block[top + 1:] if not _is_align(r)], i + top, j
        i = j
    return None


def _header_at(cells: list[list[str]], texts: list[str]) -> int | None:
    """The header line of a delimited block: the first line of two or more cells, not a lead-in sentence (ending
    in a colon), as wide as the line below it; or, for ragged rows, one whose cells read as column names and
    whose width is the commonest from it on or is not outgrown by the line below it."""
    counts = [len(c) for c in cells]
    for k in range(len(counts) - 1):
        if counts[k] < 2 or texts[k].rstrip().endswith(":"):
            continue
        names = all(c.strip() and not c.strip().endswith(_SENTENCE_END) for c in cells[k])
        if counts[k] == counts[k + 1] or names and (
                counts[k] == Counter(counts[k:]).most_common(1)[0][0] or counts[k] > counts[k + 1]):
            return k
    return None


def _delimited(lines: list[str], delim: str, name: str,
               source: str) -> tuple[list[str], list[list[str]], int, int] | None:
    nonblank = [x for x in lines if x.strip()]
    i = 0
    while i < len(lines):
        if delim not in lines[i]:
            i += 1
            continue
        j = i
        while j < len(lines) and lines[j].strip() and delim in lines[j]:
            j += 1
        cells = [next(csv.reader([x], delimiter=delim)) for x in lines[i:j]]
        start = _header_at(cells, lines[i:j])
        if start is None and len(nonblank) == 1 and len(cells[0]) >= 2:
            start = 0  # a header-only table is the whole text, and reads as column names, not a sentence
            if any(not c.strip() or c.strip().endswith(_SENTENCE_END) for c in cells[0]):
                return None
        if start is not None:
            reader = csv.reader(lines[i + start:j], delimiter=delim, strict=True)
            try:
                table = [[c.strip() for c in row] for row in reader]
            except csv.Error as e:
                raise ParseFailure(source, f"{name} line {i + start + reader.line_num}: {e}") from None
            return table[0], table[1:], i + start, j
        i = j
    return None


def _with_citations(header: list[str], body: list[list[str]], outside: list[str]) -> Answer:
    """The answer of a table, each row cut to the header, with the citations of its cells and of the text around."""
    columns = [read_cell(h).text for h in header]
    rows: list[list[str]] = []
    citations: list[Citation] = []
    footnotes: dict[str, list[tuple[int, str]]] = {}
    for index, raw in enumerate(body):
        cells = [read_cell(c) for c in raw]
        rows.append([c.text for c in cells][: len(header)])
        citations += row_citations(index, cells, footnotes)
    citations += text_citations(outside, footnotes)
    unique = list({(c.row, c.url, c.excerpt): c for c in citations}.values())
    return Answer(columns=columns, rows=rows, citations=unique)
