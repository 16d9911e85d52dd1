"""Agents driven from outside the rig, end to end on the bundled sites: browser-use (scripted model), an
outside CDP process with `rig submit`, and the operator's answer file with its cited pages archived."""

from __future__ import annotations

import asyncio
import gzip
import html
import json
import re
import sys
import urllib.request
from pathlib import Path

import pytest
from conftest import serving
from server import TestServer
from warcio.archiveiterator import ArchiveIterator

from recorders import CAPTURE_HEADER
from rig.agents.base import Budget
from rig.agents.reference import gold_mismatch
from rig.episode_dir import EpisodeDir
from rig.formats.answer import Answer
from rig.runner.local import run_local
from rig.runner.spec import EpisodeSpec
from rig.tasks import resolve_task

DATA = Path(__file__).parent / "data" / "operator"
BUDGET = Budget(max_steps=40, timeout_s=90, stall_s=60)

#: Waits (at most 10 s) until the eco results table `t` says it is ready.
ECO_READY_JS = """
  const t = document.querySelector('table#results');
  await new Promise(resolve => {
    if (t.dataset.state === 'ready') return resolve();
    const watch = new MutationObserver(() => { if (t.dataset.state === 'ready') { watch.disconnect(); resolve(); } });
    watch.observe(t, {attributes: true, attributeFilter: ['data-state']});
    setTimeout(resolve, 10000);
  });"""

#: Waits for the eco results table, then returns the given columns of its rows as a Markdown table.
ECO_TABLE_JS = "(async () => {" + ECO_READY_JS + """
  const heads = [...t.querySelectorAll('thead th')].map(th => th.textContent.trim());
  const want = %s;
  const rows = [...t.querySelectorAll('tbody tr')].map(tr => [...tr.cells].map(td => td.textContent.trim()));
  const line = cells => '| ' + cells.join(' | ') + ' |';
  return [line(want), line(want.map(() => '---')),
          ...rows.map(r => line(want.map(w => r[heads.indexOf(w)])))].join('\\n');
})()"""

#: Waits for the eco results table and returns the text of its first cell.
ECO_FIRST_CELL_JS = "(async () => {" + ECO_READY_JS + """
  return t.querySelector('tbody td').textContent.trim();
})()"""


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _has_state(steps: list[dict], **dims: object) -> bool:
    """Some observed step holds every given `dim.<name>` value."""
    return any(s["action"]["source"] == "observed" and all(s["state"].get(f"dim.{k}") == v for k, v in dims.items())
               for s in steps)


# --- browser-use with a scripted model ------------------------------------------------------------


async def test_browser_use_solves_a_bundled_task_through_the_runner(tmp_path, sites_url):
    pytest.importorskip("browser_use")
    from scripted_llm import ScriptedLLM

    from rig.agents.browser_use_agent import BrowserUseAgent

    task = resolve_task("eco-04")
    pick = lambda id_: {"index": {"match": f"id={id_}"}}  # noqa: E731
    llm = ScriptedLLM([
        [{"navigate": {"url": f"{sites_url}/eco/browse", "new_tab": False}}],
        [
            {"select_dropdown": {**pick("dataset"), "text": "sf-temps"}},
            {"click": pick("agg-monthly")},
            {"select_dropdown": {**pick("sort"), "text": "temp_mean"}},
            {"select_dropdown": {**pick("dir"), "text": "desc"}},
            {"click": pick("run")},
        ],
        [{"evaluate": {"code": ECO_FIRST_CELL_JS}}],  # San Francisco's warmest month, read from the page
        [
            {"select_dropdown": {**pick("dataset"), "text": "seattle-temps"}},
            {"input": {**pick("start"), "text": "{last_result}"}},
            {"input": {**pick("end"), "text": "{last_result}"}},
            {"click": pick("agg-daily")},
        ],
        [
            {"input": {**pick("min_temp"), "text": "70"}},
            {"select_dropdown": {**pick("sort"), "text": "temp_max"}},
            {"click": pick("run")},
        ],
        [{"evaluate": {"code": ECO_TABLE_JS % json.dumps(task.output.columns)}}],
        [{"done": {"text": "{last_result}", "success": True}}],
    ])
    agent = BrowserUseAgent(None, llm, use_vision=False)
    [ep] = await run_local([EpisodeSpec(task, "constraint", agent.name, 0)], agent, tmp_path, sites_url=sites_url,
                           budget=BUDGET)

    d = EpisodeSpec(task, "constraint", agent.name, 0).directory(tmp_path)
    assert ep.status == "ok", ep.error
    assert EpisodeDir(d).read_episode().model == "scripted"
    answer = Answer.model_validate_json((d / "answer.json").read_text())
    assert gold_mismatch(task, answer) is None
    history = json.loads((d / "browser_use.json").read_text())
    assert history["done"] and history["errors"] == []
    assert history["steps"][0]["url"] == sites_url + task.start_path, "browser-use starts in the episode's own tab"
    assert [a["name"] for s in history["steps"] for a in s["actions"]][:2] == ["navigate", "select_dropdown"]
    assert llm.sent[3][1]["input"]["text"] == "2010-09"  # the month the agent read from the page
    steps = _lines(d / "trajectory.jsonl")
    assert steps[0]["action"]["source"] == "agent"  # the runner's own goto to the start URL
    assert all(s["action"]["source"] == "observed" for s in steps[1:])
    assert _has_state(steps, dataset="sf-temps", agg=["monthly"], sort="temp_mean", sort_dir="desc")
    assert _has_state(steps, dataset="seattle-temps", time_window="2010-09..2010-09", agg=["daily"], min_temp="70",
                      sort="temp_max", sort_dir="desc")


