"""The eco site (EcoData Online) in real Chromium: every state mechanism, the CSV export and its tasks."""

from __future__ import annotations

import csv
import io
import json

import httpx
import pytest

from recorders.adapter import load_adapter
from rig.agents.reference import gold_mismatch, run_reference
from rig.sites.eco import SITE
from rig.sites.eco.gold import GOLD
from rig.tasks import load_task

TASK_IDS = sorted(GOLD)
READY = 'table#results[data-state="ready"]'


def _task(task_id: str):
    return load_task(f"rig/tasks/sgr_mini/{task_id}.yaml")


async def _rows(page) -> list[list[str]]:
    return await page.eval_on_selector_all(
        "table#results tbody tr", "trs => trs.map(tr => Array.from(tr.cells).map(td => td.innerText.trim()))"
    )


async def _headers(page) -> list[str]:
    return await page.eval_on_selector_all("table#results thead th", "ths => ths.map(th => th.innerText.trim())")


async def _run(page) -> dict:
    """Click Run query; return the JSON body it POSTed, once the new rows are shown."""
    async with page.expect_request("**/eco/api/query") as req:
        await page.click("#run")
    await page.wait_for_selector(READY)
    return json.loads((await req.value).post_data)


async def test_default_state_is_an_empty_form(page, sites_url):
    await page.goto(f"{sites_url}/eco/")
    home = await page.inner_text("body")
    await page.click('nav a[href$="/browse"]')
    assert page.url == f"{sites_url}/eco/browse"
    assert await page.input_value("#dataset") == ""
    assert await page.is_hidden("table#results") and await page.is_hidden("#result-count")
    assert await page.get_attribute("table#results", "data-state") == "idle"
    assert await page.is_hidden("#load-more") and await page.is_hidden("#export")
    assert await _rows(page) == []
    text = home + await page.inner_text("body")
    for task_id in TASK_IDS:
        for row in _task(task_id).gold.rows:
            assert "\t".join(row) not in text, f"{task_id}: gold row {row} visible in the default state"


async def test_run_query_posts_json_and_keeps_the_url(page, sites_url):
    await page.goto(f"{sites_url}/eco/browse")
    await page.select_option("#dataset", "seattle-weather")
    await page.fill("#start", "2014-01")
    await page.fill("#end", "2014-12")
    await page.check("#agg-monthly")
    await page.select_option("#sort", "precipitation")
    await page.select_option("#dir", "desc")
    body = await _run(page)
    assert body == {"dataset": "seattle-weather", "start": "2014-01", "end": "2014-12", "weather": [], "source": [],
                    "min_precip": "", "min_temp": "", "agg": "monthly", "sort": "precipitation", "dir": "desc",
                    "limit": 10, "offset": 0}
    assert page.url == f"{sites_url}/eco/browse"
    assert await page.inner_text("#result-count") == "12 records"
    assert await page.inner_text("table#results caption") == "Seattle daily weather; monthly; 2014-01 to 2014-12"
    assert await _headers(page) == ["Month", "Days", "Precipitation (mm)", "Mean max temp (°C)",
                                    "Mean min temp (°C)", "Mean wind (m/s)"]
    rows = await _rows(page)
    assert len(rows) == 10 and rows[0][:3] == ["2014-03", "31", "240.0"]
    assert await page.get_attribute('th:has(button[data-sort="precipitation"])', "aria-sort") == "descending"
    assert await page.get_attribute("table#results", "data-sort") == "precipitation:desc"
    assert await page.is_visible("#load-more")


async def test_load_more_appends_the_next_batch_from_the_same_url(page, sites_url):
    await page.goto(f"{sites_url}/eco/browse")
    await page.select_option("#dataset", "seattle-weather")
    await page.fill("#start", "2012-01")
    await page.fill("#end", "2012-01")
    await _run(page)
    first = await _rows(page)
    assert [r[0] for r in first] == [f"2012-01-{d:02d}" for d in range(1, 11)]
    bodies, urls = [], []
    for expected in (20, 30, 31):
        async with page.expect_request("**/eco/api/query") as req:
            await page.click("#load-more")
        await page.wait_for_selector(f'table#results[data-state="ready"][data-rows="{expected}"]')
        bodies.append(json.loads((await req.value).post_data)["offset"])
        urls.append((await req.value).url)
    assert bodies == [10, 20, 30] and len(set(urls)) == 1 and urls[0].endswith("/eco/api/query")
    rows = await _rows(page)
    assert rows[:10] == first and [r[0] for r in rows] == [f"2012-01-{d:02d}" for d in range(1, 32)]
    assert await page.get_attribute("table#results", "data-batches") == "4"
    assert await page.get_attribute("table#results", "data-complete") == "true"
    assert await page.is_hidden("#load-more")
    assert await page.inner_text("#shown") == "Showing 31 of 31"


