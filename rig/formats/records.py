"""Evidence-record formats (WANDR): a task's key hierarchy, a submitted record, a record's verdict and the rolled-up
scores. The rollup itself is `rig.grading.records`."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from rig.formats.canonical import DEFAULT_RULES, known_rules

URL = "url"
Basis = Literal["full", "retrieval"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AxisPolicy(_Model):
    """How values on one key axis are identified: canonical rules, then merging of near-identical values."""

    rules: list[Any] = Field(default_factory=lambda: [*DEFAULT_RULES, "casefold"])
    fuzzy: float | None = Field(default=90.0, ge=0, le=100, description="rapidfuzz ratio at or above which two canonical "
                                                                "values are one identity; null: exact values only")

    _known_rules = field_validator("rules")(known_rules)


class Level(_Model):
    """One level of a key hierarchy: `required` members per parent member, identified on axis `key` (`url`: leaves)."""

    key: str
    required: int = Field(default=1, ge=1)
    child: Level | None = None
    subtasks: dict[str, Level] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _shape(self) -> Level:
        if self.key == URL and (self.child is not None or self.subtasks):
            raise ValueError("a url level is a leaf: it has no child and no subtasks")
        if self.key != URL and self.child is None:
            raise ValueError(f"level {self.key!r} needs a child level: every branch ends in a url level")
        return self


class KeyHierarchy(_Model):
    """A task's qualification key hierarchy and the identity policy of each axis."""

    root: Level
    axes: dict[str, AxisPolicy] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _branches(self) -> KeyHierarchy:
        self.branch_axes()
        return self

    def policy(self, axis: str) -> AxisPolicy:
        """The axis's identity policy (URLs: trimmed, exact; other axes: casefolded, fuzzy 90)."""
        return self.axes.get(axis) or (AxisPolicy(rules=["trim"], fuzzy=None) if axis == URL else AxisPolicy())

    def branch_axes(self) -> dict[str | None, list[str]]:
        """For each branch (None: main), the axes a record of that branch names in its `item`."""
        out: dict[str | None, list[str]] = {}

        def walk(level: Level, prefix: list[str], branch: str | None) -> None:
            if level.child is None:  # the url leaf: one per branch
                if branch in out:
                    raise ValueError(f"subtask name {branch!r} is used twice")
                out[branch] = prefix
                return
            if level.key in prefix:
                raise ValueError(f"axis {level.key!r} appears twice on one branch")
            keys = [*prefix, level.key]
            for name, sub in level.subtasks.items():
                walk(sub, keys, name)
            walk(level.child, keys, branch)

        walk(self.root, [], None)
        return out


def names_below(level: Level | None) -> set[str | None]:
    """Subtask names declared at this level or anywhere below it."""
    if level is None:
        return set()
    names: set[str | None] = set(level.subtasks)
    for sub in [level.child, *level.subtasks.values()]:
        names |= names_below(sub)
    return names


class SubmittedRecord(_Model):
    """One root-to-leaf record: identifying item, source URL, verbatim excerpts and the answer they support."""

    item: dict[str, str]
    url: str
    excerpts: list[str] = Field(default_factory=list)
    answer: str = ""
    subtask: str | None = None


class RecordVerdict(_Model):
    """What the checks found for one record (computed elsewhere from the episode's captured pages)."""

    captured: bool = Field(description="the cited URL was loaded and captured in the episode")
    faithful_excerpts: int = Field(ge=0, description="excerpts found verbatim (after NFKC, whitespace collapsing)")
    total_excerpts: int = Field(ge=0)
    fuzzy_near_misses: int = Field(default=0, ge=0, description="excerpts found only approximately: reported, not credited")
    facts_supported: bool = Field(description="the captured page supports the record's item and answer")

    @model_validator(mode="after")
    def _counts(self) -> RecordVerdict:
        if self.faithful_excerpts + self.fuzzy_near_misses > self.total_excerpts:
            raise ValueError("faithful_excerpts + fuzzy_near_misses exceeds total_excerpts")
        return self

    @property
    def retrieval(self) -> bool:
        """WANDR's verdict_retrieval: the cited page was fetched and satisfies the requirements."""
        return self.captured and self.facts_supported

    @property
    def full(self) -> bool:
        """WANDR's verdict_full: retrieval holds and every excerpt is faithful (at least one excerpt)."""
        return self.retrieval and self.total_excerpts > 0 and self.faithful_excerpts == self.total_excerpts

    @property
    def soft(self) -> float:
        """Partial credit: the faithful share of the excerpts when retrieval holds, else 0 (1.0 exactly when `full`)."""
        return self.faithful_excerpts / self.total_excerpts if self.retrieval and self.total_excerpts else 0.0

    @property
    def hard(self) -> float:
        """1.0 when `full`, else 0.0."""
        return float(self.full)

    def score(self, hard: bool, basis: Basis = "full") -> float:
        """The leaf score: on the `retrieval` basis 0/1 by verdict_retrieval; on `full`, `hard` or `soft`."""
        if basis == "retrieval":
            return float(self.retrieval)
        return self.hard if hard else self.soft


class RollupScores(_Model):
    """Soft and hard precision, recall and F1 of one task (or their mean over tasks)."""

    soft_precision: float
    soft_recall: float
    soft_f1: float
    hard_precision: float
    hard_recall: float
    hard_f1: float


#: The rolled-up record metrics, in the order tables show them.
RECORD_METRICS: tuple[str, ...] = tuple(RollupScores.model_fields)
