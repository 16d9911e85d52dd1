"""The stats portal in real Chromium: tree, indicator and year window, tabs, sorting, pages, country page, CSV."""

from __future__ import annotations

import csv
import io
import re
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from rig.agents.reference import gold_mismatch, run_reference
from rig.sites.stats.gold import GOLD
from rig.tasks import resolve_task

TASK_IDS = sorted(GOLD)


def _query(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query)


def _fragment(url: str) -> str:
    return urlsplit(url).fragment


async def test_default_state_shows_no_data_and_no_gold(page, sites_url):
    for path in ("/stats/", "/stats/explore"):
        await page.goto(sites_url + path)
        text = await page.locator("body").inner_text()
        for tid in TASK_IDS:
            for row in resolve_task(tid).gold.rows:
                assert not all(cell in text for cell in row), f"{path} shows {tid} gold row {row}"
    items = page.locator('[role="tree"] [role="treeitem"]')
    assert await items.count() == 1
    world = items.first
    assert await world.get_attribute("aria-level") == "1"
    assert await world.get_attribute("aria-expanded") == "false"
    assert await world.get_attribute("aria-selected") == "false"
    assert await page.locator("table.results").count() == 0
    assert await page.locator('role=tab[name="Table"]').get_attribute("aria-selected") == "true"
    assert "Select World" in await page.locator("#scope-status").inner_text()
    html = httpx.get(sites_url + "/stats/explore").text
    assert 'data-node="Africa"' not in html and "Algeria" not in html


async def test_tree_loads_children_on_demand_and_selects_scope(page, sites_url):
    await page.goto(sites_url + "/stats/explore")
    async with page.expect_response(lambda r: "/stats/api/children?node=World" in r.url) as resp:
        await page.click('role=treeitem[name="World"]')
    assert (await (await resp.value).json())["children"][0]["id"] == "Africa"
    world = page.locator('role=treeitem[name="World"]')
    assert await world.get_attribute("aria-expanded") == "true"
    assert await world.get_attribute("aria-selected") == "true"
    await page.wait_for_selector('#panel-table table.results[data-node="World"]')
    assert _query(page.url)["node"] == ["World"] and _fragment(page.url) == "view=table"
    assert await page.inner_text("#result-count") == "142"
    continents = page.locator('[role="treeitem"][aria-level="2"]')
    assert await continents.all_inner_texts() == ["Africa", "Americas", "Asia", "Europe", "Oceania"]
    assert await continents.first.get_attribute("aria-setsize") == "5"

    # keyboard: down to Africa, expand it, step into its first country, select it
    await world.focus()
    await page.keyboard.press("ArrowDown")
    africa = page.locator('role=treeitem[name="Africa"]')
    assert await africa.evaluate("el => el === document.activeElement")
    async with page.expect_response(lambda r: "node=Africa" in r.url and "/api/children" in r.url):
        await page.keyboard.press("ArrowRight")
    await page.wait_for_selector('role=treeitem[name="Algeria"]')
    assert await page.locator('[role="treeitem"][aria-level="3"]').count() == 52
    await page.keyboard.press("ArrowRight")
    await page.keyboard.press("Enter")
    algeria = page.locator('role=treeitem[name="Algeria"]')
    assert await algeria.get_attribute("aria-selected") == "true"
    assert await world.get_attribute("aria-selected") == "false"
    assert _query(page.url)["node"] == ["Africa/Algeria"]
    await page.wait_for_selector('#panel-table table.results[data-node="Africa/Algeria"]')
    assert await page.inner_text("#result-count") == "1"
    await page.keyboard.press("ArrowLeft")  # to the parent
    await page.keyboard.press("ArrowLeft")  # collapse it
    assert await africa.get_attribute("aria-expanded") == "false"
    assert await page.locator('[role="treeitem"][aria-level="3"]').count() == 0

    # a deep link reveals the path in the tree and keeps the selection
    await page.goto(sites_url + "/stats/explore?node=Asia/China&indicator=pop")
    await page.wait_for_selector('#panel-table table.results[data-node="Asia/China"]')
    # the tree reveals the path as its children load, which may finish after the table is drawn
    await page.wait_for_selector('role=treeitem[name="China"][selected=true]')
    assert await page.locator('[role="treeitem"][aria-selected="true"]').all_inner_texts() == ["China"]
    assert await page.input_value('select[name="indicator"]') == "pop"
    assert _fragment(page.url) == "view=table"
    await page.click('role=treeitem[name="Asia"] >> .twisty')  # the twisty toggles without selecting
    assert await page.locator('role=treeitem[name="Asia"]').get_attribute("aria-expanded") == "false"
    assert await page.locator('[role="treeitem"][aria-level="3"]').count() == 0
    assert _query(page.url)["node"] == ["Asia/China"]


