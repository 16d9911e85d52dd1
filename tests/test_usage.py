"""Cost and effort per episode: the price table (bundled, laid over by $RIG_PRICES), browser-use's own token accounting
through the runner (a scripted model that reports its usage as providers do), CLI agents reporting theirs through
the `report_usage` tool and through RIG_USAGE_FILE, and provenance (versions, the task's revision at run time)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from rig.agents.base import Budget
from rig.agents.cli_agent import CliAgent
from rig.agents.usage import Spend, UsageMeter
from rig.episode_dir import EpisodeDir
from rig.errors import InputError
from rig.formats.usage import AgentUsageReport
from rig.pricing import BUNDLED_PRICES, PRICES_ENV, load_prices, price_of, read_price_table, token_cost
from rig.runner.local import run_local
from rig.runner.spec import EpisodeSpec, agent_identity
from rig.tasks import resolve_task

CLIENT = str(Path(__file__).parent / "mcp_client_script.py")
#: Generous: on a busy 2-core machine importing the `mcp` client alone has taken 20 s.
LONG = 240
ANSWER = "| Station |\n|---|\n| x |"


def test_the_bundled_table_prices_tokens_and_a_user_table_lays_over_it(tmp_path, monkeypatch):
    monkeypatch.delenv(PRICES_ENV, raising=False)
    table = load_prices()
    assert table == read_price_table(BUNDLED_PRICES) and table.models, "the bundled table is the one in force"
    key, price = price_of(table, "openai:gpt-4.1-mini")
    assert key == "openai:gpt-4.1-mini" and price_of(table, "gpt-4.1-mini") == (key, price), "a bare name finds it"
    assert price_of(table, "scripted") is None and price_of(table, "acme:gpt-4.1-mini") is None
    # 1800 uncached and 200 cached input tokens, 400 output: each at its own rate per million
    assert token_cost(price, 2000, 400, 200) == pytest.approx(
        (1800 * price.input + 200 * price.cached_input + 400 * price.output) / 1e6)

    mine = tmp_path / "prices.yaml"
    mine.write_text("format: sgr-rig/prices/1\nmodels:\n  test:scripted: {input: 3, output: 15}\n"
                    "  openai:gpt-4.1-mini: {input: 1, output: 2}\n")
    monkeypatch.setenv(PRICES_ENV, str(mine))
    laid = load_prices()
    assert price_of(laid, "scripted")[0] == "test:scripted" and laid.models["openai:gpt-4.1-mini"].input == 1
    assert set(table.models) < set(laid.models), "the bundled entries stay"

    mine.write_text("models:\n  x:y: {input: -1, output: 2}\n")
    with pytest.raises(InputError, match=r"prices.yaml: models.x:y.input: Input should be greater than or equal to 0"):
        load_prices()


def test_cost_is_null_when_a_model_is_not_in_the_table_never_zero():
    table = load_prices()
    meter = UsageMeter()
    meter.llm_call(Spend("openai:gpt-4.1-mini", 1000, 100), "browser-use")
    priced = meter.usage(table, steps=3, wall_s=1.0)
    assert priced.cost_usd == pytest.approx(token_cost(table.models["openai:gpt-4.1-mini"], 1000, 100))
    assert priced.priced_as == ["openai:gpt-4.1-mini"] and priced.unpriced is None
    meter.llm_call(Spend("acme:secret-model", 10, 10), "browser-use")
    mixed = meter.usage(table, steps=3, wall_s=1.0)
    assert (mixed.tokens_in, mixed.tokens_out, mixed.llm_calls) == (1010, 110, 2)
    assert mixed.cost_usd is None and mixed.unpriced == ["acme:secret-model"]
    nothing = UsageMeter().usage(table, steps=2, wall_s=0.5)
    assert (nothing.tokens_in, nothing.cost_usd, nothing.llm_calls, nothing.tool_calls, nothing.observation_bytes) \
        == (None, None, None, None, None), "an agent that reports nothing has unknown usage, not zero"
    reported = UsageMeter()
    reported.report(AgentUsageReport(tokens_in=5, tokens_out=5, cost_usd=0.5, model="acme:secret-model"), "report_usage")
    assert reported.usage(table, steps=1, wall_s=1).cost_usd == 0.5, "a cost the agent reports is taken as it is"


# --- browser-use: its own token accounting, through the runner ------------------------------------------------


async def test_browser_use_episodes_record_tokens_calls_and_cost_from_the_price_table(tmp_path, sites_url, context):
    """Two browser-use episodes at once, one on a model the price table names and one on a model it does not: each
    records the tokens its own model reported (no call counted twice), the cost only where the model is priced."""
    pytest.importorskip("browser_use")
    from scripted_llm import ScriptedLLM

    from rig.agents.browser_use_agent import BrowserUseAgent

    task = resolve_task("eco-01")
    script = [[{"scroll": {"down": True, "pages": 0.5}}], [{"done": {"text": ANSWER, "success": True}}]]
    priced_llm = ScriptedLLM(script, model="gpt-4.1-mini")
    unpriced_llm = ScriptedLLM(script, model="scripted")
    agents = [BrowserUseAgent("openai:gpt-4.1-mini", priced_llm, use_vision=False),
              BrowserUseAgent(None, unpriced_llm, use_vision=False)]
    specs = [EpisodeSpec(task, "constraint", a.name, 0, identity=agent_identity(a)) for a in agents]
    episodes = await run_local(specs, {(a.name, agent_identity(a)): a for a in agents}, tmp_path, sites_url=sites_url,
                               budget=Budget(max_steps=20, timeout_s=120, stall_s=90), concurrency=2)
    table = load_prices()
    for ep, spec, llm in zip(episodes, specs, (priced_llm, unpriced_llm)):
        assert ep.status == "ok", ep.error
        saved = EpisodeDir(spec.directory(tmp_path)).read_episode()
        u = saved.usage
        assert u is not None and u.source == "browser-use"
        assert len(llm.reported) == 2, "each model answered its own episode's two steps"
        assert u.llm_calls == 2 and u.tokens_in == sum(p for p, _ in llm.reported)
        assert u.tokens_out == sum(c for _, c in llm.reported) and u.tokens_in > u.tokens_out > 0
        assert u.tool_calls == 2, "the scroll and the done action"
        assert u.observation_bytes and u.observation_bytes > 1000, "the state messages browser-use sent its model"
        assert u.steps == saved.steps and 0 < u.wall_s <= saved.seconds
        assert saved.versions.browser_use == "0.13.14" and saved.versions.chromium, saved.versions
        assert saved.task_revision == task.grading_revision
    priced, unpriced = (EpisodeDir(s.directory(tmp_path)).read_episode().usage for s in specs)
    price = table.models["openai:gpt-4.1-mini"]
    assert priced.cost_usd == pytest.approx(token_cost(price, priced.tokens_in, priced.tokens_out), abs=1e-8)
    assert priced.priced_as == ["openai:gpt-4.1-mini"]
    assert unpriced.cost_usd is None and unpriced.unpriced == ["scripted"], "a model not in the table: cost unknown"
    await _cost_in_summary_and_report(tmp_path, priced.cost_usd, context)


async def _cost_in_summary_and_report(runs: Path, cost: float, context) -> None:
    """The run graded: summary.json and summary.md carry each row's cost (a dash where unknown); the report's
    overview draws the cost chart with the priced row on its Pareto front, in Chromium with no console error."""
    from rig.grading.runs import grade_runs
    from rig.report import write_report

    grade_runs(runs)
    data = json.loads((runs / "summary.json").read_text())
    costs = sorted((g["cost_usd"] is None, g["cost_usd"]) for g in data["groups"])
    assert costs == [(False, pytest.approx(cost)), (True, None)], costs
    md = (runs / "summary.md").read_text()
    assert "## Cost" in md and f"${cost:.4g}" in md and "| – |" in md, md
    index = write_report(runs, runs.parent / "site")
    errors: list[str] = []
    context.on("console", lambda m: errors.append(m.text) if m.type in ("error", "warning") else None)
    context.on("weberror", lambda e: errors.append(str(e.error)))
    page = await context.new_page()
    await page.goto(index.as_uri())
    assert await page.locator("#fig-cost svg.cost-scatter circle.point.pareto").count() == 1
    assert "Pareto front" in await page.locator("#fig-cost figcaption").inner_text()
    assert errors == [], errors


def test_the_pareto_front_is_the_rows_no_other_beats_on_cost_and_item_f1():
    from rig.report.charts import CostPoint, cost_scatter, pareto_front

    pts = [CostPoint(1, "a", 0.10, 0.50), CostPoint(2, "b", 0.20, 0.40), CostPoint(3, "c", 0.30, 0.80),
           CostPoint(4, "d", 0.05, 0.20), CostPoint(5, "e", 0.30, 0.80)]
    assert [p.group for p in pareto_front(pts)] == ["d", "a", "c"]
    assert [p.pareto for p in pts] == [True, False, True, True, True], "b is dearer and worse than a; e ties c"
    assert str(cost_scatter(pts)).count('class="point pareto"') == 4


# --- CLI agents report their own usage ---------------------------------------------------------------------------


def _tool_results(warc: Path) -> list[str]:
    """The text of every tool result the episode's archive holds, in order (`urn:sgr-rig:tool/...` records)."""
    with warc.open("rb") as fh:
        return [r.content_stream().read().decode() for r in ArchiveIterator(fh)
                if r.rec_type == "resource" and r.rec_headers.get_header("WARC-Target-URI").startswith("urn:sgr-rig:tool/")]


