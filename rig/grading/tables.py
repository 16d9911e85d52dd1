"""Table metrics of SGR-Bench Appendix A: Item-F1, Row-F1 and pairwise order accuracy (P.O.A.).

Both tables are canonicalised with the task's rules, predicted columns are matched to the gold
schema by name, and rows are aligned by their key cells (exact match after canonicalisation).
"""

from __future__ import annotations

from typing import Any

from rig.errors import InputError
from rig.formats.answer import Answer
from rig.formats.canonical import Canonicalizer
from rig.formats.grade import (
    CellVerdict,
    ExtraRow,
    Reason,
    RowVerdict,
    TableScore,
    Verdict,
)
from rig.formats.vocabulary import column_name


def _gold_rows(gold: Answer, canon: Canonicalizer) -> list[list[str]]:
    width = len(gold.columns)
    for i, row in enumerate(gold.rows):
        if len(row) != width:
            raise InputError("gold", f"rows[{i}]", f"has {len(row)} cells, the header has {width}")
    return canon.rows(gold.columns, gold.rows)


def _column_index(gold: Answer, pred: Answer) -> list[int | None]:
    """For each gold column, the index of the predicted column with the same name (first one), or None."""
    where: dict[str, int] = {}
    for i, name in enumerate(pred.columns):
        where.setdefault(column_name(name), i)
    return [where.get(column_name(c)) for c in gold.columns]


def _cell(row: list[str], i: int | None) -> str | None:
    return row[i] if i is not None and i < len(row) else None


def _poa(pred_pos: list[int]) -> float:
    """P.O.A. from the predicted positions of the shared keys listed in gold order; 0 below two keys."""
    n = len(pred_pos)
    if n < 2:
        return 0.0
    kept = sum(pred_pos[a] < pred_pos[b] for a in range(n) for b in range(a + 1, n))
    return kept / (n * (n - 1) // 2)


def _align(gold_at: dict[tuple[str | None, ...], int], keys: list[list[str | None]]) -> tuple[dict[int, int], list[ExtraRow]]:
    """Gold index -> first predicted row with its key; every other predicted row is an extra row."""
    matched: dict[int, int] = {}
    extra: list[ExtraRow] = []
    for j, pk in enumerate(keys):
        i = None if None in pk else gold_at.get(tuple(pk))
        if i is None or i in matched:
            reason: Reason = "missing_key" if None in pk else "not_in_gold" if i is None else "duplicate_key"
            extra.append(ExtraRow(pred_index=j, key=pk, reason=reason))
        else:
            matched[i] = j
    return matched, extra


def _gold_keys(rows: list[list[str]], kcols: list[int]) -> dict[tuple[str | None, ...], int]:
    gold_at: dict[tuple[str | None, ...], int] = {}
    for i, row in enumerate(rows):
        k = tuple(row[c] for c in kcols)
        if k in gold_at:
            raise InputError("gold", "key", f"rows {gold_at[k]} and {i} share the key {list(k)}")
        gold_at[k] = i
    return gold_at


def score_table(gold: Answer, pred: Answer, key: list[str], rules: dict[str, Any] | None = None) -> TableScore:
    """Score `pred` against `gold` (SGR-Bench App. A).

    Edge rules: a predicted row counts len(gold.columns) slots in N_pred even when it is short or lacks a
    column (those slots are wrong); a repeated predicted key is aligned once (first occurrence) and its
    copies count in N_pred and |R_pred| without credit; an empty prediction scores 0 on all three.
    When gold and prediction are both empty, Item-F1 and Row-F1 are 1.0 (both tables agree exactly:
    nothing is missing and nothing is wrong, and every non-empty prediction scores 0, so the exact answer
    keeps the top score) while P.O.A. stays 0, since App. A sets it to 0 whenever fewer than two keys are shared.
    """
    if not key:
        raise InputError("gold", "key", "at least one key column is needed to align rows")
    absent = [k for k in key if k not in gold.columns]
    if absent:
        raise InputError("gold", "key", f"key columns {absent} are not among the gold columns {gold.columns}")
    canon = Canonicalizer(rules)
    width, kcols = len(gold.columns), [gold.columns.index(k) for k in key]
    gold_rows = _gold_rows(gold, canon)
    index = _column_index(gold, pred)
    raw_pred = [[_cell(row, i) for i in index] for row in pred.rows]
    pred_rows = [[None if v is None else canon.cell(c, v) for c, v in zip(gold.columns, row)] for row in raw_pred]
    matched, extra = _align(_gold_keys(gold_rows, kcols), [[row[c] for c in kcols] for row in pred_rows])
    for x in extra:
        x.cells = raw_pred[x.pred_index]
    verdicts: list[RowVerdict] = []
    c_item = c_row = 0
    for i, row in enumerate(gold_rows):
        j = matched.get(i)
        cells = []
        for c, name in enumerate(gold.columns):
            got = None if j is None else pred_rows[j][c]
            verdict: Verdict = "missing" if got is None else "correct" if got == row[c] else "wrong"
            shown = None if j is None else raw_pred[j][c]
            cells.append(CellVerdict(column=name, gold=gold.rows[i][c], pred=shown, verdict=verdict))
        correct = sum(v.verdict == "correct" for v in cells)
        c_item += correct
        c_row += int(j is not None and correct == width)
        verdicts.append(RowVerdict(gold_index=i, key=[row[c] for c in kcols], pred_index=j, cells=cells))
    n_gold, n_pred = len(gold.rows) * width, len(pred.rows) * width
    both_empty = not gold.rows and not pred.rows
    return TableScore(
        item_f1=1.0 if both_empty else 2 * c_item / (n_gold + n_pred),
        row_f1=1.0 if both_empty else 2 * c_row / (len(gold.rows) + len(pred.rows)),
        poa=_poa([matched[i] for i in sorted(matched)]),
        c_item=c_item, n_gold=n_gold, n_pred=n_pred, c_row=c_row,
        rows_gold=len(gold.rows), rows_pred=len(pred.rows), shared_keys=len(matched),
        missing_columns=[c for c, i in zip(gold.columns, index) if i is None], gold_rows=verdicts, extra_rows=extra,
    )
