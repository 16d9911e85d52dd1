"""BioKB (rig/sites/bio) in real Chromium: the lazily loaded taxonomy tree, the query language, the column chooser
(read by the recorder from the visible headers) and the cross-links; its tasks' reference and perturbed episodes,
recorded once through the real runner, graded live and frozen from the shipped snapshot."""

from __future__ import annotations

import html
import httpx
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

from recorders.adapter import PageFact, SiteAdapter, load_adapter
from recorders.state import fact_state
from rig.agents.perturbed import KINDS
from rig.episode_dir import EpisodeDir
from rig.sites.bio import SITE
from rig.sites.bio.gold import GOLD
from rig.tasks import resolve_task

TASKS = sorted(GOLD)
#: The reference on every task, each perturbation kind once, on bio-01 (whose frozen replay is checked below).
PLAN = once_each(TASKS, dict.fromkeys(KINDS, "bio-01"))
ADAPTER = load_adapter(SITE.adapter)


@pytest.fixture(scope="module")
async def live(sites_url, tmp_path_factory, browser):
    """The reference on every bio task and each perturbation once (PLAN), recorded once and graded: (grades, summary, runs directory)."""
    runs = tmp_path_factory.mktemp("bio-live")
    grades, summary = await record_site_in(browser, runs, sites_url=sites_url, plan=PLAN)
    return grades, summary, runs


def test_the_site_is_registered_as_a_life_science_resource():
    assert SITE.family == "life-science resources"
    assert {resolve_task(t).family for t in TASKS} == {"life-science resources"} and len(TASKS) >= 4


async def test_default_pages_show_no_gold_row(page, sites_url):
    for path in ("/bio/", "/bio/proteins", "/bio/taxonomy", "/bio/trials"):
        await page.goto(sites_url + path)
        text = await page.locator("body").inner_text()
        for tid in TASKS:
            for row in resolve_task(tid).gold.rows:
                assert not all(cell in text for cell in row if cell), f"{path} shows {tid} gold row {row}"
    assert await page.locator("table#trials").count() == 0


async def test_the_tree_loads_children_on_expansion_down_to_strains(page, sites_url):
    await page.goto(sites_url + "/bio/taxonomy")
    assert await page.locator('[role="treeitem"]').count() == 1
    served = httpx.get(sites_url + "/bio/taxonomy").text
    assert "Eukaryota" not in served and "Escherichia" not in served  # nothing below the root is in the page
    path = ["All organisms", "Bacteria", "Pseudomonadota", "Gammaproteobacteria", "Escherichia", "Escherichia coli"]
    for name in path:
        async with page.expect_response(lambda r: "/bio/api/taxonomy/children?id=" in r.url):
            await page.click(f'role=treeitem[name="{name}"s]')
    strain = page.locator('role=treeitem[name="Escherichia coli K-12"s]')
    await strain.wait_for()
    assert await strain.get_attribute("aria-level") == "7"
    assert await strain.get_attribute("aria-expanded") is None  # a leaf
    coli = page.locator('role=treeitem[name="Escherichia coli"s]')
    assert await coli.get_attribute("aria-selected") == "true" and await coli.get_attribute("aria-expanded") == "true"
    panel = page.locator('#taxon-panel[data-state="ready"]')
    await panel.wait_for()
    assert await panel.get_attribute("data-path") == "Bacteria/Pseudomonadota/Gammaproteobacteria/Escherichia/" \
                                                      "Escherichia coli"
    assert page.url == sites_url + "/bio/taxonomy"  # the selection lives only in the page
    names = await page.locator("#taxon-children tbody tr td:nth-child(2)").all_inner_texts()
    assert names == ["Escherichia coli K-12", "Escherichia coli O157:H7"]
    await page.click('#taxon-children th[data-key="reviewed"] button')
    assert await page.get_attribute("#taxon-children", "data-sort") == "reviewed:desc"
    await page.click('role=treeitem[name="Escherichia"s] >> xpath=./span[@class="twisty"]')  # collapse
    assert not await strain.is_visible()


def test_query_language_scopes_and_errors():
    from starlette.testclient import TestClient

    client = TestClient(SITE.build_app(), root_path="/bio")
    bad = client.get("/proteins", params={"query": "gene:CASP3 AND species:9606"})
    assert bad.status_code == 400 and "Unknown field 'species'" in html.unescape(bad.text)
    # the same organism exactly, and with what lies below it (subspecies): organism_id vs taxonomy_id
    mouse = "10692"
    exact = client.get("/proteins", params={"query": f"organism_id:{mouse}"}).text
    below = client.get("/proteins", params={"query": f"taxonomy_id:{mouse}"}).text
    count = lambda html: int(html.split('id="result-count">')[1].split("<")[0])  # noqa: E731
    assert count(below) > count(exact) > 0
    assert 'data-scope="organism=10692"' in exact and 'data-scope="taxonomy=10692"' in below
    named = client.get("/proteins", params={"query": 'organism_name:"Mus musculus" AND reviewed:true AND gene:cdk2'})
    assert 'data-scope="gene=CDK2&amp;organism=10692&amp;reviewed=true"' in named.text


