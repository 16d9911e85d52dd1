"""The complaints site (Consumer Complaint Register) in real Chromium and over HTTP: the search page that drives the
search API and writes the applied query into the URL, the product/sub-product hierarchy, views, the CSV export of
the current view (fetched, hence archived), complaint pages, and the adapter. Its tasks'
episodes are graded in tests/test_site_episodes.py."""

from __future__ import annotations

import csv
import io
from urllib.parse import parse_qs, urlsplit

import httpx

from recorders.adapter import load_adapter
from rig.sites.complaints import SITE
from rig.sites.complaints.gold import GOLD

READY = '#results-area[data-state="ready"]'
def _query(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query)


async def _rows(page, table: str) -> list[list[str]]:
    return await page.eval_on_selector_all(
        f"table#{table} tbody tr", "trs => trs.map(tr => Array.from(tr.cells).map(td => td.innerText.trim()))")


async def test_the_search_page_starts_empty(page, sites_url):
    await page.goto(f"{sites_url}/complaints/")
    await page.click('nav a[href$="/search"]')
    assert page.url == f"{sites_url}/complaints/search"
    assert await page.get_attribute("#results-area", "data-state") == "idle"
    assert await page.is_hidden("table#results") and await page.is_hidden("#facets")
    assert await page.is_disabled("#sub_product")
    text = await page.inner_text("body")
    for rows in (f() for f in GOLD.values()):
        assert not any("\t".join(r) in text for r in rows)


async def test_results_arrive_by_fetch_and_the_url_is_the_applied_query(page, sites_url):
    await page.goto(f"{sites_url}/complaints/search")
    async with page.expect_response("**/complaints/api/subproducts?product=Credit+card") as sub:
        await page.select_option("#product", "Credit card")
    assert (await (await sub.value).json())["sub_products"] == ["General-purpose credit card or charge card",
                                                                "Store credit card"]
    await page.select_option("#sub_product", "Store credit card")
    await page.fill("#search_term", "Fee  OR interest")
    assert urlsplit(page.url).query == ""  # set, not searched: the URL has no query yet
    async with page.expect_request("**/complaints/api/search?*") as req:
        await page.click("#search")
    await page.wait_for_selector(READY)
    sent = _query((await req.value).url)
    assert sent["product"] == ["Credit card"] and sent["sub_product"] == ["Store credit card"]
    shown = _query(page.url)
    assert shown["search_term"] == ["Fee OR interest"] and shown["tab"] == ["list"] and shown["page"] == ["1"]
    assert await page.get_attribute("#results-area", "data-interpreted") == "fee OR interest"
    assert await page.inner_text("#interpreted-term") == "fee OR interest"
    list_url = page.url
    await page.select_option("#state", "TX")  # a filter set but not searched changes neither the URL nor the rows
    await page.click("#tab-trends")
    await page.wait_for_selector(READY + '[data-tab="trends"]')
    assert _query(page.url)["tab"] == ["trends"] and "state" not in _query(page.url)
    assert [h.strip() for h in await page.locator("table#trends thead th").all_inner_texts()] == [
        "Period", "From", "To", "Complaints"]
    await page.go_back()  # popstate: the list again, from the URL
    await page.wait_for_selector(READY + '[data-tab="list"]')
    assert page.url == list_url and await page.is_visible("table#results")
    await page.reload()  # a link to the query shows its results, sub-product included
    await page.wait_for_selector(READY)
    assert await page.input_value("#sub_product") == "Store credit card"
    assert await page.input_value("#search_term") == "Fee OR interest"


async def test_a_query_the_register_cannot_read_leaves_results_and_url(page, sites_url):
    await page.goto(f"{sites_url}/complaints/search?search_term=doctor&product=Debt+collection")
    await page.wait_for_selector(READY)
    before, rows = page.url, await _rows(page, "results")
    await page.fill("#search_term", "(doctor OR")
    await page.click("#search")
    await page.wait_for_selector('#results-area[data-state="error"]')
    assert "the query ends where a term was expected" in await page.inner_text("#status")
    assert page.url == before and await _rows(page, "results") == rows
    assert await page.get_attribute("#results-area", "data-interpreted") == "doctor"
    await page.goto(f"{sites_url}/complaints/search?product=Nope")  # a link the register cannot answer
    await page.wait_for_selector('#results-area[data-state="error"]')
    assert page.url == f"{sites_url}/complaints/search" and "Unknown product" in await page.inner_text("#status")


