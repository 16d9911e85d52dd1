"""Two independent paths agree: every reference solution, run through the live site in Chromium,
yields exactly the gold table that the data-side gold functions compute from the raw data."""

from __future__ import annotations

import importlib

import pytest

from rig.agents.reference import gold_mismatch, run_reference
from rig.tasks import bundled_task_paths, load_task

TASKS = [load_task(p) for p in bundled_task_paths()]


@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
def test_gold_matches_raw_data(task):
    gold = importlib.import_module(f"rig.sites.{task.site}.gold").GOLD
    assert task.id in gold, f"{task.id}: no gold function in rig/sites/{task.site}/gold.py"
    assert gold[task.id]() == task.gold.rows


@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
async def test_reference_solution_reproduces_gold(task, context, sites_url):
    page = await context.new_page()
    answer = await run_reference(task, page, sites_url)
    assert gold_mismatch(task, answer) is None
    assert answer.citations and all(c.url.startswith(sites_url) for c in answer.citations)


@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
async def test_default_state_hides_the_answer(task, context, sites_url):
    """SGR: the answer-bearing evidence is not exposed in the site's default state."""
    page = await context.new_page()
    await page.goto(sites_url + task.start_path)
    text = await page.locator("body").inner_text()
    lines = [" ".join(line.split()) for line in text.splitlines()]
    shown = [row for row in task.gold.rows if " ".join(row) in lines]
    assert not shown, f"the default page already shows gold rows {shown}"
