"""Live runs from the command line on the offline web (tests/liveweb.py): a start_url task on a portal that is not a
bundled site, reached by name with `--resolve` over HTTPS; graded from its files (state metrics null when the task
has no gold states, real numbers with raw-key gold states); refused without `--live`; hidden starts; site adapters
named by the task file; politeness (rate limit, concurrency cap, 429 backoff, user agent); `rig record --live`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from rig.episode_dir import EpisodeDir

RIG = Path(sys.executable).parent / "rig"
START = "https://portal.example.org/search"
#: The portal's datasets from 2020 on, read off the results table.
SCRIPT = [
    {"select": {"selector": "#kind", "value": "dataset"}},
    {"fill": {"selector": "#year_from", "value": "2020"}},
    {"click": "text=Search"},
    {"wait_for": "table#results tbody tr"},
    {"extract_table": {"selector": "table#results", "as": "results"}},
    {"answer": {"from": "results", "columns": ["ID", "Title", "Year"]}},
]
RAW_GOLD_STATES = [
    {"name": "datasets_2020", "constraints": [
        {"key": "url.path", "value": "/results", "tag": "view"},
        {"key": "url.query.kind", "value": "dataset", "tag": "scope"},
        {"key": "url.query.year_from", "value": "2020", "tag": "criterion"}]},
]


def rig(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run the `rig` command as its own process."""
    return subprocess.run([str(RIG), *args], check=False, capture_output=True, text=True, timeout=timeout)


def gold_rows(liveweb) -> list[list[str]]:
    """ID, Title, Year of the portal's datasets from 2020 on, as the portal serves them now."""
    return [[r[0], r[1], r[4]] for r in liveweb.data.matching(kind="dataset", year_from=2020)]


def write_task(path: Path, liveweb, **fields: Any) -> Path:
    """A start_url task file on the portal (no gold states unless given)."""
    task = {"id": path.stem, "family": "environment", "start_url": START, "origins": ["portal.example.org"],
            "prompts": {"constraint": "On the survey portal, search for datasets from 2020 on; list ID, Title, Year.",
                        "goal": "Which survey datasets date from 2020 or later?"},
            "output": {"columns": ["ID", "Title", "Year"], "key": ["ID"], "order": "as the portal lists them"},
            "gold": {"rows": gold_rows(liveweb)}, **fields}
    path.write_text(yaml.safe_dump(task, sort_keys=False), encoding="utf-8")
    return path


def script_file(tmp_path: Path, actions: list[dict[str, Any]] = SCRIPT) -> Path:
    path = tmp_path / "agent.yaml"
    path.write_text(yaml.safe_dump(actions, sort_keys=False), encoding="utf-8")
    return path


def live_args(liveweb) -> list[str]:
    return ["--live", *liveweb.resolve_args(), "--ignore-https-errors"]


def episodes(runs: Path) -> list[EpisodeDir]:
    return [EpisodeDir(p.parent) for p in sorted(runs.glob("*/*/*/trial-*/episode.json"))]


def grade(runs: Path) -> dict[str, Any]:
    res = rig("grade", str(runs), "--json")
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout)