async def test_scripted_llm_fills_in_the_last_result_browser_use_reported():
    pytest.importorskip("browser_use")
    from browser_use import Tools
    from browser_use.agent.views import AgentOutput
    from scripted_llm import ScriptedLLM, ScriptError, last_result

    def msgs(text: str) -> list:
        return [type("Msg", (), {"role": "user", "text": text})()]

    history = ("<agent_history>\n<step>\nscripted step 0\nResult\nNavigated to http://x/\n"
               "<step>\nscripted step 1\nResult\n| Month |\n| --- |\n| 2010-09 |\n</agent_history>\n")
    assert last_result(msgs(history)) == "| Month |\n| --- |\n| 2010-09 |"
    long_read = history + "<read_state>\n<read_state_0>\nfull text\n</read_state_0>\n</read_state>\n"
    assert last_result(msgs(long_read)) == "full text"
    failed = "<step>\nAgent failed to output in the right format.\n"
    failed_step = history.replace("</agent_history>", failed + "</agent_history>")
    assert last_result(msgs(failed_step)) == "| Month |\n| --- |\n| 2010-09 |"
    assert last_result(msgs("<agent_history>\n<step>\nscripted step 0\n</agent_history>")) is None

    output = AgentOutput.type_with_custom_actions(Tools().registry.create_action_model())
    llm = ScriptedLLM([[{"done": {"text": "Answer:\n{last_result}", "success": True}}]] * 2)
    done = (await llm.ainvoke(msgs(history), output)).completion.action[0].model_dump(exclude_none=True)["done"]
    assert done["text"] == "Answer:\n| Month |\n| --- |\n| 2010-09 |"
    with pytest.raises(ScriptError, match="no action result"):
        await llm.ainvoke(msgs("<agent_history>\n</agent_history>"), output)
    with pytest.raises(ScriptError, match="at most 5"):
        ScriptedLLM([[{"wait": {"seconds": 0}}] * 6])


def test_browser_use_agent_needs_a_model():
    from rig.agents.registry import make_agent
    from rig.errors import InputError

    with pytest.raises(InputError, match="--model provider:model"):
        make_agent("browser-use")


# --- an outside CDP process, `rig submit` ----------------------------------------------------------

RIG = str(Path(sys.executable).parent / "rig")

