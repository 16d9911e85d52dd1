"""run_sql: read-only by three guards, one statement, a row cap and a time limit; the file on disk never changes."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from rig.errors import InfraError
from rig.tools.errors import ToolError
from rig.tools.sql import MAX_BYTES, MAX_CELL_CHARS, MAX_ROWS, MAX_VALUE_BYTES, run_sql


@pytest.fixture()
def db(tmp_path: Path) -> Path:
    path = tmp_path / "shop.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT, price REAL)")
    con.executemany("INSERT INTO items VALUES (?, ?, ?)", [(i, f"item {i}", i * 1.5) for i in range(1, 1201)])
    con.commit()
    con.close()
    return path


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


WRITES = [
    ("INSERT INTO items VALUES (9999, 'x', 1)", "INSERT is refused"),
    ("UPDATE items SET price = 0", "UPDATE is refused"),
    ("DELETE FROM items", "DELETE is refused"),
    ("DROP TABLE items", "DROP is refused"),
    ("ALTER TABLE items ADD COLUMN y", "ALTER is refused"),
    ("CREATE TABLE t (a)", "CREATE is refused"),
    ("CREATE TEMP TABLE t (a)", "CREATE is refused"),
    ("REPLACE INTO items VALUES (1, 'x', 1)", "REPLACE is refused"),
    ("VACUUM", "VACUUM is refused"),
    ("ATTACH DATABASE '/tmp/other.sqlite' AS other", "ATTACH is refused"),
    ("DETACH DATABASE main", "DETACH is refused"),
    ("BEGIN IMMEDIATE", "BEGIN is refused"),
    ("WITH doomed AS (SELECT id FROM items) DELETE FROM items WHERE id IN doomed", "writes or changes the database"),
    ("WITH x AS (SELECT 1) INSERT INTO items SELECT 5000, 'y', 2 FROM x", "writes or changes the database"),
    ("EXPLAIN DELETE FROM items", "writes or changes the database"),
    ("PRAGMA writable_schema = 1", "PRAGMA writable_schema is not a read-only pragma"),
    ("PRAGMA writable_schema = ON", "PRAGMA writable_schema is not a read-only pragma"),
    ("PRAGMA query_only = 0", "PRAGMA query_only = 0 sets a value"),
    ("PRAGMA journal_mode = WAL", "PRAGMA journal_mode = WAL sets a value"),
    ("PRAGMA user_version = 7", "PRAGMA user_version = 7 sets a value"),
    ("SELECT 1; DELETE FROM items", "stacked statements are refused"),
    ("SELECT 1; SELECT 2", "stacked statements are refused"),
    ("/* hidden */ -- comment\n DELETE FROM items", "DELETE is refused"),
    ("SELECT * FROM pragma_table_info('items')", "use PRAGMA table_info(name)"),
]


@pytest.mark.parametrize("sql,reason", WRITES, ids=[w[0][:40] for w in WRITES])
def test_every_write_is_refused_and_the_file_is_unchanged(db, sql, reason):
    before = _digest(db)
    with pytest.raises(ToolError, match="run_sql: ") as err:
        run_sql(db, sql)
    assert reason in str(err.value)
    assert _digest(db) == before
    assert sorted(p.name for p in db.parent.iterdir()) == [db.name], "no journal, WAL or other file appeared"
    assert run_sql(db, "SELECT COUNT(*), SUM(price) FROM items").rows == [(1200, sum(i * 1.5 for i in range(1, 1201)))]


@pytest.mark.parametrize("sql", [
    "SELECT name FROM items WHERE id = 3",
    "  -- leading comment\nSELECT name FROM items WHERE id = 3;",
    "WITH x AS (SELECT name FROM items WHERE id = 3) SELECT * FROM x",
])
def test_reads_run(db, sql):
    res = run_sql(db, sql)
    assert res.columns == ["name"] and res.rows == [("item 3",)] and not res.truncated
    assert res.text.splitlines() == ["Rows: 1", "name", "item 3"]


def test_schema_discovery_statements_run(db):
    assert [r[1] for r in run_sql(db, "PRAGMA table_info(items)").rows] == ["id", "name", "price"]
    assert run_sql(db, "SELECT name FROM sqlite_master WHERE type = 'table'").rows == [("items",)]
    assert run_sql(db, "PRAGMA user_version").rows == [(0,)]
    plan = run_sql(db, "EXPLAIN QUERY PLAN SELECT * FROM items WHERE id = 2")
    assert "items" in plan.text


def test_row_cap(db):
    res = run_sql(db, "SELECT id FROM items ORDER BY id")
    assert len(res.rows) == MAX_ROWS and res.truncated and res.rows[-1] == (MAX_ROWS,)
    assert res.text.splitlines()[0].startswith(f"Rows: {MAX_ROWS} (truncated at {MAX_ROWS}")
    small = run_sql(db, "SELECT id FROM items ORDER BY id", max_rows=10)
    assert len(small.rows) == 10 and small.truncated
    exact = run_sql(db, "SELECT id FROM items WHERE id <= 10", max_rows=10)
    assert len(exact.rows) == 10 and not exact.truncated
    with pytest.raises(ToolError, match="max_rows must be between 1 and 500"):
        run_sql(db, "SELECT 1", max_rows=501)


def test_time_limit_stops_a_runaway_query(db):
    endless = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT COUNT(*) FROM n"
    with pytest.raises(ToolError, match="ran longer than 0.5 s and was stopped"):
        run_sql(db, endless, timeout_s=0.5)
    assert run_sql(db, "SELECT COUNT(*) FROM items").rows == [(1200,)]


def test_bad_sql_and_missing_database(db, tmp_path):
    with pytest.raises(ToolError, match="SQL error: no such table: nope"):
        run_sql(db, "SELECT * FROM nope")
    with pytest.raises(ToolError, match="`sql` is empty"):
        run_sql(db, "  ")
    with pytest.raises(InfraError, match="does not exist"):
        run_sql(tmp_path / "absent.sqlite", "SELECT 1")
    assert not (tmp_path / "absent.sqlite").exists()


def test_nulls_and_newlines_in_the_text_table(db):
    res = run_sql(db, "SELECT NULL AS a, 'two\nlines' AS b")
    assert res.text.splitlines() == ["Rows: 1", "a | b", "NULL | two lines"]


def test_a_blob_is_shown_by_its_size_never_its_bytes(db):
    res = run_sql(db, "SELECT randomblob(100000000) AS b, 7 AS n")
    assert res.text.splitlines()[1:] == ["b | n", "<blob 100000000 bytes> | 7"]
    assert len(res.text.encode()) < 300
    assert len(res.rows[0][0]) == 100_000_000, "the row itself is what SQLite gave (grading compares it)"


def test_a_big_text_value_is_cut_with_its_length_said(db):
    res = run_sql(db, "SELECT printf('%.*c', 2000000, 'x') AS big")
    cell = res.text.splitlines()[2]
    assert cell == "x" * MAX_CELL_CHARS + "… [cut: 2000000 characters in all]"


def test_the_text_stops_at_its_byte_cap_saying_how_many_rows_it_shows(db):
    res = run_sql(db, "SELECT id, printf('%.*c', 900, 'y') AS pad FROM items ORDER BY id", max_bytes=MAX_BYTES)
    head = res.text.splitlines()[0]
    assert len(res.text.encode()) <= MAX_BYTES
    assert head == (f"Rows: {res.shown} shown of {MAX_ROWS}+ (output cut at {MAX_BYTES} bytes; select fewer or "
                    "shorter columns, or add LIMIT)")
    assert 0 < res.shown < MAX_ROWS and len(res.text.splitlines()) == 2 + res.shown
    assert len(res.rows) == MAX_ROWS and res.truncated


def test_rows_stop_once_their_values_pass_the_fetch_budget(db):
    res = run_sql(db, "SELECT zeroblob(40000000) FROM items")
    assert len(res.rows) == 2 and res.truncated
    assert "fetching stopped after 2" in res.text.splitlines()[0]


def test_a_value_over_sqlites_length_limit_is_refused(db):
    with pytest.raises(ToolError, match=f"a value would be larger than {MAX_VALUE_BYTES} bytes"):
        run_sql(db, f"SELECT randomblob({MAX_VALUE_BYTES + 1})")
