"""The answer an agent hands in (`answer.json`, CONTRACTS.md)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Citation(BaseModel):
    """Evidence for one row (or, without `row`, for the whole answer)."""

    model_config = ConfigDict(extra="allow")

    row: int | None = None
    url: str
    excerpt: str = ""


class Answer(BaseModel):
    """An answer table with per-row citations."""

    model_config = ConfigDict(extra="allow")

    columns: list[str]
    rows: list[list[str]] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)
