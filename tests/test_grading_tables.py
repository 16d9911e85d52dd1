"""Item-F1, Row-F1 and P.O.A. (SGR-Bench App. A) with every edge rule, and `score_files` / `load_rules`."""

import json
from pathlib import Path

import pytest

from rig.errors import InputError
from rig.formats.answer import Answer
from rig.grading.score import load_rules, score_files
from rig.grading.tables import score_table

DATA = Path(__file__).parent / "data" / "answers"
COLS = ["Carrier", "Flights", "Share"]
GOLD = Answer(columns=COLS, rows=[["UA", "58665", "17.4"], ["DL", "48110", "14.3"],
                                  ["B6", "42076", "12.5"], ["AA", "32729", "9.7"]])


def pred(rows, columns=COLS):
    return Answer(columns=columns, rows=rows)


def test_exact_answer_scores_one():
    s = score_table(GOLD, pred(GOLD.rows), ["Carrier"])
    assert (s.item_f1, s.row_f1, s.poa) == (1.0, 1.0, 1.0)
    assert (s.c_item, s.n_gold, s.n_pred, s.c_row, s.shared_keys) == (12, 12, 12, 4, 4)


def test_partial_answer_counts():
    # UA fully right; DL one wrong field; B6 absent; ZZ not in gold.
    p = pred([["UA", "58665", "17.4"], ["DL", "48110", "99"], ["ZZ", "1", "1"]])
    s = score_table(GOLD, p, ["Carrier"])
    # C_item = 3 + 2 = 5; N_gold = 4*3 = 12; N_pred = 3*3 = 9 -> 10/21
    assert (s.c_item, s.n_gold, s.n_pred) == (5, 12, 9)
    assert s.item_f1 == pytest.approx(10 / 21)
    # C_row = 1 (UA); 2*1 / (4 + 3)
    assert s.row_f1 == pytest.approx(2 / 7)
    # shared keys UA, DL in gold order and in predicted order -> 1 pair kept of 1
    assert s.poa == 1.0
    assert [c.verdict for c in s.gold_rows[1].cells] == ["correct", "correct", "wrong"]
    assert [c.verdict for c in s.gold_rows[2].cells] == ["missing"] * 3
    assert s.gold_rows[2].pred_index is None
    assert [(e.pred_index, e.key, e.reason) for e in s.extra_rows] == [(2, ["ZZ"], "not_in_gold")]


def test_columns_are_aligned_by_name_in_any_order():
    p = pred([[r[2], r[0], r[1]] for r in GOLD.rows], columns=["share", "**Carrier**", " Flights "])
    s = score_table(GOLD, p, ["Carrier"])
    assert (s.item_f1, s.row_f1, s.poa) == (1.0, 1.0, 1.0)
    assert s.gold_rows[0].cells[2].pred == "17.4"


def test_missing_schema_column_counts_its_slots_wrong():
    p = pred([r[:2] for r in GOLD.rows], columns=["Carrier", "Flights"])
    s = score_table(GOLD, p, ["Carrier"])
    # 4 rows * 2 right of 3; N_pred still 4 * 3 = 12 -> 2*8/24
    assert (s.c_item, s.n_pred, s.c_row) == (8, 12, 0)
    assert s.item_f1 == pytest.approx(2 / 3)
    assert s.row_f1 == 0.0
    assert s.poa == 1.0
    assert s.missing_columns == ["Share"]
    assert s.gold_rows[0].cells[2].verdict == "missing"


def test_extra_predicted_columns_are_ignored():
    p = pred([r + ["extra"] for r in GOLD.rows], columns=[*COLS, "Source"])
    assert score_table(GOLD, p, ["Carrier"]).item_f1 == 1.0


def test_short_rows_count_full_width_in_n_pred():
    p = pred([["UA", "58665"], ["DL"]])
    s = score_table(GOLD, p, ["Carrier"])
    # C_item = 2 + 1 = 3; N_pred = 2 * 3 = 6 (not 3 cells written); 2*3 / (12 + 6)
    assert (s.c_item, s.n_pred) == (3, 6)
    assert s.item_f1 == pytest.approx(6 / 18)
    assert [c.verdict for c in s.gold_rows[0].cells] == ["correct", "correct", "missing"]


