"""The trajectory step (one line of trajectory.jsonl) and its parts."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Action(_Model):
    """What caused a step: reported by the driver (`agent`) or inferred from page events (`observed`)."""

    type: str = Field(description="goto, select, check, fill, press, click, load, navigate, hashchange, pushState, ...")
    target: str | None = Field(default=None, description="a Playwright selector of the element acted on")
    value: Any = None
    source: Literal["agent", "observed"] = "agent"


class StateDiff(_Model):
    """How a step's state differs from the previous step's."""

    changed: dict[str, list[Any]] = Field(default_factory=dict, description="key -> [old, new]")
    added: dict[str, Any] = Field(default_factory=dict)
    removed: list[str] = Field(default_factory=list)


class Snapshot(_Model):
    """WARC records holding what the page showed at this step."""

    warc_record_id: str | None = Field(default=None, description="the step's visible-text record")
    dom_record_id: str | None = Field(default=None, description="the step's DOM snapshot record")


class Step(_Model):
    """One retrieval state: the action that led to it, the state and its evidence."""

    format: Literal["sgr-rig/step/1"] = "sgr-rig/step/1"
    step: int = Field(ge=0)
    t: float = Field(description="seconds since the recorder attached")
    url: str
    action: Action
    state: dict[str, Any]
    state_diff: StateDiff
    dom_hash: str
    text_hash: str
    screenshot: str | None = Field(default=None, description="path relative to the episode directory")
    snapshot: Snapshot | None = None
    tab: int = Field(default=0, description="which page (tab) of the context, in opening order")
    settled: bool = Field(default=True, description="false when max_settle_ms ran out before the page was quiet")


class RecordingTime(_Model):
    """Seconds the recorder held the driver up in an episode (what recording added to its wall time, roughly)."""

    settle_s: float = Field(
        default=0.0, description="waiting for pages to settle and reading their state, over all steps"
    )
    image_wait_s: float = Field(
        default=0.0, description="before actions, waiting for a frame showing the last step (`screenshot_wait_ms`)"
    )
