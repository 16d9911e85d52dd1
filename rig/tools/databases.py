"""Finding a task's database: a bundled site's (built on first use into a cache) or a SQLite file of the task's own.

The bundled databases are declared by their sites (`rig/sites/<site>/db.py`, `rig.sites.database.Database`, listed in
`Site.databases`). Each is built on first use into a cache directory (`RIG_CACHE_DIR`, else
`$XDG_CACHE_HOME/sgr-rig`, else `~/.cache/sgr-rig`) under a name that carries a digest of its recipe, so a changed
recipe builds a new file and an old one is never reused; two processes asking at once build it once. A task's `db`
names a bundled database, or a SQLite file relative to the task file (imported tasks), with its knowledge catalog
`<stem>_kb.jsonl` beside it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rig.cache import build_once, cache_dir
from rig.errors import InputError

if TYPE_CHECKING:
    from rig.sites.database import Database

_FILE_SUFFIXES = (".sqlite", ".sqlite3", ".db")


def bundled_databases() -> dict[str, Database]:
    """Every bundled site's database, by name (loading the site packages: the first call takes a moment)."""
    from rig.sites.registry import bundled_databases as declared  # the sites' declarations, not their servers

    return declared()


def database(name: str) -> Database:
    """A bundled database by name; InputError naming the bundled ones for an unknown name."""
    known = bundled_databases()
    if name not in known:
        raise InputError("db", None, f"{name!r} is not a bundled database; the bundled ones are "
                                     f"{', '.join(sorted(known))} (or give a .sqlite file next to the task)")
    return known[name]


def bundled_db_path(name: str, cache: Path | None = None) -> Path:
    """The file of a bundled database, built into the cache on first use."""
    db = database(name)
    path = (cache or cache_dir()) / "databases" / f"{db.name}-{db.recipe_digest()}.sqlite"
    return build_once(path, db.build)


def _is_file_name(name: str) -> bool:
    return name.endswith(_FILE_SUFFIXES) or "/" in name


def db_path(name: str, task_file: str | Path | None = None, cache: Path | None = None) -> Path:
    """Resolve a task's `db`: a bundled name, or a SQLite file (a path ending .sqlite/.db, relative to the task
    file); InputError for an unknown name or a missing file."""
    if _is_file_name(name):
        p = Path(name)
        if not p.is_absolute() and task_file is not None:
            p = Path(task_file).resolve().parent / p
        if not p.is_file():
            raise InputError("db", None, f"{name!r}: no such SQLite file ({p})")
        return p
    return bundled_db_path(name, cache)


def kb_path(name: str, task_file: str | Path | None = None) -> Path:
    """The knowledge catalog of a task's `db`: the bundled database's (beside its site's declaration), or
    `<stem>_kb.jsonl` next to a SQLite file."""
    if _is_file_name(name):
        p = db_path(name, task_file)
        return p.with_name(f"{p.stem}_kb.jsonl")
    return database(name).kb
