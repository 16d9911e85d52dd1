"""The recorded MCP tool server end to end: the `mcp` SDK's own client, in another process, solves a bundled task
through `rig run --agent mcp` and through `--agent cli` (the client is the "CLI agent"); every call is a step,
every result a WARC record, the episode grades; budgets end a client that never finishes, and its whole process
group is gone afterwards."""

from __future__ import annotations

import asyncio
import hashlib
import json
import shlex
import sys
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator

from rig.agents.base import Budget
from rig.agents.cli_agent import CliAgent, group_members
from rig.episode_dir import EpisodeDir
from rig.formats.answer import Answer
from rig.runner.local import run_local
from rig.runner.spec import EpisodeSpec
from rig.tasks import resolve_task

RIG = str(Path(sys.executable).parent / "rig")
CLIENT = str(Path(__file__).parent / "mcp_client_script.py")
#: Generous: on a busy 2-core machine importing the `mcp` client alone has taken 20 s.
LONG = 240

#: The first data row's first link of a results table in a snapshot (the header row has column headers).
FIRST_ROW_LINK = r'- row \[ref=\w+\]:\n\s+- cell \[ref=\w+\]:\n\s+- link "([A-Z0-9]{2,3})"'
#: A grouped results row: its key's link, its name cell, its flights cell.
GROUP_ROW = (r'- row \[ref=\w+\]:\n\s+- cell \[ref=\w+\]:\n\s+- link "([A-Z0-9]{2})"[^\n]*\n\s+- /url: [^\n]*\n'
             r'\s+- cell "[^"]*" \[ref=\w+\]\n\s+- cell "(\d+)"')


def _select(label: str, value: str) -> dict:
    return {"tool": "browser_select_option",
            "args": {"element": label, "ref": {"ref_of": f'combobox "{label}"'}, "values": [value]}}


def _click(line: str) -> dict:
    return {"tool": "browser_click", "args": {"element": line, "ref": {"ref_of": line}}}


#: flights-06 solved with browser tools, as a model reading each snapshot would; with a few mistakes on the way.
SOLVE_FLIGHTS_06 = [
    {"tool": "browser_navigate", "args": {"url": "/flights/search"}},
    _select("Origin airport", "JFK"), _select("From", "June"), _select("To", "June"), _select("Show", "By destination"),
    {**_click('button "Apply"'), "save": "dest", "regex": FIRST_ROW_LINK},
    {"tool": "browser_click", "args": {"element": "a stale ref", "ref": "e9999"}},  # no such element: a tool error
    {"tool": "browser_type", "args": {"ref": "e1"}},  # missing arguments: a tool error
    {"tool": "no_such_tool", "args": {}},
    {"tool": "browser_type", "args": {"element": "Destination", "ref": {"ref_of": 'searchbox "Destination"'},
                                      "text": "{dest}"}},
    _select("From", "July"), _select("To", "July"), _click('checkbox "Delayed"'), _select("Show", "By carrier"),
    {"tool": "browser_type", "args": {"element": "Minimum flights", "ref": {"ref_of": 'spinbutton "Minimum flights'},
                                      "text": "40"}},
    {**_click('button "Apply"'), "save": "rows", "regex": GROUP_ROW, "line": "| {0} | {1} |", "limit": 3},
    {"tool": "web_fetch", "args": {"url": "/flights/airport/{dest}"}},
    {"tool": "final_answer", "args": {"answer": "| Carrier | Flights |\n|---|---|\n{rows}\n"}},
]


def _steps(d: Path) -> list[dict]:
    return [json.loads(line) for line in (d / "trajectory.jsonl").read_text().splitlines() if line.strip()]


def _tool_records(d: Path) -> dict[str, bytes]:
    with (d / "evidence.warc.gz").open("rb") as fh:
        return {r.rec_headers.get_header("WARC-Target-URI"): r.content_stream().read()
                for r in ArchiveIterator(fh) if r.rec_type == "resource"}


async def _exec(*args: str, timeout_s: float = LONG) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(*args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), timeout_s)
    return proc.returncode, out.decode(), err.decode()


async def _announced(stdout: asyncio.StreamReader) -> dict[str, str]:
    seen: dict[str, str] = {}
    while "Episode" not in seen:
        line = (await asyncio.wait_for(stdout.readline(), LONG)).decode()
        assert line, f"rig run ended before announcing an episode; it printed {seen}"
        name, sep, value = line.partition(": ")
        if sep:
            seen[name] = value.strip()
    return seen


