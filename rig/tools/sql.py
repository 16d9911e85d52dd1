"""`run_sql`: one read-only query against a SQLite file, as HybridDeepResearch's tool contract runs it.

Three guards, each enough on its own for writes: the file is opened read-only (`file:...?mode=ro`),
`PRAGMA query_only` is on, and an authorizer callback (sqlite3's `set_authorizer`) allows reading only
(no write, no DDL, no ATTACH/DETACH, no transaction, no pragma that sets anything). On top of that the
statement must begin with SELECT, WITH, PRAGMA, VALUES or EXPLAIN, stacked statements are refused,
at most `max_rows` rows come back and a progress handler stops a query that runs past `timeout_s`.

Results are bounded too. Rows are streamed one at a time and fetching stops once their values add up to
`FETCH_BUDGET_BYTES`; SQLite refuses to make any single value over `MAX_VALUE_BYTES`. The text the agent sees is
built row by row and stops at `max_bytes` (the tool's cap, `MAX_BYTES`), saying how many rows it shows; a blob is
shown by its size (`<blob 100000000 bytes>`), never its bytes, and a text value over `MAX_CELL_CHARS` characters is
cut, saying its length. The rows themselves (for grading's execution match) are kept as SQLite gave them.
"""

from __future__ import annotations

import re
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rig.errors import InfraError
from rig.tools.errors import ToolError

#: The default and largest row cap (HybridDeepResearch truncates at 500 rows).
MAX_ROWS = 500
#: The largest text a query gives the agent, in UTF-8 bytes (`run_sql`'s cap in rig.tools.registry).
MAX_BYTES = 64 * 1024
#: A text value longer than this many characters is shown cut, with its length.
MAX_CELL_CHARS = 1_000
#: The largest string or blob SQLite may make in a query (a bigger one is refused: "string or blob too big").
MAX_VALUE_BYTES = 128 * 1024 * 1024
#: Rows are fetched until their values add up to this many bytes (that row is the last one fetched).
FETCH_BUDGET_BYTES = 64 * 1024 * 1024
#: Statements may begin only with these words.
ALLOWED_VERBS = ("SELECT", "WITH", "PRAGMA", "EXPLAIN", "VALUES")
#: Pragmas that only report something; any other pragma, or one of these given a value to set, is refused.
READ_PRAGMAS = frozenset({
    "table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo", "foreign_key_list",
    "foreign_key_check", "database_list", "collation_list", "function_list", "module_list", "pragma_list",
    "compile_options", "integrity_check", "quick_check", "page_count", "page_size", "encoding", "user_version",
    "schema_version", "application_id", "freelist_count", "journal_mode", "max_page_count", "query_only",
})
#: Pragmas whose argument names a table or index (rather than setting a value).
_NAMED_PRAGMAS = frozenset({"table_info", "table_xinfo", "index_list", "index_info", "index_xinfo",
                            "foreign_key_list", "foreign_key_check", "integrity_check", "quick_check", "table_list"})
_ALLOWED_ACTIONS = frozenset({sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION,
                              sqlite3.SQLITE_RECURSIVE})
_LEADING_COMMENTS = re.compile(r"\A(?:\s+|--[^\n]*(?:\n|\Z)|/\*.*?\*/)*", re.DOTALL)
_PROGRESS_OPS = 20_000


@dataclass(frozen=True)
class SqlResult:
    """The rows of one query: column names, rows (at most the cap), whether more rows were cut off, and the text
    table the agent sees (its first `shown` rows)."""

    columns: list[str]
    rows: list[tuple[Any, ...]]
    truncated: bool
    text: str
    shown: int


def _refused_action(action: int, arg1: str | None, arg2: str | None) -> str | None:
    """Why the authorizer refuses an action (None: allowed)."""
    if action in _ALLOWED_ACTIONS:
        return None
    if action == sqlite3.SQLITE_PRAGMA:
        name = (arg1 or "").lower()
        if name not in READ_PRAGMAS:
            return f"PRAGMA {name} is not a read-only pragma"
        if arg2 is not None and name not in _NAMED_PRAGMAS:
            return f"PRAGMA {name} = {arg2} sets a value"
        return None
    if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH):
        return "ATTACH and DETACH are refused"
    if action == sqlite3.SQLITE_UPDATE and arg1 in ("sqlite_master", "sqlite_schema"):
        return ("the schema table cannot be changed (table-valued pragma functions such as pragma_table_info() "
                "count as changing it: use PRAGMA table_info(name))")
    return "the statement writes or changes the database"


def _verb(sql: str) -> str:
    body = _LEADING_COMMENTS.sub("", sql, count=1)
    m = re.match(r"[A-Za-z]+", body)
    return m.group(0).upper() if m else ""


def _connect(db_path: Path) -> sqlite3.Connection:
    path = Path(db_path)
    if not path.is_file():
        raise InfraError(f"{path}: the task's database does not exist (rig.tools.databases builds the bundled ones)")
    con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False)
    con.execute("PRAGMA query_only = ON")
    return con


