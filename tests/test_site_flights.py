"""The flights site in real Chromium: every state mechanism, entity pages, CSV export, and its five tasks."""

from __future__ import annotations

import csv
import io
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from recorders.adapter import load_adapter
from rig.agents.reference import gold_mismatch, run_reference
from rig.sites.flights import SITE
from rig.sites.flights.gold import GOLD, flights_frame
from rig.tasks import load_task
from rig.tasks.loader import BUNDLED_DIR

TASK_IDS = sorted(GOLD)


def _query(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query, keep_blank_values=True)


async def _column(page, name: str) -> list[str]:
    headers = [h.strip() for h in await page.locator("#results thead th").all_inner_texts()]
    i = headers.index(name) + 1
    return [c.strip() for c in await page.locator(f"#results tbody tr td:nth-child({i})").all_inner_texts()]


async def test_default_search_page_shows_only_the_form(page, sites_url):
    await page.goto(f"{sites_url}/flights/search")
    assert await page.locator("#prompt").is_visible()
    assert await page.locator("#results").count() == 0
    for label in ("Origin airport", "Carriers", "From", "To", "Destination", "Minimum delay (minutes)", "Show",
                  "Minimum flights per row", "Cancelled", "Saturday", "Departure delay"):
        assert await page.get_by_label(label, exact=True).count() == 1, label


async def test_every_filter_control_reaches_the_query(page, sites_url):
    await page.goto(f"{sites_url}/flights/")
    await page.click("text=Search flights")
    await page.select_option("#origin", "JFK")
    await page.select_option("#carrier", ["B6", "DL"])
    await page.select_option("#month_from", "1")
    await page.select_option("#month_to", "3")
    await page.check("input[name=status][value=cancelled]")
    await page.check("input[name=weekday][value=sat]")
    await page.check("input[name=weekday][value=sun]")
    await page.click('role=button[name="Apply"]')
    await page.wait_for_selector("#results")
    q = _query(page.url)
    assert q["origin"] == ["JFK"] and q["carrier"] == ["B6", "DL"] and q["weekday"] == ["sat", "sun"]
    assert q["status"] == ["cancelled"] and (q["month_from"], q["month_to"]) == (["1"], ["3"])
    f = flights_frame()
    want = f[(f.origin == "JFK") & f.carrier.isin(["B6", "DL"]) & f.month.between(1, 3)
             & f.weekday.isin(["sat", "sun"]) & (f.status == "cancelled")]
    assert await page.locator("#result-count").inner_text() == f"{len(want)} flights"
    assert set(await _column(page, "Carrier")) == {"B6", "DL"}
    assert set(await _column(page, "Status")) == {"Cancelled"}
    # the form comes back with the applied state
    assert await page.locator("#carrier").evaluate("s => [...s.selectedOptions].map(o => o.value)") == ["B6", "DL"]
    assert await page.locator("input[name=weekday][value=sun]").is_checked()

    await page.click("text=Reset")
    await page.check("input[name=metric][value=dep_delay]")
    await page.fill("#dest_q", "chicago")
    await page.fill("#min_delay", "60")
    await page.select_option("#group", "dest")
    await page.fill("#min_flights", "300")
    await page.click('role=button[name="Apply"]')
    await page.wait_for_selector('#results th:has-text("Avg dep. delay (min)")')
    assert await _column(page, "Destination") == ["ORD", "MDW"]
    chicago = f[f.dest.isin(["ORD", "MDW"]) & (f.dep_delay >= 60)]
    assert await page.locator("#result-count").inner_text() == f"2 destinations · {len(chicago):,} flights"
    await page.fill("#min_flights", "1000")
    await page.click('role=button[name="Apply"]')
    await page.wait_for_selector("#result-count:has-text('1 destination ')")
    assert await _column(page, "Destination") == ["ORD"]


