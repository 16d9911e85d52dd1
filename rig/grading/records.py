"""Evidence-backed records and their rollup into soft and hard precision, recall and F1 (WANDR §5, App. A, B, G, H).

A task declares a key hierarchy: levels of identifying keys (country -> city -> url), each with the
number of members `required` per parent member, ending in URL leaves; a level may carry named
subtasks (further branches per member, e.g. per-city heritage sites, or per-country URL-only evidence).
A submitted record is one root-to-leaf path: `item` (axis -> value), `url`, verbatim `excerpts`, `answer`,
and `subtask` naming its branch (None: the main branch).

Rollup (WANDR §5 and App. G), bottom-up:
- identity resolution per key axis, over all records (main branch and subtasks alike): values are
  canonicalised with the axis rules (equal canonical values are one member and pool their records),
  then near-identical canonical values (rapidfuzz ratio >= the axis threshold, single linkage) are
  duplicates of one identity: each duplicate is scored on its own records and the identity keeps the WORST score;
- a URL member scores its record's verdict (the worst, if the same URL was cited twice);
- any other member scores its child level's aggregate times each of its subtasks' aggregates;
- hard mode thresholds every member to 0/1 (1 only when its score is 1);
- recall keeps the top `required` member scores and zero-pads a shortfall: sum(top) / required;
  precision averages every submitted member (0 when none was submitted);
- a task's precision and recall are its root level's aggregates (an average, not thresholded), F1 their
  harmonic mean; a benchmark reports the unweighted mean of each metric over tasks.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from rapidfuzz import fuzz

from rig.errors import InputError
from rig.grading.canonical import DEFAULT_RULES, apply_rule

URL = "url"
Basis = Literal["full", "retrieval"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AxisPolicy(_Model):
    """How values on one key axis are identified: canonical rules, then merging of near-identical values."""

    rules: list[Any] = Field(default_factory=lambda: [*DEFAULT_RULES, "casefold"])
    fuzzy: float | None = Field(default=90.0, ge=0, le=100, description="rapidfuzz ratio at or above which two canonical "
                                                                "values are one identity; null: exact values only")


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


def _names(level: Level | None) -> set[str | None]:
    """Subtask names declared at this level or anywhere below it."""
    if level is None:
        return set()
    names: set[str | None] = set(level.subtasks)
    for sub in [level.child, *level.subtasks.values()]:
        names |= _names(sub)
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


def _clusters(values: list[str], threshold: float | None) -> dict[str, str]:
    """Each canonical value -> the representative of its identity (single-linkage merge of near-identical values)."""
    parent = {v: v for v in values}

    def find(v: str) -> str:
        while parent[v] != v:
            v = parent[v]
        return v

    if threshold is not None:
        for a, b in combinations(values, 2):
            if fuzz.ratio(a, b) >= threshold:
                ra, rb = sorted((find(a), find(b)))
                parent[rb] = ra
    return {v: find(v) for v in values}


class _Rollup:
    """One aggregation pass (precision or recall, soft or hard) over a task's records."""

    def __init__(self, h: KeyHierarchy, records: list[SubmittedRecord], leaves: list[float],
                 hard: bool, how: Literal["precision", "recall"]) -> None:
        self.records, self.leaves, self.hard, self.how = records, leaves, hard, how
        raw: dict[str, set[str]] = {}
        for r in records:
            for axis, value in [*r.item.items(), (URL, r.url)]:
                raw.setdefault(axis, set()).add(value)
        canon = {a: {v: self._canon(h.policy(a).rules, v) for v in vs} for a, vs in raw.items()}
        self.cluster = {a: _clusters(sorted(set(c.values())), h.policy(a).fuzzy) for a, c in canon.items()}
        self.variant = [{a: canon[a][v] for a, v in [*r.item.items(), (URL, r.url)]} for r in records]

    @staticmethod
    def _canon(rules: list[Any], value: str) -> str:
        for rule in rules:
            value = apply_rule(rule, value)
        return value

    def level(self, level: Level, recs: list[int], branch: str | None) -> float:
        """Aggregate of the members of `level` found among `recs`."""
        groups: dict[str, dict[str, list[int]]] = {}
        for r in recs:
            variant = self.variant[r][level.key]
            groups.setdefault(self.cluster[level.key][variant], {}).setdefault(variant, []).append(r)
        scores = [self._threshold(min(self.member(level, v, branch) for v in variants.values()))
                  for variants in groups.values()]
        if self.how == "recall":
            return sum(sorted(scores, reverse=True)[: level.required]) / level.required
        return sum(scores) / len(scores) if scores else 0.0

    def member(self, level: Level, recs: list[int], branch: str | None) -> float:
        """Score of one member (its records `recs`): a leaf's verdict, or child aggregate times subtask aggregates."""
        if level.child is None:  # a url level
            return min(self.leaves[r] for r in recs)
        score = self.level(level.child, self._route(recs, level.child, branch), branch)
        for name, sub in level.subtasks.items():
            score *= self.level(sub, self._route(recs, sub, name), name)
        return score

    def _route(self, recs: list[int], level: Level, branch: str | None) -> list[int]:
        names = _names(level) | {branch}
        return [r for r in recs if self.records[r].subtask in names]

    def _threshold(self, score: float) -> float:
        return (1.0 if score >= 1.0 - 1e-9 else 0.0) if self.hard else score


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r else 0.0


def _check(h: KeyHierarchy, records: list[SubmittedRecord], verdicts: list[RecordVerdict]) -> None:
    if len(records) != len(verdicts):
        raise InputError("records", None, f"{len(records)} records but {len(verdicts)} verdicts")
    axes = h.branch_axes()
    for i, r in enumerate(records):
        if r.subtask not in axes:
            known = sorted(n for n in axes if n is not None)
            raise InputError(f"records[{i}]", "subtask", f"unknown subtask {r.subtask!r}; the task declares {known}")
        for axis in axes[r.subtask]:
            if not r.item.get(axis, "").strip():
                raise InputError(f"records[{i}]", f"item.{axis}", f"missing; this branch is identified by {axes[r.subtask]}")


def score_task(h: KeyHierarchy, records: list[SubmittedRecord], verdicts: list[RecordVerdict],
               basis: Basis = "full") -> RollupScores:
    """Soft and hard precision, recall and F1 of one task's records (verdicts[i] judges records[i])."""
    _check(h, records, verdicts)
    out: dict[str, float] = {}
    for mode in ("soft", "hard"):
        leaves = [v.score(mode == "hard", basis) for v in verdicts]
        for how in ("precision", "recall"):
            out[f"{mode}_{how}"] = _Rollup(h, records, leaves, mode == "hard", how).level(h.root, list(range(len(records))), None)
        out[f"{mode}_f1"] = _f1(out[f"{mode}_precision"], out[f"{mode}_recall"])
    return RollupScores(**out)


def mean_scores(per_task: list[RollupScores]) -> RollupScores:
    """The unweighted mean of each metric over tasks (every task counts equally)."""
    if not per_task:
        raise ValueError("no task scores to average")
    fields = RollupScores.model_fields
    return RollupScores(**{f: sum(getattr(s, f) for s in per_task) / len(per_task) for f in fields})
