"""`rig freeze`: live episodes (the offline web of tests/liveweb.py) and bundled-site episodes frozen into a site
snapshot; `rig run --frozen` then serves them with no network at all (the origins answer only poison and get no
request), grades the same, and counts a request the snapshot lacks as a visible 404 in episode.json. A body recorded
cut or missing stays marked so, is counted and warned about, and is served frozen as a 502, never a complete 200; a
tool episode that found the bundled sites from a blank page freezes them as the bundled sites, not a random port."""

from __future__ import annotations

import asyncio
import json
import shlex
import shutil
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml
from site_runs import frozen_trap
from typer.testing import CliRunner
from warcio.archiveiterator import ArchiveIterator

from recorders import RecorderOptions
from replay import FROZEN_ORIGIN, REPLAY_CONTEXT_OPTIONS, open_snapshot
from rig.cli import app
from rig.episode_dir import EpisodeDir, RunsDir
from rig.runner.record import record_script

TASK_ID = "portal-datasets"


def rig(*args: str) -> tuple[int, str]:
    """Run the `rig` command in-process: its exit status and its output (stdout and stderr)."""
    res = CliRunner().invoke(app, [str(a) for a in args])
    return res.exit_code, res.output


def portal_task(liveweb, directory: Path) -> Path:
    """A task on the portal (not a bundled site): the datasets from 2020 on, by their reference solution."""
    rows = [[r[1], r[4]] for r in liveweb.data.matching(kind="dataset", year_from=2020)]
    task = {
        "id": TASK_ID, "family": "environmental surveys", "start_url": liveweb.portal.url("/search"),
        "origins": [liveweb.PORTAL],
        "prompts": {"constraint": "Search the portal for datasets from 2020 on; list their Title and Year.",
                    "goal": "Which of the portal's datasets are from 2020 or later?"},
        "output": {"columns": ["Title", "Year"], "key": ["Title"], "order": "as the portal lists them (by ID)"},
        "gold": {"rows": rows},
        "reference_solution": [
            {"select": {"selector": "#kind", "value": "dataset"}},
            {"fill": {"selector": "#year_from", "value": "2020"}},
            {"click": 'role=button[name="Search"]'},
            {"wait_for": "table#results tbody tr"},
            {"extract_table": {"selector": "table#results", "as": "results"}},
            {"answer": {"from": "results", "columns": ["Title", "Year"]}},  # not ID: a sorted column's header may carry a sort mark
        ],
    }
    path = directory / f"{TASK_ID}.yaml"
    path.write_text(yaml.safe_dump(task, sort_keys=False), encoding="utf-8")
    return path


def only_episode(runs: Path) -> EpisodeDir:
    episodes = RunsDir(runs).episodes()
    assert len(episodes) == 1, episodes
    return episodes[0]


@pytest.fixture(scope="module")
def live_run(liveweb, tmp_path_factory):
    """One live episode of the portal task (reference agent), graded, and the snapshot frozen from it."""
    root = tmp_path_factory.mktemp("freeze")
    task = portal_task(liveweb, root)
    runs, snap = root / "live-runs", root / "snap"
    code, out = rig("run", "--task", task, "--agent", "reference", "--variant", "constraint", "--live",
                    *liveweb.resolve_args(), "--ignore-https-errors", "--out", runs)
    assert code == 0, out
    assert only_episode(runs).read_episode().status == "ok"
    code, out = rig("grade", runs)
    assert code == 0, out
    code, out = rig("freeze", runs, "--no-qa", "--out", snap)
    assert code == 0, out
    return task, runs, snap


def test_a_frozen_live_run_reaches_no_origin_and_grades_the_same(liveweb, live_run, tmp_path):
    task, live_runs, snap = live_run
    manifest = json.loads((snap / "manifest.json").read_text())
    assert manifest["origins"] == [liveweb.portal.origin]
    assert manifest["start_urls"] == [liveweb.portal.url("/search")]
    assert manifest["rules"]["ignore_origin"] is False and manifest["sources"]["tasks"] == [TASK_ID]

    before = {name: h.hits for name, h in liveweb.hosts.items()}  # the live run of the fixture's set-up
    for host in liveweb.hosts.values():
        host.poison()  # a request reaching any origin would get 500 "poison" and be counted
    frozen_runs = tmp_path / "frozen-runs"
    code, out = rig("run", "--task", task, "--agent", "reference", "--variant", "constraint", "--frozen", snap,
                    *liveweb.resolve_args(), "--ignore-https-errors", "--out", frozen_runs)  # --resolve must not matter
    assert code == 0, out
    assert {name: h.hits for name, h in liveweb.hosts.items()} == before
    ep = only_episode(frozen_runs)
    episode = ep.read_episode()
    assert episode.status == "ok" and episode.frozen == "snap" and episode.replay_misses == 0

    code, out = rig("grade", frozen_runs)
    assert code == 0, out
    live_grade, frozen_grade = only_episode(live_runs).read_grade(), ep.read_grade()
    assert live_grade.scores is not None and frozen_grade.scores is not None
    assert live_grade.scores.row_f1 == frozen_grade.scores.row_f1 == 1.0
    assert (live_grade.scores.item_f1, live_grade.passed) == (frozen_grade.scores.item_f1, frozen_grade.passed)
    assert only_episode(live_runs).read_answer().rows == ep.read_answer().rows


