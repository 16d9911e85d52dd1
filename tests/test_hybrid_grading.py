"""Grading hybrid and discovery episodes: execution match on the real bundled database (correct, reordered columns,
wrong, missing and writing SQL; SQL from the answer, the final_answer call or the trajectory), the answer table
or a scripted LLM judge for the other types, site_found, and Pass@k / Avg@k per hybrid type in the summary."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from test_grading_states import step, write_episode

from rig.errors import InfraError
from rig.formats.grade import Grade
from rig.grading.grade import grade_episode
from rig.grading.hybrid import compare_results
from rig.grading.judge import PROMPT, LLMJudge, parse_reply
from rig.grading.summary import markdown, summarize
from rig.tasks import resolve_task
from rig.tools.databases import db_path

SITES = "http://127.0.0.1:8765"
S2SQL = resolve_task("hybrid-s2sql-04")
SQL2S = resolve_task("hybrid-sql2s-03")
DISCOVER = resolve_task("discover-flights-01")


def _call(tool: str, args: dict[str, Any], ok: bool = True, url: str = "about:blank") -> dict[str, Any]:
    path = url.split("127.0.0.1:8765", 1)[1] if "127.0.0.1:8765" in url else ""
    return {**step({"url.path": path}, f"{tool} result", action=tool, url=url), "value": {
        "args": args, "result": {"ok": ok, "digest": "0" * 64, "chars": 10, "error": None if ok else "refused"}}}


def _episode(directory: Path, task_id: str, calls: list[dict[str, Any]], answer: dict[str, Any] | None,
             status: str = "ok") -> Path:
    write_episode(directory, calls, answer, status=status, agent="mcp", variant="goal", task_id=task_id)
    lines = (directory / "trajectory.jsonl").read_text().splitlines()
    out = []
    for line, call in zip(lines, calls):
        rec = json.loads(line)
        rec["action"]["value"] = call.get("value")
        out.append(json.dumps(rec))
    (directory / "trajectory.jsonl").write_text("\n".join(out) + "\n")
    return directory


def _table(columns: list[str], rows: list[list[str]]) -> dict[str, Any]:
    return {"columns": columns, "rows": rows, "citations": []}


GOLD_ANSWER = _table(S2SQL.output.columns, S2SQL.gold.rows)
FETCH_ORD = _call("web_fetch", {"url": f"{SITES}/flights/airport/ORD"}, url=f"{SITES}/flights/airport/ORD")
JOIN = ("FROM flights f JOIN weather w ON w.origin = f.origin AND w.year = f.year AND w.month = f.month "
        "AND w.day = f.day AND w.hour = f.hour")


def _grade(tmp_path: Path, name: str, calls: list[dict[str, Any]], answer: dict[str, Any] | None = GOLD_ANSWER,
           task=S2SQL, **kw: Any) -> Grade:
    return grade_episode(_episode(tmp_path / name, task.id, calls, answer, **kw), task)


def test_correct_sql_from_the_trajectory_matches(tmp_path):
    g = _grade(tmp_path, "ok", [FETCH_ORD, _call("run_sql", {"sql": S2SQL.gold_sql, "description": "gold"})])
    assert g.hybrid_type == "search_to_sql" and g.hybrid.decided_by == "execution_match"
    ex = g.hybrid.execution
    assert ex.matched and ex.source == "trajectory" and ex.step == 1 and ex.gold_rows == ex.pred_rows == 3
    assert g.passed and g.scored


def test_reordered_renamed_columns_unrounded_numbers_and_case_still_match(tmp_path):
    sql = (f"SELECT AVG(f.dep_delay) AS mean_delay, COUNT(*) AS n, LOWER(f.origin) AS airport, 42 AS extra {JOIN} "
           "WHERE f.dest = 'ORD' AND w.visib < 1 GROUP BY f.origin ORDER BY n DESC")
    g = _grade(tmp_path, "reordered", [_call("run_sql", {"sql": sql})])
    ex = g.hybrid.execution
    assert ex.matched, ex.reason
    assert ex.columns == [2, 1, 0] and "1 extra column ignored" in ex.reason and g.passed


def test_wrong_sql_does_not_match(tmp_path):
    wrong = S2SQL.gold_sql.replace("'ORD'", "'MDW'")
    g = _grade(tmp_path, "wrong", [_call("run_sql", {"sql": wrong})])
    assert not g.hybrid.execution.matched and not g.passed
    assert g.scores.row_f1 == 1.0, "the answer table alone would have passed: execution match decides"
    fewer = f"SELECT f.origin, COUNT(*) {JOIN} WHERE f.dest = 'ORD' AND w.visib < 1 AND f.origin != 'JFK' GROUP BY 1"
    g = _grade(tmp_path, "fewer", [_call("run_sql", {"sql": fewer})])
    assert g.hybrid.execution.reason == "the agent's result has 2 rows, the gold result 3"
    no_avg = f"SELECT f.origin, COUNT(*) {JOIN} WHERE f.dest = 'ORD' AND w.visib < 1 GROUP BY 1"
    g = _grade(tmp_path, "no-avg", [_call("run_sql", {"sql": no_avg})])
    assert "no column of the agent's result holds the values of gold column(s) ['avg_dep_delay']" in g.hybrid.execution.reason


def test_the_last_successful_run_sql_counts(tmp_path):
    wrong = S2SQL.gold_sql.replace("'ORD'", "'MDW'")
    calls = [_call("run_sql", {"sql": S2SQL.gold_sql}), _call("run_sql", {"sql": wrong}),
             _call("run_sql", {"sql": "DELETE FROM flights"}, ok=False)]
    g = _grade(tmp_path, "last", calls)
    assert g.hybrid.execution.step == 1 and not g.hybrid.execution.matched


def test_missing_sql(tmp_path):
    g = _grade(tmp_path, "missing", [FETCH_ORD, _call("run_sql", {"sql": "SELEC nonsense"}, ok=False)])
    ex = g.hybrid.execution
    assert ex.source is None and not ex.matched and "ran no successful SQL" in ex.reason and not g.passed


def test_sql_from_the_answer_and_from_the_final_answer_call(tmp_path):
    g = _grade(tmp_path, "answer", [FETCH_ORD], {**GOLD_ANSWER, "sql": S2SQL.gold_sql})
    assert g.hybrid.execution.source == "answer" and g.hybrid.execution.matched
    text = "| Origin | Flights |\n|---|---|\n| EWR | 49 |\n\n```sql\n" + S2SQL.gold_sql + "```\n"
    calls = [_call("run_sql", {"sql": "SELECT 1"}), _call("final_answer", {"answer": text})]
    g = _grade(tmp_path, "final", calls)
    assert g.hybrid.execution.source == "final_answer" and g.hybrid.execution.step == 1 and g.hybrid.execution.matched


def test_an_agent_sql_that_writes_is_refused_and_the_database_unchanged(tmp_path):
    path = db_path("flights")
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    g = _grade(tmp_path, "writes", [FETCH_ORD], {**GOLD_ANSWER, "sql": "DELETE FROM flights WHERE dest = 'ORD'"})
    assert not g.hybrid.execution.matched and "refused" in g.hybrid.execution.reason
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


def test_a_matching_sql_does_not_pass_an_episode_that_timed_out(tmp_path):
    g = _grade(tmp_path, "timeout", [_call("run_sql", {"sql": S2SQL.gold_sql})], None, status="timeout")
    assert g.hybrid.execution.matched and not g.passed


def test_compare_results_rounds_to_the_gold_precision():
    assert compare_results(["a", "b"], [("X", 21.9)], ["b", "a"], [(21.94, "x")])[0]
    assert not compare_results(["a", "b"], [("X", 21.9)], ["b", "a"], [(21.96, "x")])[0]
    assert compare_results(["n"], [(3,)], ["n"], [("3",)])[0]
    assert not compare_results(["a", "b"], [("x", 1), ("y", 2)], ["a", "b"], [("x", 2), ("y", 1)])[0]


def _sql2s_calls() -> list[dict[str, Any]]:
    return [_call("run_sql", {"sql": "SELECT country FROM indicators WHERE year = 2007 ORDER BY life_exp LIMIT 1"}),
            _call("web_fetch", {"url": f"{SITES}/stats/country/Swaziland"}, url=f"{SITES}/stats/country/Swaziland")]


def test_sql_to_search_is_decided_by_the_answer_table(tmp_path):
    good = _grade(tmp_path, "good", _sql2s_calls(), _table(["Country", "Continent"], [["swaziland", "AFRICA"]]),
                  task=SQL2S)
    assert good.hybrid.decided_by == "answer_table" and good.passed and good.hybrid.execution is None
    bad = _grade(tmp_path, "bad", _sql2s_calls(), _table(["Country", "Continent"], [["Swaziland", "Asia"]]), task=SQL2S)
    assert not bad.passed


class _ScriptedCompletion:
    """A completion function answering from a fixed reply, keeping the prompts it was given."""

    def __init__(self, reply: str) -> None:
        self.reply, self.prompts = reply, []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return self.reply


def test_an_llm_judge_decides_when_given(tmp_path):
    calls = [*_sql2s_calls(), _call("final_answer", {"answer": "It is Swaziland, in southern Africa."})]
    yes = _ScriptedCompletion("extracted_final_answer: Swaziland, Africa\nreasoning: same country and continent\n"
                              "correct: yes")
    ep = _episode(tmp_path / "judged", SQL2S.id, calls, _table(["Country", "Continent"], [["Swaziland", "Africa"]]))
    g = grade_episode(ep, SQL2S, judge=LLMJudge(yes, "scripted:judge"))
    assert g.hybrid.decided_by == "judge" and g.passed
    assert g.hybrid.judge.model == "scripted:judge" and g.hybrid.judge.extracted_answer == "Swaziland, Africa"
    assert "It is Swaziland, in southern Africa." in yes.prompts[0] and "Swaziland | Africa" in yes.prompts[0]
    no = _ScriptedCompletion("extracted_final_answer: Swaziland\nreasoning: the continent is missing\ncorrect: no")
    assert not grade_episode(ep, SQL2S, judge=LLMJudge(no, "scripted:judge")).passed


def test_a_judge_reply_without_a_verdict_is_an_infrastructure_error():
    with pytest.raises(InfraError, match="gave no `correct: yes|no` line"):
        parse_reply("I think it is fine.", "scripted:judge")
    assert "[correct_answer]" in PROMPT


def test_site_found_and_when(tmp_path):
    calls = [_call("web_search", {"query": "nyc 2013 flights"}),
             _call("web_fetch", {"url": f"{SITES}/web/flight-delays-blog.html"}, url=f"{SITES}/web/flight-delays-blog.html"),
             _call("web_fetch", {"url": f"{SITES}/flights/carrier/EV"}, url=f"{SITES}/flights/carrier/EV")]
    answer = _table(DISCOVER.output.columns, DISCOVER.gold.rows)
    g = _grade(tmp_path, "found", calls, answer, task=DISCOVER)
    assert g.site_found is True and g.site_found_step == 2 and g.hybrid is None and g.hybrid_type is None
    assert g.gold_states[0].reached and g.gold_states[0].step == 2
    g = _grade(tmp_path, "lost", calls[:2], answer, task=DISCOVER)
    assert g.site_found is False and g.site_found_step is None
    shown = resolve_task("flights-01")
    g = grade_episode(_episode(tmp_path / "shown", shown.id, calls, None), shown)
    assert g.site_found is None


def _g(task: str, kind: str | None, trial: int, passed: bool, site_step: int | None = None) -> Grade:
    return Grade(episode=f"/runs/{task}/{trial}", task_id=task, agent="mcp", variant="goal", trial=trial, status="ok",
                 scored=True, passed=passed, hybrid_type=kind, site_found=site_step is not None, site_found_step=site_step)


def test_summary_gives_pass_and_avg_at_k_per_hybrid_type():
    grades = [_g("s1", "search_to_sql", 0, True, 2), _g("s1", "search_to_sql", 1, False, 4),
              _g("s2", "search_to_sql", 0, False), _g("s2", "search_to_sql", 1, False),
              _g("p1", "parallel", 0, True, 1), _g("p1", "parallel", 1, True, 3)]
    summary = summarize(grades, "/runs")
    group = summary.groups[0]
    s2sql, par = group.hybrid["search_to_sql"], group.hybrid["parallel"]
    assert (s2sql.episodes, s2sql.passed, par.passed) == (4, 1, 2)
    assert s2sql.passk == {"pass@1": 0.25, "avg@1": 0.25, "pass@2": 0.5, "avg@2": 0.25}
    assert par.passk["pass@2"] == 1.0 and "sql_to_search" not in group.hybrid
    assert group.hidden_start == 6 and group.site_found == pytest.approx(4 / 6) and group.site_found_step == 2.5
    md = markdown(summary)
    assert "## Hybrid web+SQL tasks (Pass@k and Avg@k per type)" in md
    assert "| mcp | goal | search_to_sql | 4 | 4 | 1 | 25.00 | 25.00 | 50.00 (k=2) | 25.00 |" in md
    assert "| mcp | goal | 6 | 66.67 | 2.5 |" in md


def test_rig_grade_with_a_judge_over_a_local_model_server(tmp_path, monkeypatch):
    """`rig grade --judge ollama:MODEL` against a real HTTP server on 127.0.0.1 speaking Ollama's chat API: the judge
    decides the sql_to_search episode, execution match still decides the search_to_sql one, and dropping the judge
    regrades the judged episode by its answer table."""
    from server import TestServer
    from typer.testing import CliRunner

    from rig.cli import app
    from rig.episode_dir import EpisodeDir

    runs = tmp_path / "runs"
    judged = _episode(runs / SQL2S.id / "goal" / "mcp" / "trial-0", SQL2S.id,
                      [*_sql2s_calls(), _call("final_answer", {"answer": "Swaziland, Africa"})],
                      _table(["Country", "Continent"], [["Swaziland", "Asia"]]))
    matched = _episode(runs / S2SQL.id / "goal" / "mcp" / "trial-0", S2SQL.id,
                       [_call("run_sql", {"sql": S2SQL.gold_sql})], GOLD_ANSWER)
    asked: list[dict[str, Any]] = []

    def chat(ex):
        asked.append(json.loads(ex.request.body))
        ex.send_json({"model": "judge", "created_at": "2026-01-01T00:00:00Z", "done": True,
                      "message": {"role": "assistant", "content": "extracted_final_answer: Swaziland, Africa\n"
                                                                  "reasoning: matches\ncorrect: yes"}})
    with TestServer() as srv:
        srv.set_route("/api/chat", chat)
        monkeypatch.setenv("OLLAMA_HOST", srv.url)
        res = CliRunner().invoke(app, ["grade", str(runs), "--judge", "ollama:judge", "--jobs", "1", "--json"])
        assert res.exit_code == 0, res.output
    g = EpisodeDir(judged).read_grade()
    assert g.hybrid.decided_by == "judge" and g.hybrid.judge.model == "ollama:judge" and g.passed
    assert len(asked) == 1 and asked[0]["model"] == "judge" and "Swaziland, Africa" in json.dumps(asked[0])
    assert EpisodeDir(matched).read_grade().hybrid.decided_by == "execution_match"
    summary = json.loads(res.stdout)
    assert summary["groups"][0]["hybrid"]["sql_to_search"]["passed"] == 1
    res = CliRunner().invoke(app, ["grade", str(runs), "--jobs", "1"])
    assert res.exit_code == 0, res.output
    g = EpisodeDir(judged).read_grade()
    assert g.hybrid.decided_by == "answer_table" and not g.passed, "the table says Asia: wrong without the judge"