def run_scripts_and_grade(tmp_path: Path, task: Path, runs: Path, liveweb,
                          scripts: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """Run each named action script live on the task's goal variant into `runs`, grade, and return the grades by
    script name (the folder its script file is in)."""
    for name, actions in scripts.items():
        d = tmp_path / name
        d.mkdir()
        res = rig("run", "--task", str(task), "--agent", f"scripted:{script_file(d, actions)}", "--variant", "goal",
                  "--out", str(runs), *live_args(liveweb))
        assert res.returncode == 0, res.stderr[-3000:]
    grade(runs)
    grades = (json.loads(ed.grade_file.read_text()) for ed in episodes(runs))
    return {g["agent"].rsplit("/", 2)[-2]: g for g in grades}


def test_live_run_of_an_unannotated_start_url_task_reports_state_metrics_as_not_annotated(liveweb, tmp_path):
    task, runs = write_task(tmp_path / "portal-datasets.yaml", liveweb), tmp_path / "runs"
    res = rig("run", "--task", str(task), "--agent", f"scripted:{script_file(tmp_path)}", "--variant", "constraint",
              "--out", str(runs), *live_args(liveweb))
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-3000:]
    [ed] = episodes(runs)
    ep = ed.read_episode()
    assert (ep.status, ep.error, ep.start_url, ep.live, ep.ignore_https_errors) == ("ok", None, START, True, True)
    assert ep.resolve == [liveweb.hosts[h].resolve for h in liveweb.HOSTS]
    assert ed.read_answer().rows == gold_rows(liveweb)
    assert liveweb.portal.requests_to("/results"), "the run reached the portal by its name"
    steps = ed.steps()
    assert steps[0].url == START and steps[-1].state["url.query.kind"] == "dataset"

    summary = grade(runs)
    g = json.loads(ed.grade_file.read_text())
    assert g["scored"] and g["passed"] and g["scores"]["row_f1"] == 1.0
    assert (g["annotated"], g["gold_states"], g["state_anchored_rows"], g["evidence"]) == (False, [], None, [])
    assert g["label"] is None and all(r["state_anchored"] is False and r["steps"] for r in g["rows"])
    [group] = summary["groups"]
    assert (group["gold_state_reach"], group["answer_state_reach"], group["state_anchored_rows"]) == (None, None, None)
    assert group["row_f1"] == 1.0
    md = (runs / "summary.md").read_text()
    lines = md.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("| scripted") and "| constraint |" in line)
    header, row = lines[at - 2], lines[at]
    cells = dict(zip((c.strip() for c in header.strip("|").split("|")), (c.strip() for c in row.strip("|").split("|"))))
    state_columns = [c for c in cells if "state" in c.lower()]
    assert state_columns == ["Gold-state reach", "State-anchored rows"], header
    assert [cells[c] for c in state_columns] == ["", ""], f"state metrics of an unannotated task are blank, never 0: {row}"
    assert "not annotated" in md

    report = tmp_path / "report"
    res = rig("report", str(runs), "--out", str(report))
    assert res.returncode == 0, res.stderr[-2000:]
    html = (report / "index.html").read_text()
    assert 'title="not annotated: the tasks have no gold states"' in html


def test_raw_key_gold_states_grade_a_live_run_with_real_numbers(liveweb, tmp_path):
    task = write_task(tmp_path / "portal-raw.yaml", liveweb, gold_states=RAW_GOLD_STATES, evidence=[
        {"state": "datasets_2020", "description": "the filtered result table", "url_contains": "/results"}])
    runs = tmp_path / "runs"
    wrong = [dict(a) for a in SCRIPT]
    wrong[1] = {"fill": {"selector": "#year_from", "value": "2019"}}  # a criterion off by one year
    grades = run_scripts_and_grade(tmp_path, task, runs, liveweb, {"right": SCRIPT, "wrong": wrong})
    right, wrong_g = grades["right"], grades["wrong"]
    assert right["annotated"] and right["gold_states"][0]["reached"] and right["state_anchored_rows"] == 1.0
    assert right["evidence"][0]["met"] and right["passed"]
    assert not wrong_g["gold_states"][0]["reached"] and wrong_g["state_anchored_rows"] == 0.0
    unmet = {v["key"]: v["actual"] for v in wrong_g["gold_states"][0]["unmet"]}
    assert unmet == {"url.query.year_from": "2019"}
    assert wrong_g["label"] == "criterion_mismatch", wrong_g["rationale"]


def test_a_task_off_loopback_is_refused_without_live_before_any_episode(liveweb, tmp_path):
    task, runs = write_task(tmp_path / "portal-off.yaml", liveweb), tmp_path / "runs"
    res = rig("run", "--task", str(task), "--agent", f"scripted:{script_file(tmp_path)}", "--out", str(runs),
              *liveweb.resolve_args(), "--ignore-https-errors")
    assert res.returncode == 2  # bad input
    said = " ".join(res.stderr.split())
    assert "start_url" in said and "--live" in said and "--frozen" in said and str(task) in said, said
    assert not episodes(runs) and liveweb.portal.hits == 0
    res = rig("run", "--task", str(task), "--agent", "reference", "--live", "--frozen", "site_snapshots",
              "--out", str(runs))
    assert res.returncode == 2 and "either live or --frozen" in " ".join(res.stderr.split())
    res = rig("run", "--task", str(task), "--agent", "reference", "--live", "--resolve", "portal.example.org:443",
              "--out", str(runs))
    assert res.returncode == 2 and "--resolve" in res.stderr and "HOST=ADDR:PORT" in res.stderr


