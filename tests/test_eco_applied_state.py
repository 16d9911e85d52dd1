"""The eco site's dimensions are the APPLIED state: what the shown results were computed under (the results table's
`data-scope`), not what the form controls are set to. Setting the form without running the query changes `form.*`
only; a gold state is reached when the results reflect it."""

from __future__ import annotations

import httpx

from recorders.adapter import load_adapter
from recorders.models import Step
from recorders.state import fact_state
from recorders.trajectory import read_trajectory
from rig.formats.actions import parse_actions
from rig.grading.grade import grade_episode
from rig.grading.states import holds
from rig.runner.record import record_actions
from rig.sites.eco import SITE
from rig.tasks import resolve_task

TASK = resolve_task("eco-01")  # wettest month of 2014 (monthly, by precipitation), then its days with >= 10 mm
READY = 'table#results[data-state="ready"]'
SCRIPT = [
    {"goto": "/eco/browse"},
    # the first gold state's controls, set but not run
    {"select": {"selector": "#dataset", "value": "seattle-weather"}},
    {"fill": {"selector": "#start", "value": "2014-01"}},
    {"fill": {"selector": "#end", "value": "2014-12"}},
    {"check": "#agg-monthly"},
    {"select": {"selector": "#sort", "value": "precipitation"}},
    {"select": {"selector": "#dir", "value": "desc"}},
    {"click": "#run"},
    {"wait_for": READY},
    {"extract_table": {"selector": "table#results", "as": "months"}},
    # the second gold state's controls, set but not run: the results still show the monthly totals
    {"fill": {"selector": "#start", "value": "${months[0].Month}"}},
    {"fill": {"selector": "#end", "value": "${months[0].Month}"}},
    {"check": "#agg-daily"},
    {"fill": {"selector": "#min_precip", "value": "10"}},
    {"select": {"selector": "#sort", "value": "period"}},
    {"select": {"selector": "#dir", "value": "asc"}},
    {"click": "#run"},
    {"wait_for": 'table#results[data-state="ready"][data-scope*="agg=daily"]'},
    {"extract_table": {"selector": "table#results", "as": "days"}},
    {"answer": {"from": "days", "columns": ["Date", "Precipitation (mm)", "Max temp (°C)"]}},
]
#: Indexes (in SCRIPT) of the two clicks on "Run query".
RUNS = [i for i, a in enumerate(SCRIPT) if a == {"click": "#run"}]


def _reached(state: dict, name: str) -> bool:
    gold = next(s for s in TASK.gold_states if s.name == name)
    return all(holds(c, state) for c in gold.constraints)


def _dims(step: Step) -> dict:
    return {k: v for k, v in step.state.items() if k.startswith("dim.")}


def test_dimensions_read_the_applied_scope_not_the_form():
    """Raw keys as the recorder gives them: the form says one thing, the results table another."""
    adapter = load_adapter(SITE.adapter)
    scope = "dataset=seattle-weather&start=2014-03&end=2014-03&min_precip=10&agg=daily&sort=period&dir=asc" \
            "&weather=fog&weather=drizzle"
    facts = fact_state(adapter, {"results_scope": scope, "batch_size": "25", "rows_shown": "10"})
    assert facts["page.results_scope"] == scope
    assert facts["page.results_scope.weather"] == ["drizzle", "fog"] and facts["page.results_scope.agg"] == "daily"
    assert adapter.dims(fact_state(adapter, {"results_scope": "dataset=seattle-weather&weather=snow"})) == {
        "dim.dataset": "seattle-weather", "dim.weather": ["snow"]}, "the form's shapes: a one-value group is a list"
    form = {"form.dataset": "sf-temps", "form.start": "2010-01", "form.end": "", "form.weather": ["sun"],
            "form.source": [], "form.min_precip": "", "form.min_temp": "70", "form.agg": ["monthly"],
            "form.sort": "temp_max", "form.dir": "desc", "form.limit": "50"}
    assert adapter.dims({**form, **facts}) == {
        "dim.dataset": "seattle-weather", "dim.time_window": "2014-03..2014-03", "dim.weather": ["drizzle", "fog"],
        "dim.min_precip": "10", "dim.agg": ["daily"], "dim.sort": "period", "dim.sort_dir": "asc",
        "dim.batch_size": "25",
    }
    assert adapter.dims(form) == {}, "no query has run: no applied state, whatever the form says"


