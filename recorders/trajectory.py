"""trajectory.jsonl: appended and flushed one step at a time, fsynced behind; read back tolerating a torn last line."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from pydantic import ValidationError

from recorders.errors import TrajectoryError
from recorders.models import Step


class TrajectoryWriter:
    """Appends steps to a JSONL file, one `write(2)` per step (what a killed process wrote stays written).

    With `fsync`, a background thread fsyncs after each write (off the recording's critical path), so a
    machine crash loses at most the last step or two; `close()` fsyncs what is left.
    """

    def __init__(self, path: Path, fsync: bool = True) -> None:
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self._dirty = threading.Event()
        self._closing = False
        self._syncer: threading.Thread | None = None
        if fsync:
            self._syncer = threading.Thread(target=self._sync_loop, name="recorders-fsync", daemon=True)
            self._syncer.start()

    def write(self, step: Step) -> None:
        """Append one step as one line."""
        os.write(self._fd, (step.model_dump_json() + "\n").encode("utf-8"))
        self._dirty.set()

    def close(self) -> None:
        """Fsync what is left and close the file (idempotent)."""
        if self._fd < 0:
            return
        if self._syncer is not None:
            self._closing = True
            self._dirty.set()
            self._syncer.join()
        os.close(self._fd)
        self._fd = -1

    def _sync_loop(self) -> None:
        while True:
            self._dirty.wait()
            closing = self._closing  # read first: a close() after this point wakes the loop once more
            self._dirty.clear()
            os.fsync(self._fd)
            if closing:
                return


def read_trajectory(path: str | Path) -> list[Step]:
    """Every complete step of a trajectory file; a torn last line (the process was killed) is skipped.

    A line that is not UTF-8, not JSON or not a step raises `TrajectoryError` naming the file, the line and why.
    """
    data = Path(path).read_bytes()
    try:
        lines = data.decode("utf-8").split("\n")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise TrajectoryError(str(path), f"line {line}, byte {e.start}", "not UTF-8 text") from None
    steps: list[Step] = []
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            steps.append(Step.model_validate_json(line))
        except ValidationError as e:
            if n == len(lines):  # no newline after it: written partially
                break
            raise _line_error(str(path), n, line, e) from None
    return steps


def _line_error(path: str, n: int, line: str, e: ValidationError) -> TrajectoryError:
    err = e.errors()[0]
    if err["type"] == "json_invalid" and "recursion limit" in err["msg"]:
        return TrajectoryError(path, f"line {n}", "not a trajectory step: nested too deeply")
    try:
        json.loads(line)
    except json.JSONDecodeError as bad:
        return TrajectoryError(path, f"line {n}, column {bad.colno}", f"not JSON: {bad.msg}")
    except RecursionError:
        return TrajectoryError(path, f"line {n}", "not a trajectory step: nested too deeply")
    where = ".".join(str(x) for x in err["loc"])
    return TrajectoryError(path, f"line {n}" + (f", field {where}" if where else ""), f"not a trajectory step: {err['msg']}")