#: An outside driver: runs the task's reference solution in the rig's own tab over CDP (reporting nothing
#: to the rig's recorder) and writes the answer as a Markdown table. Like a person (or an LLM) it pauses
#: after each click or goto: the recorder makes one observed step of each burst of page events.
CDP_DRIVER = """
import asyncio, sys
from pathlib import Path
from playwright.async_api import async_playwright
from rig.formats.actions import parse_actions, verb_of
from rig.agents.scripted import ScriptRunner
from rig.tasks import resolve_task

async def main(cdp_url, start_url, task_id, out):
    task = resolve_task(task_id)
    async with async_playwright() as pw:
        browser = await pw.chromium.connect_over_cdp(cdp_url)
        page = browser.contexts[0].pages[0]
        assert page.url == start_url, page.url
        base = start_url[: -len(task.start_path)]
        runner = ScriptRunner(page, base)
        for action in parse_actions(task.reference_solution):
            await runner.run([action])
            if verb_of(action) in ("click", "goto"):
                await asyncio.sleep(0.5)
        answer = runner.answer
    lines = [answer.columns, ["---"] * len(answer.columns), *answer.rows]
    Path(out).write_text("Here is the answer:\\n\\n" + "\\n".join("| " + " | ".join(r) + " |" for r in lines) + "\\n")

asyncio.run(main(*sys.argv[1:]))
"""


async def _exec(*args: str, timeout_s: float = 60) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(*args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), timeout_s)
    return proc.returncode, out.decode(), err.decode()


async def _announced(stdout: asyncio.StreamReader) -> dict[str, str]:
    """Read `rig run`'s output up to the `Episode:` line; return its `Name: value` lines."""
    seen: dict[str, str] = {}
    while "Episode" not in seen:
        line = (await asyncio.wait_for(stdout.readline(), 60)).decode()
        assert line, f"rig run ended before announcing an episode; it printed {seen}"
        name, sep, value = line.partition(": ")
        if sep:
            seen[name] = value.strip()
    return seen


async def test_cdp_agent_records_an_outside_process_until_rig_submit(tmp_path, sites_url):
    task = resolve_task("eco-04")
    runs = tmp_path / "runs"
    proc = await asyncio.create_subprocess_exec(
        RIG, "run", "--task", task.id, "--agent", "cdp", "--variant", "constraint", "--variant", "goal",
        "--out", str(runs), "--timeout", "120", "--sites-url", sites_url,
        stdout=asyncio.subprocess.PIPE, stderr=(tmp_path / "run.err").open("wb"),
    )
    try:
        # Episode 1: the outside driver solves the task, `rig submit` hands in its Markdown table.
        first = await _announced(proc.stdout)
        assert first["CDP endpoint"].startswith("http://127.0.0.1:")
        episode = Path(first["Episode"])
        assert episode == EpisodeSpec(task, "constraint", "cdp", 0).directory(runs).path
        assert (episode / "prompt.md").read_text().startswith(task.prompts.constraint)
        answer_md = tmp_path / "answer.md"
        start_url = sites_url + task.start_path
        rc, _, err = await _exec(sys.executable, "-c", CDP_DRIVER, first["CDP endpoint"], start_url, task.id,
                                 str(answer_md))
        assert rc == 0, err[-2000:]
        rc, out, err = await _exec(RIG, "submit", str(episode), "--answer", str(answer_md))
        assert rc == 0 and "answer handed in" in out, err

        # Episode 2: an answer with no table ends the episode as parse_failure, not as a crash or timeout.
        second = await _announced(proc.stdout)
        garbage = tmp_path / "garbage.md"
        garbage.write_text("I looked around but I am not sure which days those were.\n")
        rc, _, err = await _exec(RIG, "submit", second["Episode"], "--answer", str(garbage))
        assert rc == 1 and "parse_failure" in err, err
        await asyncio.wait_for(proc.wait(), 60)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0, (tmp_path / "run.err").read_text()[-3000:]

    ep = EpisodeDir(episode).read_episode()
    assert (ep.status, ep.agent) == ("ok", "cdp"), ep.error
    assert gold_mismatch(task, Answer.model_validate_json((episode / "answer.json").read_text())) is None
    steps = _lines(episode / "trajectory.jsonl")
    assert {s["action"]["source"] for s in steps[1:]} == {"observed"}
    assert _has_state(steps, dataset="sf-temps", agg=["monthly"], sort="temp_mean", sort_dir="desc")
    assert _has_state(steps, dataset="seattle-temps", time_window="2010-09..2010-09", min_temp="70", sort="temp_max")

    failed = EpisodeDir(Path(second["Episode"])).read_episode()
    assert failed.status == "parse_failure" and "no table found" in failed.error
    assert not (Path(second["Episode"]) / "answer.json").exists()
    assert (Path(second["Episode"]) / "submitted_answer.txt").read_text() == garbage.read_text()
    rc, _, err = await _exec(RIG, "submit", str(episode), "--answer", str(answer_md))
    assert rc == 2 and "already ended" in err  # bad input: the episode has ended


