"""Automatic SGR-Bench failure labels (App. G): one category per failed episode, the earliest non-recoverable
root cause, upstream before downstream.

Order of the checks (the first that fires wins):
1. retrieval state, when some answer row was read outside the answer states or no answer state was reached:
   a. an intermediate gold state never reached on its scope/criterion constraints: its unmet constraints
      decide (scope -> scope drift, criterion -> criterion mismatch);
   b. the rows' reading state (with no rows to go by: the step closest to an answer state) violates a
      dependent constraint (declared `dependent: true`; inferred when a task declares none) with a value that
      shows among an earlier state's candidates, and that earlier state was never held under its view (e.g.
      the ranking order) -> criterion mismatch (the wrong rule chose the value);
   c. rows read in an intermediate gold state -> retrieval dependency (the dependent lookup was skipped);
   d. the reading state's violations: scope -> scope drift, then criterion -> criterion mismatch, then a
      dependent value taken from the wrong candidate row -> retrieval dependency. A dependent dimension set
      to a value that was never among the candidates counts by its tag (it drifted);
2. gold rows missing while the rest are state-anchored -> intent rewriting (exhaustive search dropped);
3. a cell value differing from the gold (beyond formatting) in an anchored row -> in-page misreading;
4. otherwise (order, format, duplicates, missing columns) -> final answer composition.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from rig.formats.grade import (
    CellVerdict,
    ExtraRow,
    RowProvenance,
    RowVerdict,
    TableScore,
    Violation,
)
from rig.formats.task import FailureKind
from rig.formats.vocabulary import CATEGORIES, norm
from rig.grading.states import EpisodeStates

__all__ = ["CATEGORIES", "Label", "is_perfect", "label_episode"]


class Label(BaseModel):
    """One SGR-Bench category with a one-line rationale citing steps and dimensions."""

    category: FailureKind
    rationale: str
    step: int | None = None


def is_perfect(score: TableScore) -> bool:
    """Every row and cell right and in the gold order."""
    return score.item_f1 == 1.0 and score.row_f1 == 1.0 and (score.poa == 1.0 or score.rows_gold < 2)


def label_episode(es: EpisodeStates, score: TableScore, rows: list[RowProvenance]) -> Label | None:
    """The failure category of a scored episode whose answer is not perfect (None when it is)."""
    if is_perfect(score):
        return None
    return (_state_cause(es, rows) if es.answer_names else None) or _answer_cause(es, score, rows)


def _rows(rs: list[int]) -> str:
    if len(rs) == 1:
        return f"row {rs[0]}"
    runs = len(rs) == rs[-1] - rs[0] + 1
    return f"rows {rs[0]}-{rs[-1]}" if runs else "rows " + ",".join(map(str, rs))


def _classify(violations: list[Violation], where: str, step: int | None) -> Label | None:
    core = [v for v in violations if v.tag != "view"]
    for category, pick in (("scope_drift", lambda v: v.tag == "scope" and not v.read_earlier),
                           ("criterion_mismatch", lambda v: v.tag == "criterion" and not v.read_earlier),
                           ("retrieval_dependency", lambda v: v.dependent and v.read_earlier)):
        hit = list(dict.fromkeys(v.describe() for v in core if pick(v)))
        if hit:
            return Label(category=category, step=step, rationale=f"{where} " + "; ".join(hit))
    return None


def _state_cause(es: EpisodeStates, rows: list[RowProvenance]) -> Label | None:
    bad = [p for p in rows if not p.state_anchored and p.step is not None]
    if not es.steps or (not bad and any(any(es.core_held[n]) for n in es.answer_names)):
        return None
    earlier = es.order[:es.order.index(es.answer_names[0])]
    for name in earlier:
        if not any(es.core_held[name]):
            i = es.closest(name)
            label = _classify(es.violations(name, i), f"step {es.steps[i].step} (upstream state `{name}` never reached):",
                              es.steps[i].step)
            if label:
                return label
    index = {s.step: i for i, s in enumerate(es.steps)}
    if bad:
        step, where = bad[0].step, f"step {bad[0].step}: {_rows([p.row for p in bad])} read where"
        found = [v for p in bad for v in p.violations]
    else:
        i, name = es.closest_answer(list(range(len(es.steps))))
        step, where = es.steps[i].step, f"step {es.steps[i].step} (no answer state reached; the closest):"
        found = es.violations(name, i)
    wrong_pick = [v for v in found if v.dependent and v.read_earlier]
    for name in earlier if wrong_pick else []:
        if not any(es.held[name]):  # reached on scope and criterion, never under its view (e.g. the ranking order)
            i = es.closest(name)
            views = "; ".join(v.describe() for v in es.violations(name, i))
            return Label(category="criterion_mismatch", step=es.steps[i].step, rationale=(
                f"step {es.steps[i].step}: the intermediate state `{name}` was read under the wrong rule: {views}; "
                f"so {wrong_pick[0].key}={wrong_pick[0].actual} was chosen"))
    skipped = [(p, n) for p in bad if (n := es.earlier_state_at(index[p.step]))]
    if skipped:
        p, n = skipped[0]
        return Label(category="retrieval_dependency", step=p.step, rationale=(
            f"step {p.step}: {_rows([q.row for q, _ in skipped])} read under the intermediate gold state `{n}`; "
            f"the dependent lookup (`{es.answer_names[-1]}`) was never completed"))
    return _classify(found, where, step)


def _key(es: EpisodeStates, rv: RowVerdict) -> str:
    return "/".join(c.gold for c in rv.cells if c.column in es.task.output.key)


def _format_only(pred: str | None, gold: str) -> bool:
    if pred is None:
        return False
    a, b = norm(pred).casefold(), norm(gold).casefold()
    if re.sub(r"[\W_]+", "", a) == re.sub(r"[\W_]+", "", b):
        return True
    nums = [re.findall(r"-?\d+(?:\.\d+)?", s.replace(",", "")) for s in (a, b)]
    return bool(nums[1]) and [float(x) for x in nums[0]] == [float(x) for x in nums[1]]


def _answer_cause(es: EpisodeStates, score: TableScore, rows: list[RowProvenance]) -> Label:
    anchored = [p for p in rows if p.state_anchored]
    where = f"`{anchored[0].gold_state}` (step {anchored[0].step})" if anchored else "no answer state"
    missing = [rv for rv in score.gold_rows if rv.pred_index is None]
    new_keys = [e for e in score.extra_rows if e.reason == "not_in_gold"]
    wrong = [(rv, c) for rv in score.gold_rows if rv.pred_index is not None for c in rv.cells
             if c.verdict == "wrong" and not _format_only(c.pred, c.gold)]
    if score.missing_columns:
        return _composition(score)
    if missing and not new_keys:
        reached = [r for r in map(es.first_held, es.answer_names) if r is not None]
        if score.rows_pred:
            got = f"the {score.rows_pred} answered rows were read in {where}"
        else:
            got = "the answer has no rows" + (f" although an answer state was reached at step {min(reached)}" if reached else "")
        return Label(category="intent_rewriting", step=anchored[0].step if anchored else None, rationale=(
            f"{len(missing)} of {score.rows_gold} gold rows missing (keys {', '.join(_key(es, rv) for rv in missing[:3])}"
            f"{', ...' if len(missing) > 3 else ''}); {got}"))
    if wrong or new_keys:
        return _misreading(es, score, rows, wrong, new_keys)
    return _composition(score)


def _misreading(es: EpisodeStates, score: TableScore, rows: list[RowProvenance],
                wrong: list[tuple[RowVerdict, CellVerdict]], new_keys: list[ExtraRow]) -> Label:
    by_row = {p.row: p for p in rows}
    if not wrong:
        e = new_keys[0]
        return Label(category="page_misreading", step=by_row[e.pred_index].step, rationale=(
            f"row {e.pred_index}: key {e.key} is not a gold row while {len(score.gold_rows) - score.shared_keys} gold rows "
            f"are missing: a key value misread"))
    rv, cell = wrong[0]
    p = by_row.get(rv.pred_index)
    step = p.step if p else None
    if p is not None and p.state_anchored and step is not None:
        seen = es.texts.at(step).has_value(cell.column, cell.gold, es.forms)
        ctx = f"`{p.gold_state}` at step {step} {'shows' if seen else 'does not show'} {cell.gold!r}"
    else:
        ctx = f"gold {cell.gold!r}"
    n = len({r.gold_index for r, _ in wrong})
    return Label(category="page_misreading", step=step, rationale=(
        f"row {rv.pred_index} ({_key(es, rv)}) {cell.column}: answered {cell.pred!r} where {ctx}; "
        f"{len(wrong)} wrong cells in {n} rows"))


def _composition(score: TableScore) -> Label:
    reasons = []
    if score.missing_columns:
        reasons.append(f"columns missing: {', '.join(score.missing_columns)}")
    dups = [e.pred_index for e in score.extra_rows if e.reason != "not_in_gold"]
    if dups:
        reasons.append(f"rows {dups} repeat a key or lack one")
    fmt = [(rv.pred_index, c.column, c.pred, c.gold) for rv in score.gold_rows for c in rv.cells if c.verdict == "wrong"]
    if fmt:
        i, col, pred, gold = fmt[0]
        reasons.append(f"row {i} {col}: {pred!r} is the gold {gold!r} in another format")
    if score.shared_keys >= 2 and score.poa < 1.0:
        reasons.append(f"rows out of the gold order (P.O.A. {score.poa:.2f})")
    text = "; ".join(reasons) or "no upstream cause found in the trajectory"
    return Label(category="answer_composition", rationale=f"right rows and values (Item-F1 {score.item_f1:.2f}): {text}")
