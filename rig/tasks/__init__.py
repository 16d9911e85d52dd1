"""Task files: loading, validation, finding an episode's task (the format itself is `rig.formats.task`)."""

from rig.tasks.loader import (
    bundled_task_paths,
    bundled_tasks,
    load_task,
    resolve_task,
    task_of,
    task_sha256,
)

__all__ = ["bundled_task_paths", "bundled_tasks", "load_task", "resolve_task", "task_of", "task_sha256"]