def _cli(tmp_path: Path, name: str, calls: list[dict], before: str = "") -> tuple[CliAgent, Path]:
    path, out = tmp_path / f"{name}.json", tmp_path / f"{name}-results.json"
    path.write_text(json.dumps(calls))
    command = (f"{before}{shlex.quote(sys.executable)} {shlex.quote(CLIENT)} {shlex.quote(str(path))} "
               f"--out {shlex.quote(str(out))}")
    return CliAgent(command), out


async def test_cli_agents_report_usage_through_the_tool_and_through_the_usage_file(tmp_path, sites_url):
    task = resolve_task("flights-06")
    final = {"tool": "final_answer", "args": {"answer": ANSWER}}
    report = {"tool": "report_usage", "args": {"tokens_in": 1200, "tokens_cached": 200, "tokens_out": 300,
                                               "llm_calls": 2, "model": "openai:gpt-4.1-mini"}}
    by_tool, tool_results = _cli(tmp_path, "tool", [
        report, {"tool": "report_usage", "args": {"tokens_in": 800, "tokens_out": 100, "llm_calls": 1,
                                                  "model": "gpt-4.1-mini"}},
        {"tool": "report_usage", "args": {}},  # nothing to report: a tool error, nothing added
        {"tool": "web_fetch", "args": {"url": "/flights/search"}}, final])
    total = {"tokens_in": 5000, "tokens_out": 700, "llm_calls": 4, "cost_usd": 0.25, "model": "acme:private"}
    by_file, _ = _cli(tmp_path, "file", [report, final],
                      before=f"printf %s {shlex.quote(json.dumps(total))} > \"$RIG_USAGE_FILE\" && ")
    agents = [by_tool, by_file]
    specs = [EpisodeSpec(task, "constraint", a.name, 0, identity=agent_identity(a)) for a in agents]
    episodes = await run_local(specs, {(a.name, agent_identity(a)): a for a in agents}, tmp_path / "runs",
                               sites_url=sites_url, budget=Budget(max_steps=30, timeout_s=LONG, stall_s=LONG),
                               concurrency=2)
    for ep, spec in zip(episodes, specs):
        log = EpisodeDir(spec.directory(tmp_path / "runs")).agent_log_file.read_text()
        assert ep.status == "ok", (ep.error, log[-2000:])

    d = EpisodeDir(specs[0].directory(tmp_path / "runs"))
    tool = d.read_episode().usage
    results = json.loads(tool_results.read_text())  # the client may be stopped before it writes the last one
    assert [r["is_error"] for r in results][:4] == [False, False, True, False]
    assert (tool.tokens_in, tool.tokens_cached, tool.tokens_out, tool.llm_calls) == (2000, 200, 400, 3)
    price = load_prices().models["openai:gpt-4.1-mini"]
    assert tool.cost_usd == pytest.approx(token_cost(price, 2000, 400, 200)) and tool.source == "report_usage"
    assert tool.tool_calls == 5, "every call of the tool server, report_usage included"
    shown = _tool_results(d.warc_file)
    assert [r["text"] for r in results] == shown[:len(results)]
    assert tool.observation_bytes == sum(len(t.encode()) for t in shown), "what the agent was shown"

    from_file = EpisodeDir(specs[1].directory(tmp_path / "runs")).read_episode().usage
    assert (from_file.tokens_in, from_file.tokens_out, from_file.llm_calls) == (5000, 700, 4), \
        "the command's own total replaces its report_usage calls"
    assert from_file.cost_usd == 0.25 and from_file.source == "usage_file" and from_file.priced_as is None