async def test_sortable_headers_set_sort_dir_and_aria_sort(page, sites_url):
    await page.goto(f"{sites_url}/flights/search?origin=LGA&month_from=7&month_to=7&group=carrier")
    assert await page.locator("#results th[aria-sort]").count() == 1
    assert await page.locator("#results th[aria-sort=descending]").inner_text() == "Flights"
    flights = [int(v.replace(",", "")) for v in await _column(page, "Flights")]
    assert flights == sorted(flights, reverse=True)
    await page.click('#results th a:has-text("Avg arr. delay (min)")')
    await page.wait_for_selector('#results th[aria-sort=descending]:has-text("Avg arr. delay")')
    assert _query(page.url)["sort"] == ["delay"] and _query(page.url)["dir"] == ["desc"]
    delays = [float(v) for v in await _column(page, "Avg arr. delay (min)")]
    assert delays == sorted(delays, reverse=True)
    await page.click('#results th a:has-text("Avg arr. delay (min)")')
    await page.wait_for_selector('#results th[aria-sort=ascending]:has-text("Avg arr. delay")')
    assert [float(v) for v in await _column(page, "Avg arr. delay (min)")] == sorted(delays)
    await page.click('#results th a:has-text("Airline")')
    await page.wait_for_selector('#results th[aria-sort=ascending]:has-text("Airline")')
    names = await _column(page, "Airline")
    assert names == sorted(names)


async def test_pagination_marks_the_current_page(page, sites_url):
    await page.goto(f"{sites_url}/flights/search?origin=EWR&month_from=6&month_to=6&dest_q=RIC&metric=dep_delay"
                    "&min_delay=90&group=flight")
    assert await page.locator("#result-count").inner_text() == "29 flights"
    assert await page.locator("#results tbody tr").count() == 25
    assert await page.locator("nav.pagination a[aria-current=page]").inner_text() == "1"
    first = await _column(page, "Date")
    await page.click("nav.pagination a:text-is('2')")
    await page.wait_for_selector("nav.pagination a[aria-current=page]:text-is('2')")
    assert _query(page.url)["page"] == ["2"]
    assert await page.locator("#results tbody tr").count() == 4
    assert await page.locator("#result-count").inner_text() == "29 flights"
    assert first[-1] <= (await _column(page, "Date"))[0]
    assert [int(v) for v in await _column(page, "Dep. delay (min)")] and await page.locator("a[rel=prev]").count() == 1


async def test_result_rows_link_to_entity_pages(page, sites_url):
    await page.goto(f"{sites_url}/flights/search?origin=EWR&dest_q=Los+Angeles&month_from=3&month_to=5&group=tailnum")
    await page.click("#results a:text-is('N637VA')")
    await page.wait_for_selector("#plane-facts")
    assert page.url.endswith("/flights/plane/N637VA")
    assert await _facts(page, "#plane-facts") == {
        "Tail number": "N637VA", "Manufacturer": "AIRBUS", "Model": "A320-214", "Year built": "2008",
        "Type": "Fixed wing multi engine", "Engines": "2", "Engine": "Turbo-fan", "Seats": "182"}
    await page.click("#plane-carriers a:text-is('VX')")
    assert await page.locator("h1").inner_text() == "VX — Virgin America"
    await page.click("#carrier-origins a:text-is('EWR')")
    facts = await _facts(page, "#airport-facts")
    assert facts["Name"] == "Newark Liberty Intl" and facts["Altitude (ft)"] == "18"
    assert facts["Time zone"] == "America/New_York" and facts["UTC offset (h)"] == "-5"
    missing = await page.goto(f"{sites_url}/flights/plane/NOPE1")
    assert missing.status == 404 and "no plane NOPE1" in await page.locator("main").inner_text()


async def _facts(page, selector: str) -> dict[str, str]:
    heads = await page.locator(f"{selector} th").all_inner_texts()
    cells = await page.locator(f"{selector} td").all_inner_texts()
    return dict(zip([h.strip() for h in heads], [c.strip() for c in cells]))


