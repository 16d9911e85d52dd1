"""Frozen environments: every reference solution run against the shipped `site_snapshots/`, with no live site,
yields its gold table; states the snapshot lacks answer a visible 404 and are counted."""

from __future__ import annotations

from pathlib import Path

import pytest
from site_runs import frozen_trap

from replay import REPLAY_CONTEXT_OPTIONS, open_snapshot
from rig.agents.reference import gold_mismatch, run_reference
from rig.browser import launch
from rig.sites import bundled_sites
from rig.tasks import bundled_task_paths, load_task

SNAPSHOTS = Path(__file__).resolve().parents[1] / "site_snapshots"
TASKS = [load_task(p) for p in bundled_task_paths()]


@pytest.fixture(scope="module")
def frozen():
    """The shipped snapshots, and a trap listening where frozen runs put the sites: it must receive nothing."""
    with frozen_trap() as trap:  # None when the port is taken: isolation then rests on the route handler alone
        yield open_snapshot(SNAPSHOTS)
    assert trap is None or trap.requests == [], [r.target for r in trap.requests]


@pytest.fixture(scope="module")
async def browser(playwright):
    """A browser launched as frozen runs launch theirs (`archive_only`)."""
    b = await launch(playwright, archive_only=True)
    yield b
    await b.close()


def test_every_bundled_site_has_a_small_snapshot():
    frozen = open_snapshot(SNAPSHOTS)
    assert sorted(frozen.sites) == sorted(s.name for s in bundled_sites())
    assert sum(m.bytes for m in frozen.manifests) < 20_000_000
    for m in frozen.manifests:
        tasks = [t for t in TASKS if t.site == m.site]
        assert m.data_version == sorted({t.data_version for t in tasks})
        assert set(m.sources["tasks"]) == {t.id for t in tasks}
        assert (SNAPSHOTS / m.site / "snapshot.warc.gz").stat().st_size == m.bytes


@pytest.mark.slow
@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
async def test_reference_solution_in_frozen_mode_yields_gold(browser, frozen, task):
    context = await browser.new_context(**REPLAY_CONTEXT_OPTIONS)
    try:
        session = await frozen.attach(context)
        page = await context.new_page()
        answer = await run_reference(task, page, frozen.start_url_base)
        assert gold_mismatch(task, answer) is None
        assert session.miss_count == 0, session.misses
    finally:
        await context.close()


async def test_states_the_snapshot_lacks_are_a_visible_counted_404(browser, frozen):
    context = await browser.new_context(**REPLAY_CONTEXT_OPTIONS)
    try:
        session = await frozen.attach(context)
        page = await context.new_page()
        resp = await page.goto(f"{frozen.start_url_base}/flights/search?origin=JFK&carrier=ZZ&group=dest")
        assert resp.status == 404
        assert "not in the archive" in await page.locator("h1").inner_text()
        assert session.miss_count == 1
        resp = await page.goto(f"{frozen.start_url_base}/flights/")
        assert resp.status == 200 and session.miss_count == 1
        assert await page.evaluate("Date.now()") == int(frozen.index.recorded_at.timestamp() * 1000)
    finally:
        await context.close()


def test_open_frozen_checks_sites_and_data_versions():
    from rig.errors import InputError
    from rig.runner.frozen import open_frozen

    eco = [t for t in TASKS if t.site == "eco"]
    assert open_frozen(SNAPSHOTS / "eco", eco).sites == ["eco"]
    with pytest.raises(InputError, match="pass site_snapshots"):
        open_frozen(SNAPSHOTS / "eco", TASKS)
    with pytest.raises(InputError, match="rebuild"):
        open_frozen(SNAPSHOTS / "eco", [eco[0].model_copy(update={"data_version": "vega_datasets==9"})])
    with pytest.raises(InputError, match="build_snapshots"):
        open_frozen(SNAPSHOTS / "eco" / "nope")
