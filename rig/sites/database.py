"""A bundled site's SQLite database for hybrid tasks (`run_sql`), declared by the site beside its pages.

A site declares `Database(name, title, data_version, site, tables, kb)` in its own package (`rig/sites/<site>/db.py`:
the same data package the site shows, in a fixed schema) and lists it in its `Site.databases`; `Database.build(path)`
writes the file deterministically (fixed schema, rows in the package's order). Where built files are kept and how a
task's `db` finds one is `rig.tools.databases`. Each database has a knowledge catalog beside its declaration
(`<name>_kb.jsonl`, read by `rig.tools.knowledge`).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rig.errors import InfraError
from rigwarc.atomic import atomic_write

if TYPE_CHECKING:
    import pandas as pd

#: Bump when a database's rows or layout change in a way the DDL does not show.
RECIPE_VERSION = 1


@dataclass(frozen=True)
class Table:
    """One table: its DDL and the function giving its rows in order."""

    name: str
    ddl: str
    rows: Callable[[], list[tuple[Any, ...]]]


@dataclass(frozen=True)
class Database:
    """One bundled database: what it holds, where its data comes from, its tables and its knowledge catalog."""

    name: str
    title: str
    data_version: str
    site: str
    tables: tuple[Table, ...]
    #: The knowledge catalog (`<name>_kb.jsonl`), beside the site's declaration.
    kb: Path

    def recipe_digest(self) -> str:
        """A digest of everything that decides the file's content (the cache key)."""
        spec = {"v": RECIPE_VERSION, "name": self.name, "data": self.data_version,
                "ddl": [t.ddl for t in self.tables]}
        return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]

    def build(self, path: Path) -> Path:
        """Write the database to `path` (through `atomic_write`, so no reader sees half a database); InfraError when
        it cannot be written."""
        def fill(tmp: Path) -> None:
            con = sqlite3.connect(tmp)
            try:
                for table in self.tables:
                    con.execute(table.ddl)
                    rows = table.rows()
                    if rows:
                        con.executemany(f"INSERT INTO {table.name} VALUES ({','.join('?' * len(rows[0]))})", rows)
                con.execute(f"PRAGMA user_version = {RECIPE_VERSION}")
                con.commit()
            finally:
                con.close()

        try:
            return atomic_write(path, fill)
        except (OSError, sqlite3.Error) as exc:
            raise InfraError(f"building the {self.name} database at {path} failed: {exc}") from exc


def frame_rows(df: pd.DataFrame, columns: list[str]) -> list[tuple[Any, ...]]:
    """Rows of the named DataFrame columns as plain Python values: missing -> None, whole-number floats -> int."""
    cols = []
    for name in columns:
        col = df[name]
        if col.dtype.kind == "f" and (col.dropna() % 1 == 0).all():
            col = col.astype("Int64")
        elif col.dtype.kind == "M":
            col = col.dt.strftime("%Y-%m-%d %H:%M" if (col.dt.hour != 0).any() else "%Y-%m-%d")
        cols.append(col.to_numpy(dtype=object, na_value=None).tolist())
    return list(zip(*cols))
