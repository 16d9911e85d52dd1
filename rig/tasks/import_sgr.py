"""`rig tasks import sgr-bench`: SGR-Bench's published records (a constraint-guided and a goal-oriented JSONL file)
as paired task files, one per constraint/goal pair (docs/tasks.md, "Importing published benchmarks")."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from rig.formats.answer_text import NONE
from rig.formats.imports import ImportReport
from rig.tasks.importing import (
    Record,
    RecordError,
    TaskWriter,
    json_field,
    read_jsonl,
    text_field,
)
from rig.tasks.task_files import task_id_from

ID = "task_id"
#: The goal-oriented record's id is the constraint-guided record's id plus this.
GOAL_SUFFIX = "-g"
#: The fields this importer maps; every other field of a record is kept verbatim in the task's `meta`.
MAPPED = ("task_id", "domain", "instruction", "start_url", "output_format", "oracle_output_cardinality",
          "oracle_answer", "metadata", "rubric", "all_involved_urls")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_COLUMNS_LIST = re.compile(r"\bcolumns?\s*(?:\([^)]*\))?\s*:\s*(.+?)(?:\.\s+(?=[A-Z(])|\.?\s*$|\n)",
                           re.IGNORECASE | re.DOTALL)
_LEAD_VERB = re.compile(r"^(?:return|output|give|list|answer|provide|report|format)\b[\s:]*", re.IGNORECASE)
_ORDER = (re.compile(r"\b(?:sort(?:ed)?|order(?:ed)?|rank(?:ed)?|arranged)\s+(?:by|in|from|on)\b[^.;\n,]*",
                     re.IGNORECASE),
          re.compile(r"\b(?:in\s+)?(?:ascending|descending|alphabetical(?:ly)?|chronological(?:ly)?)\b[^.;\n,]*",
                     re.IGNORECASE))


def import_sgr_bench(constraint_file: Path, goal_file: Path, out_dir: Path, *, force: bool = False) -> ImportReport:
    """Write one task file per constraint/goal record pair into `out_dir`; every record that cannot be imported
    is in the report's `failed` list (by file, line, task id and field) and the others are still written.

    Raises InputError when either file cannot be read at all."""
    constraint, bad_c = read_jsonl(constraint_file)
    goal, bad_g = read_jsonl(goal_file)
    writer = TaskWriter("sgr-bench", out_dir, force=force)
    for problem in bad_c + bad_g:
        writer.refuse(problem)
    goals: dict[str, Record] = {}
    for rec in goal:
        gid = rec.id(ID)
        if not gid:
            writer.refuse(rec.problem(ID, "missing: a goal record needs the id of its constraint record plus "
                                          f"{GOAL_SUFFIX!r}", ID))
        elif gid in goals:
            writer.refuse(rec.problem(ID, f"the same id as line {goals[gid].line}", ID))
        else:
            goals[gid] = rec
    paired: set[str] = set()
    seen: dict[str, int] = {}
    for rec in constraint:
        cid = rec.id(ID)
        if not cid:
            writer.refuse(rec.problem(ID, "missing", ID))
            continue
        if cid in seen:
            writer.refuse(rec.problem(ID, f"the same id as line {seen[cid]}", ID))
            continue
        seen[cid] = rec.line
        partner = goals.get(cid + GOAL_SUFFIX)
        if partner is None:
            writer.refuse(rec.problem(ID, f"no goal-oriented record {cid + GOAL_SUFFIX!r} in {goal_file}", ID))
            continue
        paired.add(cid + GOAL_SUFFIX)
        try:
            data = task_data(rec.data, partner.data)
        except RecordError as exc:
            which = rec if not exc.field or not exc.field.startswith("goal.") else partner
            field = exc.field.removeprefix("goal.") if exc.field else None
            writer.refuse(which.problem(field, exc.reason, ID))
            continue
        writer.write(data["id"], data, [cid, cid + GOAL_SUFFIX], rec, ID)
    for gid, rec in goals.items():
        if gid not in paired and not (gid.endswith(GOAL_SUFFIX) and gid.removesuffix(GOAL_SUFFIX) in seen):
            writer.refuse(rec.problem(ID, f"no constraint-guided record {gid.removesuffix(GOAL_SUFFIX)!r} in "
                                          f"{constraint_file}" if gid.endswith(GOAL_SUFFIX)
                                      else f"a goal record's id ends in {GOAL_SUFFIX!r}", ID))
    return writer.report


def task_data(c: dict[str, Any], g: dict[str, Any]) -> dict[str, Any]:
    """The task mapping of one constraint record `c` and its goal record `g`; RecordError naming the field (a
    goal record's field is prefixed `goal.`)."""
    cid = text_field(c, ID)
    rubric = json_field(c, "rubric")
    columns = output_columns(c.get("output_format"), rubric)
    rows = gold_rows(text_field(c, "oracle_answer"), columns)
    if g.get("oracle_answer") is not None and _goal(gold_rows, _goal(text_field, g, "oracle_answer"), columns) != rows:
        raise RecordError("goal.oracle_answer", "differs from the constraint record's answer (a pair shares one)")
    cardinality = c.get("oracle_output_cardinality")
    if cardinality is not None:
        if isinstance(cardinality, bool) or not isinstance(cardinality, (int, str)) or not str(cardinality).isdigit():
            raise RecordError("oracle_output_cardinality", f"{cardinality!r} is not a row count")
        if int(cardinality) != len(rows):
            raise RecordError("oracle_output_cardinality", f"says {cardinality} rows, oracle_answer has {len(rows)}")
    start_url = text_field(c, "start_url", required=False)
    output_format = text_field(c, "output_format")
    return {
        "id": task_id_from(cid),
        "family": text_field(c, "domain"),
        **({"start_url": start_url} if start_url else {}),
        "start_hidden": True,
        "origins": origins(start_url, json_field(c, "all_involved_urls")),
        "prompts": {"constraint": prompt(text_field(c, "instruction"), output_format),
                    "goal": prompt(_goal(text_field, g, "instruction"), output_format)},
        "output": {"columns": columns, "key": key_columns(rubric, columns), "order": order_rule(output_format)},
        "gold": {"rows": rows},
        "data_version": "SGR-Bench",
        "meta": meta(c, g),
    }


def _goal(fn: Any, *args: Any) -> Any:
    """`fn(*args)` on the goal record's fields: a RecordError's field gets the prefix `goal.`."""
    try:
        return fn(*args)
    except RecordError as exc:
        raise RecordError(f"goal.{exc.field}" if exc.field else "goal", exc.reason) from None


def prompt(instruction: str, output_format: str) -> str:
    """A variant's prompt: the record's instruction, then its output format unless the instruction already
    ends with it (SGR-Bench's agents see both; the format carries the `NONE` convention)."""
    return instruction if output_format in instruction else f"{instruction}\n\n{output_format}"


def output_columns(output_format: Any, rubric: Any) -> list[str]:
    """The answer columns: `rubric.normalization.schema` when it is a list of names, else the list after
    `columns:` in `output_format`, else its pipe template (`Return ID|date.` -> ID, date)."""
    schema = rubric.get("normalization", {}).get("schema") if isinstance(rubric, dict) and isinstance(
        rubric.get("normalization"), dict) else None
    if schema is not None:
        if not isinstance(schema, list) or not schema or not all(isinstance(s, str) and s.strip() for s in schema):
            raise RecordError("rubric.normalization.schema", "expected a non-empty list of column names")
        return _unique([s.strip() for s in schema], "rubric.normalization.schema")
    if not isinstance(output_format, str) or not output_format.strip():
        raise RecordError("output_format", "missing or empty (and no rubric.normalization.schema)")
    listed = _COLUMNS_LIST.search(output_format)
    if listed:
        cols = [c.strip().strip("`'\"").strip() for c in listed.group(1).split(",")]
        if all(cols) and not any("|" in c for c in cols):
            return _unique(cols, "output_format")
    template = next((line for line in output_format.splitlines() if "|" in line), None)
    if template is None:
        raise RecordError("output_format", "no column list found: expected `columns: A, B, ...`, a template "
                                           "such as `Return ID|date.`, or rubric.normalization.schema")
    head, sep, rest = template.rpartition(":")
    text = rest if sep and "|" in rest and "|" not in head else template
    cells = [c.strip().strip("`'\"").strip() for c in _CELL_SPLIT.split(text.strip().strip("`").strip())]
    cells[0] = _LEAD_VERB.sub("", cells[0]).strip() if len(cells[0].split()) > 1 else cells[0]
    cells[-1] = cells[-1].rstrip(".").strip()
    if not all(cells):
        raise RecordError("output_format", f"the template {text.strip()!r} has an empty column name")
    return _unique(cells, "output_format")


def _unique(cols: list[str], field: str) -> list[str]:
    dup = next((c for i, c in enumerate(cols) if c in cols[:i]), None)
    if dup is not None:
        raise RecordError(field, f"column {dup!r} is named twice")
    return cols


def _cells(line: str) -> list[str]:
    s = line.strip()
    if s.startswith("|") and s.endswith("|") and len(s) > 1:
        s = s[1:-1]
    return [c.strip().replace("\\|", "|") for c in _CELL_SPLIT.split(s)]


def _norm(cell: str) -> str:
    return " ".join(cell.casefold().split())


def gold_rows(answer: str, columns: list[str], field: str = "oracle_answer") -> list[list[str]]:
    """The gold rows of a pipe-delimited answer: a first line naming the columns is a header and dropped, a
    Markdown alignment line (`---|---`) is skipped, `NONE` (alone, or under the header) is zero rows."""
    lines = [line for line in answer.strip().splitlines() if line.strip()]
    if lines and [_norm(c) for c in _cells(lines[0])] == [_norm(c) for c in columns]:
        lines = lines[1:]
    lines = [line for line in lines if not re.fullmatch(r"[\s|:-]*-[\s|:-]*", line)]
    if len(lines) == 1 and lines[0].strip().rstrip(".").upper() == NONE:
        return []
    if not lines:
        raise RecordError(field, "holds a header but no rows (a zero-row answer is written NONE)")
    rows = []
    for n, line in enumerate(lines, start=1):
        cells = _cells(line)
        if len(cells) != len(columns):
            raise RecordError(field, f"row {n} ({line.strip()[:60]!r}) has {len(cells)} cells, the output format "
                                     f"has {len(columns)} columns {columns}")
        rows.append(cells)
    return rows


def key_columns(rubric: Any, columns: list[str]) -> list[str]:
    """Row-key columns: the rubric's own (`row_key`, `key_columns`, `primary_key`, top level or under
    `normalization`) when all are answer columns, else the first column (SGR-Bench's tables lead with the
    identifying field: arXiv ID, INN, station, ...)."""
    places = [rubric, rubric.get("normalization")] if isinstance(rubric, dict) else []
    for place in places:
        if not isinstance(place, dict):
            continue
        for name in ("row_key", "row_keys", "key_columns", "primary_key", "key"):
            value = place.get(name)
            keys = [value] if isinstance(value, str) else value
            if isinstance(keys, list) and keys and all(isinstance(k, str) and k in columns for k in keys):
                return list(keys)
    return columns[:1]


def order_rule(output_format: str) -> str:
    """The order rule in words: the output format's clause about sorting, up to the next `,` `;` or `.`
    (`Output a table sorted by v1 submitted in ascending order, with columns: ...` -> `sorted by v1 submitted in
    ascending order`), else `as in the gold answer`."""
    found = next((m for m in (rx.search(output_format) for rx in _ORDER) if m), None)
    return found.group(0).strip(" ,") if found else "as in the gold answer"


def origins(start_url: str, urls: Any) -> list[str]:
    """Host names the evidence lives on: the start page's, then those of `all_involved_urls` (a list, a JSON
    list in a string, or URLs separated by white space or commas), each once, in order."""
    if urls is None or urls == "":
        items: list[Any] = []
    elif isinstance(urls, str):
        items = [u for u in re.split(r"[\s,]+", urls) if u]
    elif isinstance(urls, list):
        items = urls
    else:
        raise RecordError("all_involved_urls", f"expected a list of URLs, got {type(urls).__name__}")
    hosts = [urlsplit(start_url).hostname] if start_url else []
    for i, url in enumerate(items):
        if not isinstance(url, str) or not url.strip():
            raise RecordError(f"all_involved_urls[{i}]", f"{url!r} is not a URL")
        u = url.strip()
        try:
            host = urlsplit(u if "://" in u else f"https://{u}").hostname
        except ValueError:
            host = None
        if not host or "." not in host and host != "localhost":
            raise RecordError(f"all_involved_urls[{i}]", f"{u!r} names no host")
        hosts.append(host)
    return list(dict.fromkeys(h for h in hosts if h))


def meta(c: dict[str, Any], g: dict[str, Any]) -> dict[str, Any]:
    """What the task keeps verbatim: the dataset, both ids, `metadata`, `rubric`, the output format and the
    cardinality (JSON-encoded strings decoded), every field this importer does not map, and the goal record's
    fields where they differ from the constraint record's."""
    out: dict[str, Any] = {"source": "sgr-bench", "task_id": c.get(ID), "goal_task_id": g.get(ID)}
    for name in ("output_format", "oracle_output_cardinality", "metadata", "rubric", "all_involved_urls"):
        if name in c:
            out[name] = json_field(c, name)
    out |= {k: v for k, v in c.items() if k not in MAPPED}
    differs = {k: json_field(g, k) for k, v in g.items()
               if k not in (ID, "instruction") and (k not in c or json_field(c, k) != json_field(g, k))}
    if differs:
        out["goal_record"] = differs
    return out
