"""Task files: loading, validation, finding an episode's task (the format itself is `rig.formats.task`)."""

from rig.tasks.loader import (
    all_bundled_task_paths,
    bundled_task_paths,
    bundled_tasks,
    load_task,
    resolve_task,
    task_file_of,
    task_of,
    task_sha256,
    tool_task_paths,
    tool_tasks,
)

__all__ = ["all_bundled_task_paths", "bundled_task_paths", "bundled_tasks", "load_task", "resolve_task", "task_file_of",
           "task_of", "task_sha256", "tool_task_paths", "tool_tasks"]