# --- the operator: a product's final answer, its cited pages archived --------------------------------


@pytest.fixture(scope="module")
def product_url():
    """The stand-in product (tests/data/operator/) served on 127.0.0.1 for this module."""
    with serving(TestServer(static=DATA)) as srv:
        yield f"{srv.url}/product.html"


def _warc(path: Path) -> tuple[dict[str, int], dict[str, list[str]]]:
    """Status of each archived response by URL, and the per-step page texts by URL."""
    responses: dict[str, int] = {}
    texts: dict[str, list[str]] = {}
    with path.open("rb") as fh:
        for rec in ArchiveIterator(fh):
            uri = rec.rec_headers.get_header("WARC-Target-URI")
            if rec.rec_type == "response":
                responses[uri] = int(rec.http_headers.get_statuscode())
            elif rec.rec_type == "conversion" and rec.rec_headers.get_header(CAPTURE_HEADER) == "text":
                texts.setdefault(uri, []).append(rec.content_stream().read().decode("utf-8"))
    return responses, texts


async def test_operator_answer_file_is_parsed_and_its_cited_pages_archived(tmp_path, sites_url, product_url):
    from rig.runner.config import RunConfig
    from rig.runner.run import run

    task = resolve_task("flights-05")
    page = urllib.request.urlopen(product_url, timeout=10).read().decode()  # the operator copies the final answer
    copied = html.unescape(re.search(r'<pre id="answer">(.*?)</pre>', page, re.DOTALL).group(1))
    answer_file = tmp_path / "answer.md"
    answer_file.write_text(copied.replace("{sites}", sites_url))

    [ep] = await asyncio.to_thread(run, RunConfig([task.id], "operator", tmp_path / "runs", variants=["constraint"],
                                                  answer_file=answer_file, sites_url=sites_url, budget=BUDGET))

    d = EpisodeSpec(task, "constraint", "operator", 0).directory(tmp_path / "runs")
    assert ep.status == "ok", ep.error
    assert (d / "prompt.md").read_text() == task.prompt("constraint") + "\n"
    assert (d / "operator_answer.md").read_text() == answer_file.read_text()
    answer = Answer.model_validate_json((d / "answer.json").read_text())
    assert gold_mismatch(task, answer) is None
    cited = list(dict.fromkeys(c.url for c in answer.citations))
    missing = f"{sites_url}/flights/airport/ZZZ"
    assert len(cited) == 8 and cited[-1] == missing
    responses, texts = _warc(d / "evidence.warc.gz")
    for i, (row, citation) in enumerate(zip(task.gold.rows, answer.citations[:6])):
        assert citation.row == i and citation.url.endswith(f"/airport/{row[0]}")
        assert responses[citation.url] == 200
        assert any(row[1] in text and row[3] in text for text in texts[citation.url]), citation.url
    assert responses[cited[6]] == 200 and any("Airline" in text for text in texts[cited[6]])
    assert responses[missing] == 404 and texts[missing], "a citation that 404s is archived as evidence too"


async def test_operator_answer_without_a_table_is_a_parse_failure(tmp_path, sites_url):
    from rig.runner.config import RunConfig
    from rig.runner.run import run

    [ep] = await asyncio.to_thread(run, RunConfig(["flights-05"], "operator", tmp_path, variants=["goal"],
                                                  answer_file=DATA / "unparseable.md", sites_url=sites_url, budget=BUDGET))
    assert ep.status == "parse_failure" and "no table found" in ep.error
    d = EpisodeSpec(resolve_task("flights-05"), "goal", "operator", 0).directory(tmp_path)
    assert EpisodeDir(d).read_episode().status == "parse_failure"
    assert (d / "operator_answer.md").read_text() == (DATA / "unparseable.md").read_text()
    assert not (d / "answer.json").exists()


