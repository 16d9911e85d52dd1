"""The adapters one episode records with: the task's own (`rig.tasks.adapters`), then the bundled sites'."""

from __future__ import annotations

from recorders import SiteAdapter
from rig.formats.task import Task
from rig.tasks.adapters import task_adapter


def episode_adapters(task: Task | None, bundled: list[SiteAdapter]) -> list[SiteAdapter]:
    """The adapters one episode records with: the task's own first, then the bundled ones."""
    own = task_adapter(task) if task is not None else None
    return [own, *bundled] if own is not None else list(bundled)
