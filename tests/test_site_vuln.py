"""VulnDB (rig/sites/vuln) in real Chromium: the cascading vendor/product picker, the XHR search with its "load more"
cursor, CVSS versions and date types, record pages; its tasks' reference and perturbed episodes, recorded once
through the real runner, graded live and frozen from the shipped snapshot (the "load more" batches in sequence)."""

from __future__ import annotations

import json

import pytest
from site_runs import (
    SNAPSHOTS,
    STATE_FAULTS,
    assert_labels_agree,
    assert_reference_perfect,
    frozen_trap,
    once_each,
    record_site,
    record_site_in,
    same_grades,
)
from starlette.testclient import TestClient

from rig.agents.perturbed import KINDS
from rig.episode_dir import EpisodeDir
from rig.sites.vuln import SITE
from rig.sites.vuln.data import VENDORS, cvss2, cvss31
from rig.sites.vuln.gold import GOLD
from rig.tasks import resolve_task

TASKS = sorted(GOLD)
#: The reference on every task, each perturbation kind once, on vuln-01 (whose frozen replay is checked below).
PLAN = once_each(TASKS, dict.fromkeys(KINDS, "vuln-01"))


@pytest.fixture(scope="module")
async def live(sites_url, tmp_path_factory, browser):
    """The reference on every vuln task and each perturbation once (PLAN), recorded once and graded: (grades, summary, runs directory)."""
    runs = tmp_path_factory.mktemp("vuln-live")
    grades, summary = await record_site_in(browser, runs, sites_url=sites_url, plan=PLAN)
    return grades, summary, runs


def test_the_site_is_registered_as_a_vulnerability_database():
    assert SITE.family == "vulnerability databases"
    assert {resolve_task(t).family for t in TASKS} == {"vulnerability databases"} and len(TASKS) >= 4


def test_cvss_base_scores_follow_the_specifications():
    full = {"AV": "N", "AC": "L", "PR": "N", "UI": "N", "S": "U", "C": "H", "I": "H", "A": "H"}
    assert cvss31(full) == 9.8
    assert cvss31({**full, "UI": "R", "S": "C", "C": "L", "I": "L", "A": "N"}) == 6.1
    assert cvss31({**full, "PR": "L", "I": "N", "A": "N"}) == 6.5
    assert cvss2({"AV": "N", "AC": "L", "Au": "N", "C": "P", "I": "P", "A": "P"}) == 7.5
    assert cvss2({"AV": "N", "AC": "M", "Au": "N", "C": "N", "I": "P", "A": "N"}) == 4.3


def test_search_api_batches_by_cursor_and_says_what_it_applied():
    client = TestClient(SITE.build_app(), root_path="/vuln")
    search = {"vendor": "Apexsoft", "product": "Apex Gateway Server", "score_min": "7", "date_type": "modified",
              "date_from": "2019-01-01", "date_to": "2021-12-31", "sort": "published-asc"}
    first = client.post("/api/search", json=search).json()
    assert first["scope"] == ("vendor=Apexsoft&product=Apex+Gateway+Server&cvss_version=3.1&score=7.0-10.0"
                              "&date_type=modified&window=2019-01-01..2021-12-31&sort=published-asc")
    assert len(first["rows"]) == 8 and first["next_cursor"]
    second = client.post("/api/search", json={**search, "cursor": first["next_cursor"]}).json()
    assert [r["cve"] for r in second["rows"]] and second["next_cursor"] is None
    assert len(first["rows"]) + len(second["rows"]) == first["total"]
    assert not {r["cve"] for r in first["rows"]} & {r["cve"] for r in second["rows"]}
    bad = client.post("/api/search", json={"vendor": "Apexsoft", "product": "Glasswing Browser"})
    assert bad.status_code == 400 and "not a product of Apexsoft" in bad.json()["error"]
    assert client.post("/api/search", json={**search, "cursor": "nonsense!"}).status_code == 400
    v2 = client.post("/api/search", json={"cvss_version": "2.0", "score_min": "0", "date_from": "2022-07-14"}).json()
    assert v2["total"] == 0  # no CVSS v2.0 assessments after 2022-07-13


async def test_default_pages_show_no_gold_row(page, sites_url):
    for path in ("/vuln/", "/vuln/search", "/vuln/vendors"):
        await page.goto(sites_url + path)
        text = await page.locator("body").inner_text()
        for tid in TASKS:
            for row in resolve_task(tid).gold.rows:
                assert not all(cell in text for cell in row if cell), f"{path} shows {tid} gold row {row}"
    assert await page.locator("table#results").is_hidden()


