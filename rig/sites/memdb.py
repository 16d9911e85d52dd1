"""An in-memory SQLite database of a site's generated records, shared by the server's threads (used by `bio` and
`vuln`)."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Mapping, Sequence
from functools import cached_property
from typing import Any


class MemoryDB:
    """Tables created by `schema` (SQL) and filled from `records()` (table name -> rows as dicts), built on first use."""

    def __init__(self, schema: str, records: Callable[[], Mapping[str, Sequence[Mapping[str, Any]]]]) -> None:
        self._schema, self._records = schema, records
        self._lock = threading.Lock()

    @cached_property
    def connection(self) -> sqlite3.Connection:
        """The loaded database (built once, on first use)."""
        db = sqlite3.connect(":memory:", check_same_thread=False)
        db.row_factory = sqlite3.Row
        db.executescript(self._schema)
        for table, rows in self._records().items():
            cols = list(rows[0])
            db.executemany(f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                           [tuple(r[c] for c in cols) for r in rows])
        db.commit()
        return db

    def query(self, sql: str, params: Mapping[str, Any] | Sequence[Any] = ()) -> list[sqlite3.Row]:
        """Run one read-only statement; every row."""
        db = self.connection
        with self._lock:
            return db.execute(sql, params).fetchall()
