"""`rig tasks import hybrid-deep-research`: HybridDeepResearch's published records (web search + SQL) as task
files for tool-using agents (docs/tasks.md, "Importing published benchmarks")."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from rig.formats.imports import ImportReport
from rig.tasks.importing import (
    RecordError,
    TaskWriter,
    json_field,
    read_jsonl,
    text_field,
)
from rig.tasks.checks import DB_SUFFIXES
from rig.tasks.task_files import task_id_from
from rig.tools.databases import bundled_databases

ID = "id"
#: The fields this importer maps; every other field (sql_knowledge_id, sub-questions, ...) is kept in `meta`.
MAPPED = ("id", "hybrid_type", "final_question", "hint", "db", "final_answer", "sql")
#: The dataset's names of its three hybrid types (S2SQL, SQL2S, Parallel) and the task format's.
HYBRID_TYPES = {"s2sql": "search_to_sql", "searchtosql": "search_to_sql", "sql2s": "sql_to_search",
                "sqltosearch": "sql_to_search", "parallel": "parallel"}
ANSWER_COLUMN = "Answer"


def import_hybrid_deep_research(path: Path, out_dir: Path, *, force: bool = False) -> ImportReport:
    """Write one task file per record into `out_dir`; every record that cannot be imported is in the report's
    `failed` list (by file, line, id and field) and the others are still written.

    Raises InputError when the file cannot be read at all."""
    records, bad = read_jsonl(path)
    writer = TaskWriter("hybrid-deep-research", out_dir, force=force)
    for problem in bad:
        writer.refuse(problem)
    for rec in records:
        try:
            data = task_data(rec.data)
        except RecordError as exc:
            writer.refuse(rec.problem(exc.field, exc.reason, ID))
            continue
        writer.write(data["id"], data, [str(rec.data[ID])], rec, ID)
    return writer.report


def hybrid_type(value: Any) -> str:
    """The task format's hybrid type of the dataset's (`S2SQL`, `sql2s`, `Parallel`, `search_to_sql`, ...)."""
    key = re.sub(r"[^a-z0-9]", "", str(value or "").lower())
    if key not in HYBRID_TYPES:
        raise RecordError("hybrid_type", f"{value!r} is not one of S2SQL, SQL2S, Parallel")
    return HYBRID_TYPES[key]


def _cell(value: Any, field: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return str(value).strip()
    if value is None:
        return ""
    raise RecordError(field, f"a cell must be text or a number, got {type(value).__name__}")


def gold_table(answer: Any) -> tuple[list[str], list[list[str]]]:
    """Columns and rows of a final answer that is a value (one `Answer` cell), a list of values (one row each), a
    list of row objects (their keys are the columns), or `{"columns": [...], "rows": [[...]]}`."""
    if isinstance(answer, dict) and "columns" in answer:
        cols, rows = answer.get("columns"), answer.get("rows") or []
        if not isinstance(cols, list) or not cols or not isinstance(rows, list):
            raise RecordError("final_answer", "a table needs `columns` (a list) and `rows` (a list of lists)")
        names = [_cell(c, f"final_answer.columns[{i}]") for i, c in enumerate(cols)]
        out = []
        for i, row in enumerate(rows):
            if not isinstance(row, list) or len(row) != len(names):
                raise RecordError(f"final_answer.rows[{i}]", f"expected a list of {len(names)} cells")
            out.append([_cell(v, f"final_answer.rows[{i}][{j}]") for j, v in enumerate(row)])
        return names, out
    if isinstance(answer, list) and answer and all(isinstance(r, dict) for r in answer):
        names = list(dict.fromkeys(str(k) for r in answer for k in r))
        return names, [[_cell(r.get(c), f"final_answer[{i}].{c}") for c in names] for i, r in enumerate(answer)]
    if isinstance(answer, list):
        if not answer:
            return [ANSWER_COLUMN], []
        return [ANSWER_COLUMN], [[_cell(v, f"final_answer[{i}]")] for i, v in enumerate(answer)]
    if isinstance(answer, dict):
        raise RecordError("final_answer", "an object that is not a table (`columns` and `rows`)")
    value = _cell(answer, "final_answer")
    if not value:
        raise RecordError("final_answer", "missing or empty")
    return [ANSWER_COLUMN], [[value]]


def db_file(name: str) -> str:
    """A record's `db` as the task's: a bundled database's name stays; any other names a LiveSQLBench database the
    task file finds beside it, `<name>.sqlite` (a name that already is a file name is kept)."""
    if name in bundled_databases() or name.endswith(DB_SUFFIXES) or "/" in name or "\\" in name:
        return name
    return f"{name}.sqlite"


def task_data(r: dict[str, Any]) -> dict[str, Any]:
    """The task mapping of one record; RecordError naming the field."""
    source_id = text_field(r, ID)
    question = text_field(r, "final_question")
    hint = text_field(r, "hint", required=False)
    columns, rows = gold_table(json_field(r, "final_answer"))
    if len(set(columns)) != len(columns):
        raise RecordError("final_answer", f"column names repeat: {columns}")
    db = text_field(r, "db", required=False)
    sql = text_field(r, "sql", required=False)
    kind = hybrid_type(r.get("hybrid_type"))
    return {
        "id": task_id_from(source_id),
        "family": db or "hybrid",
        "start_hidden": True,
        "prompts": {"constraint": f"{question}\n\nHint: {hint}" if hint else question, "goal": question},
        "output": {"columns": columns, "key": columns[:1],
                   "order": "any order" if len(rows) != 1 else "a single row"},
        "gold": {"rows": rows},
        "hybrid_type": kind,
        **({"db": db_file(db)} if db else {}),
        **({"gold_sql": sql} if sql else {}),
        "data_version": "HybridDeepResearch",
        "meta": {"source": "hybrid-deep-research", "id": r.get(ID),
                 **({"final_answer": r["final_answer"]} if "final_answer" in r else {}),
                 **({"hint": hint} if hint else {}),
                 **{k: v for k, v in r.items() if k not in MAPPED}},
    }
