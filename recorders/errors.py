"""The recorder library's exceptions."""

from __future__ import annotations


class RecorderError(Exception):
    """The recorder cannot do what was asked; the message says how to fix it."""


class TrajectoryError(RecorderError, ValueError):
    """A trajectory file holds a line that is not a step: names the file, where in it, and why."""

    def __init__(self, path: str, where: str | None, reason: str) -> None:
        self.path, self.where, self.reason = path, where, reason
        super().__init__(f"{path}: {where}: {reason}" if where else f"{path}: {reason}")
