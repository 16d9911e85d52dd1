"""Writing task files: YAML a person can read and edit, validated by the task loader before it lands, written
atomically. Importers and `rig tasks annotate` write through here."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import yaml

from rig.errors import TaskError
from rig.formats.task import Task
from rig.tasks.checks import check_task
from rig.tasks.loader import load_task
from rigwarc.atomic import atomic_write

#: What a task id may hold (rig.formats.task.Task.id).
_ID_CHARS = re.compile(r"[^a-z0-9_.-]+")


def task_id_from(source_id: str) -> str:
    """A dataset's id as a task id: lower-case, each run of other characters than `a-z 0-9 _ . -` one `-`,
    leading punctuation and trailing `-` and `.` dropped (`CFPB 002` -> `cfpb-002`); empty when nothing is left."""
    return _ID_CHARS.sub("-", source_id.strip().lower()).lstrip("_.-").rstrip(".-")


class _TaskDumper(yaml.SafeDumper):
    """Block style throughout; text with line breaks as a literal block (`|`), so prompts stay readable."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value and not any(c in value for c in "\t\r") and value == value.rstrip(" ") else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_SCALARS = (str, int, float, bool, type(None))
#: Lists and mappings of plain values up to this many characters are written on one line (`[a, b]`, `{k: v}`).
_FLOW_WIDTH = 100


def _short(values: list[Any]) -> bool:
    flat = [x for v in values for x in (v if isinstance(v, list) else [v])]
    return (all(isinstance(x, _SCALARS) and "\n" not in str(x) for x in flat)
            and sum(len(str(x)) + 2 for x in flat) <= _FLOW_WIDTH)


def _list(dumper: yaml.SafeDumper, value: list[Any]) -> yaml.SequenceNode:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value,
                                     flow_style=bool(value) and all(isinstance(v, _SCALARS) for v in value)
                                     and _short(value))


def _dict(dumper: yaml.SafeDumper, value: dict[Any, Any]) -> yaml.MappingNode:
    node = dumper.represent_mapping("tag:yaml.org,2002:map", value)
    plain = all(isinstance(v, _SCALARS) or isinstance(v, list) and all(isinstance(x, _SCALARS) for x in v)
                for v in value.values())
    one_line = len(value) == 1 and isinstance(next(iter(value.values())), str)  # `- goto: /x` reads better
    node.flow_style = bool(value) and plain and not one_line and _short([*map(str, value), *value.values()])
    return node


_TaskDumper.add_representer(str, _str)
_TaskDumper.add_representer(list, _list)
_TaskDumper.add_representer(dict, _dict)


def dump_task(data: dict[str, Any]) -> str:
    """A task mapping as YAML text, keys in the mapping's order; plain PyYAML output in the rare case the readable
    styles would not read back as the same data."""
    text = yaml.dump(data, Dumper=_TaskDumper, sort_keys=False, allow_unicode=True, width=120,
                     default_flow_style=False)
    if yaml.safe_load(text) == data:
        return text
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=120)


def write_task_file(path: Path, data: dict[str, Any], *, backup: bool = False) -> Task:
    """Validate `data` as `rig tasks validate` does (as the file it becomes), then put it at `path` atomically
    (`backup`: the file it replaces is kept as `<path>.bak` first).

    Raises TaskError naming `path`, the field and the reason; nothing is written then."""
    loaded: list[Task] = []

    def checked(tmp: Path) -> None:
        tmp.write_text(dump_task(data), encoding="utf-8")
        try:
            loaded.append(load_task(tmp))  # in the same directory: an adapter or db path resolves as it will
            check_task(loaded[0], path)
        except TaskError as exc:
            raise TaskError(str(path), exc.field, exc.reason) from None
        if backup and path.exists():
            keep_backup(path)

    atomic_write(path, checked, suffix=".yaml")
    task = loaded[0]
    task._source = str(path.resolve())
    return task


def keep_backup(path: Path) -> Path:
    """Copy `path` to `<path>.bak` (atomically, replacing an older one); the copy's path."""
    return atomic_write(path.with_name(path.name + ".bak"), lambda tmp: shutil.copy2(path, tmp))