def test_a_request_the_snapshot_lacks_is_a_404_counted_in_episode_json(liveweb, live_run, tmp_path):
    task, _, snap = live_run
    script = tmp_path / "wander.yaml"
    script.write_text(yaml.safe_dump([{"goto": liveweb.portal.url("/record/7")}]), encoding="utf-8")
    runs, before = tmp_path / "runs", liveweb.portal.hits
    code, out = rig("run", "--task", task, "--agent", f"scripted:{script}", "--variant", "constraint", "--frozen", snap,
                    "--out", runs)
    assert code == 0, out
    ep = only_episode(runs)
    episode = ep.read_episode()
    assert episode.replay_misses == 1, episode
    last = ep.steps()[-1]
    assert last.url == liveweb.portal.url("/record/7")
    assert "not in the archive" in ep.archive().texts[last.snapshot.warc_record_id]
    assert liveweb.portal.hits == before


def test_frozen_refuses_a_task_whose_start_page_the_snapshot_lacks(liveweb, live_run, tmp_path):
    task, _, snap = live_run
    other = yaml.safe_load(task.read_text())
    other.update(id="elsewhere", start_url=liveweb.archive.url("/doc/1"))
    path = tmp_path / "elsewhere.yaml"
    path.write_text(yaml.safe_dump(other), encoding="utf-8")
    code, out = rig("run", "--task", path, "--agent", "reference", "--frozen", snap, "--out", tmp_path / "runs")
    assert code == 2  # bad input
    assert "does not hold https://archive.example.net/doc/1" in out and "rig freeze" in out
    assert not (tmp_path / "runs").exists() or not RunsDir(tmp_path / "runs").episodes()


async def test_a_page_answered_differently_over_time_replays_as_that_sequence(liveweb, browser, tmp_path):
    page_url, original = liveweb.portal.url("/record/4"), liveweb.data.matching()[3][1]
    script = tmp_path / "visit.yaml"
    script.write_text(yaml.safe_dump([{"goto": page_url}]), encoding="utf-8")
    for name in ("before", "after"):
        code, out = await asyncio.to_thread(rig, "record", "--script", script, "--out", tmp_path / name, "--live",
                                            *liveweb.resolve_args(), "--ignore-https-errors")
        assert code == 0, out
        liveweb.data.edit(4, title="Retitled survey 04")
    code, out = await asyncio.to_thread(rig, "freeze", tmp_path / "before", tmp_path / "after", "--no-qa", "--out", tmp_path / "snap")
    assert code == 0, out
    frozen = open_snapshot(tmp_path / "snap")
    assert frozen.manifests[0].sources["keys_with_sequences"] == 1
    context = await browser.new_context(**REPLAY_CONTEXT_OPTIONS)
    try:
        await frozen.attach(context)
        page = await context.new_page()
        titles = []
        for _ in range(3):  # the recorded order, then the last answer again
            await page.goto(page_url)
            titles.append(await page.locator("h1").inner_text())
    finally:
        await context.close()
    assert titles == [original, "Retitled survey 04", "Retitled survey 04"]


def test_freeze_refuses_bad_input_naming_it(tmp_path):
    code, out = rig("freeze", tmp_path / "nowhere", "--out", tmp_path / "snap")
    assert code == 2 and "nowhere: no such runs or episode directory" in out
    (tmp_path / "empty").mkdir()
    code, out = rig("freeze", tmp_path / "empty", "--out", tmp_path / "snap")
    assert code == 2 and "holds no episode" in out
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    code, out = rig("freeze", tmp_path / "empty", "--out", busy)
    assert code == 2
    assert (busy / "notes.txt").read_text() == "mine"