async def test_pages_and_sorting(page, sites_url):
    await page.goto(f"{sites_url}/complaints/search?product=Student+loan&date_received_min=2023-01-01"
                    "&date_received_max=2023-03-31&sort=created_date_asc&size=10")
    await page.wait_for_selector(READY)
    first = await _rows(page, "results")
    dates = [r[1] for r in first]
    assert dates == sorted(dates) and len(first) == 10 and await page.is_disabled("#prev")
    await page.click("#next")
    await page.wait_for_selector(READY + '[data-params*="page=2&"]')
    second = await _rows(page, "results")
    assert second[0][1] >= dates[-1] and not {r[0] for r in second} & {r[0] for r in first}
    await page.click("table#results tbody tr:first-child a")
    await page.wait_for_selector("article#complaint")
    assert await page.get_attribute("article#complaint", "data-id") == second[0][0]
    assert second[0][1] in await page.inner_text("#fields")


async def test_csv_export_is_the_current_view(page, sites_url):
    await page.goto(f"{sites_url}/complaints/search?search_term=%22loan+modification%22&product=Mortgage"
                    "&tab=trends&interval=year")
    await page.wait_for_selector(READY)
    shown = await _rows(page, "trends")
    async with page.expect_response("**/complaints/api/search?*format=csv") as resp:
        await page.click("#export-csv")
    got = await resp.value
    assert got.headers["content-type"].startswith("text/csv")
    table = list(csv.reader(io.StringIO(await got.text())))
    assert table[0] == ["Period", "From", "To", "Complaints"] and table[1:] == shown
    await page.wait_for_selector("#export-download:not([hidden])")
    assert f"Exported {len(shown)} rows of the trends view" in await page.inner_text("#export-status")
    async with httpx.AsyncClient(base_url=sites_url) as client:  # the list view: every complaint of every page
        listed = await client.get("/complaints/api/search", params={"product": "Mortgage", "state": "CO", "size": "10"})
        exported = await client.get("/complaints/api/search", params={"product": "Mortgage", "state": "CO",
                                                                      "size": "10", "format": "csv"})
    rows = list(csv.reader(io.StringIO(exported.text)))
    assert len(rows) - 1 == listed.json()["total"] > 10 and rows[0][-1] == "Consumer complaint narrative"
    assert [r[:7] for r in rows[1:11]] == [r[:7] for r in listed.json()["list"]["rows"]]


async def test_api_errors_and_complaint_pages():
    from rig.sites.complaints.app import build_app

    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=build_app()), base_url="http://sites") as client:
        bad = await client.get("/api/search", params={"search_term": 'issue:"late fee'})
        sub = await client.get("/api/subproducts", params={"product": "Bananas"})
        missing = await client.get("/detail/12")
        plain = await client.get("/api/search", params={"sort": "relevance_desc", "state": "CO"})  # no term to rank by
        negated = await client.get("/api/search", params={"sort": "relevance_desc", "search_term": "NOT fee"})
        one = await client.get("/detail/3100001")
    assert bad.status_code == 400 and "quotation mark" in bad.json()["error"]
    assert sub.status_code == 400 and "Unknown product" in sub.json()["error"]
    assert missing.status_code == 404 and "There is no complaint 12" in missing.text
    assert one.status_code == 200 and "Complaint 3100001" in one.text
    for ranked in (plain, negated):  # every complaint equally relevant: newest first
        dates = [r[1] for r in ranked.json()["list"]["rows"]]
        assert ranked.status_code == 200 and dates == sorted(dates, reverse=True) and len(dates) == 25


def test_adapter_reads_the_applied_query():
    adapter = load_adapter(SITE.adapter)
    assert adapter.site == "complaints" and adapter.path_prefix == "/complaints/"
    state = {"url.query.search_term": "Medical OR doctor", "page.search_term": "medical OR doctor",
             "url.query.product": "Debt collection", "url.query.date_received_min": "2022-01-01",
             "url.query.date_received_max": "2022-12-31", "url.query.tab": "trends", "url.query.interval": "month",
             "url.query.trend_order": "count", "form.state": "TX"}
    assert adapter.dims(state) == {
        "dim.search_term": "medical OR doctor", "dim.product": "Debt collection",
        "dim.date_received": "2022-01-01..2022-12-31", "dim.interval": "month", "dim.tab": "trends",
        "dim.trend_order": "count"}
    tags = {name: d.tag for name, d in adapter.dimensions.items()}
    assert tags["search_term"] == tags["sub_product"] == tags["interval"] == "criterion"
    assert tags["product"] == tags["date_received"] == tags["state"] == tags["company"] == "scope"
