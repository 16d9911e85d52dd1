"""The papers site (OpenLit Archive) in real Chromium and over HTTP: the advanced-search form that builds a query,
the server's reading of it (the results table's data-scope), the orders, pages and facets, article pages whose tables
are the evidence (full text for open-access articles only), and the adapter. Its tasks'
episodes are graded in tests/test_site_episodes.py."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import httpx

from recorders.adapter import load_adapter
from rig.sites.papers import SITE
from rig.sites.papers.app import build_app
from rig.sites.papers.data import articles
def _client() -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=build_app()), base_url="http://sites")


async def _column(page, n: int) -> list[str]:
    return await page.eval_on_selector_all(f"table#results tbody td:nth-child({n})",
                                           "tds => tds.map(td => td.innerText.trim())")


async def test_the_advanced_form_builds_the_query_it_searches(page, sites_url):
    await page.goto(f"{sites_url}/papers/")
    await page.click('nav a[href$="/advanced"]')
    await page.fill("#adv-title", "gene therapies to watch")
    await page.fill("#adv-author", "Moreau S")
    await page.fill("#adv-year-from", "2020")
    await page.select_option("#adv-type", "review")
    await page.check("#adv-oa")
    assert await page.input_value("#query") == ('TITLE:"gene therapies to watch" AND AUTH:"Moreau S" AND '
                                                "PUB_YEAR:[2020 TO 2024] AND PUB_TYPE:review AND OPEN_ACCESS:y")
    await page.fill("#adv-author", "")
    await page.fill("#adv-year-to", "2020")
    await page.select_option("#sort", "date")
    await page.click("#adv-search")
    await page.wait_for_selector("table#results")
    sent = parse_qs(urlsplit(page.url).query)
    assert sent == {"query": ['TITLE:"gene therapies to watch" AND PUB_YEAR:[2020 TO 2020] AND PUB_TYPE:review AND '
                              "OPEN_ACCESS:y"], "sort": ["date"]}
    assert await page.get_attribute("table#results", "data-scope") == (
        "title=gene+therapies+to+watch&pub_year=2020..2020&pub_type=review&open_access=y&sort=date&page=1")
    assert await _column(page, 1) == ["Gene Therapies to Watch in 2020"]


async def test_orders_pages_and_facets(page, sites_url):
    await page.goto(f"{sites_url}/papers/search?query=ABSTRACT:%22base+editing%22")
    total = int((await page.inner_text("#result-count")).split()[0])
    assert total > 20 and await page.get_attribute("table#results", "data-page") == "1"
    await page.click('nav.sort a[data-sort="cited"]')
    await page.wait_for_selector('table#results[data-scope*="sort=cited"]')
    cited = [int(c) for c in await _column(page, 7)]
    assert cited == sorted(cited, reverse=True) and len(cited) == 10
    await page.click('nav.pagination a[rel="next"]')
    await page.wait_for_selector('table#results[data-page="2"]')
    assert max(int(c) for c in await _column(page, 7)) <= cited[-1]
    await page.click('#type-facet a[data-facet="review"]')  # a facet ANDs its clause onto the query
    await page.wait_for_selector('table#results[data-scope*="pub_type=review"]')
    assert set(await _column(page, 5)) == {"review"}
    assert await page.input_value("#query") == 'ABSTRACT:"base editing" AND PUB_TYPE:review'
    await page.fill("#query", "ABSTRACT:(base")
    await page.click("#search")
    await page.wait_for_selector("#error")
    assert "the parenthesis at character 10 is never closed" in await page.inner_text("#error")


async def test_relevance_counts_clauses_and_ties_go_newest_first():
    async with _client() as client:
        r = await client.get("/search", params={"query": 'TITLE:"gene therapies to watch" AND PUB_YEAR:2022'})
        unranked = await client.get("/search", params={"query": "PUB_TYPE:correction AND PUB_YEAR:2020"})
        both = await client.get("/search", params={"query": "capsid AND PUB_YEAR:[2015 TO 2016] AND PUB_TYPE:review"})
    commentary, review = "Gene therapies to watch in 2022: a commentary", "Gene Therapies to Watch in 2022<"
    assert r.text.index(commentary) < r.text.index(review)
    # `capsid` in the title (3) and abstract (2) of a 2015 review outranks the newer reviews saying it in the
    # abstract alone (their titles say "capsids", another word)
    assert unranked.status_code == 200 and "Correction: Gene Therapies to Watch in 2020" in unranked.text  # no words
    rows = both.text.split("<tbody>")[1].split("</tr>")
    assert "The AAV capsid as a drug" in rows[0] and "2015" in rows[0] and all("2016" in r for r in rows[1:-1])


async def test_article_pages_show_tables_of_open_access_articles_only():
    series = next(a for a in articles() if a.title == "Gene Therapies to Watch in 2021")
    closed = next(a for a in articles() if not a.open_access and a.type == "research-article")
    async with _client() as client:
        shown = await client.get(f"/article/{series.id}")
        hidden = await client.get(f"/article/{closed.id}")
        missing = await client.get("/article/PA1")
        empty = await client.get("/search")
    assert 'id="table-3"' in shown.text and series.tables[2].rows[0][0] in shown.text
    assert "not open access" in hidden.text and "<table" not in hidden.text and closed.abstract in hidden.text
    assert missing.status_code == 404 and "There is no article PA1" in missing.text
    assert empty.status_code == 200 and "Enter a query" in empty.text and "<table" not in empty.text


def test_adapter_reads_the_archives_reading_of_the_query():
    adapter = load_adapter(SITE.adapter)
    assert adapter.site == "papers" and adapter.path_prefix == "/papers/"
    state = {"url.query.query": 'auth:"Iwasaki K" AND PUB_YEAR:[2017 TO 2020]',
             "page.results_scope.author": "iwasaki k",
             "page.results_scope.pub_year": "2017..2020", "page.results_scope.sort": "date",
             "page.results_scope.page": "2"}
    assert adapter.dims(state) == {"dim.author": "iwasaki k", "dim.pub_year": "2017..2020", "dim.sort": "date",
                                   "dim.page": "2"}
    assert adapter.dims({"page.article": "PA200908"}) == {"dim.article": "PA200908"}
    tags = {name: d.tag for name, d in adapter.dimensions.items()}
    assert tags["title"] == tags["terms"] == tags["abstract"] == "criterion"
    assert tags["pub_year"] == tags["pub_type"] == tags["open_access"] == tags["author"] == "scope"
