"""Every bundled task's reference tool-call script (`reference_tools`), replayed by the `mcp` SDK's client in another
process as a `--agent cli` command against the recorded tool server: each call works, the episode ends on its
`final_answer`, and the grader passes it (hybrid tasks by their type's rule; discovery tasks find the site)."""

from __future__ import annotations

import json
import shlex
import sys

from test_mcp_agent import CLIENT, LONG, _steps

from rig.agents.base import Budget
from rig.agents.cli_agent import CliAgent
from rig.episode_dir import EpisodeDir
from rig.grading.runs import grade_runs
from rig.runner.local import run_local
from rig.runner.spec import EpisodeSpec
from rig.tasks.loader import tool_tasks


async def test_every_reference_tool_script_solves_its_task_over_mcp(tmp_path, sites_url, browser):
    tasks = [t for t in tool_tasks() if t.reference_tools]
    assert len(tasks) >= 12, "the bundled hybrid and discovery tasks carry reference tool-call scripts"
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    for task in tasks:
        (scripts / f"{task.id}.json").write_text(json.dumps([c.model_dump() for c in task.reference_tools]))
    # one agent for all tasks: the command picks the task's script by the episode directory it runs in
    command = (f'id=$(basename "$(dirname "$(dirname "$(dirname "$RIG_EPISODE_DIR")")")"); '
               f"{shlex.quote(sys.executable)} {shlex.quote(CLIENT)} {shlex.quote(str(scripts))}/$id.json "
               f'--out "$RIG_EPISODE_DIR/client_results.json"')
    agent = CliAgent(command)
    runs = tmp_path / "runs"
    specs = [EpisodeSpec(t, "constraint", agent.name, 0) for t in tasks]
    episodes = await run_local(specs, agent, runs, sites_url=sites_url, concurrency=3,
                               budget=Budget(max_steps=60, timeout_s=2 * LONG, stall_s=2 * LONG), browser=browser)
    problems = {}
    for spec, ep in zip(specs, episodes):
        d = spec.directory(runs).path
        if ep.status != "ok":
            problems[spec.task.id] = (ep.status, ep.error, EpisodeDir(d).agent_log_file.read_text()[-1500:])
            continue
        results = json.loads((d / "client_results.json").read_text())
        failed = [(r["tool"], r["text"][:300]) for r in results if r["is_error"]]
        if failed:
            problems[spec.task.id] = failed
        calls = [s["action"]["type"] for s in _steps(d) if s["action"]["type"] != "goto"]
        assert calls == [c.tool for c in spec.task.reference_tools], spec.task.id
    assert problems == {}

    summary = grade_runs(runs)
    assert summary.ungraded == 0
    for spec in specs:
        grade = EpisodeDir(spec.directory(runs).path).read_grade()
        task = spec.task
        if task.hybrid_type is not None:
            assert grade.hybrid is not None and grade.hybrid.passed, (task.id, grade.hybrid)
        if task.start_hidden:
            assert grade.site_found, (task.id, grade.site_found)
        if grade.scores is not None and task.hybrid_type != "search_to_sql":
            assert grade.scores.row_f1 == 1.0, (task.id, grade.scores.row_f1)