async def test_the_api_says_which_query_its_rows_were_computed_under(sites_url):
    body = {"dataset": "iowa-electricity", "start": "2001-01", "end": "2001-12", "agg": "yearly", "weather": ["snow"],
            "source": [], "min_precip": "5", "min_temp": "", "sort": "temp_max", "dir": "desc", "limit": 25}
    async with httpx.AsyncClient() as client:
        data = (await client.post(f"{sites_url}/eco/api/query", json=body)).json()
    # the weather and precipitation filters do not apply to generation data, nor a temperature sort: left out
    assert data["scope"] == "dataset=iowa-electricity&start=2001-01&end=2001-12&agg=yearly&sort=period&dir=desc"
    assert len(data["notes"]) == 3 and data["limit"] == 25


async def test_a_gold_state_is_reached_when_the_results_show_it_not_when_the_form_is_set(browser, sites_url, tmp_path):
    ep = await record_actions(browser, parse_actions(SCRIPT, "eco applied state"), tmp_path, agent="test",
                              base_url=sites_url)
    assert ep.status == "ok", ep.error
    steps = read_trajectory(tmp_path / "trajectory.jsonl")
    agent = [s for s in steps if s.action.source == "agent"]
    assert len(agent) == len(SCRIPT)  # one step per action, in order
    first_run, second_run = (agent[i] for i in RUNS)

    # the form set, no query run: no applied state at all, the first gold state not reached
    for s in agent[1:RUNS[0]]:
        assert _dims(s) == {} and not _reached(s.state, "wettest_month"), s.step
    assert agent[RUNS[0] - 1].state["form.agg"] == ["monthly"] and agent[RUNS[0] - 1].state["form.dir"] == "desc"

    # once the query ran (the click's step, or the wait for its rows), the results show the first gold state
    shown = next(s for s in agent[RUNS[0]:] if _dims(s))
    assert shown.step <= agent[RUNS[0] + 1].step and _reached(shown.state, "wettest_month")
    applied = _dims(agent[RUNS[0] + 1])
    assert applied == {"dim.dataset": "seattle-weather", "dim.time_window": "2014-01..2014-12", "dim.agg": ["monthly"],
                       "dim.sort": "precipitation", "dim.sort_dir": "desc", "dim.batch_size": "10"}

    # the form set to the second gold state, not run: the dimensions stay the previously applied ones
    for s in agent[RUNS[0] + 2:RUNS[1]]:
        assert _dims(s) == applied, s.step
        assert _reached(s.state, "wettest_month") and not _reached(s.state, "heavy_days"), s.step
    before = agent[RUNS[1] - 1].state
    assert (before["form.start"], before["form.end"], before["form.agg"], before["form.min_precip"]) == \
           ("2014-03", "2014-03", ["daily"], "10"), "the raw form keys are still recorded"

    # after the second run the results show the second gold state
    after = agent[RUNS[1] + 1].state
    assert _reached(after, "heavy_days") and not _reached(after, "wettest_month")
    assert second_run.step < agent[RUNS[1] + 1].step

    # the grader agrees: each gold state first reached only once its query ran
    grade = grade_episode(tmp_path, TASK)
    assert grade.scored and grade.passed, grade.error
    reach = {r.name: r.step for r in grade.gold_states}
    assert first_run.step <= reach["wettest_month"] <= agent[RUNS[0] + 1].step
    assert second_run.step <= reach["heavy_days"] <= agent[RUNS[1] + 1].step
