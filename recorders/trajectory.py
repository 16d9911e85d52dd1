"""trajectory.jsonl: appended, flushed and fsynced one step at a time; read back tolerating a torn last line."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import ValidationError

from recorders.models import Step


class TrajectoryWriter:
    """Appends steps to a JSONL file, one write (and fsync) per step."""

    def __init__(self, path: Path, fsync: bool = True) -> None:
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self._fsync = fsync

    def write(self, step: Step) -> None:
        """Append one step as one line."""
        os.write(self._fd, (step.model_dump_json() + "\n").encode("utf-8"))
        if self._fsync:
            os.fsync(self._fd)

    def close(self) -> None:
        """Close the file (idempotent)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def read_trajectory(path: str | Path) -> list[Step]:
    """Every complete step of a trajectory file; a torn last line (the process was killed) is skipped."""
    lines = Path(path).read_text(encoding="utf-8").split("\n")
    steps: list[Step] = []
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            steps.append(Step.model_validate_json(line))
        except ValidationError:
            if i == len(lines) - 1:  # no newline after it: written partially
                break
            raise
    return steps