def _check_solved(d: Path, results: list[dict], agent: str) -> None:
    """The episode of SOLVE_FLIGHTS_06: answered right, every call a step with its digest and WARC record."""
    task = resolve_task("flights-06")
    ep = EpisodeDir(d).read_episode()
    assert (ep.status, ep.agent) == ("ok", agent), ep.error
    answer = Answer.model_validate_json((d / "answer.json").read_text())
    assert answer.rows == task.gold.rows  # (no evidence records handed in: the table only)
    errors = [(r["tool"], r["text"]) for r in results if r["is_error"]]
    assert [t for t, _ in errors] == ["browser_click", "browser_type", "no_such_tool"]
    assert "no such element" in errors[0][1] and "e9999" in errors[0][1]
    assert "element: Field required" in errors[1][1] and "text: Field required" in errors[1][1]
    assert "unknown tool 'no_such_tool'" in errors[2][1] and "browser_snapshot" in errors[2][1]

    steps = _steps(d)
    calls = [s for s in steps if s["action"]["type"] != "goto"]  # the runner's own start-page goto comes first
    assert [s["action"]["type"] for s in calls] == [c["tool"] for c in SOLVE_FLIGHTS_06]
    assert {s["action"]["source"] for s in steps} == {"agent"}
    records = _tool_records(d)
    for step, result in zip(calls, results):
        value = step["action"]["value"]
        assert value["args"] == result["args"]
        assert value["result"]["ok"] is not result["is_error"]
        assert value["result"]["digest"] == hashlib.sha256(result["text"].encode()).hexdigest()
        assert value["result"]["chars"] == len(result["text"])
        assert records[f"urn:sgr-rig:tool/{step['step']}/{result['tool']}"].decode() == result["text"]
    clicks = [s for s in calls if s["action"]["type"] == "browser_click" and s["action"]["value"]["result"]["ok"]]
    assert clicks[0]["action"]["target"] == 'button:has-text("Apply")'
    # the browser states the tools set are recorded like any driver's
    dims = [s["state"] for s in calls]
    assert any(st.get("dim.origin") == "JFK" and st.get("dim.group") == "dest" and st.get("dim.time_window") == "6-6"
               for st in dims)
    assert any(st.get("dim.status") == "delayed" and st.get("dim.group") == "carrier" and st.get("dim.min_flights") == "40"
               and st.get("dim.time_window") == "7-7" for st in dims)
    fetch = next(s for s in calls if s["action"]["type"] == "web_fetch")
    assert fetch["tab"] == 1 and fetch["url"].endswith("/flights/airport/LAX"), "web_fetch loads its own tab"
    assert "Los Angeles Intl" in next(r["text"] for r in results if r["tool"] == "web_fetch")


async def test_an_mcp_client_in_another_process_solves_a_bundled_task(tmp_path, sites_url):
    runs = tmp_path / "runs"
    calls, out = tmp_path / "calls.json", tmp_path / "results.json"
    calls.write_text(json.dumps(SOLVE_FLIGHTS_06))
    proc = await asyncio.create_subprocess_exec(
        RIG, "run", "--task", "flights-06", "--agent", "mcp", "--variant", "constraint", "--out", str(runs),
        "--timeout", str(LONG), "--stall", str(LONG), "--sites-url", sites_url,
        stdout=asyncio.subprocess.PIPE, stderr=(tmp_path / "run.err").open("wb"),
    )
    try:
        seen = await _announced(proc.stdout)
        assert seen["MCP endpoint"].startswith("http://127.0.0.1:") and seen["MCP endpoint"].endswith("/mcp")
        episode = Path(seen["Episode"])
        assert episode == EpisodeSpec(resolve_task("flights-06"), "constraint", "mcp", 0).directory(runs).path
        assert (episode / "prompt.md").read_text().startswith(resolve_task("flights-06").prompts.constraint)
        rc, _, err = await _exec(sys.executable, CLIENT, str(calls), "--url", seen["MCP endpoint"], "--out", str(out))
        assert rc == 0, err[-3000:]
        await asyncio.wait_for(proc.wait(), LONG)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0, (tmp_path / "run.err").read_text()[-3000:]
    _check_solved(episode, json.loads(out.read_text()), "mcp")

    rc, _, err = await _exec(RIG, "grade", str(episode), "--json")
    assert rc == 0, err[-3000:]
    grade = EpisodeDir(episode).read_grade()
    assert grade.scored and (grade.scores.item_f1, grade.scores.row_f1, grade.scores.poa) == (1.0, 1.0, 1.0)
    assert [s.reached for s in grade.gold_states] == [True, True]


