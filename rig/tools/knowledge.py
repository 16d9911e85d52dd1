"""A database's knowledge catalog (`<db>_kb.jsonl`): the titles, one entry by title or id, or every entry, as the
knowledge tools of HybridDeepResearch's contract return them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from rapidfuzz import process

from rig.errors import InputError
from rig.formats.knowledge import KnowledgeEntry
from rig.tools.databases import kb_path
from rig.tools.errors import ToolError

#: Above this many characters, `all_definitions` hands back titles only (HybridDeepResearch's context budget).
BUDGET_CHARS = 24_000


@dataclass(frozen=True)
class KnowledgeCatalog:
    """The entries of one database's catalog, in file order."""

    db: str
    entries: tuple[KnowledgeEntry, ...]

    def names(self) -> list[str]:
        """Every entry's title, in catalog order."""
        return [e.knowledge for e in self.entries]

    def definition(self, name: str | int) -> dict[str, Any]:
        """One entry in full, found by title (case-insensitive), id (`3`) or database-qualified id (`flights_3`);
        ToolError naming the closest titles when there is none."""
        key = str(name).strip()
        by_title = {e.knowledge.casefold(): e for e in self.entries}
        by_id = {str(e.id): e for e in self.entries}
        qualified = key.removeprefix(f"{self.db}_") if key.startswith(f"{self.db}_") else None
        found = by_title.get(key.casefold()) or by_id.get(key) or (by_id.get(qualified) if qualified else None)
        if found is None:
            close = [m[0] for m in process.extract(key, self.names(), limit=3)] if key else []
            hint = f"; the closest titles are {', '.join(map(repr, close))}" if close else ""
            raise ToolError(f"get_knowledge_definition: no knowledge entry {key!r} for the {self.db} database{hint} "
                            "(get_all_external_knowledge_names lists them)")
        return found.model_dump()

    def all_definitions(self, budget_chars: int = BUDGET_CHARS) -> list[dict[str, Any]]:
        """Every entry in full, or (when that exceeds `budget_chars` as JSON) every entry's id and title only."""
        full = [e.model_dump() for e in self.entries]
        if len(json.dumps(full, ensure_ascii=False)) <= budget_chars:
            return full
        return [{"id": e.id, "knowledge": e.knowledge, "description": e.description} for e in self.entries]


def load_catalog(path: Path, db: str | None = None) -> KnowledgeCatalog:
    """Read a `<db>_kb.jsonl` file; InputError naming the file, line and field of a bad entry."""
    name = db or path.name.removesuffix("_kb.jsonl")
    if not path.is_file():
        raise InputError(str(path), None, f"no knowledge catalog for the {name} database")
    entries: list[KnowledgeEntry] = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entries.append(KnowledgeEntry.model_validate_json(line))
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(x) for x in err["loc"]) or None
            raise InputError(str(path), f"line {n}" + (f": {field}" if field else ""), err["msg"]) from None
    ids = [e.id for e in entries]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise InputError(str(path), "id", f"ids {dupes} appear more than once")
    return KnowledgeCatalog(db=name, entries=tuple(entries))


def catalog(db: str, task_file: str | Path | None = None) -> KnowledgeCatalog:
    """The knowledge catalog of a task's `db` (a bundled name, or a SQLite file with `<stem>_kb.jsonl` beside it)."""
    path = kb_path(db, task_file)
    return load_catalog(path, path.name.removesuffix("_kb.jsonl"))
