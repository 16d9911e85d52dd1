"""`rig drift --json`: whether what an episode or a snapshot archived still holds on the live origin."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

DriftStatus = Literal["unchanged", "changed", "gone", "unreachable"]


class DriftItem(BaseModel):
    """One re-checked item: an episode's step (`step` set) or a snapshot's archived request (`step` null)."""

    model_config = ConfigDict(extra="forbid")

    url: str = Field(description="the archived URL (for a step: the page the step was on)")
    step: int | None = Field(default=None, description="the trajectory step; null for a snapshot's request")
    status: DriftStatus = Field(description="unchanged; changed (the text or data differ); gone (the page, the "
                                            "request or the action's target is no longer there); unreachable (its "
                                            "origin could not be reached at all, so it was not re-checked: no drift)")
    kind: Literal["step", "page", "data"] = Field(description="a step's visible text, a page's rendered visible text, "
                                                              "or a data response's body")
    source: str = Field(description="the episode or snapshot directory it came from")
    method: str = "GET"
    live_url: str | None = Field(default=None, description="where the live page ended up (after redirects)")
    http_status: int | None = Field(default=None, description="the live response's HTTP status, when there was one")
    reason: str | None = Field(default=None, description="why the item is gone or unreachable")
    diff: str | None = Field(default=None, description="a short unified diff, archived (-) against live (+)")


class UnreachableOrigin(BaseModel):
    """An origin whose first request failed at DNS, TLS or connect: nothing of it was re-checked."""

    model_config = ConfigDict(extra="forbid")

    origin: str = Field(description="scheme://host[:port]")
    reason: str = Field(description="how it failed, and what to do about it (--resolve, --ignore-https-errors)")


class DriftReport(BaseModel):
    """Every item re-checked, and the counts; the command exits 0 when nothing changed or went, 1 when something did,
    3 when an origin could not be reached."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["sgr-rig/drift/1"] = "sgr-rig/drift/1"
    items: list[DriftItem] = Field(default_factory=list)
    unchanged: int = 0
    changed: int = 0
    gone: int = 0
    unreachable: int = Field(default=0, description="items not re-checked: their origin could not be reached")
    unreachable_origins: list[UnreachableOrigin] = Field(default_factory=list)
    skipped: list[str] = Field(default_factory=list, description="what was not re-checked, and why")

    def add(self, item: DriftItem) -> None:
        """Append an item and count it."""
        self.items.append(item)
        setattr(self, item.status, getattr(self, item.status) + 1)

    @property
    def drifted(self) -> bool:
        """Whether anything changed or went (an unreachable origin is no drift)."""
        return bool(self.changed or self.gone)