async def test_cli_agent_runs_the_command_with_the_endpoint_and_prompt_in_its_environment(tmp_path, sites_url, browser):
    task = resolve_task("flights-06")
    calls, out = tmp_path / "calls.json", tmp_path / "results.json"
    # the prompt file and the episode directory reach the command too: it checks them first
    calls.write_text(json.dumps(SOLVE_FLIGHTS_06))
    command = (f"test -d \"$RIG_EPISODE_DIR\" && grep -q 'JFK' \"$RIG_PROMPT_FILE\" && echo agent starting && "
               f"{shlex.quote(sys.executable)} {shlex.quote(CLIENT)} {shlex.quote(str(calls))} --out {shlex.quote(str(out))}")
    agent = CliAgent(command)
    spec = EpisodeSpec(task, "constraint", agent.name, 0)
    [ep] = await run_local([spec], agent, tmp_path / "runs", sites_url=sites_url,
                           budget=Budget(max_steps=60, timeout_s=LONG, stall_s=LONG), browser=browser)
    d = spec.directory(tmp_path / "runs").path
    log = EpisodeDir(d).agent_log_file.read_text()
    assert ep.status == "ok", (ep.error, log[-3000:])
    assert log.startswith("agent starting\n")
    _check_solved(d, json.loads(out.read_text()), "cli")


