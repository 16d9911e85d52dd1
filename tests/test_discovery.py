"""Discovery tasks: the local search index leads each task's query to the right bundled site first, look-alike queries
meet the distractor pages, and the pages the reference script opens satisfy the task's gold states."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from recorders.state import url_state
from rig.grading.discovery import on_site
from rig.grading.states import holds
from rig.sites.registry import bundled_adapters
from rig.tasks import tool_tasks
from rig.tools.search import LocalSearch

SITES = "http://127.0.0.1:8765"
TASKS = [t for t in tool_tasks() if t.id.startswith("discover-")]
HIDDEN = [t for t in tool_tasks() if t.start_hidden]
LOOKALIKE = {
    "flights": "blog about why New York flights were late in 2013 delays",
    "stats": "world indicators archive of life expectancy and GDP per capita by continent",
}


@pytest.fixture(scope="module")
def index(tmp_path_factory) -> LocalSearch:
    return LocalSearch.bundled(SITES, cache=tmp_path_factory.mktemp("search-cache"))


def _queries(task) -> list[str]:
    return [c.args["query"] for c in task.reference_tools if c.tool == "web_search"]


def test_there_are_discovery_tasks_for_two_sites():
    assert len(TASKS) >= 3 and len({t.site for t in TASKS}) >= 2
    assert all(t.start_hidden and t.gold_states and _queries(t) for t in TASKS)


@pytest.mark.parametrize("task", HIDDEN, ids=[t.id for t in HIDDEN])
def test_the_task_query_finds_its_site_first(index, task):
    hits = index.search(_queries(task)[0], 5)
    assert hits and on_site(task, hits[0].url), f"{task.id}: first hit {hits[0].url}"


@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
def test_lookalike_queries_meet_distractors(index, task):
    paths = [urlsplit(h.url).path for h in index.search(LOOKALIKE[task.site], 5)]
    assert any(p.startswith("/web/") for p in paths), paths
    assert not on_site(task, f"{SITES}/web/flight-delays-blog.html")


@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
def test_the_reference_pages_reach_the_gold_states(task):
    adapter = next(a for a in bundled_adapters() if a.site == task.site)
    states = []
    for call in task.reference_tools:
        if call.tool == "web_fetch":
            raw = url_state(SITES + call.args["url"])
            states.append({**raw, **adapter.dims(raw)})
    for gold in task.gold_states:
        assert any(all(holds(c, s) for c in gold.constraints) for s in states), f"{task.id}: {gold.name} never holds"