async def test_window_tabs_sorting_and_pages(page, sites_url):
    await page.goto(sites_url + "/stats/explore?node=Africa")
    await page.wait_for_selector('#panel-table table.results[data-node="Africa"]')
    await page.select_option('select[name="year_from"]', "1992")
    await page.select_option('select[name="year_to"]', "2002")
    await page.wait_for_selector('#panel-table table.results[data-year-from="1992"][data-year-to="2002"]')
    heads = await page.locator("#panel-table thead th").all_inner_texts()
    assert heads == ["Country", "Continent", "1992", "1997", "2002"]
    q = _query(page.url)
    assert (q["year_from"], q["year_to"], q["indicator"]) == (["1992"], ["2002"], ["lifeExp"])
    assert await page.locator("#panel-table tbody tr").count() == 25
    assert await page.inner_text("#page-count") == "3"

    # sorting: first click ascending, second descending; state in aria-sort, URL and status line
    await page.click('#panel-table th[data-col="2002"] button')
    await page.wait_for_selector('#panel-table th[data-col="2002"][aria-sort="ascending"]')
    await page.click('#panel-table th[data-col="2002"] button')
    await page.wait_for_selector('#panel-table th[data-col="2002"][aria-sort="descending"]')
    assert _query(page.url)["sort"] == ["2002"] and _query(page.url)["dir"] == ["desc"]
    assert await page.inner_text("#sort-status") == "Sorted by 2002, descending"
    top = await page.locator("#panel-table tbody tr").first.locator("th, td").all_inner_texts()
    assert top == ["Reunion", "Africa", "73.615", "74.772", "75.744"]

    # pages
    await page.click('role=button[name="Next page"]')
    await page.wait_for_selector('#panel-table table.results[data-page="2"]')
    assert _query(page.url)["page"] == ["2"] and await page.inner_text("#current-page") == "2"
    await page.click('role=button[name="Page 3"]')
    await page.wait_for_selector('#panel-table table.results[data-page="3"]')
    assert await page.locator("#panel-table tbody tr").count() == 2
    await page.go_back()
    await page.wait_for_selector('#panel-table table.results[data-page="2"]')

    # tabs: fragment, aria-selected, panels, different numbers per view
    await page.click('role=tab[name="Summary"]')
    await page.wait_for_selector("#panel-summary table.results")
    assert _fragment(page.url) == "view=summary" and "sort" not in _query(page.url)
    assert await page.locator('role=tab[name="Summary"]').get_attribute("aria-selected") == "true"
    assert await page.locator("#panel-table").is_hidden()
    assert await page.locator("#panel-summary thead th").all_inner_texts() == [
        "Country", "Continent", "First", "Last", "Change", "Change (%)"]
    await page.keyboard.press("ArrowRight")
    await page.wait_for_selector("#panel-aggregate table.results")
    assert _fragment(page.url) == "view=aggregate"
    row = await page.locator("#panel-aggregate tbody tr").first.locator("td").all_inner_texts()
    assert row[:3] == ["Africa", "1992", "52"]
    await page.select_option('select[name="indicator"]', "pop")
    await page.wait_for_selector('#panel-aggregate table.results[data-indicator="pop"]')
    heads = await page.locator("#panel-aggregate thead th").all_inner_texts()
    assert heads == ["Region", "Year", "Countries", "Total", "Mean", "Minimum", "Maximum"]

    # an impossible window is refused with a message, not an empty table
    await page.select_option('select[name="year_from"]', "2007")
    await page.wait_for_selector('#panel-aggregate [role="alert"]')
    assert "after the end year" in await page.inner_text("#panel-aggregate")


async def test_country_page_and_csv_export(page, sites_url):
    await page.goto(sites_url + "/stats/explore?node=Oceania&indicator=gdpPercap&year_from=2002#view=summary")
    await page.wait_for_selector('#panel-summary table.results[data-node="Oceania"]')
    href = await page.get_attribute("#export-link", "href")
    assert _query(href) == {"node": ["Oceania"], "indicator": ["gdpPercap"], "year_from": ["2002"],
                            "year_to": ["2007"], "view": ["summary"]}
    await page.click('role=link[name="New Zealand"]')
    await page.wait_for_selector("table#country-series")
    assert page.url.endswith("/stats/country/New%20Zealand")
    assert await page.inner_text("#country-continent") == "Oceania"
    assert await page.locator("#country-series tbody tr").count() == 12

    base = sites_url + "/stats/export.csv"
    resp = httpx.get(base, params={"node": "Africa", "indicator": "gdpPercap", "year_from": "2007", "year_to": "2007",
                                   "view": "table", "sort": "2007", "dir": "desc"})
    assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(resp.text)))
    assert rows[0] == ["Country", "Continent", "2007"] and len(rows) == 53  # every page, not just 25 rows
    assert [r[0] for r in rows[26:36]] == [r[0] for r in GOLD["stats-03"]()]
    assert all(re.fullmatch(r"\d+\.\d\d", r[2]) for r in rows[1:])
    agg = list(csv.reader(io.StringIO(httpx.get(base, params={"node": "World", "view": "aggregate"}).text)))
    assert agg[0][:3] == ["Region", "Year", "Countries"] and len(agg) == 1 + 6 * 12
    assert httpx.get(base, params={"node": "Atlantis"}).status_code == 400


@pytest.mark.parametrize("task_id", TASK_IDS)
async def test_reference_solution_reaches_gold(page, sites_url, task_id):
    task = resolve_task(task_id)
    assert GOLD[task_id]() == task.gold.rows
    answer = await run_reference(task, page, sites_url)
    assert gold_mismatch(task, answer) is None
