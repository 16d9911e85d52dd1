"""What every dataset importer shares: reading JSONL records with their line numbers, a record's error (its field
and reason), and writing the task files with a report of what was written, left alone and refused."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rig.errors import InputError, TaskError
from rig.formats.files import read_limited
from rig.formats.imports import ImportedTask, ImportProblem, ImportReport, SkippedTask
from rig.formats.task import id_problem
from rig.tasks.task_files import write_task_file

#: A published benchmark's JSONL file: a few MB at most (SGR-Bench's is about 1 MB).
MAX_DATASET_BYTES = 256 * 1024 * 1024


class RecordError(Exception):
    """One record cannot be imported: the field at fault (dotted, or None) and why."""

    def __init__(self, field: str | None, reason: str) -> None:
        self.field, self.reason = field, reason
        super().__init__(f"{field}: {reason}" if field else reason)


@dataclass
class Record:
    """One JSON object of a JSONL file and where it came from."""

    file: str
    line: int
    data: dict[str, Any]

    def id(self, field: str) -> str | None:
        """The record's own id (field `field`) as text, or None when it has none."""
        value = self.data.get(field)
        return None if value is None or isinstance(value, (dict, list)) else str(value)

    def problem(self, field: str | None, reason: str, id_field: str) -> ImportProblem:
        """An ImportProblem naming this record's file, line and id."""
        return ImportProblem(file=self.file, line=self.line, task_id=self.id(id_field), field=field, reason=reason)


def read_jsonl(path: Path) -> tuple[list[Record], list[ImportProblem]]:
    """The JSON objects of a JSONL file (blank lines skipped) and a problem for each line that is not one.

    Raises InputError when the file cannot be read at all."""
    raw = read_limited(path, "the dataset file", MAX_DATASET_BYTES)
    records: list[Record] = []
    problems: list[ImportProblem] = []
    for n, line in enumerate(raw.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line.decode("utf-8"))
        except UnicodeDecodeError as exc:
            problems.append(ImportProblem(file=str(path), line=n, reason=f"not UTF-8 text (byte {exc.start})"))
            continue
        except json.JSONDecodeError as exc:
            problems.append(ImportProblem(file=str(path), line=n, reason=f"not JSON: {exc.msg} at column {exc.colno}"))
            continue
        except RecursionError:
            problems.append(ImportProblem(file=str(path), line=n, reason="not a record: nested too deeply"))
            continue
        if not isinstance(data, dict):
            problems.append(ImportProblem(file=str(path), line=n, reason=f"a record is a JSON object, got "
                                                                          f"{type(data).__name__}"))
            continue
        records.append(Record(str(path), n, data))
    if not records and not problems:
        raise InputError(str(path), None, "holds no records (an empty dataset file)")
    return records, problems


def text_field(record: dict[str, Any], field: str, *, required: bool = True) -> str:
    """A field that must be non-empty text (numbers are taken as their text); RecordError otherwise."""
    value = record.get(field)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise RecordError(field, "missing or empty")
        return ""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise RecordError(field, f"expected text, got {type(value).__name__}")
    return value.strip()


def json_field(record: dict[str, Any], field: str) -> Any:
    """A field that holds JSON, either as itself or as a JSON-encoded string (Hugging Face's flattened form);
    text that is not JSON is returned as it is."""
    value = record.get(field)
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        try:
            return json.loads(value)
        except (json.JSONDecodeError, RecursionError):
            return value
    return value


class TaskWriter:
    """Writes one dataset's task files into a directory and keeps the report."""

    def __init__(self, dataset: str, out_dir: Path, *, force: bool = False) -> None:
        self.out_dir, self.force = out_dir, force
        self.report = ImportReport(dataset=dataset, out=str(out_dir))  # type: ignore[arg-type]
        self._ids: dict[str, str] = {}

    def refuse(self, problem: ImportProblem) -> None:
        """Report a record that could not be imported."""
        self.report.failed.append(problem)

    def write(self, task_id: str, data: dict[str, Any], source_ids: list[str], record: Record, id_field: str) -> None:
        """Validate and write one task file `<out>/<task_id>.yaml`; a problem of `record` when it is invalid, its id
        cannot name a file or is taken by an earlier record of this import, or the file system refuses the file."""
        if not task_id:
            self.refuse(record.problem(id_field, "no usable task id: an id needs a letter or digit", id_field))
            return
        if task_id in self._ids:
            self.refuse(record.problem(id_field, f"maps to task id {task_id!r}, already taken by "
                                                 f"{self._ids[task_id]!r} in this import", id_field))
            return
        problem = id_problem(task_id)
        if problem:
            shown = task_id if len(task_id) <= 80 else f"{task_id[:80]}..."
            self.refuse(record.problem(id_field, f"maps to task id {shown!r}, which cannot name its file: {problem}",
                                       id_field))
            return
        self._ids[task_id] = source_ids[0]
        path = self.out_dir / f"{task_id}.yaml"
        try:
            if path.exists() and not self.force:
                self.report.skipped.append(SkippedTask(id=task_id, file=str(path)))
                return
            task = write_task_file(path, data)
        except TaskError as exc:
            self.refuse(record.problem(exc.field, f"the task it makes is invalid: {exc.reason}", id_field))
            return
        except OSError as exc:  # the file system refused this file (the rest may still be written)
            self.refuse(record.problem(None, f"cannot write {path}: {exc.strerror or exc}", id_field))
            return
        self.report.imported.append(ImportedTask(id=task.id, file=str(path), source_ids=source_ids,
                                                 rows=len(task.gold.rows) if task.gold else None))