@pytest.fixture
def frozen_origin_trap():
    """A server where frozen runs put the bundled sites: it must receive nothing (None when the port is taken)."""
    with frozen_trap() as trap:
        yield trap


def test_bundled_site_episodes_freeze_onto_the_frozen_origin(sites_url, frozen_origin_trap, tmp_path):
    live_runs, snap, frozen_runs = tmp_path / "runs", tmp_path / "snap", tmp_path / "frozen"
    common = ("--task", "stats-01", "--agent", "reference", "--variant", "constraint")
    code, out = rig("run", *common, "--sites-url", sites_url, "--out", live_runs)
    assert code == 0, out
    code, out = rig("freeze", live_runs, "--no-qa", "--out", snap)
    assert code == 0, out
    frozen = open_snapshot(snap)
    assert frozen.manifests[0].sites == ["stats"] and frozen.manifests[0].origins == [FROZEN_ORIGIN]
    assert all(x.url.startswith(FROZEN_ORIGIN + "/stats/") for x in frozen.index.all())

    code, out = rig("run", *common, "--frozen", snap, "--out", frozen_runs)
    assert code == 0, out
    episode = only_episode(frozen_runs).read_episode()
    assert episode.status == "ok" and episode.replay_misses == 0
    assert only_episode(frozen_runs).read_answer().rows == only_episode(live_runs).read_answer().rows
    assert frozen_origin_trap is None or frozen_origin_trap.requests == []
    code, out = rig("run", "--task", "flights-01", "--agent", "reference", "--frozen", snap, "--out", frozen_runs)
    assert code == 2 and "holds stats, not flights" in out


#: A page longer than the recorder keeps (`max_body_bytes=1000`), which fetches a body that never ends.
LONG_PAGE = (b"<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Long</title></head><body>"
             b"<h1>Long list</h1><p id=\"out\"></p><script>fetch('/api/stream').then((r) => "
             b"{ document.getElementById('out').textContent = 'status ' + r.status; });</script>"
             + b"<p>row</p>" * 600 + b"</body></html>")


def test_a_cut_or_missing_body_stays_so_frozen_and_is_not_served_as_a_complete_200(pages_server, pages_url, tmp_path):
    def stream(ex) -> None:  # headers and a first chunk, then nothing until the test ends
        ex.start_chunked(200, "application/json")
        ex.write_chunk(b'{"partial": ')
        ex.hang()

    page = f"{pages_url}/long.html"
    pages_server.set_route("/long.html", lambda ex: ex.send(200, LONG_PAGE))
    pages_server.set_route("/api/stream", stream)
    script = tmp_path / "visit.yaml"
    script.write_text(yaml.safe_dump([{"goto": page}, {"wait_for": "text=status 200"}]), encoding="utf-8")
    options = RecorderOptions(max_body_bytes=1000, screenshots="off")  # the stream is given up on at the end
    recorded = asyncio.run(record_script(script, tmp_path / "ep", options=options))
    missing = [(x.url, x.response.missing) for xs in EpisodeDir(tmp_path / "ep").archive().missing.values() for x in xs]
    assert recorded.status == "ok" and [url for url, _ in missing] == [f"{pages_url}/api/stream"], missing

    snap = tmp_path / "snap"
    code, out = rig("freeze", tmp_path / "ep", "--no-qa", "--out", snap)
    assert code == 0, out
    assert (f"{snap}: 2 archived bodies are not whole (1 cut, 1 missing): {page}, {pages_url}/api/stream; frozen runs "
            "answer them with a 502 page") in out  # one line, naming how many and where
    manifest = json.loads((snap / "manifest.json").read_text())
    assert (manifest["truncated_bodies"], manifest["missing_bodies"]) == (1, 1)
    with (snap / "snapshot.warc.gz").open("rb") as fh:
        marks = {r.rec_headers.get_header("WARC-Target-URI"): (r.rec_headers.get_header("WARC-Truncated"),
                                                               r.rec_headers.get_header("WARC-Rig-Missing"))
                 for r in ArchiveIterator(fh) if r.rec_type == "response"}
    assert marks[page] == ("length", None)
    assert marks[f"{pages_url}/api/stream"][0] == "time" and marks[f"{pages_url}/api/stream"][1].startswith("body not")
    frozen = open_snapshot(snap).index
    assert frozen.truncated == {page: "length", f"{pages_url}/api/stream": "time"}  # per URL, for the replay QA

    task = {"id": "long-page", "family": "test pages", "start_url": page,
            "prompts": {"constraint": "Read the long list.", "goal": "What is on the long list?"},
            "output": {"columns": ["Row"], "key": ["Row"], "order": "as listed"}, "gold": {"rows": [["row"]]}}
    (tmp_path / "long-page.yaml").write_text(yaml.safe_dump(task), encoding="utf-8")
    wait = tmp_path / "wait.yaml"
    wait.write_text(yaml.safe_dump([{"wait_for": "h1"}]), encoding="utf-8")
    served_before = len(pages_server.requests)
    code, out = rig("run", "--task", tmp_path / "long-page.yaml", "--agent", f"scripted:{wait}", "--variant", "constraint",
                    "--frozen", snap, "--out", tmp_path / "runs")
    assert code == 0, out
    assert len(pages_server.requests) == served_before  # the frozen run reached no server
    ep = only_episode(tmp_path / "runs")
    assert ep.read_episode().replay_misses == 1  # the page itself: its 502 page runs no script
    with ep.warc_file.open("rb") as fh:
        got = [(r.http_headers.get_statuscode(), r.http_headers.get_header("x-replay"), r.content_stream().read())
               for r in ArchiveIterator(fh) if r.rec_type == "response" and r.rec_headers.get_header("WARC-Target-URI") == page]
    assert got and all(status == "502" and kind == "truncated" for status, kind, _ in got), got
    assert b"not whole in the archive" in got[0][2] and b"truncated (length): 1000 bytes archived" in got[0][2]