def test_hidden_start_begins_on_a_blank_page_and_the_prompt_names_no_start_page(liveweb, tmp_path):
    reference = [{"goto": "/search"}, *SCRIPT]  # relative to the task's start_url, which the agent is not told
    task = write_task(tmp_path / "portal-hidden.yaml", liveweb, start_hidden=True, reference_solution=reference)
    runs = tmp_path / "runs"
    res = rig("run", "--task", str(task), "--agent", "reference", "--variant", "goal", "--out", str(runs),
              *live_args(liveweb))
    assert res.returncode == 0, res.stderr[-3000:]
    [ed] = episodes(runs)
    ep = ed.read_episode()
    assert (ep.status, ep.start_url, ep.start_hidden) == ("ok", "about:blank", True)
    assert ep.prompt and "portal.example.org" not in ep.prompt
    steps = ed.steps()
    assert steps[0].action.type == "goto" and steps[0].url == START, "the first step is the agent's own goto"
    assert ed.read_answer().rows == gold_rows(liveweb)
    first = liveweb.portal.requests[0]
    assert first.path == "/search" and "sgr-rig/" in first.headers["user-agent"]


def test_a_task_adapter_file_gives_dimensions(liveweb, tmp_path):
    (tmp_path / "adapters").mkdir()
    (tmp_path / "adapters" / "portal.yaml").write_text(yaml.safe_dump({
        "site": "portal", "path_prefix": "/", "dimensions": {
            "kind": {"tag": "scope", "keys": ["url.query.kind"]},
            "since": {"tag": "criterion", "keys": ["url.query.year_from"]}},
        "page": {"result_count": {"selector": "#count", "regex": r"(\d+) results"}}}), encoding="utf-8")
    states = [{"name": "datasets_2020", "constraints": [
        {"key": "dim.kind", "value": "dataset", "tag": "scope"}, {"key": "dim.since", "value": "2020", "tag": "criterion"}]}]
    task = write_task(tmp_path / "portal-dims.yaml", liveweb, adapter="adapters/portal.yaml", gold_states=states)
    runs = tmp_path / "runs"
    res = rig("run", "--task", str(task), "--agent", f"scripted:{script_file(tmp_path)}", "--variant", "constraint",
              "--out", str(runs), *live_args(liveweb))
    assert res.returncode == 0, res.stderr[-3000:]
    [ed] = episodes(runs)
    last = ed.steps()[-1].state
    assert (last["dim.kind"], last["dim.since"], last["page.result_count"]) == ("dataset", "2020", "5")
    grade(runs)
    g = json.loads(ed.grade_file.read_text())
    assert g["gold_states"][0]["reached"] and g["state_anchored_rows"] == 1.0

    bad = write_task(tmp_path / "portal-noadapter.yaml", liveweb, adapter="adapters/missing.yaml")
    res = rig("run", "--task", str(bad), "--agent", "reference", "--out", str(tmp_path / "runs2"), *live_args(liveweb))
    assert res.returncode == 2 and "adapter" in res.stderr and "missing.yaml" in res.stderr
    assert not (tmp_path / "runs2").exists() or not episodes(tmp_path / "runs2")


