"""An in-memory sqlite3 database built on first use and read under one lock (the synthetic sites' storage)."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable


class MemoryDB:
    """A database `build` fills once, when it is first read (nothing happens at import time)."""

    def __init__(self, build: Callable[[sqlite3.Connection], None]) -> None:
        self._build, self._lock, self._db = build, threading.Lock(), None

    def _get(self) -> sqlite3.Connection:
        if self._db is None:
            db = sqlite3.connect(":memory:", check_same_thread=False)
            self._build(db)
            db.commit()
            self._db = db
        return self._db

    def connection(self) -> sqlite3.Connection:
        """The database, built now if it is not yet."""
        with self._lock:
            return self._get()

    def fetch(self, sql: str, params: list[object] | tuple[object, ...] = ()) -> list[tuple]:
        """Run one read-only query."""
        with self._lock:
            return self._get().execute(sql, params).fetchall()
