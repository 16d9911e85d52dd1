"""Record an episode on each bundled site, replay it offline with `rig replay`'s re-drive, and compare every step.

Covers each site's state mechanisms: server-rendered GET forms, sort links and pagination (flights); an
on-demand ARIA tree, pushState/fragment tabs and fetched HTML fragments (stats); POSTed JSON queries and
"Load more" batches on one URL (eco); observed (unreported) actions. Then an altered copy of an archive is
caught exactly at the steps the alteration shows in.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Callable
from io import BytesIO
from pathlib import Path

import pytest
from waiting import wait_until
from warcio.archiveiterator import ArchiveIterator
from warcio.warcwriter import WARCWriter

from recorders import Recorder, RecorderOptions, read_trajectory
from replay import load_index
from rig.formats.actions import parse_actions
from rig.commands.replay import replay_episode
from rig.runner.record import record_actions
from rig.sites import bundled_adapters

OPTIONS = RecorderOptions(screenshots="off", fsync=False)

SCRIPTS: dict[str, list[dict]] = {
    "flights": [
        {"goto": "/flights/search"},
        {"select": {"selector": "#origin", "value": "EWR"}},
        {"select": {"selector": "#carrier", "value": ["UA", "B6"]}},
        {"check": "input[name=weekday][value=sat]"},
        {"check": "input[name=metric][value=dep_delay]"},
        {"select": {"selector": "#group", "value": "dest"}},
        {"click": 'role=button[name="Apply"]'},
        {"click": '#results th a:has-text("Flights")'},
        {"click": "nav.pagination a[rel=next]"},
        {"click": "#results tbody tr:first-child a"},
    ],
    "stats": [
        {"goto": "/stats/explore"},
        {"click": 'role=treeitem[name="World"]'},
        {"click": 'role=treeitem[name="Asia"]'},
        {"select": {"selector": "#indicator", "value": "pop"}},
        {"click": 'role=tab[name="Summary"]'},
        {"click": '#panel-summary th[data-col="change_pct"] button'},
        {"click": 'role=tab[name="Table"]'},
        {"click": 'role=button[name="Next page"]'},
        {"click": "#panel-table tbody tr:first-child a"},
    ],
    "eco": [
        {"goto": "/eco/browse"},
        {"select": {"selector": "#dataset", "value": "seattle-weather"}},
        {"check": "#weather-rain"},
        {"check": "#agg-daily"},
        {"fill": {"selector": "#min_precip", "value": "5"}},
        {"click": "#run"},
        {"wait_for": 'table#results[data-state="ready"]'},
        {"click": "#load-more"},
        {"wait_for": 'table#results[data-batches="2"][data-state="ready"]'},
        {"click": "#load-more"},
        {"wait_for": 'table#results[data-batches="3"][data-state="ready"]'},
        {"click": 'table#results th button[data-sort="precipitation"]'},
        {"wait_for": 'table#results[data-sort="precipitation:asc"]'},
    ],
}


@pytest.fixture(scope="module")
async def episodes(browser, sites_url, tmp_path_factory):
    """One recorded episode per bundled site (recorded concurrently)."""
    root = tmp_path_factory.mktemp("roundtrip")
    adapters = bundled_adapters()

    async def one(site: str) -> Path:
        out = root / site
        ep = await record_actions(browser, parse_actions(SCRIPTS[site], site), out, agent="test",
                                  base_url=sites_url, options=OPTIONS, adapters=adapters)
        assert ep.status == "ok", ep.error
        return out

    dirs = await asyncio.gather(*(one(s) for s in SCRIPTS))
    return dict(zip(SCRIPTS, dirs, strict=True))


@pytest.mark.parametrize("site", list(SCRIPTS))
async def test_round_trip_every_step_matches(browser, episodes, site):
    report = await replay_episode(episodes[site], browser)
    assert report.ok, json.dumps(report.mismatches, indent=1)[:3000]
    assert report.steps == len(SCRIPTS[site]) and report.misses == []
    assert len({s.state_diff.model_dump_json() for s in read_trajectory(episodes[site] / "trajectory.jsonl")}) > 3


async def test_eco_load_more_batches_are_distinct_posts_on_one_url(episodes):
    index = load_index(episodes["eco"] / "evidence.warc.gz")
    posts = [k for k in index.exchanges if k[0] == "POST"]
    assert len({url for _, url, _ in posts}) == 1 and len(posts) == 4  # run, 2 x load more, sort
    bodies = [json.loads(x.body) for x in index.all() if x.method == "POST"]
    assert [b["offset"] for b in bodies] == [0, 10, 20, 0]


async def test_observed_actions_are_replayed(browser, context, sites_url, tmp_path):
    """A driver that reports nothing (a human, an outside CDP client): the recorder infers each step's action."""
    out = tmp_path / "observed"
    rec = await Recorder.attach(context, out, options=OPTIONS, adapters=bundled_adapters())
    page = await context.new_page()

    async def settle(n: int) -> None:
        await wait_until(lambda: rec.steps >= n, message=lambda: f"{rec.steps} steps, expected {n}")

    await page.goto(f"{sites_url}/stats/explore")
    await settle(1)
    for n, act in enumerate([
        lambda: page.get_by_role("treeitem", name="World").click(),
        lambda: page.select_option("#indicator", "gdpPercap"),
        lambda: page.get_by_role("tab", name="Aggregate").click(),
    ], start=2):
        await act()
        await settle(n)
    await rec.close()
    steps = read_trajectory(out / "trajectory.jsonl")
    assert {s.action.source for s in steps} == {"observed"}
    report = await replay_episode(out, browser)
    assert report.ok and report.steps == len(steps) == 4, json.dumps(report.mismatches, indent=1)[:3000]