def test_repeated_key_is_matched_once_and_copies_count_in_denominators():
    p = pred([GOLD.rows[0], GOLD.rows[0], GOLD.rows[1]])
    s = score_table(GOLD, p, ["Carrier"])
    # C_item = 6, N_pred = 9 -> 12/21; C_row = 2 -> 4/7
    assert s.item_f1 == pytest.approx(12 / 21)
    assert s.row_f1 == pytest.approx(4 / 7)
    assert [(e.pred_index, e.reason) for e in s.extra_rows] == [(1, "duplicate_key")]
    assert s.gold_rows[0].pred_index == 0


def test_first_occurrence_of_a_repeated_key_is_the_one_scored():
    p = pred([["UA", "1", "1"], GOLD.rows[0]])
    s = score_table(GOLD, p, ["Carrier"])
    assert s.c_item == 1 and s.c_row == 0
    assert s.gold_rows[0].pred_index == 0


def test_poa_counts_order_preserving_pairs():
    # Predicted order of shared keys: B6, UA, DL (AA missing). Gold pairs among {UA, DL, B6}:
    # (UA,DL) kept, (UA,B6) broken, (DL,B6) broken -> 1/3
    p = pred([GOLD.rows[2], GOLD.rows[0], ["XX", "0", "0"], GOLD.rows[1]])
    assert score_table(GOLD, p, ["Carrier"]).poa == pytest.approx(1 / 3)


def test_poa_is_zero_with_fewer_than_two_shared_keys():
    s = score_table(GOLD, pred([GOLD.rows[0]]), ["Carrier"])
    assert (s.shared_keys, s.poa) == (1, 0.0)
    assert s.item_f1 == pytest.approx(6 / 15)


def test_empty_prediction_scores_zero():
    s = score_table(GOLD, Answer(columns=[], rows=[]), ["Carrier"])
    assert (s.item_f1, s.row_f1, s.poa) == (0.0, 0.0, 0.0)
    assert all(c.verdict == "missing" for r in s.gold_rows for c in r.cells)


def test_empty_gold_and_empty_prediction():
    empty = Answer(columns=COLS, rows=[])
    s = score_table(empty, Answer(columns=[], rows=[]), ["Carrier"])
    assert (s.item_f1, s.row_f1, s.poa) == (1.0, 1.0, 0.0)
    s = score_table(empty, pred([GOLD.rows[0]]), ["Carrier"])
    assert (s.item_f1, s.row_f1, s.poa) == (0.0, 0.0, 0.0)


def test_keys_match_exactly_after_canonicalisation_never_fuzzily():
    rules = {"columns": {"Carrier": ["casefold"], "Flights": ["number"]}}
    p = pred([["ua ", "58,665", "17.4"], ["D L", "48110", "14.3"]])
    s = score_table(GOLD, p, ["Carrier"], rules)
    assert s.gold_rows[0].pred_index == 0  # " ua " -> "ua" == "ua"; "58,665" -> "58665"
    assert s.gold_rows[1].pred_index is None  # "d l" != "dl": no fuzzy matching
    assert s.c_row == 1


def test_composite_keys():
    gold = Answer(columns=["Origin", "Carrier", "N"], rows=[["JFK", "UA", "1"], ["EWR", "UA", "2"]])
    p = Answer(columns=["Origin", "Carrier", "N"], rows=[["EWR", "UA", "2"], ["JFK", "UA", "1"]])
    s = score_table(gold, p, ["Origin", "Carrier"])
    assert (s.item_f1, s.row_f1, s.poa) == (1.0, 1.0, 0.0)


def test_missing_key_cell_is_an_extra_row():
    p = pred([["58665"]], columns=["Flights"])
    s = score_table(GOLD, p, ["Carrier"])
    assert [(e.key, e.reason) for e in s.extra_rows] == [([None], "missing_key")]
    assert s.item_f1 == 0.0


@pytest.mark.parametrize(
    "gold,key,message",
    [
        (GOLD, ["Airline"], "gold: key: key columns ['Airline'] are not among the gold columns ['Carrier', 'Flights', 'Share']"),
        (GOLD, [], "gold: key: at least one key column is needed to align rows"),
        (Answer(columns=COLS, rows=[["UA", "1", "1"], ["UA", "2", "2"]]), ["Carrier"],
         "gold: key: rows 0 and 1 share the key ['UA']"),
        (Answer(columns=COLS, rows=[["UA", "1"]]), ["Carrier"], "gold: rows[0]: has 2 cells, the header has 3"),
    ],
)
def test_bad_gold_or_key_is_an_input_error(gold, key, message):
    with pytest.raises(InputError) as info:
        score_table(gold, pred([]), key)
    assert str(info.value) == message