def _cell(value: Any) -> str:
    """A value as the text table shows it: NULL, a blob by its size, text cut at MAX_CELL_CHARS with its length."""
    if value is None:
        return "NULL"
    if isinstance(value, bytes):
        return f"<blob {len(value)} bytes>"
    text = str(value)
    if len(text) > MAX_CELL_CHARS:
        return text[:MAX_CELL_CHARS].replace("\n", " ") + f"… [cut: {len(text)} characters in all]"
    return text.replace("\n", " ")


def _size(row: tuple[Any, ...]) -> int:
    return sum(len(v) if isinstance(v, (str, bytes)) else 8 for v in row)


def format_table(columns: list[str], rows: list[tuple[Any, ...]], more: str | None,
                 max_bytes: int = MAX_BYTES) -> tuple[str, int]:
    """The text table of a result and how many rows it shows: a `Rows: N` header line, the column names, then one
    line per row (` | ` between cells, NULL for a missing value), stopping before `max_bytes` of UTF-8; `more` says
    why more rows may follow."""
    names = " | ".join(_cell(c) for c in columns)
    budget = max_bytes - len(names.encode()) - 200  # room for the header line
    lines: list[str] = []
    for row in rows:
        line = " | ".join(_cell(v) for v in row)
        budget -= len(line.encode()) + 1
        if budget < 0:
            break
        lines.append(line)
    if len(lines) < len(rows):
        head = (f"Rows: {len(lines)} shown of {len(rows)}{'+' if more else ''} (output cut at {max_bytes} bytes; "
                "select fewer or shorter columns, or add LIMIT)")
    elif more:
        head = f"Rows: {len(rows)} ({more})"
    else:
        head = f"Rows: {len(rows)}"
    text = "\n".join([head, names, *lines])
    if len(text.encode()) > max_bytes:  # the column names alone are over the cap
        text = text.encode()[:max_bytes - 60].decode(errors="ignore") + f"\n[cut at {max_bytes} bytes]"
    return text, len(lines)


def _fetch(cur: sqlite3.Cursor, max_rows: int) -> tuple[list[tuple[Any, ...]], str | None]:
    """Up to `max_rows` rows, one at a time, stopping once their values pass FETCH_BUDGET_BYTES; and why more rows
    may follow (None: there are no more)."""
    rows: list[tuple[Any, ...]] = []
    size = 0
    while (row := cur.fetchone()) is not None:
        if len(rows) == max_rows:
            return rows, f"truncated at {max_rows}; narrow the query or add LIMIT"
        rows.append(tuple(row))
        size += _size(rows[-1])
        if size > FETCH_BUDGET_BYTES:
            return rows, (f"fetching stopped after {len(rows)}: the values passed {FETCH_BUDGET_BYTES} bytes; select "
                          "length() or substr() of big values")
    return rows, None


def run_sql(db_path: Path, sql: str, max_rows: int = MAX_ROWS, timeout_s: float = 10.0,
            max_bytes: int = MAX_BYTES) -> SqlResult:
    """Run one read-only statement on a SQLite file; raise ToolError naming why a statement is refused or failed."""
    if not isinstance(sql, str) or not sql.strip():
        raise ToolError("run_sql: `sql` is empty; send one SELECT, WITH, PRAGMA or EXPLAIN statement")
    if not 1 <= max_rows <= MAX_ROWS:
        raise ToolError(f"run_sql: max_rows must be between 1 and {MAX_ROWS}, got {max_rows}")
    verb = _verb(sql)
    if verb not in ALLOWED_VERBS:
        raise ToolError(f"run_sql: {verb or 'this statement'} is refused; the database is read-only and only "
                        f"{', '.join(ALLOWED_VERBS)} statements run")
    con = _connect(db_path)
    refusals: list[str] = []

    def authorize(action: int, arg1: str | None, arg2: str | None, _db: str | None, _trigger: str | None) -> int:
        reason = _refused_action(action, arg1, arg2)
        if reason is None:
            return sqlite3.SQLITE_OK
        refusals.append(reason)
        return sqlite3.SQLITE_DENY

    deadline = time.monotonic() + timeout_s
    con.set_authorizer(authorize)
    con.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
    con.set_progress_handler(lambda: int(time.monotonic() > deadline), _PROGRESS_OPS)
    try:
        cur = con.execute(sql)
        columns = [d[0] for d in cur.description or []]
        rows, more = _fetch(cur, max_rows)
    except sqlite3.ProgrammingError as exc:
        if "one statement" in str(exc):
            raise ToolError("run_sql: stacked statements are refused; send one statement per call") from None
        raise ToolError(f"run_sql: {exc}") from None
    except sqlite3.DatabaseError as exc:
        if refusals:
            raise ToolError(f"run_sql: refused: {refusals[0]}; the database is read-only") from None
        if time.monotonic() > deadline:
            raise ToolError(f"run_sql: the query ran longer than {timeout_s:g} s and was stopped; narrow it") from None
        if "too big" in str(exc):
            raise ToolError(f"run_sql: a value would be larger than {MAX_VALUE_BYTES} bytes ({exc}); select its "
                            "length() or a substr() of it instead") from None
        raise ToolError(f"run_sql: SQL error: {exc}") from None
    finally:
        con.close()
    text, shown = format_table(columns, rows, more, max_bytes)
    return SqlResult(columns=columns, rows=rows, truncated=more is not None, text=text, shown=shown)