def test_page_facts_read_from_every_match():
    """`all: true`: the fact is the list of every match (the adapter extension the column chooser needs)."""
    adapter = SiteAdapter(site="x", path_prefix="/", page={
        "columns": PageFact(selector="th", all=True), "ids": PageFact(selector="td", all=True, regex=r"#(\d+)")})
    facts = fact_state(adapter, {"columns": ["Entry ", "Gene names"], "ids": ["#12", "none", "#7"]})
    assert facts == {"page.columns": ["Entry", "Gene names"], "page.ids": ["12", "7"]}
    with pytest.raises(ValueError, match="cannot be combined with `all`"):
        PageFact(selector="th", all=True, parse="query")


def test_the_recorder_reads_the_chosen_columns_and_the_applied_query(live):
    """The column chooser's columns are a dimension only once applied; the query's fields come from the page."""
    _, _, runs = live
    steps = EpisodeDir(runs / "bio-01" / "constraint" / "reference" / "trial-0").steps()
    chosen = [s for s in steps if s.action.type == "check" and s.action.target == "#col-existence"][0]
    applied = next(s for s in steps if s.step == chosen.step + 1)
    assert "Protein existence" not in chosen.state["dim.columns"]  # checked, not applied
    assert applied.state["dim.columns"][-1] == "Protein existence"
    assert (applied.state["dim.organism"], applied.state["dim.reviewed"], applied.state["dim.keyword"]) == \
        ("87183", "true", "Receptor")
    tree = [s for s in steps if s.state.get("dim.taxon") == "Eukaryota/Arthropoda/Insecta/Drosophila"]
    assert tree and tree[-1].state["dim.taxon_sort"] == "reviewed:desc" and tree[0].url.endswith("/bio/taxonomy")


async def test_entry_pages_link_their_organism_and_their_trials(page, sites_url):
    await page.goto(sites_url + "/bio/protein/Q0NWP8")
    assert "CASP3" in await page.inner_text("#entry-facts")
    await page.click("#organism-link")
    await page.wait_for_selector("table#lineage")
    assert page.url.endswith("/bio/taxon/38483")
    assert (await page.locator("table#lineage tbody tr td:nth-child(2)").all_inner_texts())[2] == "Mammalia"
    await page.goto(sites_url + "/bio/protein/Q0NWP8")
    await page.click("#trials-link")
    await page.wait_for_selector("table#trials")
    assert "target=Q0NWP8" in page.url and await page.inner_text("#result-count") == "16"
    await page.check('input[name="phase"][value="Phase 2/Phase 3"]')
    async with page.expect_navigation():
        await page.click("#apply")
    assert "phase=Phase+2%2FPhase+3" in page.url and await page.inner_text("#result-count") == "2"
    assert ADAPTER.dimensions["phase"].tag == "criterion" and ADAPTER.dimensions["target"].tag == "scope"


def test_reference_episodes_score_1_and_reach_every_gold_state(live):
    grades, _, _ = live
    assert_reference_perfect(grades, TASKS)


def test_every_perturbation_is_labelled_with_its_injected_category(live):
    grades, summary, _ = live
    assert_labels_agree(grades, TASKS, summary)


def test_frozen_replay_reaches_no_origin_and_grades_the_same(live, tmp_path_factory):
    """The shipped snapshot answers the reference and the state faults on bio-01 (the tree's children and panels fetched, the chosen
    columns reloaded) with nothing listening; the references of every task are replayed frozen by
    test_replay_frozen.py."""
    grades, _, _ = live
    with frozen_trap() as trap:
        plan = {"reference": ["bio-01"], **{f"perturbed:{k}": ["bio-01"] for k in STATE_FAULTS}}
        frozen, _ = record_site(tmp_path_factory.mktemp("bio-frozen"), frozen=SNAPSHOTS / "bio", plan=plan)
    assert trap is None or trap.requests == [], [r.target for r in trap.requests]
    assert len(frozen) == len(STATE_FAULTS) + 1
    for key, got in frozen.items():
        same_grades(grades[key], got)