async def test_the_product_picker_cascades_and_load_more_appends_by_xhr(page, sites_url):
    await page.goto(sites_url + "/vuln/search")
    product = page.locator("#product")
    assert await product.is_disabled()
    async with page.expect_response(lambda r: "/vuln/api/products?vendor=Halcyon" in r.url):
        await page.select_option("#vendor", "Halcyon Networks")
    await page.wait_for_selector('#product[data-loaded="Halcyon Networks"]')
    options = await product.locator("option").all_inner_texts()
    assert options == ["Any product", *sorted(VENDORS["Halcyon Networks"])]
    await page.select_option("#vendor", "Lumen Forge")  # another vendor: the picker reloads with its products
    await page.wait_for_selector('#product[data-loaded="Lumen Forge"]')
    assert "Halcyon Firewall" not in await product.locator("option").all_inner_texts()
    url = page.url
    bodies: list[dict] = []
    page.on("request", lambda r: bodies.append(json.loads(r.post_data)) if r.url.endswith("/api/search") else None)
    await page.click("#search")
    table = page.locator('table#results[data-state="ready"]')
    await table.wait_for()
    assert await table.get_attribute("data-rows") == "8" and page.url == url  # the URL never changes
    scope = await table.get_attribute("data-scope")
    await page.check("#cvss-20")  # set without searching: the shown rows' scope stays
    assert await table.get_attribute("data-scope") == scope
    await page.click("#load-more")
    await page.wait_for_selector('table#results[data-state="ready"][data-batches="2"]')
    assert await page.locator("table#results tbody tr").count() == 16
    assert bodies[0]["cursor"] is None and bodies[1]["cursor"] and bodies[1]["vendor"] == "Lumen Forge"
    assert bodies[1]["cvss_version"] == "3.1"  # the next batch of the search shown, not of the form as set since


async def test_record_pages_show_metrics_and_affected_ranges(page, sites_url):
    await page.goto(sites_url + "/vuln/cve/CVE-2019-34367")
    versions = await page.locator("table#metrics tbody tr td:first-child").all_inner_texts()
    assert versions == ["3.1", "2.0"]
    rows = await page.locator("table#configurations tbody tr").all_inner_texts()
    assert [r.split("\t")[1] for r in rows] == ["Apex Gateway Server", "Apex Gateway Client"]
    assert "2.1.0" not in await page.inner_text("#description")  # versions only in the ranges table


def test_the_recorder_reads_the_applied_search_and_the_rows_loaded(live):
    _, _, runs = live
    steps = EpisodeDir(runs / "vuln-01" / "constraint" / "reference" / "trial-0").steps()
    more = [s for s in steps if s.action.target == "#load-more"][0]
    before = next(s for s in steps if s.step == more.step - 1)
    assert (before.state["dim.rows_shown"], more.state["dim.rows_shown"]) == ("8", "13")
    last = steps[-1].state
    assert (last["dim.product"], last["dim.date_type"], last["dim.rows_shown"]) == ("Apex Gateway Server", "published",
                                                                                   "13")
    picked = [s for s in steps if s.action.target == "#product"][0]
    assert picked.state["form.product"] == "Apex Gateway Server"
    assert not any(k.startswith("dim.") for k in picked.state)  # set, not yet searched: no results, no dimension


def test_reference_episodes_score_1_and_reach_every_gold_state(live):
    grades, _, _ = live
    assert_reference_perfect(grades, TASKS)


def test_every_perturbation_is_labelled_with_its_injected_category(live):
    grades, summary, _ = live
    assert_labels_agree(grades, TASKS, summary)


def test_frozen_replay_reaches_no_origin_and_grades_the_same(live, tmp_path_factory):
    """The shipped snapshot answers the reference and the state faults on vuln-01 with nothing listening; its answer needs both "load
    more" batches replayed in sequence. The references of every task are replayed frozen by test_replay_frozen.py."""
    grades, _, _ = live
    with frozen_trap() as trap:
        plan = {"reference": ["vuln-01"], **{f"perturbed:{k}": ["vuln-01"] for k in STATE_FAULTS}}
        frozen, _ = record_site(tmp_path_factory.mktemp("vuln-frozen"), frozen=SNAPSHOTS / "vuln", plan=plan)
    assert trap is None or trap.requests == [], [r.target for r in trap.requests]
    assert len(frozen) == len(STATE_FAULTS) + 1
    for key, got in frozen.items():
        same_grades(grades[key], got)
    assert frozen["vuln-01", "reference"].scores.rows_pred == 13
