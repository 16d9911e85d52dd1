"""Evidence records in task files, answers and action scripts: valid forms load, broken ones name the field."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from rig.agents.perturbed import perturb_answer
from rig.agents.reference import gold_mismatch
from rig.agents.scripted import Table, compose_answer
from rig.errors import ScriptError, TaskError
from rig.formats.actions import parse_actions
from rig.formats.answer import Answer
from rig.formats.answer_text import ParseFailure, parse_table
from rig.formats.records import SubmittedRecord
from rig.tasks import load_task

DATA = Path(__file__).parent / "data" / "tasks"
VALID = yaml.safe_load((DATA / "valid.yaml").read_text())
RECORDS = {
    "hierarchy": {"root": {"key": "carrier", "required": 2, "child": {"key": "url"}}},
    "answer": "the carrier's flights",
    "answer_rules": ["trim", "number"],
    "gold": [{"item": {"carrier": "B6"}, "answer": "71"}, {"item": {"carrier": "AA"}, "answer": "54"}],
}


def _task(tmp_path: Path, **changes) -> Path:
    data = copy.deepcopy(VALID)
    for k, v in changes.items():
        if v is None:
            data.pop(k, None)
        else:
            data[k] = v
    path = tmp_path / "task.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_records_only_and_both_load(tmp_path):
    both = load_task(_task(tmp_path, records=RECORDS))
    assert both.output is not None and both.records.required_facts(None) == ["carrier", "answer"]
    only = load_task(_task(tmp_path, records=RECORDS, output=None, gold=None))
    assert only.output is None and only.gold is None
    assert "evidence records" in only.prompt("goal") and "Answer as a table" not in only.prompt("goal")


def _bad(records: dict, path: str, value) -> dict:
    out = copy.deepcopy(records)
    node = out
    *parents, last = path.split(".")
    for p in parents:
        node = node[int(p)] if isinstance(node, list) else node[p]
    node[last] = value
    return out


@pytest.mark.parametrize("changes,field,reason", [
    ({"output": None, "gold": None}, "output", "needs an answer table (`output` and `gold`), `records`, or both"),
    ({"gold": None, "records": RECORDS}, "gold", "an answer table needs both `output` and `gold`"),
    ({"records": _bad(RECORDS, "hierarchy.root.child", None)}, "records.hierarchy.root",
     "level 'carrier' needs a child level"),
    ({"records": _bad(RECORDS, "hierarchy.root.required", 0)}, "records.hierarchy.root.required",
     "greater than or equal to 1"),
    ({"records": _bad(RECORDS, "facts", ["answer", "city"])}, "records.facts[1]", "neither `answer` nor an item axis"),
    ({"records": _bad(RECORDS, "gold.1.item", {"city": "x"})}, "records.gold[1].item", "missing ['carrier']"),
    ({"records": _bad(RECORDS, "gold.0.subtask", "extra")}, "records.gold[0].subtask", "unknown subtask 'extra'"),
    ({"records": _bad(RECORDS, "hierarchy.axes", {"city": {"fuzzy": 80}})}, "records.hierarchy.axes.city",
     "not a key of any level"),
    ({"records": {k: v for k, v in RECORDS.items() if k != "answer"}}, "records.answer", "Field required"),
])
def test_broken_record_tasks_name_the_field(tmp_path, changes, field, reason):
    with pytest.raises(TaskError) as info:
        load_task(_task(tmp_path, **changes))
    assert info.value.field == field, info.value
    assert reason in info.value.reason


def test_answer_with_records_only_parses():
    a = parse_table('{"records": [{"item": {"carrier": "B6"}, "url": "http://h/s", "excerpts": ["B6 71"], '
                    '"answer": "71"}]}', "answer.json")
    assert a.columns == [] and a.rows == [] and a.records[0].item == {"carrier": "B6"}


@pytest.mark.parametrize("text,message", [
    ('{"records": [{"url": "http://h/s"}]}', "answer.json field records.0.item: Field required"),
    ('{"records": [{"item": {"carrier": "B6"}}]}', "answer.json field records.0.url: Field required"),
    ('{"records": [{"item": {"carrier": "B6"}, "url": "u", "excerpts": "B6 71"}]}',
     "answer.json field records.0.excerpts: Input should be a valid list"),
    ('{"records": [{"item": {"carrier": "B6"}, "url": "u", "quote": "x"}]}',
     "answer.json field records.0.quote: Extra inputs are not permitted"),
])
def test_bad_record_answers_name_the_field(text, message):
    with pytest.raises(ParseFailure) as info:
        parse_table(text, "answer.json")
    assert message in str(info.value)


def test_answer_verb_builds_records_from_rows():
    (act,) = parse_actions([{"answer": {"from": "t", "columns": ["Carrier"], "sort_by": [{"column": "Carrier"}],
                                        "records": {"item": {"carrier": "Carrier", "origin": "Origin"},
                                                    "answer": "Flights"}}}])
    t = Table(columns=["Carrier", "Flights", "Origin"], rows=[["DL", "48", "JFK"], ["B6", "71", "JFK"]],
              urls=["http://h/a", "http://h/b"], texts=["DL 48", "B6 71"])
    a = compose_answer({"t": t}, act.answer)
    assert a.rows == [["B6"], ["DL"]]
    assert a.records == [SubmittedRecord(item={"carrier": "B6", "origin": "JFK"}, url="http://h/b", excerpts=["B6 71"],
                                         answer="71"),
                         SubmittedRecord(item={"carrier": "DL", "origin": "JFK"}, url="http://h/a", excerpts=["DL 48"],
                                         answer="48")]
    (only,) = parse_actions([{"answer": {"from": "t", "records": {"item": {"carrier": "Carrier"}}, "limit": 1,
                                         "sort_by": [{"column": "Flights", "desc": True, "numeric": True}]}}])
    a = compose_answer({"t": t}, only.answer)
    assert (a.columns, a.rows, a.citations) == ([], [], []) and [r.item["carrier"] for r in a.records] == ["B6"]


def test_answer_verb_needs_columns_or_records():
    with pytest.raises(ScriptError) as info:
        parse_actions([{"answer": {"from": "t"}}])
    assert info.value.field == "[0].answer" and "`columns` (a table), `records`, or both" in info.value.reason
    with pytest.raises(ScriptError) as info:
        parse_actions([{"answer": {"from": "t", "records": {"item": {}}}}])
    assert info.value.field == "[0].answer.records.item"


def test_gold_mismatch_and_perturbation_on_records(tmp_path):
    task = load_task(_task(tmp_path, records=RECORDS, output=None, gold=None))
    recs = [SubmittedRecord(item={"carrier": "B6"}, url="u", excerpts=["B6 71"], answer="71"),
            SubmittedRecord(item={"carrier": "aa "}, url="u", excerpts=["AA 54"], answer="54")]
    assert gold_mismatch(task, Answer(records=recs)) is None
    misread = perturb_answer(task, "page_misreading", Answer(records=recs))
    assert [r.answer for r in misread.records] == ["54", "71"]
    assert "missing" in gold_mismatch(task, misread)
