"""The tool registry and the tools' bounds, through the recorded tool server with the `mcp` SDK's own client in
another process: every declared tool is listed over streamable HTTP and over `rig mcp-stdio` with its schema and
read-only hint; a 100 MB blob comes back as its size and the archive stays small; a big text cell is cut with the cut
said; a 200,000-row answer is refused with the limits; a 50 MB page is cut and the next fetch works in a fresh,
recorded fetch tab; a page answering 429 is retried, and one that always does is reported as rate-limited; a page
that never finishes times out and the next fetch works in a fresh tab again."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from test_mcp_agent import CLIENT, LONG, RIG, _steps, _tool_records
from test_mcp_data_tools import _task_file
from warcio.archiveiterator import ArchiveIterator

from rig.agents.base import Budget
from rig.agents.cli_agent import CliAgent
from rig.episode_dir import EpisodeDir
from rig.runner.local import run_local
from rig.runner.spec import EpisodeSpec
from rig.tasks import load_task
from rig.tools.answers import MAX_ANSWER_BYTES, MAX_ANSWER_ROWS
from rig.tools.registry import TOOLS
from rig.tools.sql import MAX_CELL_CHARS

#: Lists the tools over streamable HTTP ($RIG_MCP_URL) and through `rig mcp-stdio`, as each client sees them.
LIST_TOOLS = """
import asyncio, json, os, sys
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

async def listed(server):
    async with Client(server) as client:
        tools = (await client.list_tools()).tools
    return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]

async def main():
    url = os.environ["RIG_MCP_URL"]
    stdio = StdioServerParameters(command=sys.argv[2], args=["mcp-stdio", "--url", url])
    out = {"http": await listed(url), "stdio": await listed(stdio)}
    open(sys.argv[1], "w").write(json.dumps(out))

