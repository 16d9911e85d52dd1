"""Benchmark replay: a recorded 30-step episode driven against its archive vs the live local sites, and index loading.

    .venv/bin/python scripts/bench_replay.py [--repeats 5] [--json]

One episode of 32 actions over the three bundled sites (GET forms, sort links, pagination, an ARIA tree with
fetched fragments and pushState tabs, POSTed JSON queries with "Load more") is recorded once. Then, in
the same run and interleaved, each repeat drives the same actions with the recorder attached in a fresh
context: `live` against the local sites, `replay` with every request answered from the archive; and
`rig replay` re-drives the recorded trajectory and compares every step. Medians are reported, plus the
median time to load the episode's archive index and the shipped snapshots' index.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from loguru import logger
from playwright.async_api import Browser, async_playwright

from recorders import Recorder, RecorderOptions
from replay import REPLAY_CONTEXT_OPTIONS, attach_replay, load_index, open_snapshot
from rig.agents.scripted import ScriptRunner
from rig.browser import launch
from rig.formats.actions import parse_actions
from rig.commands.replay import replay_episode
from rig.runner.record import record_actions
from rig.sites import SitesServer, bundled_adapters

ROOT = Path(__file__).resolve().parents[1]
OPTIONS = RecorderOptions(screenshots="off", fsync=False)

#: 32 actions over the three bundled sites.
SCRIPT: list[dict[str, Any]] = [
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
    {"goto": "/stats/explore"},
    {"click": 'role=treeitem[name="World"]'},
    {"click": 'role=treeitem[name="Asia"]'},
    {"select": {"selector": "#indicator", "value": "pop"}},
    {"click": 'role=tab[name="Summary"]'},
    {"click": '#panel-summary th[data-col="change_pct"] button'},
    {"click": 'role=tab[name="Table"]'},
    {"click": 'role=button[name="Next page"]'},
    {"click": "#panel-table tbody tr:first-child a"},
    {"goto": "/eco/browse"},
    {"select": {"selector": "#dataset", "value": "seattle-weather"}},
    {"check": "#weather-rain"},
    {"fill": {"selector": "#min_precip", "value": "5"}},
    {"click": "#run"},
    {"wait_for": 'table#results[data-state="ready"]'},
    {"click": "#load-more"},
    {"wait_for": 'table#results[data-batches="2"][data-state="ready"]'},
    {"click": "#load-more"},
    {"wait_for": 'table#results[data-batches="3"][data-state="ready"]'},
    {"click": 'table#results th button[data-sort="precipitation"]'},
    {"wait_for": 'table#results[data-sort="precipitation:asc"]'},
    {"extract_table": {"selector": "table#results", "as": "rows"}},
]


async def drive(browser: Browser, base_url: str, archive: Path | None) -> float:
    """Seconds to run SCRIPT with the recorder attached, live or (with `archive`) answered from the archive."""
    out = Path(tempfile.mkdtemp(prefix="rig-bench-replay-"))
    start = time.perf_counter()
    context = await browser.new_context(**REPLAY_CONTEXT_OPTIONS)
    try:
        if archive is not None:
            await attach_replay(context, load_index(archive))
        rec = await Recorder.attach(context, out, options=OPTIONS, adapters=bundled_adapters())
        page = await context.new_page()
        await ScriptRunner(page, base_url, hook=rec).run(parse_actions(SCRIPT, "bench"))
        await rec.close()
    finally:
        await context.close()
        shutil.rmtree(out, ignore_errors=True)
    return time.perf_counter() - start


async def bench(repeats: int) -> dict[str, Any]:
    """Record once, then time every condition `repeats` times, interleaved."""
    work = Path(tempfile.mkdtemp(prefix="rig-bench-replay-"))
    times: dict[str, list[float]] = {"live": [], "replay": [], "rig replay": [], "index: episode": [], "index: snapshots": []}
    try:
        with SitesServer() as srv:
            async with async_playwright() as pw:
                browser = await launch(pw)
                episode = work / "episode"
                ep = await record_actions(browser, parse_actions(SCRIPT, "bench"), episode, agent="bench",
                                          base_url=srv.url, options=OPTIONS, adapters=bundled_adapters())
                if ep.status != "ok":
                    raise SystemExit(f"recording failed: {ep.error}")
                archive = episode / "evidence.warc.gz"
                await drive(browser, srv.url, None)  # warm-up
                unmatched = 0
                for _ in range(repeats):
                    times["live"].append(await drive(browser, srv.url, None))
                    times["replay"].append(await drive(browser, srv.url, archive))
                    t = time.perf_counter()
                    report = await replay_episode(episode, browser)
                    times["rig replay"].append(time.perf_counter() - t)
                    unmatched += report.steps - report.matched
                    times["index: episode"].append(load_index(archive).load_seconds)
                    times["index: snapshots"].append(open_snapshot(ROOT / "site_snapshots").index.load_seconds)
                await browser.close()
        return {
            "steps": ep.steps, "repeats": repeats, "unmatched_steps": unmatched,
            "archive_bytes": archive.stat().st_size,
            "snapshot_bytes": sum(p.stat().st_size for p in (ROOT / "site_snapshots").glob("*/*.warc.gz")),
            "median_s": {k: round(statistics.median(v), 4) for k, v in times.items()},
            "runs_s": {k: [round(x, 4) for x in v] for k, v in times.items()},
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)


def table(r: dict[str, Any]) -> str:
    """The results as a Markdown table."""
    m = r["median_s"]
    rows = [
        ("live local sites (recorder attached)", m["live"], f"{r['steps']} steps"),
        ("replay from the archive (recorder attached)", m["replay"], f"{m['replay'] / m['live']:.2f} x live"),
        ("`rig replay` (re-drive + compare every step)", m["rig replay"], f"{r['unmatched_steps']} unmatched steps in all runs"),
        ("load the episode's index", m["index: episode"], f"{r['archive_bytes'] / 1e3:.0f} KB archive"),
        ("load the shipped snapshots' index", m["index: snapshots"], f"{r['snapshot_bytes'] / 1e6:.2f} MB, 3 sites"),
    ]
    lines = [f"| condition (median of {r['repeats']}) | seconds | note |", "|---|---:|---|"]
    lines += [f"| {name} | {sec:.3f} | {note} |" for name, sec, note in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print a Markdown table (or JSON)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", action="store_true", help="print the raw figures as JSON")
    args = ap.parse_args(argv)
    logger.remove()
    logger.add(sys.stderr, level="WARNING")
    result = asyncio.run(bench(max(1, args.repeats)))
    print(json.dumps(result, indent=2) if args.json else table(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
