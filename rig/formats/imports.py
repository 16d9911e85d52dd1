"""What `rig tasks import` reports (`--json`): the task files written, the ones left alone, the records that failed."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ImportedTask(_Model):
    """One task file written from a dataset's record (or record pair)."""

    id: str = Field(description="the task id (the dataset's id mapped to the task id pattern)")
    file: str
    source_ids: list[str] = Field(description="the dataset's ids of the records it came from")
    rows: int | None = Field(default=None, description="gold rows (null: no gold table)")


class SkippedTask(_Model):
    """A task file that already existed and was left alone (`--force` overwrites)."""

    id: str
    file: str


class ImportProblem(_Model):
    """A record that could not be imported: where it is, which task, which field, why."""

    file: str
    line: int | None = Field(default=None, description="1-based line of the record in its JSONL file")
    task_id: str | None = Field(default=None, description="the dataset's id of the record, when it has one")
    field: str | None = Field(default=None, description="the record's field at fault (dotted), when one is")
    reason: str


class ImportReport(_Model):
    """Everything one `rig tasks import` did."""

    format: Literal["sgr-rig/import-report/1"] = "sgr-rig/import-report/1"
    dataset: Literal["sgr-bench", "hybrid-deep-research"]
    out: str = Field(description="the directory the task files were written to")
    imported: list[ImportedTask] = Field(default_factory=list)
    skipped: list[SkippedTask] = Field(default_factory=list)
    failed: list[ImportProblem] = Field(default_factory=list)
