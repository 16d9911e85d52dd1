"""`qa.json` and `rig qa --json`: replay fidelity per page, and its summary (docs/replay.md, "Replay QA")."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

#: The QA's file: beside a snapshot's manifest, and in an episode directory.
QA_FILE = "qa.json"
#: `rig qa`'s default threshold: a page scoring below it is reported (and the command exits 1).
DEFAULT_QA_THRESHOLD = 0.9
#: A frozen run's copy of the QA of the snapshot it was served from (in the runs directory).
SNAPSHOT_QA_FILE = "snapshot-qa.json"

Part = Literal["text", "image", "resources", "state"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class QaRequest(_Model):
    """A request of the replayed page that the archive failed."""

    method: str
    url: str
    kind: str = Field(description="Playwright's resource type: document, stylesheet, script, xhr, fetch, image, ...")
    outcome: Literal["missed", "status", "incomplete"] = Field(
        description="missed: not in the archive (a 404); status: answered with another status than recorded; "
                    "incomplete: its body was recorded cut or missing (a 502)")
    status: int | None = Field(default=None, description="the status the replay got")
    recorded_status: int | None = Field(default=None, description="the status recorded for that request, if any")
    reason: str | None = None
    fuzzy: list[str] = Field(default_factory=list,
                             description="query parameters whose values alone kept it from a recorded request: a "
                                         "fuzzy rule for them would answer it")


class QaPage(_Model):
    """One page rendered from the archive alone: its score, each part (null: not measured) and what went wrong."""

    url: str = Field(description="the recorded page's URL")
    step: int | None = Field(description="the trajectory step; null for a snapshot's archived document")
    score: float = Field(ge=0, le=1, description="the worst measured part")
    text: float | None = Field(ge=0, le=1, description="visible-text similarity to the recorded text")
    image: float | None = Field(ge=0, le=1, description="pixel match of the replayed image with the recorded one")
    resources: float = Field(ge=0, le=1, description="1, halved per failed critical request, less a tenth per "
                                                     "failed image, font or media file")
    state: float | None = Field(ge=0, le=1, description="1 when the replayed retrieval state equals the recorded one")
    worst: Part | None = Field(default=None, description="the part the score is, when it is below 1")
    kind: Literal["step", "document"] = "step"
    source: str = Field(default="", description="the episode (for a step) or snapshot (for a document) it came from")
    requests: int = Field(default=0, description="requests the replayed page made")
    failed: list[QaRequest] = Field(default_factory=list, description="those the archive failed")
    state_diff: dict[str, list[object]] = Field(default_factory=dict, description="key -> [recorded, replayed]")
    text_diff: str | None = Field(default=None, description="for a page below the threshold: a short unified diff "
                                                            "of the recorded (-) and replayed (+) text")
    notes: list[str] = Field(default_factory=list, description="what the QA did or could not do on this page")


class QaBelow(_Model):
    """A page under the threshold, and its worst part."""

    url: str
    step: int | None
    score: float
    worst: Part | None


class QaSummary(_Model):
    """Pages scored, their mean and minimum, the threshold, and the pages under it."""

    pages: int
    mean: float | None = Field(description="null when no page was scored")
    min: float | None
    threshold: float
    below: list[QaBelow] = Field(default_factory=list)
    seconds: float | None = Field(default=None, description="how long the QA took")


class QaReport(_Model):
    """The QA of a snapshot, an episode or a runs directory (`rig qa --json`; `qa.json`)."""

    format: Literal["sgr-rig/qa/1"] = "sgr-rig/qa/1"
    target: str = Field(default="", description="the snapshot, episode or runs directory scored")
    pages: list[QaPage] = Field(default_factory=list)
    summary: QaSummary
    notes: list[str] = Field(default_factory=list, description="what limited the QA (e.g. no frozen episode at hand)")

    @classmethod
    def of(cls, pages: list[QaPage], threshold: float, target: str = "", seconds: float | None = None,
           notes: list[str] | None = None) -> QaReport:
        """A report of these pages, summarised against `threshold`."""
        scores = [p.score for p in pages]
        below = [QaBelow(url=p.url, step=p.step, score=p.score, worst=p.worst) for p in pages if p.score < threshold]
        summary = QaSummary(pages=len(pages), mean=round(sum(scores) / len(scores), 4) if scores else None,
                            min=min(scores) if scores else None, threshold=threshold, below=below,
                            seconds=None if seconds is None else round(seconds, 2))
        return cls(target=target, pages=pages, summary=summary, notes=list(notes or []))

    @property
    def passed(self) -> bool:
        """Every page at or above the threshold."""
        return not self.summary.below

    def line(self) -> str:
        """The one-line summary `rig qa` and `rig freeze` print."""
        s = self.summary
        if not s.pages:
            return f"{self.target}: replay QA scored no page"
        below = f"{len(s.below)} below {s.threshold:g}" if s.below else f"none below {s.threshold:g}"
        took = f" in {s.seconds:.1f} s" if s.seconds is not None else ""
        return f"{self.target}: replay QA {s.pages} pages, mean {s.mean:.3f}, min {s.min:.3f}, {below}{took}"

    @classmethod
    def read(cls, path: Path) -> QaReport:
        """Read a `qa.json` (ValueError when it is not one)."""
        return cls.model_validate_json(path.read_text(encoding="utf-8"))