# --- score_files and load_rules (the `rig score --json` document) ---

def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def gold_csv(tmp_path):
    return write(tmp_path, "gold.csv", "Carrier,Flights,Share\nUA,58665,17.4%\nDL,48110,14.3%\n")


def test_score_files_ok_with_rules(tmp_path, gold_csv):
    rules = write(tmp_path, "rules.json", json.dumps({"columns": {"Flights": ["number"], "Share": ["number"]}}))
    got = score_files(gold_csv, DATA / "table.csv", ["Carrier"], rules)
    # table.csv names carriers in full: no key matches
    assert got == {"status": "ok", "item_f1": 0.0, "row_f1": 0.0, "poa": 0.0}
    md = write(tmp_path, "pred.md", "| Carrier | Share | Flights |\n|---|---|---|\n| DL | 14.3% | 48,110 |\n"
                                    "| UA | 17.5 % | 58,665 |\n")
    got = score_files(gold_csv, md, ["Carrier"], load_rules(rules))
    # DL all right after `number` ("48,110" -> "48110", "14.3%" -> "14.3"); UA's Share 17.5 != 17.4:
    # C_item = 3 + 2 = 5 of 6 -> 5/6; C_row = 1 of 2 -> 0.5; P.O.A.: UA before DL in gold, after in pred -> 0
    assert got == {"status": "ok", "item_f1": pytest.approx(5 / 6), "row_f1": 0.5, "poa": 0.0}


def test_score_files_parse_failure_is_a_status(gold_csv):
    got = score_files(gold_csv, DATA / "truncated.json", ["Carrier"])
    assert got == {"status": "parse_failure", "item_f1": None, "row_f1": None, "poa": None,
                   "error": f"{DATA / 'truncated.json'}: invalid JSON at line 1 column 75: Unterminated string starting at"}
    got = score_files(gold_csv, DATA / "latin1.csv", ["Carrier"])
    assert got["status"] == "parse_failure"
    assert got["error"] == f"{DATA / 'latin1.csv'}: not UTF-8 text (byte 48)"


def test_score_files_empty_prediction_scores_zero(gold_csv):
    assert score_files(gold_csv, DATA / "empty.txt", ["Carrier"]) == {
        "status": "ok", "item_f1": 0.0, "row_f1": 0.0, "poa": 0.0}


def test_score_files_gold_problems_raise(tmp_path, gold_csv):
    with pytest.raises(InputError) as info:
        score_files(DATA / "prose.txt", gold_csv, ["Carrier"])
    assert str(info.value) == (f"{DATA / 'prose.txt'}: no table found: expected a pipe or Markdown table with a "
                               "header row, TSV or CSV with a header, or answer.json")
    with pytest.raises(InputError) as info:
        score_files(gold_csv, gold_csv, ["Airline"])
    assert str(info.value) == (f"{gold_csv}: key: key columns ['Airline'] are not among the gold columns "
                               "['Carrier', 'Flights', 'Share']")
    with pytest.raises(InputError, match="cannot read the file: No such file or directory"):
        score_files(gold_csv, tmp_path / "nope.csv", ["Carrier"])


@pytest.mark.parametrize(
    "text,reason",
    [
        ('{"columns": {"A": ["trim"]', "invalid JSON at line 1 column 27: Expecting ',' delimiter"),
        ('["trim"]', "a rule set is a JSON object with 'default' and 'columns', got list"),
        ('{"default": ["shout"]}', ("bad rule set: unknown rule 'shout'; known: casefold, collapse_ws, date, nfkc, "
                                   "number, strip_markdown, strip_punct, trim, regex_sub, aliases")),
        ('{"colums": {}}', "bad rule set: unknown rule-set keys ['colums']; expected 'default' and 'columns'"),
        ('{"columns": {"A": [{"regex_sub": {"pattern": "("}}]}}',
         "bad rule set: missing ), unterminated subpattern at position 0"),
    ],
)
def test_load_rules_errors_name_the_file(tmp_path, text, reason):
    path = write(tmp_path, "rules.json", text)
    with pytest.raises(InputError) as info:
        load_rules(path)
    assert str(info.value) == f"{path}: {reason}"


def test_load_rules_missing_file(tmp_path):
    with pytest.raises(InputError, match="cannot read the rules file: No such file or directory"):
        load_rules(tmp_path / "none.json")