def test_politeness_holds_requests_back_and_backs_off_after_429(liveweb, tmp_path):
    gets = [{"goto": "https://portal.example.org/gallery/8"}, {"goto": "https://portal.example.org/record/1"}]
    out = tmp_path / "recorded"
    res = rig("record", "--script", str(script_file(tmp_path, gets)), "--out", str(out), *live_args(liveweb),
              "--rate-limit", "1", "--max-per-host", "1")
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-3000:]
    ep = EpisodeDir(out).read_episode()
    p = ep.politeness
    assert ep.status == "ok" and ep.live and p is not None
    assert (p.rate_per_host, p.burst, p.max_per_host) == (1.0, 1, 1)
    assert p.requests >= 10 and p.delayed >= 7 and p.waited_s > 0, p  # 8 images at once, one at a time
    assert p.max_in_flight["portal.example.org"] == 1
    assert p.user_agent is not None and "sgr-rig/" in p.user_agent and p.user_agent.endswith("(+research evaluation)")
    assert all("sgr-rig/" in r.headers["user-agent"] for r in liveweb.portal.requests)
    assert [s.url for s in EpisodeDir(out).steps()] == [g["goto"] for g in gets]

    liveweb.portal.fail_next("/search", 429, times=2, retry_after=1)
    task, runs = write_task(tmp_path / "portal-429.yaml", liveweb), tmp_path / "runs"
    res = rig("run", "--task", str(task), "--agent", f"scripted:{script_file(tmp_path)}", "--variant", "goal",
              "--out", str(runs), *live_args(liveweb))
    assert res.returncode == 0, res.stderr[-3000:]
    [ed] = episodes(runs)
    ep = ed.read_episode()
    assert ep.status == "ok" and ep.politeness is not None
    assert (ep.politeness.retries, ep.politeness.backoffs, ep.politeness.backoff_hosts) == \
        (2, 2, {"portal.example.org": 2})
    assert len(liveweb.portal.requests_to("/search")) == 3
    assert ed.read_answer().rows == gold_rows(liveweb)


def test_rig_record_live_needs_live_off_loopback(liveweb, tmp_path):
    script = script_file(tmp_path, [{"goto": START}, *SCRIPT[:4]])
    res = rig("record", "--script", str(script), "--out", str(tmp_path / "no"), *liveweb.resolve_args())
    assert res.returncode == 2 and "--live" in res.stderr and liveweb.portal.hits == 0
    out = tmp_path / "yes"
    res = rig("record", "--script", str(script), "--out", str(out), *live_args(liveweb))
    assert res.returncode == 0, res.stderr[-3000:]
    ep = EpisodeDir(out).read_episode()
    assert ep.status == "ok" and ep.live and ep.politeness is not None and ep.politeness.requests >= 3
    assert EpisodeDir(out).steps()[-1].state["url.query.kind"] == "dataset"


def test_tasks_list_shows_start_url_tasks(liveweb, tmp_path):
    from typer.testing import CliRunner

    from rig.cli import app

    folder = tmp_path / "imported"
    folder.mkdir()
    write_task(folder / "portal-listed.yaml", liveweb, gold={"rows": []})
    res = CliRunner().invoke(app, ["tasks", "list", str(folder), "--json"])
    assert res.exit_code == 0, res.output
    [row] = json.loads(res.stdout)
    assert (row["id"], row["site"], row["start_url"], row["origins"], row["gold_rows"]) == \
        ("portal-listed", None, START, ["portal.example.org"], 0)
    res = CliRunner().invoke(app, ["tasks", "list", str(folder / "portal-listed.yaml")])
    assert res.exit_code == 0 and "portal-listed" in res.stdout and "portal.example.org" in res.stdout


def test_a_zero_row_gold_table_is_answered_perfectly_only_by_an_empty_answer(liveweb, tmp_path):
    task = write_task(tmp_path / "portal-none.yaml", liveweb, gold={"rows": []})
    runs = tmp_path / "runs"
    empty = [{"fill": {"selector": "#q", "value": "no such survey"}}, *SCRIPT[2:]]
    empty[2] = {"wait_for": "#count"}  # the table has no rows to wait for
    grades = run_scripts_and_grade(tmp_path, task, runs, liveweb, {"empty": empty, "rows": SCRIPT})
    assert grades["empty"]["scores"]["rows_pred"] == 0 and grades["empty"]["passed"]
    assert grades["empty"]["scores"]["row_f1"] == 1.0 and grades["empty"]["scores"]["item_f1"] == 1.0
    rows = grades["rows"]["scores"]
    assert rows["rows_pred"] == 5 and rows["row_f1"] == 0.0 and rows["item_f1"] == 0.0
    assert not grades["rows"]["passed"] and len(rows["extra_rows"]) == 5