async def test_operator_captures_citations_wherever_a_deep_research_answer_puts_them(tmp_path, sites_url):
    from rig.grading.grade import grade_episode
    from rig.runner.config import RunConfig
    from rig.runner.run import run

    task = resolve_task("flights-05")
    answer_file = tmp_path / "answer.md"  # footnote markers in cells, a numbered list below, a Sources: line, prose links
    answer_file.write_text((DATA / "deep_research.md").read_text().replace("{sites}", sites_url))
    [ep] = await asyncio.to_thread(run, RunConfig([task.id], "operator", tmp_path / "runs", variants=["constraint"],
                                                  answer_file=answer_file, sites_url=sites_url, budget=BUDGET))
    d = EpisodeSpec(task, "constraint", "operator", 0).directory(tmp_path / "runs")
    assert ep.status == "ok", ep.error
    answer = Answer.model_validate_json((d / "answer.json").read_text())
    assert gold_mismatch(task, answer) is None  # `841 [1]` is handed in as `841`
    rows = [c for c in answer.citations if c.row is not None]
    assert [(c.row, c.url, c.excerpt) for c in rows] == [
        (i, f"{sites_url}/flights/airport/{gold[0]}", gold[2]) for i, gold in enumerate(task.gold.rows)]
    whole = [c.url for c in answer.citations if c.row is None]
    assert whole == [f"{sites_url}/flights/search?group=carrier&sort=flights&dir=asc", f"{sites_url}/flights/carrier/HA",
                     f"{sites_url}/flights/carrier/OO", f"{sites_url}/flights/"]
    assert all(c.captured and c.capture_reason is None for c in answer.citations)
    responses, texts = _warc(d / "evidence.warc.gz")
    assert all(responses[c.url] == 200 and texts[c.url] for c in answer.citations)

    grade = grade_episode(d)
    assert grade.passed and grade.scores.row_f1 == 1.0
    assert [c.verified for c in grade.citations if c.row is not None] == [True] * 6  # each altitude, on its page
    rc, out, err = await _exec(RIG, "verify", str(d.path), "--answer", str(answer_file), "--json")
    assert rc == 0, err
    verified = json.loads(out)["citations"]  # the pasted text, verified on its own: the verdicts grading gave
    assert verified == [c.model_dump(mode="json") for c in grade.citations]


async def test_operator_opens_only_http_citations_and_keeps_the_others_as_not_captured(tmp_path, sites_url):
    from rig.runner.config import RunConfig
    from rig.runner.run import run

    planted = tmp_path / "private"
    planted.mkdir()
    (planted / "passwd").write_text("root:x:0:0:PLANTED-LOCAL-CONTENT:/root:/bin/bash\n")
    answer_file = tmp_path / "answer.md"
    answer_file.write_text(
        "| FAA code | Name | Altitude (ft) | Time zone |\n|---|---|---|---|\n"
        "| HNL | Honolulu Intl | 13 [1] | Pacific/Honolulu |\n| MSP | Minneapolis St Paul Intl | 841 [2] | America/Chicago |\n\n"
        f"[1]: {sites_url}/flights/airport/HNL\n[2]: file://{planted}/passwd\n\n"
        f"See also [my notes](file://{planted}/) and <chrome://settings>; source list: /flights/airport/MSP\n")
    [ep] = await asyncio.to_thread(run, RunConfig(["flights-05"], "operator", tmp_path / "runs", variants=["goal"],
                                                  answer_file=answer_file, sites_url=sites_url, budget=BUDGET))
    d = EpisodeSpec(resolve_task("flights-05"), "goal", "operator", 0).directory(tmp_path / "runs")
    assert ep.status == "ok", ep.error
    answer = Answer.model_validate_json((d / "answer.json").read_text())
    by_url = {c.url: c for c in answer.citations}
    assert by_url[f"{sites_url}/flights/airport/HNL"].captured is True
    for url, scheme in ((f"file://{planted}/passwd", "file"), (f"file://{planted}/", "file"),
                        ("chrome://settings", "chrome")):
        assert by_url[url].captured is False and scheme in by_url[url].capture_reason, by_url[url]
    assert by_url[f"file://{planted}/passwd"].row == 1  # kept as the row's citation all the same
    steps = _lines(d / "trajectory.jsonl")
    assert not [s["url"] for s in steps if not s["url"].startswith(("http://", "about:"))]
    with gzip.open(d / "evidence.warc.gz") as fh:
        assert b"PLANTED-LOCAL-CONTENT" not in fh.read()
    leaked = [p for p in d.path.rglob("*") if p.is_file() and p.suffix != ".gz" and b"PLANTED-LOCAL-CONTENT" in p.read_bytes()]
    assert leaked == []
