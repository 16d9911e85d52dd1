"""Task and gold-state models, loading and validation."""

from rig.tasks.loader import bundled_task_paths, bundled_tasks, load_task, resolve_task
from rig.tasks.models import GoldState, StateConstraint, Task

__all__ = ["GoldState", "StateConstraint", "Task", "bundled_task_paths", "bundled_tasks", "load_task", "resolve_task"]