#: A CLI agent's calls on a task that starts on a blank page: it finds the bundled site through the tools.
FIND_THE_SITE = [{"tool": "web_search", "args": {"query": "New York City 2013 departures portal", "count": 3}},
                 {"tool": "web_fetch", "args": {"url": "/flights/airport/LAX"}},
                 {"tool": "final_answer", "args": {"answer": "| Origin | Flights |\n|---|---|\n| EWR | 1 |\n"}}]


@pytest.fixture(scope="module")
def blank_start_mcp_run(sites_url, tmp_path_factory):
    """An `--agent cli` episode (the mcp SDK's client in its own process) of a task that starts on a blank page."""
    root = tmp_path_factory.mktemp("mcp-freeze")
    calls = root / "calls.json"
    calls.write_text(json.dumps(FIND_THE_SITE))
    client = Path(__file__).parent / "mcp_client_script.py"
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(client))} {shlex.quote(str(calls))} --out {root / 'out.json'}"
    code, out = rig("run", "--task", "hybrid-s2sql-01", "--agent", "cli", "--command", command, "--variant", "constraint",
                    "--sites-url", sites_url, "--out", root / "runs", "--timeout", "240", "--stall", "240")
    assert code == 0, out
    episode = only_episode(root / "runs").read_episode()
    assert episode.status == "ok" and episode.start_url == "about:blank" and episode.sites_url == sites_url
    return root


def test_a_blank_start_tool_episode_freezes_its_sites_server_as_the_bundled_sites(blank_start_mcp_run, sites_url):
    root = blank_start_mcp_run
    code, out = rig("freeze", root / "runs", "--no-qa", "--out", root / "snap")
    assert code == 0, out
    frozen = open_snapshot(root / "snap")
    manifest = frozen.manifests[0]
    assert manifest.origins == [FROZEN_ORIGIN] and manifest.sites == ["flights"]  # no 127.0.0.1:<random port>
    assert urlsplit(sites_url).netloc not in out
    assert frozen.index.lookup("GET", FROZEN_ORIGIN + "/flights/airport/LAX")
    assert all(x.url.startswith(FROZEN_ORIGIN + "/") for x in frozen.index.all())


def test_an_episode_that_never_named_its_sites_server_is_frozen_as_recorded_and_says_so(blank_start_mcp_run, sites_url,
                                                                                         tmp_path):
    """An episode recorded before `sites_url` was written: a blank start leaves nothing to tell the sites server by."""
    old = tmp_path / "old"
    shutil.copytree(only_episode(blank_start_mcp_run / "runs").path, old)
    data = json.loads((old / "episode.json").read_text())
    del data["sites_url"]
    (old / "episode.json").write_text(json.dumps(data), encoding="utf-8")
    code, out = rig("freeze", old, "--no-qa", "--out", tmp_path / "snap")
    assert code == 0, out
    assert "recorded without its sites server's address and started on a blank page" in out
    assert open_snapshot(tmp_path / "snap").manifests[0].origins == [f"http://{urlsplit(sites_url).netloc}"]
