"""A task's own site adapter (`adapter:` in the task file, relative to it): loaded once, recorded with the
bundled ones so its `dim.*` keys appear in the episode's states."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import yaml

from recorders import SiteAdapter, load_adapter
from rig.errors import InputError
from rig.formats.task import Task


def adapter_path(task: Task) -> Path | None:
    """The task's adapter file, resolved against the task file's folder (None: the task names none)."""
    if task.adapter is None:
        return None
    path = Path(task.adapter)
    if not path.is_absolute():
        path = (Path(task.source).parent if task.source else Path.cwd()) / path
    return path.resolve()


@lru_cache(maxsize=64)
def _load(path: Path) -> SiteAdapter:
    return load_adapter(path)


def task_adapter(task: Task) -> SiteAdapter | None:
    """The task's own adapter, if it names one; InputError naming the task file, `adapter` and what is wrong."""
    path = adapter_path(task)
    if path is None:
        return None
    if not path.is_file():
        raise InputError(task.source or task.id, "adapter", f"{task.adapter!r}: no such file ({path})")
    try:
        return _load(path)
    except (OSError, ValueError, yaml.YAMLError) as exc:
        raise InputError(task.source or task.id, "adapter", f"{task.adapter!r} is not a site adapter: {exc}") from None


def episode_adapters(task: Task | None, bundled: list[SiteAdapter]) -> list[SiteAdapter]:
    """The adapters one episode records with: the task's own first, then the bundled ones."""
    own = task_adapter(task) if task is not None else None
    return [own, *bundled] if own is not None else list(bundled)
