"""Grading hybrid web+SQL tasks (HybridDeepResearch): `search_to_sql` by execution match, `sql_to_search` and
`parallel` by the answer table (canonicalised, as every task) or, when one is given, an LLM judge.

Execution match runs the agent's SQL and the gold SQL read-only on the task's database (`rig.tools.sql`) and
compares the two result tables: each gold column is aligned to a column of the agent's result holding the same
values (a column of the same name first; extra columns are allowed), cells are compared after NFKC, trimming and
case folding, numbers after rounding to `DECIMALS` places; rows are compared as a multiset (order is not graded).
The agent's SQL is answer.json's `sql` field, else a ```sql block of its `final_answer` call, else the SQL of its
last successful `run_sql` step.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from recorders.models import Step
from rig.formats.answer import Answer
from rig.formats.grade import HybridCheck, JudgeVerdict, SqlMatch
from rig.formats.task import Task
from rig.grading.judge import Judge
from rig.tools.databases import db_path
from rig.tools.errors import ToolError
from rig.tools.sql import MAX_ROWS, run_sql

#: Numbers are compared rounded to this many decimal places.
DECIMALS = 2
_SQL_BLOCK = re.compile(r"```sql\s*\n(.*?)```", re.IGNORECASE | re.DOTALL)
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def normalise_cell(value: Any, decimals: int = DECIMALS) -> Any:
    """A result cell as compared: None stays None, numbers (and numeric text) rounded, text NFKC-trimmed-casefolded."""
    if value is None:
        return None
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return round(float(value), decimals) + 0.0
    text = unicodedata.normalize("NFKC", str(value)).strip()  # numeric text (a TEXT column) compares as a number
    if _NUMBER.match(text.replace(",", "")):
        return round(float(text.replace(",", "")), decimals) + 0.0
    return text.casefold()


def _key(value: Any) -> tuple[int, Any]:
    return (0, "") if value is None else (1, value) if isinstance(value, float) else (2, value)


def _decimals(value: Any) -> int:
    """Decimal places a gold value is given to (capped at DECIMALS): 21.9 -> 1, 7 -> 0, 15.8234 -> 2."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return DECIMALS
    text = repr(float(value))
    if "e" in text or "." not in text:
        return DECIMALS
    frac = text.split(".")[1].rstrip("0")
    return min(len(frac), DECIMALS)


def _column(rows: Sequence[Sequence[Any]], i: int, decimals: int) -> list[tuple[int, Any]]:
    return [_key(normalise_cell(r[i], decimals)) for r in rows]


def align_columns(gold_cols: list[str], gold: Sequence[Sequence[Any]], pred_cols: list[str],
                  pred: Sequence[Sequence[Any]], precision: list[int]) -> list[int | None]:
    """For each gold column, a distinct predicted column holding the same multiset of values at that column's
    precision (a column of the same name first)."""
    used: set[int] = set()
    out: list[int | None] = []
    for j, name in enumerate(gold_cols):
        want = sorted(_column(gold, j, precision[j]))
        same = [i for i, c in enumerate(pred_cols) if c.casefold() == name.casefold()]
        others = [i for i in range(len(pred_cols)) if i not in same]
        pick = next((i for i in same + others if i not in used and sorted(_column(pred, i, precision[j])) == want),
                    None)
        if pick is not None:
            used.add(pick)
        out.append(pick)
    return out


def compare_results(gold_cols: list[str], gold_rows: Sequence[Sequence[Any]], pred_cols: list[str],
                    pred_rows: Sequence[Sequence[Any]]) -> tuple[bool, str, list[int | None]]:
    """Whether two result tables match after column alignment, case folding and rounding (each number to the places
    its gold column gives, at most DECIMALS); with the reason and the column alignment."""
    if len(gold_rows) != len(pred_rows):
        return False, f"the agent's result has {len(pred_rows)} rows, the gold result {len(gold_rows)}", []
    precision = [max((_decimals(r[j]) for r in gold_rows if isinstance(r[j], float)), default=DECIMALS)
                 if any(isinstance(r[j], float) for r in gold_rows) else DECIMALS for j in range(len(gold_cols))]
    columns = align_columns(gold_cols, gold_rows, pred_cols, pred_rows, precision)
    missing = [gold_cols[j] for j, i in enumerate(columns) if i is None]
    if missing:
        return False, f"no column of the agent's result holds the values of gold column(s) {missing}", columns
    pairs = [(j, i) for j, i in enumerate(columns) if i is not None]
    got = Counter(tuple(_key(normalise_cell(r[i], precision[j])) for j, i in pairs) for r in pred_rows)
    want = Counter(tuple(_key(normalise_cell(r[j], precision[j])) for j, _ in pairs) for r in gold_rows)
    if got != want:
        return False, "the columns hold the gold values but the rows pair them differently", columns
    extra = len(pred_cols) - len(gold_cols)
    return True, "the results match" + (f" ({extra} extra column{'s' if extra > 1 else ''} ignored)" if extra else ""), columns


