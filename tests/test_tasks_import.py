"""`rig tasks import`: SGR-Bench and HybridDeepResearch records (written here in their published field layout,
tests/data/import/) become task files the loader accepts; a bad record is reported by file, line, id and field
while the others import."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rig.cli import app
from rig.formats.imports import ImportReport
from rig.tasks import load_task

DATA = Path(__file__).parent / "data" / "import"
CONSTRAINT, GOAL, HDR = DATA / "sgr-constraint.jsonl", DATA / "sgr-goal.jsonl", DATA / "hdr.jsonl"


def _records(path: Path) -> dict[str, dict]:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        out[rec.get("task_id") or rec.get("id")] = rec
    return out


def _import(*args: str) -> tuple[int, ImportReport, str]:
    res = CliRunner().invoke(app, ["tasks", "import", *args, "--json"])
    return res.exit_code, ImportReport.model_validate_json(res.stdout), res.stderr


@pytest.fixture
def sgr(tmp_path):
    code, report, _ = _import("sgr-bench", str(CONSTRAINT), str(GOAL), "--out", str(tmp_path))
    return code, report, tmp_path


def test_sgr_bench_pairs_become_task_files(sgr):
    code, report, out = sgr
    assert code == 1  # some records failed: the exit code says so
    assert sorted(t.id for t in report.imported) == ["arxiv_005", "cfpb_002", "reptiles_001", "waterquality_003"]
    assert sorted(p.name for p in out.glob("*.yaml")) == ["arxiv_005.yaml", "cfpb_002.yaml", "reptiles_001.yaml",
                                                           "waterquality_003.yaml"]
    source = _records(CONSTRAINT)
    goal = _records(GOAL)

    t = load_task(out / "reptiles_001.yaml")
    rec = source["reptiles_001"]
    assert (t.family, t.start_url, t.start_hidden, t.site) == (rec["domain"], rec["start_url"], True, None)
    assert t.origins == ["reptile-database.reptarium.cz"]
    assert t.prompts.constraint.startswith(rec["instruction"]) and rec["output_format"] in t.prompts.constraint
    assert t.prompts.goal.startswith(goal["reptiles_001-g"]["instruction"])
    assert t.output.columns == ["Species", "Author", "Year"]  # rubric.normalization.schema
    assert t.output.key == ["Species"] and t.output.order == "sorted by Year in ascending order"
    assert t.gold.rows == [line.split("|") for line in rec["oracle_answer"].splitlines()[1:]]  # the header dropped
    assert t.meta["metadata"] == json.loads(rec["metadata"]) and t.meta["rubric"] == json.loads(rec["rubric"])
    assert (t.meta["task_id"], t.meta["goal_task_id"], t.meta["autonomy_type"]) == (
        "reptiles_001", "reptiles_001-g", "ordered table")
    assert not t.annotated and t.gold_states == [] and t.reference_solution == []


def test_sgr_bench_answers_none_templates_and_long_tables(sgr):
    _, report, out = sgr
    source = _records(CONSTRAINT)
    rows = {t.id: t.rows for t in report.imported}

    none = load_task(out / "cfpb_002.yaml")
    assert none.gold.rows == [] and rows["cfpb_002"] == 0  # NONE: zero rows
    assert none.output.columns == ["ID", "date"]  # from the template `Return ID|date.`
    assert none.origins == ["www.consumerfinance.gov"]
    assert none.meta["metadata"] == source["cfpb_002"]["metadata"]

    long = load_task(out / "waterquality_003.yaml")
    assert len(long.gold.rows) == 44 == rows["waterquality_003"]
    assert long.gold.rows[0] == source["waterquality_003"]["oracle_answer"].splitlines()[0].split("|")  # no header
    assert long.output.columns == ["Station", "Date", "Value (mg/L)"]
    assert long.origins == ["www.waterqualitydata.us", "nwis.waterdata.usgs.gov"]  # start page, then involved URLs
    assert long.output.order == "in ascending order of Station"

    md = load_task(out / "arxiv_005.yaml")  # upper-case id mapped; a Markdown table answer
    assert md.id == "arxiv_005" and md.meta["task_id"] == "ARXIV_005"
    assert md.gold.rows == [["1910.02551", "2019-10-06"], ["1912.07768", "2019-12-16"]]
    assert md.output.key == ["arXiv ID"]


def test_sgr_bench_bad_records_are_named_and_the_rest_import(sgr):
    _, report, out = sgr
    failed = {(Path(p.file).name, p.line, p.task_id, p.field) for p in report.failed}
    assert failed == {
        ("sgr-constraint.jsonl", 4, None, None),  # not JSON
        ("sgr-constraint.jsonl", 5, "census_004", "oracle_answer"),  # a row with an extra cell
        ("sgr-constraint.jsonl", 7, "europepmc_006", "task_id"),  # no goal record
    }
    reasons = {p.task_id: p.reason for p in report.failed}
    assert "3 cells" in reasons["census_004"] and "2 columns" in reasons["census_004"]
    assert "europepmc_006-g" in reasons["europepmc_006"]
    assert not (out / "census_004.yaml").exists()


def test_sgr_bench_reimport_keeps_files_unless_forced(sgr):
    _, _, out = sgr
    path = out / "cfpb_002.yaml"
    path.write_text(path.read_text(encoding="utf-8") + "# edited by the author\n", encoding="utf-8")
    code, report, _ = _import("sgr-bench", str(CONSTRAINT), str(GOAL), "--out", str(out))
    assert code == 1 and report.imported == [] and len(report.skipped) == 4
    assert path.read_text(encoding="utf-8").endswith("# edited by the author\n")
    code, report, _ = _import("sgr-bench", str(CONSTRAINT), str(GOAL), "--out", str(out), "--force")
    assert len(report.imported) == 4 and "# edited" not in path.read_text(encoding="utf-8")


def test_sgr_bench_pair_disagreeing_on_the_answer_names_the_goal_record(tmp_path):
    rec = _records(CONSTRAINT)["reptiles_001"]
    goal = dict(rec, task_id="reptiles_001-g", instruction="Which snakes?",
                oracle_answer="Boiga ceylonensis|Boulenger|1891")
    (tmp_path / "c.jsonl").write_text(json.dumps(rec) + "\n", encoding="utf-8")
    (tmp_path / "g.jsonl").write_text("\n" + json.dumps(goal) + "\n", encoding="utf-8")
    code, report, _ = _import("sgr-bench", str(tmp_path / "c.jsonl"), str(tmp_path / "g.jsonl"),
                              "--out", str(tmp_path / "out"))
    assert code == 1 and report.imported == []
    [p] = report.failed
    assert (Path(p.file).name, p.line, p.task_id, p.field) == ("g.jsonl", 2, "reptiles_001-g", "oracle_answer")


def test_unreadable_dataset_file_is_bad_input(tmp_path):
    res = CliRunner().invoke(app, ["tasks", "import", "sgr-bench", str(tmp_path / "missing.jsonl"), str(GOAL),
                                   "--out", str(tmp_path / "out")])
    assert res.exit_code == 2
    assert "missing.jsonl" in res.stderr and "cannot read" in res.stderr
    assert not (tmp_path / "out").exists()


def _databases(folder: Path, *names: str) -> None:
    """SQLite files named as HybridDeepResearch's databases (LiveSQLBench's), where the imported tasks look for them."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        with sqlite3.connect(folder / f"{name}.sqlite") as db:
            db.execute("CREATE TABLE flows (id INTEGER, reliability REAL)")