async def test_month_range_must_not_be_empty(page, sites_url):
    await page.goto(f"{sites_url}/flights/search?month_from=9&month_to=3")
    assert "September comes after March" in await page.locator("[role=alert]").inner_text()
    assert await page.locator("#result-count").inner_text() == "0 flights"


async def test_csv_export_is_the_whole_current_result(page, sites_url):
    await page.goto(f"{sites_url}/flights/search?origin=EWR&month_from=6&month_to=6&dest_q=RIC&metric=dep_delay"
                    "&min_delay=90&group=flight&sort=dep_delay&dir=desc&page=2")
    href = await page.locator("#export-link").get_attribute("href")
    assert "page=" not in href and "sort=dep_delay" in href
    with httpx.Client(base_url=sites_url) as client:
        resp = client.get(href)
    assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(resp.text)))
    headers = [h.strip() for h in await page.locator("#results thead th").all_inner_texts()]
    assert rows[0] == headers and len(rows) == 1 + 29
    delays = [int(r[headers.index("Dep. delay (min)")]) for r in rows[1:]]
    assert delays == sorted(delays, reverse=True) and min(delays) >= 90
    # a grouped result fits one page: the CSV holds exactly the table's rows (numbers without separators)
    await page.goto(f"{sites_url}/flights/search?dest_q=chicago&group=dest")
    table = [[c.strip() for c in await r.locator("td").all_inner_texts()]
             for r in await page.locator("#results tbody tr").all()]
    async with page.expect_download() as download:  # the link downloads the file in a browser
        await page.click("#export-link")
    saved = await (await download.value).path()
    rows = list(csv.reader(io.StringIO(saved.read_text(encoding="utf-8"))))
    assert [[c.replace(",", "") for c in r] for r in table] == rows[1:]


def test_adapter_reads_the_applied_query():
    adapter = load_adapter(SITE.adapter)
    assert adapter.site == "flights" and adapter.path_prefix == "/flights/"
    state = {"url.query.origin": "LGA", "url.query.carrier": ["B6", "DL"], "url.query.month_from": "7",
             "url.query.month_to": "9", "url.query.sort": "delay", "url.query.dir": "desc", "url.query.dest_q": "",
             "form.origin": "JFK"}
    assert adapter.dims(state) == {"dim.origin": "LGA", "dim.carrier": ["B6", "DL"], "dim.time_window": "7-9",
                                   "dim.sort": "delay:desc"}
    tags = {name: d.tag for name, d in adapter.dimensions.items()}
    assert tags["origin"] == tags["time_window"] == "scope" and tags["metric"] == "criterion" and tags["page"] == "view"


@pytest.mark.parametrize("task_id", TASK_IDS)
async def test_task_reference_solution_and_gold(task_id, page, sites_url):
    task = load_task(BUNDLED_DIR / f"{task_id}.yaml")
    assert task.site == "flights" and GOLD[task_id]() == task.gold.rows
    await page.goto(sites_url + task.start_path)
    lines = {" ".join(line.split()) for line in (await page.locator("body").inner_text()).splitlines()}
    assert not [row for row in task.gold.rows if " ".join(row) in lines]
    answer = await run_reference(task, page, sites_url)
    assert gold_mismatch(task, answer) is None


def test_the_query_database_is_built_once_into_the_cache_and_reused(tmp_path):
    """The site's query database is built by the first sites server into RIG_CACHE_DIR; the next one reads it."""
    import os
    import subprocess
    import sys

    code = ("from rig.sites.flights.data import _build, query; p = _build(); "
            "print(p, p.stat().st_mtime_ns, query('SELECT count(*) FROM flights')[0][0])")
    env = {**os.environ, "RIG_CACHE_DIR": str(tmp_path)}
    first, second = (subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                    timeout=300, check=True).stdout.split() for _ in range(2))
    assert first == second, "the second server rebuilt the database instead of reading it"
    path, _, flights = first
    assert path.startswith(str(tmp_path / "sites" / "flights-")) and flights == str(len(flights_frame()))
