"""The answer an agent hands in (`answer.json`, docs/grading.md): an answer table, evidence records, or both."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rig.formats.records import SubmittedRecord


class Citation(BaseModel):
    """Evidence for one row (or, without `row`, for the whole answer)."""

    model_config = ConfigDict(extra="allow")

    row: int | None = None
    url: str
    excerpt: str = ""
    captured: bool | None = Field(default=None, description="set by the operator agent: whether it opened the cited "
                                                            "page in the recorded browser (null: nobody tried)")
    capture_reason: str | None = Field(default=None, description="why the operator agent did not capture the page")
    capture_status: int | None = Field(default=None, description="set by the operator agent: the HTTP status the "
                                                                 "cited page answered with (null: no response)")
    final_url: str | None = Field(default=None, description="set by the operator agent: where the cited URL ended up "
                                                            "after redirects")
    redirects: list[str] | None = Field(default=None, description="set by the operator agent: the URLs redirected "
                                                                  "from, in order, before `final_url`")


class Answer(BaseModel):
    """An answer table with per-row citations, and evidence records (`{item, url, excerpts, answer}`) for record tasks."""

    model_config = ConfigDict(extra="allow")

    format: Literal["sgr-rig/answer/1"] = "sgr-rig/answer/1"
    columns: list[str] = Field(default_factory=list)
    rows: list[list[str]] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)
    records: list[SubmittedRecord] = Field(default_factory=list, description="evidence records (WANDR), one per item")

    @model_validator(mode="after")
    def _rows_have_columns(self) -> Answer:
        if self.rows and not self.columns:
            raise ValueError("columns: an answer with rows needs its columns")
        return self
