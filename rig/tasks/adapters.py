"""A task's own site adapter (`adapter:` in the task file): a file inside the task's folder, loaded once; its
`dim.*` dimensions and `page.*` facts are recorded in every step of the task's episodes."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import yaml

from recorders import SiteAdapter, load_adapter
from rig.errors import TaskError
from rig.formats.task import Task


def task_folder(task: Task) -> Path:
    """The folder a task's relative paths (`adapter`, a `db` file) resolve against: its file's (else the working
    directory)."""
    return (Path(task.source).parent if task.source else Path.cwd()).resolve()


def inside_folder(task: Task, field: str, name: str) -> Path:
    """The file `name` (a task field's path) resolved against the task's folder; TaskError naming the field when it is
    absolute or resolves (through `..` or a symbolic link) outside that folder."""
    folder = task_folder(task)
    if "\x00" in name:
        raise TaskError(task.source or task.id, field, f"{name!r} holds a NUL character")
    if Path(name).is_absolute():
        raise TaskError(task.source or task.id, field, f"{name!r} is an absolute path: give it relative to the task "
                                                       f"file, inside its folder {folder}")
    path = (folder / name).resolve()
    if not path.is_relative_to(folder):
        raise TaskError(task.source or task.id, field, f"{name!r} lies outside the task's folder {folder} ({path}): "
                                                       "keep the file beside the task file or below it")
    return path


def adapter_path(task: Task) -> Path | None:
    """The task's adapter file, inside the task's folder (None: the task names none); TaskError otherwise."""
    return None if task.adapter is None else inside_folder(task, "adapter", task.adapter)


@lru_cache(maxsize=64)
def _load(path: Path, mtime_ns: int) -> SiteAdapter:
    return load_adapter(path)


def task_adapter(task: Task) -> SiteAdapter | None:
    """The task's own adapter, if it names one; TaskError naming the task file, `adapter` and what is wrong."""
    path = adapter_path(task)
    if path is None:
        return None
    if not path.is_file():
        raise TaskError(task.source or task.id, "adapter", f"{task.adapter!r}: no such file ({path})")
    try:
        return _load(path, path.stat().st_mtime_ns)
    except (OSError, ValueError, yaml.YAMLError) as exc:
        raise TaskError(task.source or task.id, "adapter", f"{task.adapter!r} is not a site adapter: {exc}") from None
