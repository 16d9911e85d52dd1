"""The tool server's data tools over MCP, called by the `mcp` SDK's client in another process (as a `--agent cli`
command): a hidden-start hybrid task found with `web_search`, answered with read-only `run_sql` (every write,
ATTACH and stacked statement refused, the database file unchanged), the knowledge catalog, and PDFs read with
`web_fetch` and `pdf_read` through the recorded browser."""

from __future__ import annotations

import hashlib
import json
import shlex
import sys
from pathlib import Path

import pytest
import yaml
from fpdf import FPDF
from test_mcp_agent import CLIENT, LONG, _steps, _tool_records

from rig.agents.base import Budget
from rig.agents.cli_agent import CliAgent
from rig.episode_dir import EpisodeDir
from rig.grading.runs import grade_runs
from rig.runner.local import run_local
from rig.runner.spec import EpisodeSpec
from rig.tasks import load_task
from rig.tools.databases import db_path
from rig.tools.sql import run_sql

GOLD_SQL = ("SELECT substr(date, 1, 4) AS year, round(sum(precipitation), 1) AS total FROM daily_weather "
            "GROUP BY year ORDER BY year")
WRITES = [
    "INSERT INTO daily_weather (date) VALUES ('2099-01-01')",
    "DROP TABLE daily_weather",
    "UPDATE daily_weather SET precipitation = 0",
    "ATTACH DATABASE '/tmp/x.sqlite' AS x",
    "SELECT 1; DELETE FROM daily_weather",
    "PRAGMA user_version = 7",
]


def _pdf() -> bytes:
    doc = FPDF()
    for text in ("Annual report: the first page", "Seattle rainfall table on the second page"):
        doc.add_page()
        doc.set_font("helvetica", size=14)
        doc.cell(text=text)
    return bytes(doc.output())


def _task_file(tmp_path: Path) -> Path:
    result = run_sql(db_path("eco"), GOLD_SQL)
    task = {
        "id": "hybrid-mcp-test", "family": "environmental monitoring", "start_hidden": True,
        "hybrid_type": "search_to_sql", "db": "eco", "gold_sql": GOLD_SQL,
        "prompts": {"constraint": "Find the site with Seattle's daily weather, then total the precipitation of each "
                                  "year in the eco database.",
                    "goal": "How much did it rain in Seattle each year?"},
        "output": {"columns": ["year", "total"], "key": ["year"], "order": "year ascending"},
        "gold": {"rows": [[str(c) for c in row] for row in result.rows]},
    }
    path = tmp_path / "hybrid-mcp-test.yaml"
    path.write_text(yaml.safe_dump(task, sort_keys=False))
    return path


@pytest.fixture
def pdf_url(pages_server):
    data = _pdf()
    pages_server.set_route("/report.pdf", lambda ex: ex.send(200, data, "application/pdf"))
    return f"{pages_server.url}/report.pdf"


async def test_a_cli_agent_answers_a_hybrid_task_with_search_sql_knowledge_and_pdfs(tmp_path, sites_url, pdf_url, browser):
    task = load_task(_task_file(tmp_path))
    database = db_path("eco")
    before = hashlib.sha256(database.read_bytes()).hexdigest()
    calls = [
        {"tool": "web_search", "args": {"query": "Seattle daily weather precipitation", "count": 5}},
        {"tool": "web_search", "args": {"query": "", "count": 5}},
        {"tool": "get_all_external_knowledge_names", "args": {}},
        {"tool": "get_knowledge_definition", "args": {"knowledge_name": "no such entry at all"}},
        *({"tool": "run_sql", "args": {"sql": sql, "description": "a write"}} for sql in WRITES),
        {"tool": "run_sql", "args": {"sql": "SELECT count(*) FROM daily_weather"}, "save": "n",
         "regex": r"(\d{3,})"},
        {"tool": "run_sql", "args": {"sql": GOLD_SQL, "description": "rain per year"}, "save": "table",
         "regex": r"([\s\S]+)"},
        {"tool": "web_fetch", "args": {"url": pdf_url}},
        {"tool": "pdf_read", "args": {"source": pdf_url, "pages": "2"}},
        {"tool": "pdf_read", "args": {"source": pdf_url, "pages": "9"}},
        {"tool": "pdf_read", "args": {"source": "file:///etc/passwd"}},
        {"tool": "final_answer", "args": {"answer": "{table}"}},
    ]
    calls_file, out = tmp_path / "calls.json", tmp_path / "results.json"
    calls_file.write_text(json.dumps(calls))
    agent = CliAgent(f"{shlex.quote(sys.executable)} {shlex.quote(CLIENT)} {shlex.quote(str(calls_file))} "
                     f"--out {shlex.quote(str(out))}")
    spec = EpisodeSpec(task, "constraint", agent.name, 0)
    [ep] = await run_local([spec], agent, tmp_path / "runs", sites_url=sites_url,
                           budget=Budget(max_steps=60, timeout_s=LONG, stall_s=LONG), browser=browser)
    d = spec.directory(tmp_path / "runs").path
    assert ep.status == "ok", (ep.error, EpisodeDir(d).agent_log_file.read_text()[-3000:])
    results = {i: r for i, r in enumerate(json.loads(out.read_text()))}

    search = results[0]
    assert not search["is_error"] and f"{sites_url}/eco/" in search["text"], search["text"]
    assert results[1]["is_error"]
    assert not results[2]["is_error"] and results[2]["text"].strip()
    assert results[3]["is_error"] and "no knowledge entry" in results[3]["text"]
    writes = [results[4 + i] for i in range(len(WRITES))]
    assert all(r["is_error"] for r in writes), [r["text"] for r in writes]
    assert hashlib.sha256(database.read_bytes()).hexdigest() == before, "the database is unchanged"
    count, table = results[4 + len(WRITES)], results[5 + len(WRITES)]
    assert not count["is_error"] and not table["is_error"] and "Rows: " in table["text"]
    fetched, page2, past, local = (results[6 + len(WRITES) + i] for i in range(4))
    assert "Annual report" in fetched["text"] and "Seattle rainfall" in fetched["text"]
    assert "Seattle rainfall" in page2["text"] and "Annual report" not in page2["text"]
    assert past["is_error"] and "out of range" in past["text"]
    assert local["is_error"] and "only http(s)" in local["text"]

    steps = _steps(d)
    sql_steps = [s for s in steps if s["action"]["type"] == "run_sql"]
    assert [s["action"]["value"]["result"]["ok"] for s in sql_steps] == [False] * len(WRITES) + [True, True]
    assert sql_steps[-1]["action"]["value"]["args"] == {"sql": GOLD_SQL, "description": "rain per year"}
    records = _tool_records(d)
    assert records[f"urn:sgr-rig:tool/{sql_steps[-1]['step']}/run_sql"].decode() == table["text"]
    assert any(s["action"]["type"] == "web_fetch" and s["url"] == pdf_url for s in steps), "the PDF was a page load"
    assert "The browser is open at" not in EpisodeDir(d).prompt_file.read_text(), "a hidden start names no site"

    summary = grade_runs(tmp_path / "runs")
    assert summary.ungraded == 0
    grade = EpisodeDir(d).read_grade()
    assert grade.hybrid is not None and grade.hybrid.decided_by == "execution_match" and grade.hybrid.passed