async def test_header_sort_toggles_and_sets_aria_sort(page, sites_url):
    await page.goto(f"{sites_url}/eco/browse")
    await page.select_option("#dataset", "iowa-electricity")
    await page.check("#agg-yearly")
    await _run(page)
    assert await page.get_attribute('th:has(button[data-sort="period"])', "aria-sort") == "ascending"
    for direction, aria in (("asc", "ascending"), ("desc", "descending")):
        async with page.expect_request("**/eco/api/query") as req:
            await page.click('table#results th button[data-sort="net_generation"]')
        await page.wait_for_selector(f'table#results[data-state="ready"][data-sort="net_generation:{direction}"]')
        posted = json.loads((await req.value).post_data)
        assert (posted["sort"], posted["dir"]) == ("net_generation", direction)
        assert await page.input_value("#sort") == "net_generation" and await page.input_value("#dir") == direction
        assert await page.get_attribute('th:has(button[data-sort="net_generation"])', "aria-sort") == aria
        assert await page.get_attribute('th:has(button[data-sort="period"])', "aria-sort") == "none"
        values = [int(r[2]) for r in await _rows(page)]
        assert values == sorted(values, reverse=direction == "desc")
    assert await _headers(page) == ["Year", "Source", "Net generation (GWh)"]


async def test_filters_thresholds_aggregation_and_batch_size(page, sites_url):
    await page.goto(f"{sites_url}/eco/browse")
    await page.select_option("#dataset", "seattle-weather")
    await page.check("#weather-fog")
    await page.check("#weather-drizzle")
    await page.fill("#min_precip", "2")
    await page.select_option("#limit", "50")
    body = await _run(page)
    assert sorted(body["weather"]) == ["drizzle", "fog"] and body["limit"] == 50
    rows = await _rows(page)
    assert rows and {r[1] for r in rows} <= {"fog", "drizzle"} and all(float(r[2]) >= 2 for r in rows)
    assert len(rows) == min(50, int(await page.get_attribute("table#results", "data-total")))
    await page.uncheck("#weather-fog")
    await page.uncheck("#weather-drizzle")
    await page.fill("#min_precip", "")
    await page.select_option("#dataset", "seattle-temps")
    await page.fill("#min_temp", "75")
    await page.check("#agg-daily")
    await _run(page)
    assert await _headers(page) == ["Date", "Hours", "Mean temp (°F)", "Min temp (°F)", "Max temp (°F)"]
    assert all(float(r[4]) >= 75 for r in await _rows(page))
    await page.check("#agg-yearly")
    await page.fill("#min_temp", "")
    await page.check("#weather-snow")
    await _run(page)
    assert await _rows(page) == [["2010", "8759", "52.0", "37.5", "75.9"]]
    assert "weather-type filter does not apply" in await page.inner_text("#notes")
    await page.select_option("#dataset", "iowa-electricity")
    await page.uncheck("#weather-snow")
    await page.select_option("#source", ["Nuclear Energy", "Renewables"])
    await page.check("#agg-monthly")
    await page.click("#run")
    await page.wait_for_selector('table#results[data-state="error"]')
    assert "yearly values only" in await page.inner_text("#status")
    await page.check("#agg-yearly")
    await page.fill("#start", "2015-01")
    await _run(page)
    rows = await _rows(page)
    assert [r[:2] for r in rows] == [["2015", "Nuclear Energy"], ["2015", "Renewables"], ["2016", "Nuclear Energy"],
                                     ["2016", "Renewables"], ["2017", "Nuclear Energy"], ["2017", "Renewables"]]