asyncio.run(main())
"""

BIG_PAGE_BYTES = 50 * 1024 * 1024


def _big_page() -> bytes:
    head = b"<!doctype html><title>Big</title><body><h1>The start of a big page</h1>\n"
    line = b"<p>" + b"lorem ipsum dolor sit amet " * 4 + b"</p>\n"
    return head + line * ((BIG_PAGE_BYTES - len(head)) // len(line)) + b"</body>"


async def test_the_registry_is_served_and_every_result_is_bounded(tmp_path, sites_url, pages_server, browser):
    big = _big_page()
    assert len(big) > 49 * 1024 * 1024
    pages_server.set_route("/big.html", lambda ex: ex.send(200, big))
    pages_server.set_route("/small.html", lambda ex: ex.send(200, "<title>Small</title><p>a small page after it</p>"))
    tries: dict[str, int] = {}

    def busy_once(ex):
        tries["once"] = tries.get("once", 0) + 1
        if tries["once"] == 1:
            ex.send(429, "<title>Too Many Requests</title><p>slow down page</p>", headers={"Retry-After": "1"})
        else:
            ex.send(200, "<title>Calm</title><p>the page after the wait</p>")

    def always_busy(ex):
        tries["always"] = tries.get("always", 0) + 1
        ex.send(429, "<title>Too Many Requests</title><p>slow down page</p>", headers={"Retry-After": "0"})

    def hanging(ex):
        ex.start_chunked()
        ex.write_chunk(b"<!doctype html><title>Hang</title><p>a page that never finishes")
        ex.hang()

    pages_server.set_route("/hang.html", hanging)
    pages_server.set_route("/busy-once.html", busy_once)
    pages_server.set_route("/always-busy.html", always_busy)
    answer_rows = "| n |\n|---|\n" + "| 1 |\n" * 200_000
    too_many = "| n |\n|---|\n" + "| 1 |\n" * (MAX_ANSWER_ROWS + 1)
    calls = [
        {"tool": "run_sql", "args": {"sql": "SELECT randomblob(100000000) AS b"}},
        {"tool": "run_sql", "args": {"sql": "SELECT printf('%.*c', 2000000, 'x') AS big"}},
        {"tool": "web_fetch", "args": {"url": f"{pages_server.url}/big.html"}},
        {"tool": "web_fetch", "args": {"url": f"{pages_server.url}/small.html"}},
        {"tool": "web_fetch", "args": {"url": f"{pages_server.url}/busy-once.html"}},
        {"tool": "web_fetch", "args": {"url": f"{pages_server.url}/always-busy.html"}},
        {"tool": "web_fetch", "args": {"url": f"{pages_server.url}/hang.html"}},
        {"tool": "web_fetch", "args": {"url": f"{pages_server.url}/small.html"}},
        {"tool": "final_answer", "args": {"answer": answer_rows}},
        {"tool": "final_answer", "args": {"answer": too_many}},
        {"tool": "final_answer", "args": {"answer": "| n |\n|---|\n| 1 |\n"}},
    ]
    lister, listed = tmp_path / "list_tools.py", tmp_path / "listed.json"
    lister.write_text(LIST_TOOLS)
    calls_file, out = tmp_path / "calls.json", tmp_path / "results.json"
    calls_file.write_text(json.dumps(calls))
    py = shlex.quote(sys.executable)
    agent = CliAgent(f"{py} {shlex.quote(str(lister))} {shlex.quote(str(listed))} {shlex.quote(RIG)} && "
                     f"{py} {shlex.quote(CLIENT)} {shlex.quote(str(calls_file))} --out {shlex.quote(str(out))}")
    task = load_task(_task_file(tmp_path))
    spec = EpisodeSpec(task, "constraint", agent.name, 0)
    [ep] = await run_local([spec], agent, tmp_path / "runs", sites_url=sites_url,
                           budget=Budget(max_steps=60, timeout_s=2 * LONG, stall_s=2 * LONG), browser=browser)
    d = spec.directory(tmp_path / "runs").path
    assert ep.status == "ok", (ep.error, EpisodeDir(d).agent_log_file.read_text()[-3000:])

    # every declaration, as both clients list it
    lists = json.loads(listed.read_text())
    for transport in ("http", "stdio"):
        got = {t["name"]: t for t in lists[transport]}
        assert list(got) == [t.name for t in TOOLS], transport
        for t in TOOLS:
            assert got[t.name]["inputSchema"] == t.input_schema(), (transport, t.name)
            assert got[t.name]["description"] == t.description
            assert got[t.name]["annotations"]["readOnlyHint"] is t.read_only, (transport, t.name)
    assert {t.name for t in TOOLS if t.read_only} >= {"run_sql", "web_search", "browser_snapshot"}

    results = json.loads(out.read_text())
    # (the episode ends on the last final_answer: the client is stopped before it writes that result down)
    blob, text_cell, big_fetch, small, once, always, hang, small_again, huge, many = results
    assert not blob["is_error"] and blob["text"].splitlines() == ["Rows: 1 (fetching stopped after 1: the values "
                                                                  "passed 67108864 bytes; select length() or substr() "
                                                                  "of big values)", "b", "<blob 100000000 bytes>"]
    assert text_cell["text"].splitlines()[2] == "x" * MAX_CELL_CHARS + "… [cut: 2000000 characters in all]"

    assert not big_fetch["is_error"], big_fetch["text"]
    assert "The start of a big page" in big_fetch["text"]
    assert f"[cut: the response is {len(big)} bytes" in big_fetch["text"]
    assert len(big_fetch["text"].encode()) <= 64 * 1024
    assert not small["is_error"] and "a small page after it" in small["text"], small["text"]

    assert not once["is_error"] and "the page after the wait" in once["text"] and tries["once"] == 2
    assert always["is_error"] and "is rate-limited: it answered 429 to all 4 tries" in always["text"]
    assert "slow down page" not in always["text"] and tries["always"] == 4

    assert hang["is_error"] and "Timeout 30000ms exceeded; the fetch tab is reset for the next fetch" in hang["text"]
    assert not small_again["is_error"] and "a small page after it" in small_again["text"]

    assert huge["is_error"] and f"an answer may hold at most {MAX_ANSWER_ROWS} rows" in huge["text"]
    assert f"is {len(answer_rows.encode())} bytes" in huge["text"] and str(MAX_ANSWER_BYTES) in huge["text"]
    assert "Nothing was handed in" in huge["text"]
    assert many["is_error"] and f"has {MAX_ANSWER_ROWS + 1} rows" in many["text"]
    assert EpisodeDir(d).read_answer().rows == [["1"]]
    assert EpisodeDir(d).submitted_file.read_text() == "| n |\n|---|\n| 1 |\n", "only the answer taken was kept"

    # what was recorded: every call a step, the small page in a new fetch tab, and the archive small
    steps = [s for s in _steps(d) if s["action"]["type"] != "goto"]
    assert [s["action"]["type"] for s in steps] == [c["tool"] for c in calls]
    fetches = [s for s in steps if s["action"]["type"] == "web_fetch"]
    assert fetches[1]["url"].endswith("/small.html") and fetches[1]["tab"] != fetches[0]["tab"], \
        "the fetch tab was closed and a new one opened after the oversize page"
    assert fetches[5]["url"].endswith("/small.html") and fetches[5]["tab"] != fetches[4]["tab"], \
        "and again after the timeout"
    records = _tool_records(d)
    assert records[f"urn:sgr-rig:tool/{steps[0]['step']}/run_sql"].decode() == blob["text"]
    assert all(len(s["action"]["value"]["args"].get("answer", "")) <= 20_100 for s in steps)
    assert _archived(d, f"{pages_server.url}/small.html"), "the new fetch tab is recorded"
    warc = (d / "evidence.warc.gz").stat().st_size
    assert warc < 8 * 1024 * 1024, f"the archive is {warc} bytes"


def _archived(d: Path, url: str) -> bool:
    with (d / "evidence.warc.gz").open("rb") as fh:
        return any(r.rec_type == "response" and r.rec_headers.get_header("WARC-Target-URI") == url
                   for r in ArchiveIterator(fh))
