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

from rapidfuzz import fuzz

from rig.errors import InputError
from rig.formats.canonical import apply_rule
from rig.formats.records import (
    URL,
    Basis,
    KeyHierarchy,
    Level,
    RecordVerdict,
    RollupScores,
    SubmittedRecord,
    names_below,
)


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
        names = names_below(level) | {branch}
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