def rewrite_warc(src: Path, dst: Path, edit: Callable[[object, bytes], bytes | None]) -> int:
    """Copy a WARC record by record; `edit(record, payload)` may return a new payload. Returns edits made."""
    edits = 0
    with src.open("rb") as fin, dst.open("wb") as fout:
        writer = WARCWriter(fout, gzip=True, warc_version="1.1")
        for rec in ArchiveIterator(fin):
            payload = rec.content_stream().read()
            new = edit(rec, payload)
            if new is not None:
                edits += 1
                payload = new
            http = rec.http_headers
            if http is not None and http.get_header("Content-Length") is not None:
                http.replace_header("Content-Length", str(len(payload)))
            headers = {k: v for k, v in rec.rec_headers.headers if k not in ("Content-Length", "WARC-Block-Digest", "WARC-Payload-Digest")}
            out = writer.create_warc_record(rec.rec_headers.get_header("WARC-Target-URI"), rec.rec_type, payload=BytesIO(payload),
                                            length=len(payload), warc_headers_dict=headers, http_headers=http,
                                            warc_content_type=rec.rec_headers.get_header("Content-Type"))
            writer.write_record(out)
    return edits


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    (dst / "evidence.warc.gz").unlink()
    return dst


async def test_altered_text_record_is_reported_at_its_step_only(browser, episodes, tmp_path):
    src = episodes["eco"]
    ep = _copy(src, tmp_path / "text-altered")
    target = 8  # the step after the first "Load more"

    def edit(rec, payload: bytes) -> bytes | None:
        if rec.rec_headers.get_header("WARC-Rig-Capture") == "text" and rec.rec_headers.get_header("WARC-Rig-Step") == str(target):
            return payload.replace(b"Showing 20", b"Showing 21")
        return None

    assert rewrite_warc(src / "evidence.warc.gz", ep / "evidence.warc.gz", edit) == 1
    report = (await replay_episode(ep, browser)).to_json()
    assert [m["step"] for m in report["mismatches"]] == [target]
    assert set(report["mismatches"][0]["diff"]) == {"archive_text_hash"}
    assert report["matched"] == report["steps"] - 1


async def test_altered_response_is_reported_from_the_step_that_shows_it(browser, episodes, tmp_path):
    src = episodes["eco"]
    ep = _copy(src, tmp_path / "response-altered")
    steps = read_trajectory(src / "trajectory.jsonl")
    shows = next(s.step for s in steps if s.action.type == "click" and s.action.target == "#load-more")
    altered: list[str] = []

    def edit(rec, payload: bytes) -> bytes | None:
        if rec.rec_type == "response" and rec.rec_headers.get_header("WARC-Target-URI").endswith("/api/query"):
            data = json.loads(payload)
            if data.get("offset") == 10 and not altered:  # the first "Load more" batch
                altered.append(data["rows"][0][0])
                data["rows"][0][0] = "1999-12-31"
                return json.dumps(data).encode()
        return None

    assert rewrite_warc(src / "evidence.warc.gz", ep / "evidence.warc.gz", edit) == 1
    report = (await replay_episode(ep, browser)).to_json()
    bad = [m["step"] for m in report["mismatches"]]
    # the altered row is on screen from the load-more step until the re-sorted query replaces the rows
    resorted = next(s.step for s in steps if "precipitation" in str(s.action.target))
    assert bad == list(range(shows, resorted)), report["mismatches"]
    assert all(set(m["diff"]) == {"text_hash", "archive_text_hash"} for m in report["mismatches"])