def test_allow_host_still_limits_a_live_run(liveweb, tmp_path):
    task, runs = write_task(tmp_path / "portal-allow.yaml", liveweb), tmp_path / "runs"
    actions = [*SCRIPT[:4], {"goto": "https://archive.example.net/doc/1"}]
    res = rig("run", "--task", str(task), "--agent", f"scripted:{script_file(tmp_path, actions)}", "--variant", "goal",
              "--out", str(runs), *live_args(liveweb), "--allow-host", "127.0.0.1")
    assert res.returncode == 0, res.stderr[-3000:]
    [ed] = episodes(runs)
    ep = ed.read_episode()
    assert ep.status == "agent_error" and "ERR_BLOCKED_BY_CLIENT" in (ep.error or "")
    assert "portal.example.org:443" in (ep.allowed_hosts or []), "the task's own start host is allowed"
    assert ep.blocked_requests == 1 and ep.blocked_urls == ["https://archive.example.net/doc/1"]
    assert liveweb.archive.hits == 0 and liveweb.portal.requests_to("/results")
    assert ep.politeness is not None and ep.politeness.requests >= 3


def test_a_live_start_page_that_does_not_load_is_the_sites_failure_within_the_budget(liveweb, tmp_path):
    """A start page that never answers, or answers 503 again and again: the episode's --timeout holds across the
    rig's retries (counted at the host, not timed), and the episode is `site_unreachable`, scored as the task's
    failure and shown in the summary, never an infrastructure failure retried three times."""
    liveweb.portal.set_delay("/search", 120)
    task, runs = write_task(tmp_path / "portal-slow.yaml", liveweb), tmp_path / "runs"
    res = rig("run", "--task", str(task), "--agent", f"scripted:{script_file(tmp_path)}", "--variant", "goal",
              "--out", str(runs), *live_args(liveweb), "--timeout", "8")
    assert res.returncode == 0, res.stderr[-3000:]
    [ed] = episodes(runs)
    ep = ed.read_episode()
    assert (ep.status, ep.attempts) == ("site_unreachable", 1), ep.error
    assert "did not load within the episode's budget" in ep.error and START in ep.error
    assert len(liveweb.portal.requests_to("/search")) == 1, "one attempt fits an 8 s budget with a 30 s page timeout"
    [step] = ed.steps()
    assert (step.settled, step.screenshot, step.url) == (False, None, "about:blank"), \
        "a page waiting for its document is recorded by its URL alone, never asked for what it cannot answer"
    summary = grade(runs)
    [group] = summary["groups"]
    assert group["statuses"] == {"site_unreachable": 1} and (group["scored"], group["infra"]) == (1, 0)
    g = json.loads(ed.grade_file.read_text())
    assert g["scored"] and not g["passed"]
    assert "site_unreachable" in (runs / "summary.md").read_text()

    liveweb.portal.set_delay("/search", 0)
    liveweb.portal.fail_next("/search", 503, times=50, retry_after=2)
    before = len(liveweb.portal.requests_to("/search"))
    runs = tmp_path / "runs503"
    res = rig("run", "--task", str(task), "--agent", f"scripted:{script_file(tmp_path)}", "--variant", "goal",
              "--out", str(runs), *live_args(liveweb), "--timeout", "5")
    assert res.returncode == 0, res.stderr[-3000:]
    [ed] = episodes(runs)
    ep = ed.read_episode()
    assert ep.status == "site_unreachable" and "HTTP 503" in ep.error, ep.error
    tries = len(liveweb.portal.requests_to("/search")) - before
    assert 1 <= tries <= 3, f"{tries} attempts: 2 s apart (Retry-After), at most 3 start within 5 s (4 without a budget)"
    assert ep.politeness is not None and ep.politeness.retries == tries - 1
