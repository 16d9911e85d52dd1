"""`audit.json`: an auditor's failure category and note for one episode."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from rig.formats.task import FailureKind

#: The category of an episode without a failure (a passed answer, or an automatic label the auditor rejects).
NO_FAILURE = "none"


class Audit(BaseModel):
    """`audit.json`: the auditor's category overrides the automatic label; `label: null` means no failure."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["sgr-rig/audit/1"] = "sgr-rig/audit/1"
    label: FailureKind | None = Field(description="the auditor's failure category (null: the episode has no failure)")
    note: str = Field(default="", max_length=10_000)
    auditor: str = Field(default="", max_length=200)
    at: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))