def agent_sql(answer: Answer | None, steps: list[Step]) -> tuple[str, str, int | None] | None:
    """The agent's SQL and where it came from: answer.json's `sql`, a ```sql block of the final_answer call, or the
    last successful run_sql step (None: no SQL anywhere)."""
    extra = (answer.model_extra or {}) if answer is not None else {}
    if isinstance(extra.get("sql"), str) and extra["sql"].strip():
        return extra["sql"], "answer", None
    for s in reversed(steps):
        if s.action.type == "final_answer" and isinstance(s.action.value, dict):
            text = (s.action.value.get("args") or {}).get("answer")
            blocks = _SQL_BLOCK.findall(text) if isinstance(text, str) else []
            if blocks:
                return blocks[-1].strip(), "final_answer", s.step
            break
    for s in reversed(steps):
        value = s.action.value if isinstance(s.action.value, dict) else {}
        sql = (value.get("args") or {}).get("sql")
        if s.action.type == "run_sql" and (value.get("result") or {}).get("ok") and isinstance(sql, str):
            return sql, "trajectory", s.step
    return None


def execution_match(task: Task, answer: Answer | None, steps: list[Step], task_file: Path | None = None) -> SqlMatch:
    """Run the agent's SQL and the gold SQL read-only on the task's database and compare the results."""
    if not task.db or not task.gold_sql:
        raise ValueError(f"{task.id}: execution match needs the task's `db` and `gold_sql`")
    path = db_path(task.db, task_file)
    gold = run_sql(path, task.gold_sql, max_rows=MAX_ROWS)  # a gold SQL that fails is the task's fault: it raises
    found = agent_sql(answer, steps)
    if found is None:
        return SqlMatch(source=None, matched=False, reason="the agent ran no successful SQL and its answer holds none",
                        gold_rows=len(gold.rows))
    sql, source, step = found
    try:
        pred = run_sql(path, sql, max_rows=MAX_ROWS)
    except ToolError as exc:
        return SqlMatch(source=source, step=step, sql=sql, matched=False, reason=f"the agent's SQL fails: {exc}",
                        gold_rows=len(gold.rows))
    matched, reason, columns = compare_results(gold.columns, gold.rows, pred.columns, pred.rows)
    if matched and (gold.truncated or pred.truncated):
        reason += f"; only the first {len(pred.rows)} rows were compared"
    return SqlMatch(source=source, step=step, sql=sql, matched=matched, reason=reason, gold_rows=len(gold.rows),
                    pred_rows=len(pred.rows), columns=columns)


def final_answer_text(answer: Answer | None, steps: list[Step]) -> str:
    """The agent's answer as it gave it: its final_answer call's text, else the answer table as Markdown."""
    for s in reversed(steps):
        if s.action.type == "final_answer" and isinstance(s.action.value, dict):
            text = (s.action.value.get("args") or {}).get("answer")
            if isinstance(text, str):
                return text
    if answer is None:
        return ""
    lines = ["| " + " | ".join(answer.columns) + " |"] + ["| " + " | ".join(r) + " |" for r in answer.rows]
    return "\n".join(lines)


def check_hybrid(task: Task, answer: Answer | None, steps: list[Step], table_passed: bool,
                 judge: Judge | None = None, task_file: Path | None = None) -> HybridCheck:
    """Decide a hybrid task: execution match for `search_to_sql`; the answer table (or the judge) for the others."""
    if task.hybrid_type is None or task.db is None:
        raise ValueError(f"{task.id}: not a hybrid task")
    if task.hybrid_type == "search_to_sql":
        match = execution_match(task, answer, steps, task_file)
        return HybridCheck(type=task.hybrid_type, db=task.db, passed=match.matched, decided_by="execution_match",
                           execution=match)
    if judge is not None:
        gold = "\n".join(" | ".join(r) for r in (task.gold.rows if task.gold else [])) or "NONE"
        verdict: JudgeVerdict = judge.judge(task.prompt("goal"), gold, final_answer_text(answer, steps))
        return HybridCheck(type=task.hybrid_type, db=task.db, passed=verdict.correct, decided_by="judge",
                           judge=verdict)
    return HybridCheck(type=task.hybrid_type, db=task.db, passed=table_passed, decided_by="answer_table")