async def test_dataset_pages_show_metadata(page, sites_url):
    await page.goto(f"{sites_url}/eco/")
    await page.click("text=Seattle daily weather")
    assert page.url == f"{sites_url}/eco/dataset/seattle-weather"
    assert await page.inner_text("#period") == "2012-01-01 to 2015-12-31"
    assert await page.inner_text("#records") == "1461"
    assert "NOAA" in await page.inner_text("#source")
    units = await page.inner_text("table#units")
    assert "mm" in units and "°C" in units and "m/s" in units
    response = await page.goto(f"{sites_url}/eco/dataset/iowa-electricity")
    assert "GWh" in await page.inner_text("table#units") and "2001 to 2017" in await page.inner_text("#period")
    response = await page.goto(f"{sites_url}/eco/dataset/no-such-station")
    assert response.status == 404


async def test_csv_export_is_exactly_the_current_scope(page, sites_url):
    await page.goto(f"{sites_url}/eco/browse")
    await page.select_option("#dataset", "seattle-weather")
    await page.fill("#start", "2013-01")
    await page.fill("#end", "2013-12")
    await page.check("#weather-rain")
    await page.select_option("#sort", "wind")
    await page.select_option("#dir", "desc")
    await _run(page)
    total = int(await page.get_attribute("table#results", "data-total"))
    assert total == 60 and len(await _rows(page)) == 10
    while await page.is_visible("#load-more"):
        await page.click("#load-more")
        await page.wait_for_selector(READY)
    shown = await _rows(page)
    href = await page.get_attribute("#export", "href")
    assert "weather=rain" in href and "dir=desc" in href and "offset" not in href
    # the link, followed with Playwright's request API, and the same scope by httpx: every row, in the shown order
    via_page = await page.request.get(f"{sites_url}{href}")
    assert via_page.ok and via_page.headers["content-type"].startswith("text/csv")
    table = list(csv.reader(io.StringIO(await via_page.text())))
    assert table[0] == await _headers(page) and table[1:] == shown and len(table) - 1 == total
    params = {"dataset": "seattle-weather", "start": "2013-01", "end": "2013-12", "weather": "rain",
              "sort": "wind", "dir": "desc"}
    async with httpx.AsyncClient() as client:
        direct = await client.get(f"{sites_url}/eco/export.csv", params=params)
        bad = await client.get(f"{sites_url}/eco/export.csv", params={"dataset": "iowa-electricity"})
        api_bad = await client.post(f"{sites_url}/eco/api/query", content=b"not json")
    assert direct.text == await via_page.text()
    assert bad.status_code == 400 and "yearly" in bad.text
    assert api_bad.status_code == 400 and "error" in api_bad.json()


def test_adapter_reads_the_applied_state():
    """Dimensions come from the query the results were computed under (page.results_scope.*), never from form.*."""
    adapter = load_adapter(SITE.adapter)
    form = {"form.dataset": "sf-temps", "form.start": "2010-01", "form.end": "", "form.weather": ["sun"],
            "form.source": [], "form.min_precip": "", "form.min_temp": "70", "form.agg": ["monthly"],
            "form.sort": "temp_mean", "form.dir": "asc", "form.limit": "50"}
    applied = {"page.results_scope.dataset": "seattle-weather", "page.results_scope.start": "2014-03",
               "page.results_scope.end": "2014-03", "page.results_scope.weather": ["drizzle", "fog"],
               "page.results_scope.min_precip": "10", "page.results_scope.agg": "daily",
               "page.results_scope.sort": "temp_max", "page.results_scope.dir": "desc", "page.batch_size": "10"}
    assert adapter.dims({**form, **applied}) == {
        "dim.dataset": "seattle-weather", "dim.time_window": "2014-03..2014-03", "dim.weather": ["drizzle", "fog"],
        "dim.min_precip": "10", "dim.agg": ["daily"], "dim.sort": "temp_max", "dim.sort_dir": "desc",
        "dim.batch_size": "10",
    }
    assert adapter.dims(form) == {}, "no query has run yet"
    used = {c.key.removeprefix("dim.") for t in TASK_IDS for s in _task(t).gold_states for c in s.constraints}
    assert used - {"page.rows_shown"} <= set(adapter.dimensions) and "rows_shown" in adapter.page


@pytest.mark.parametrize("task_id", TASK_IDS)
async def test_reference_solution_yields_gold(task_id, page, sites_url):
    task = _task(task_id)
    assert GOLD[task_id]() == task.gold.rows
    answer = await run_reference(task, page, sites_url)
    assert gold_mismatch(task, answer) is None