def test_hybrid_deep_research_records_become_hidden_start_tasks(tmp_path):
    _databases(tmp_path, "cyber_1", "news", "cross_db")
    code, report, _ = _import("hybrid-deep-research", str(HDR), "--out", str(tmp_path))
    assert code == 1
    assert [(p.line, p.task_id, p.field) for p in report.failed] == [(5, "mixed_007", "hybrid_type")]
    source = _records(HDR)

    s2sql = load_task(tmp_path / "s2sql_000.yaml")
    rec = source["s2sql_000"]
    assert (s2sql.hybrid_type, s2sql.db, s2sql.gold_sql) == ("search_to_sql", "cyber_1.sqlite", rec["sql"])
    assert s2sql.start_hidden and s2sql.start_url is None and s2sql.site is None
    assert s2sql.start_at("http://127.0.0.1:1") == "about:blank"
    assert s2sql.prompts.goal == rec["final_question"]
    assert s2sql.prompts.constraint == f"{rec['final_question']}\n\nHint: {rec['hint']}"
    assert (s2sql.output.columns, s2sql.gold.rows) == (["Answer"], [["0.87"]])
    assert s2sql.meta["sql_knowledge_id"] == [3, 7] and s2sql.family == "cyber_1"

    sql2s = load_task(tmp_path / "sql2s_136.yaml")
    assert sql2s.hybrid_type == "sql_to_search" and sql2s.prompts.constraint == sql2s.prompts.goal  # empty hint
    assert sql2s.gold.rows == [["powidl"]]
    assert load_task(tmp_path / "parallel_106.yaml").hybrid_type == "parallel"
    assert load_task(tmp_path / "parallel_106.yaml").gold.rows == [["Vermont"]]

    table = load_task(tmp_path / "s2sql_201.yaml")  # a table of row objects, JSON-encoded in a string
    assert table.output.columns == ["carrier", "flights"] and table.output.key == ["carrier"]
    assert table.gold.rows == [["EV", "51108"], ["MQ", "25163"]]