def _alive(pid: int) -> bool:
    """Whether process `pid` still runs (a zombie waiting to be reaped does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] not in "ZX"


async def test_a_cli_agent_that_never_finishes_is_stopped_at_the_wall_time_budget_with_its_process_group(
        tmp_path, sites_url, browser):
    task = resolve_task("flights-06")
    calls, child, out = tmp_path / "calls.json", tmp_path / "child.pid", tmp_path / "results.json"
    calls.write_text(json.dumps([{"tool": "browser_snapshot"}, {"spawn": str(child)}, {"stop": "hang"}]))
    leader = tmp_path / "leader.pid"
    command = (f"echo $$ > {shlex.quote(str(leader))}; {shlex.quote(sys.executable)} {shlex.quote(CLIENT)} "
               f"{shlex.quote(str(calls))} --out {shlex.quote(str(out))}; echo never reached")
    agent = CliAgent(command, grace_s=2)
    spec = EpisodeSpec(task, "constraint", agent.name, 0)
    budget = Budget(max_steps=60, timeout_s=30, stall_s=LONG)  # room for the client to start on a busy machine
    [ep] = await run_local([spec], agent, tmp_path / "runs", sites_url=sites_url, budget=budget, browser=browser)
    d = spec.directory(tmp_path / "runs").path
    log = EpisodeDir(d).agent_log_file.read_text()
    assert ep.status == "timeout" and "wall-clock budget of 30 s" in ep.error, (ep.error, log[-3000:])
    assert json.loads(out.read_text())[0]["tool"] == "browser_snapshot", "the client got its first answer"
    pids = [int(leader.read_text()), int(child.read_text())]
    assert not [p for p in pids if _alive(p)], "the command's shell and its grandchild are gone"
    assert group_members(pids[0]) == []
    assert "never reached" not in log
    assert [s["action"]["type"] for s in _steps(d)] == ["goto", "browser_snapshot"]


async def test_a_cli_agent_that_exits_without_an_answer_fails_as_the_agent(tmp_path, sites_url, browser):
    task = resolve_task("flights-06")
    calls = tmp_path / "calls.json"
    calls.write_text(json.dumps([{"tool": "browser_snapshot"}, {"stop": "exit", "code": 3}]))
    agent = CliAgent(f"{shlex.quote(sys.executable)} {shlex.quote(CLIENT)} {shlex.quote(str(calls))}")
    spec = EpisodeSpec(task, "constraint", agent.name, 0)
    [ep] = await run_local([spec], agent, tmp_path / "runs", sites_url=sites_url,
                           budget=Budget(max_steps=60, timeout_s=LONG, stall_s=LONG), browser=browser)
    assert ep.status == "agent_error", ep.error
    assert "exited (code 3) without handing in an answer" in ep.error
    assert ep.steps == 2


async def test_a_stdio_only_client_reaches_the_episode_through_rig_mcp_stdio(tmp_path, sites_url):
    runs = tmp_path / "runs"
    calls, out = tmp_path / "calls.json", tmp_path / "results.json"
    calls.write_text(json.dumps([
        {"tool": "browser_snapshot"},
        {"tool": "browser_navigate", "args": {"url": "/flights/airport/LAX"}},
        {"tool": "final_answer", "args": {"answer": "| Carrier | Flights |\n|---|---|\n| B6 | 71 |\n"}},
    ]))
    proc = await asyncio.create_subprocess_exec(
        RIG, "run", "--task", "flights-06", "--agent", "mcp", "--variant", "goal", "--out", str(runs),
        "--timeout", str(LONG), "--stall", str(LONG), "--sites-url", sites_url,
        stdout=asyncio.subprocess.PIPE, stderr=(tmp_path / "run.err").open("wb"),
    )
    try:
        seen = await _announced(proc.stdout)
        rc, _, err = await _exec(sys.executable, CLIENT, str(calls), "--out", str(out),
                                 "--stdio", RIG, "mcp-stdio", "--url", seen["MCP endpoint"])
        assert rc == 0, err[-3000:]
        await asyncio.wait_for(proc.wait(), LONG)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0, (tmp_path / "run.err").read_text()[-3000:]
    results = json.loads(out.read_text())
    assert [r["is_error"] for r in results] == [False, False, False]
    assert "Los Angeles Intl" in results[1]["text"]
    d = Path(seen["Episode"])
    assert EpisodeDir(d).read_episode().status == "ok"
    assert [s["action"]["type"] for s in _steps(d)] == ["goto", "browser_snapshot", "browser_navigate", "final_answer"]

    rc, _, err = await _exec(RIG, "mcp-stdio", "--url", "http://example.org/mcp")
    assert rc == 2 and "is not the rig's endpoint" in err


async def test_rig_submit_ends_a_tool_server_episode_and_the_step_budget_counts_tool_calls(tmp_path, sites_url, browser):
    task = resolve_task("flights-06")
    answer = tmp_path / "answer.md"
    answer.write_text("| Carrier | Flights |\n|---|---|\n| B6 | 71 |\n| AA | 54 |\n| DL | 48 |\n")
    # a command that hands its answer in with `rig submit`, then lingers: the episode ends on the answer anyway
    submitter = CliAgent(f'{shlex.quote(RIG)} submit "$RIG_EPISODE_DIR" --answer {shlex.quote(str(answer))} && sleep 600',
                         grace_s=2)
    calls = tmp_path / "calls.json"
    calls.write_text(json.dumps([{"tool": "browser_snapshot"}] * 10))
    looper = CliAgent(f"{shlex.quote(sys.executable)} {shlex.quote(CLIENT)} {shlex.quote(str(calls))}")
    submitted, looped = EpisodeSpec(task, "constraint", submitter.name, 0), EpisodeSpec(task, "goal", looper.name, 0)
    budget = Budget(max_steps=60, timeout_s=LONG, stall_s=LONG)
    [first], [second] = await asyncio.gather(
        run_local([submitted], submitter, tmp_path / "a", sites_url=sites_url, budget=budget, browser=browser),
        run_local([looped], looper, tmp_path / "b", sites_url=sites_url,
                  budget=Budget(max_steps=3, timeout_s=LONG, stall_s=LONG), browser=browser),
    )
    assert first.status == "ok", first.error
    d = submitted.directory(tmp_path / "a").path
    assert Answer.model_validate_json((d / "answer.json").read_text()).rows == task.gold.rows
    assert second.status == "agent_error" and "step budget of 3 exceeded" in second.error, second.error


async def test_a_command_that_exits_right_after_rig_submit_ends_ok(tmp_path, sites_url):
    """The command's exit and its `rig submit` are seen together: the answer handed in wins over the exit (before,
    the exit won whenever it came between two looks for answer.json: agent_error on a good answer)."""
    task = resolve_task("flights-06")
    answer = tmp_path / "answer.md"
    answer.write_text("| Carrier | Flights |\n|---|---|\n| B6 | 71 |\n| AA | 54 |\n| DL | 48 |\n")
    agent = CliAgent(f'{shlex.quote(RIG)} submit "$RIG_EPISODE_DIR" --answer {shlex.quote(str(answer))}')
    specs = [EpisodeSpec(task, variant, agent.name, trial) for variant in ("constraint", "goal") for trial in (0, 1)]
    episodes = await run_local(specs, agent, tmp_path / "runs", sites_url=sites_url, concurrency=2,
                               budget=Budget(max_steps=60, timeout_s=LONG, stall_s=LONG))
    assert [(e.status, e.error) for e in episodes] == [("ok", None)] * 4
