"""What a task must hold beyond its format before an episode runs it: the checks `rig tasks validate`, `rig run`
(before its first episode), the importers and `rig tasks annotate` share (docs/tasks.md, "Validation").

Each check raises TaskError naming the file, the field and the reason; `validate_task_file` runs them all on a
loaded file.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel

from rig.errors import InputError, ScriptError, TaskError
from rig.formats.actions import VARIABLE, parse_actions, verb_of
from rig.formats.task import Task, apply_edits
from rig.tasks.adapters import inside_folder, task_adapter
from rig.tasks.loader import load_task
from rig.tools.databases import database

#: What a `db` file starts with: every SQLite 3 database does (https://www.sqlite.org/fileformat.html).
SQLITE_HEADER = b"SQLite format 3\x00"
#: A `db` that ends so (or holds a path separator) is a file beside the task, else a bundled database's name.
DB_SUFFIXES = (".sqlite", ".sqlite3", ".db")
#: URL schemes a script or tool call may navigate to (besides relative URLs): never `javascript:`, `data:`, `file:`.
NAVIGABLE = ("http", "https")
#: Tools whose `url` argument the tool server navigates to.
NAVIGATING_TOOLS = ("web_fetch", "browser_navigate")


def validate_task_file(path: str | Path) -> Task:
    """Load a task file (`rig.tasks.loader.load_task`) and run every check on it; TaskError naming what is wrong."""
    task = load_task(path)
    check_task(task, Path(path))
    return task


def check_task(task: Task, path: Path | None = None) -> None:
    """Every check a task must pass before an episode runs it (`path`: the file it is, or is about to become;
    default: the file it was loaded from)."""
    where = str(path or task.source or task.id)
    try:
        check_id(task, path or (Path(task.source) if task.source else None))
        task_adapter(task)
        check_db(task)
        check_solution(task, where)
        check_perturbations(task, where)
        check_tool_calls(task, where)
    except TaskError as exc:  # named as the caller names the file
        raise TaskError(where, exc.field, exc.reason) from None


def check_id(task: Task, path: Path | None) -> None:
    """A task's id is its file's name without `.yaml` (`rig run --task ID` finds it so, and runs directories are
    named by it)."""
    if path is not None and path.stem != task.id:
        raise TaskError(str(path), "id", f"{task.id!r} is not the file's name {path.name!r}: name the file "
                                         f"{task.id}.yaml, or set `id: {path.stem}`")


def check_db(task: Task) -> None:
    """A task's `db` is a bundled database's name, or a SQLite database file inside the task's folder."""
    if not task.db:
        return
    where = task.source or task.id
    if not (task.db.endswith(DB_SUFFIXES) or "/" in task.db or "\\" in task.db):
        try:
            database(task.db)
        except InputError as exc:
            raise TaskError(where, "db", exc.reason) from None
        return
    path = inside_folder(task, "db", task.db)
    try:
        with path.open("rb") as fh:
            head = fh.read(len(SQLITE_HEADER))
    except FileNotFoundError:
        raise TaskError(where, "db", f"{task.db!r}: no such file ({path}): put the SQLite database there") from None
    except OSError as exc:
        raise TaskError(where, "db", f"{task.db!r}: cannot read it ({exc.strerror or exc})") from None
    if head != SQLITE_HEADER:
        raise TaskError(where, "db", f"{task.db!r} is not a SQLite database ({path} does not start with the SQLite "
                                     "header)")


def check_solution(task: Task, where: str) -> None:
    """A reference solution runs to an answer: every `${...}` and every `answer.from` names a value extracted
    before it, every `goto` is an http(s) or relative URL, and there is an `answer` action."""
    if not task.reference_solution:
        return
    actions = parse_actions(task.reference_solution, "reference_solution")
    try:
        check_flow(actions)
    except ScriptError as exc:
        raise TaskError(where, f"reference_solution{exc.field or ''}", exc.reason) from None
    if not any(verb_of(a) == "answer" for a in actions):
        raise TaskError(where, "reference_solution", "it has no `answer` action: the reference agent would hand in "
                                                     "nothing (end it with `answer: {from: TABLE, columns: [...]}`)")


def check_flow(actions: list[BaseModel]) -> None:
    """ScriptError (field `[i].<verb>`) for an action that uses a value no earlier action extracted, reads a table
    that is a text (or a text that is a table), or navigates anywhere but an http(s) or relative URL."""
    kinds: dict[str, str] = {}  # extracted name -> "table" or "text"
    for i, action in enumerate(actions):
        verb = verb_of(action)
        arg = getattr(action, verb)
        for text in _strings(arg.model_dump(by_alias=True) if isinstance(arg, BaseModel) else arg):
            for m in VARIABLE.finditer(text):
                _check_ref(i, verb, m, kinds)
        if verb == "goto":
            _check_navigable(f"[{i}].goto", arg)
        elif verb == "answer":
            for name in [arg.from_] if isinstance(arg.from_, str) else arg.from_:
                if kinds.get(name) != "table":
                    known = sorted(n for n, k in kinds.items() if k == "table")
                    raise ScriptError("script", f"[{i}].answer.from",
                                      f"{name!r} is not a table extracted before it (extract_table ... as: {name}); "
                                      f"tables: {known}")
        elif verb in ("extract_table", "extract_text"):
            kinds[arg.as_] = "table" if verb == "extract_table" else "text"


def _check_ref(i: int, verb: str, m: re.Match[str], kinds: dict[str, str]) -> None:
    name, indexed = m.group(1), m.group(2) is not None
    if name not in kinds:
        raise ScriptError("script", f"[{i}].{verb}", f"{m.group(0)} refers to nothing extracted before it "
                                                     f"(extract_text or extract_table ... as: {name})")
    if indexed and kinds[name] != "table":
        raise ScriptError("script", f"[{i}].{verb}",
                          f"{m.group(0)} indexes {name!r}, a text (extract_text), not a table")
    if not indexed and kinds[name] == "table":
        raise ScriptError("script", f"[{i}].{verb}", f"{m.group(0)} is a whole table: refer to one cell, "
                                                     f"${{{name}[0].Column}}")


def _check_navigable(field: str, url: str) -> None:
    try:
        scheme = urlsplit(VARIABLE.sub("x", url)).scheme.lower()
    except ValueError as exc:
        raise ScriptError("script", field, f"{url!r} is not a URL: {exc}") from None
    if scheme and scheme not in NAVIGABLE:
        raise ScriptError("script", field, f"{url!r} is a {scheme}: URL; a script navigates to http(s) URLs or to "
                                           "URLs relative to the site")


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def check_perturbations(task: Task, where: str) -> None:
    """Each perturbation the task declares gives a valid action script (as `perturbed:KIND` runs it)."""
    for kind, edits in task.perturbations.items():
        try:
            parse_actions(apply_edits(task.reference_solution, edits), "script")
        except ScriptError as exc:
            raise TaskError(where, f"perturbations.{kind}", f"the edited reference solution is invalid at "
                                                            f"{exc.field or 'the top'}: {exc.reason}") from None


def check_tool_calls(task: Task, where: str) -> None:
    """Tool calls of `reference_tools` navigate only to http(s) or relative URLs."""
    for i, call in enumerate(task.reference_tools):
        url = call.args.get("url")
        if call.tool in NAVIGATING_TOOLS and isinstance(url, str):
            try:
                _check_navigable(f"reference_tools[{i}].args.url", url)
            except ScriptError as exc:
                raise TaskError(where, exc.field, exc.reason) from None