@pytest.mark.parametrize("answer", ["NONE", "none.\n"])
def test_an_answer_of_none_matches_a_zero_row_gold(sgr, answer):
    _, _, out = sgr
    task = load_task(out / "cfpb_002.yaml")
    gold, pred = out / "gold.json", out / "pred.md"
    gold.write_text(json.dumps({"columns": task.output.columns, "rows": task.gold.rows}), encoding="utf-8")
    pred.write_text(answer, encoding="utf-8")
    res = CliRunner().invoke(app, ["score", "--gold", str(gold), "--pred", str(pred), "--key", "ID", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout) == {"status": "ok", "item_f1": 1.0, "row_f1": 1.0, "poa": 0.0}


def test_a_hybrid_deep_research_database_must_be_a_sqlite_file_in_the_task_folder(tmp_path):
    """A record's `db` names a database the rig does not bundle: the task needs its SQLite file beside it; a `db` that
    leads out of the folder, or a file that is no database, is reported (field `db`), the rest imported."""
    rec = _records(HDR)["sql2s_136"]
    out = tmp_path / "out"
    _databases(out, "news")
    (out / "notes.db").write_text("not a database", encoding="utf-8")
    (tmp_path / "outside.sqlite").write_bytes((out / "news.sqlite").read_bytes())
    dbs = ["news", "flights", "cyber_1", "../outside.sqlite", "/etc/passwd", "notes.db"]
    lines = [json.dumps(dict(rec, id=f"sql2s_{i}", db=db)) for i, db in enumerate(dbs)]
    (tmp_path / "hdr.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, report, _ = _import("hybrid-deep-research", str(tmp_path / "hdr.jsonl"), "--out", str(out))
    assert code == 1
    assert [(t.id, load_task(t.file).db) for t in report.imported] == [("sql2s_0", "news.sqlite"), ("sql2s_1", "flights")]
    failed = {p.task_id: (p.line, p.field, p.reason) for p in report.failed}
    assert {k: v[:2] for k, v in failed.items()} == {"sql2s_2": (3, "db"), "sql2s_3": (4, "db"), "sql2s_4": (5, "db"),
                                                      "sql2s_5": (6, "db")}
    assert "'cyber_1.sqlite': no such file" in failed["sql2s_2"][2] and "put the SQLite database there" in failed["sql2s_2"][2]
    assert "outside the task's folder" in failed["sql2s_3"][2] and "absolute path" in failed["sql2s_4"][2]
    assert "not a SQLite database" in failed["sql2s_5"][2]
    assert sorted(p.name for p in out.glob("*.yaml")) == ["sql2s_0.yaml", "sql2s_1.yaml"]


BAD_IDS = {  # source id -> why no file can be named after it
    "r" * 300: "at most 128",  # the file name would be too long for the file system
    "a" * 129: "at most 128",
    "CON": "device name Windows reserves",
    "nul.txt": "device name Windows reserves",
    "../..": "no usable task id",  # nothing is left of it
    "/\x00/": "no usable task id",
}
SAFE_IDS = {"../../etc/passwd": "etc-passwd", "a/b\\c": "a-b-c", "x\x00y": "x-y", "v1.0.": "v1.0"}


@pytest.mark.parametrize("dataset", ["sgr-bench", "hybrid-deep-research"])
def test_record_ids_that_cannot_name_a_file_are_reported_and_the_rest_import(tmp_path, dataset):
    """An over-long id used to end the import with `OSError: File name too long` and no report; ids that are path
    separators, `..`, NUL, reserved device names or that collide (in another case) with an earlier record's are
    reported each with its file, line, id and field, and every other record is written."""
    ids = [*BAD_IDS, *SAFE_IDS, "Twin_1", "twin_1"]
    if dataset == "sgr-bench":
        rec = _records(CONSTRAINT)["reptiles_001"]
        goal = _records(GOAL)["reptiles_001-g"]
        files = [tmp_path / "c.jsonl", tmp_path / "g.jsonl"]
        files[0].write_text("".join(json.dumps(dict(rec, task_id=i)) + "\n" for i in ids), encoding="utf-8")
        files[1].write_text("".join(json.dumps(dict(goal, task_id=f"{i}-g")) + "\n" for i in ids), encoding="utf-8")
        field = "task_id"
    else:
        _databases(tmp_path / "out", "news")
        rec = _records(HDR)["sql2s_136"]
        files = [tmp_path / "hdr.jsonl"]
        files[0].write_text("".join(json.dumps(dict(rec, id=i)) + "\n" for i in ids), encoding="utf-8")
        field = "id"
    code, report, _ = _import(dataset, *map(str, files), "--out", str(tmp_path / "out"))
    assert code == 1
    failed = [(Path(p.file).name, p.line, p.task_id, p.field) for p in report.failed]
    assert failed == [(files[0].name, n, i, field) for n, i in enumerate(ids, 1) if i in BAD_IDS or i == "twin_1"]
    reasons = {p.task_id: p.reason for p in report.failed}
    for source_id, why in BAD_IDS.items():
        assert why in reasons[source_id], (source_id, reasons[source_id])
    assert "already taken by 'Twin_1'" in reasons["twin_1"]
    assert sorted(t.id for t in report.imported) == sorted([*SAFE_IDS.values(), "twin_1"])
    assert sorted(p.name for p in (tmp_path / "out").glob("*.yaml")) == sorted(f"{t}.yaml" for t in [*SAFE_IDS.values(), "twin_1"])
    res = CliRunner().invoke(app, ["tasks", "validate", *(t.file for t in report.imported)])
    assert res.exit_code == 0, res.output
