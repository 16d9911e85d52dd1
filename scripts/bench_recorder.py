"""Benchmark the recorder: a 30-step scripted episode, bare vs recorded vs Playwright tracing and HAR.

    .venv/bin/python scripts/bench_recorder.py [--repeats 9] [--site flights|catalog|held-out] [--only TEXT] [--cpus N]
        [--json]

Each condition runs the same action script in a fresh browser context: by default over the bundled `flights`
site (two reference solutions' worth of filters, sorting and tables), served from a process of its own as a real
site is, or over tests/pages/catalog.html. The conditions are interleaved, after one warm-up round; the median
wall time and CPU time (this process and its children: browser, Playwright driver, site server) of the repeats
are reported with bytes per step on disk.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from loguru import logger
from playwright.async_api import BrowserContext, async_playwright

from recorders import Recorder, RecorderOptions, RecordingTime
from replay.render import render_dom_images
from rig.agents.scripted import ScriptRunner
from rig.browser import launch
from rig.episode_dir import EpisodeDir
from rig.formats.actions import parse_actions
from rig.runner.step_images import due_images

ROOT = Path(__file__).resolve().parents[1]
_SERVER_PID: dict[str, int] = {}  # the site server's process, to tell its CPU time apart

#: 30 actions over the bundled flights site: flights-01's reference solution (without its answer), then the
#: first ten actions of flights-04's: selects, a checkbox, a text field, form submissions, a sortable table.
FLIGHTS: list[dict[str, Any]] = [
    {"goto": "/flights/search"},
    {"select": {"selector": "#origin", "value": "LGA"}},
    {"select": {"selector": "#month_from", "value": "7"}},
    {"select": {"selector": "#month_to", "value": "7"}},
    {"check": "input[name=metric][value=dep_delay]"},
    {"select": {"selector": "#group", "value": "carrier"}},
    {"fill": {"selector": "#min_flights", "value": "300"}},
    {"click": 'role=button[name="Apply"]'},
    {"wait_for": '#results th:has-text("Airline")'},
    {"click": '#results th a:has-text("Avg dep. delay (min)")'},
    {"wait_for": '#results th[aria-sort=descending]:has-text("Avg dep. delay (min)")'},
    {"extract_table": {"selector": "#results", "as": "carriers"}},
    {"select": {"selector": "#carrier", "value": ["${carriers[0].Carrier}"]}},
    {"select": {"selector": "#month_from", "value": "10"}},
    {"select": {"selector": "#month_to", "value": "12"}},
    {"select": {"selector": "#group", "value": "dest"}},
    {"fill": {"selector": "#min_flights", "value": "150"}},
    {"click": 'role=button[name="Apply"]'},
    {"wait_for": '#results th:has-text("Destination")'},
    {"extract_table": {"selector": "#results", "as": "routes"}},
    {"goto": "/flights/search"},
    {"select": {"selector": "#origin", "value": "EWR"}},
    {"select": {"selector": "#month_from", "value": "6"}},
    {"select": {"selector": "#month_to", "value": "6"}},
    {"check": "input[name=metric][value=dep_delay]"},
    {"select": {"selector": "#group", "value": "dest"}},
    {"fill": {"selector": "#min_flights", "value": "100"}},
    {"click": 'role=button[name="Apply"]'},
    {"wait_for": '#results th:has-text("Destination")'},
    {"click": '#results th a:has-text("Avg dep. delay (min)")'},
]

#: 30 actions over tests/pages/catalog.html: navigations, form controls, JS tabs, a fetch, pagination.
CATALOG: list[dict[str, Any]] = [
    {"goto": "/catalog.html"},
    {"select": {"selector": "#year", "value": "1890"}},
    {"click": "#apply"},
    {"check": "input[name=region][value=Asia]"},
    {"check": "input[name=region][value=Europe]"},
    {"click": "#apply"},
    {"click": "#tab-chart"},
    {"click": "#tab-table"},
    {"select": {"selector": "#year", "value": ""}},
    {"click": "#apply"},
    {"click": "#next"},
    {"click": "#details"},
    {"click": "#next"},
    {"click": "#prev"},
    {"check": "input[name=sort][value=year]"},
    {"click": "#apply"},
    {"extract_table": {"selector": "table#results", "as": "rows"}},
    {"fill": {"selector": "#q", "value": "bo"}},
    {"press": {"selector": "#q", "key": "Enter"}},
    {"uncheck": "input[name=region][value=Asia]"},
    {"click": "#apply"},
    {"click": "#tab-chart"},
    {"click": "#tab-table"},
    {"goto": "/catalog.html?region=Africa&sort=year"},
    {"click": "#next"},
    {"click": "#details"},
    {"select": {"selector": "#year", "value": "1920"}},
    {"click": "#apply"},
    {"extract_text": {"selector": "#count", "as": "n"}},
    {"goto": "/catalog.html"},
]


@contextlib.contextmanager
def _server(site: str) -> Iterator[str]:
    """Serve the benchmark's site on 127.0.0.1; yield its base URL."""
    if site == "flights":  # in its own process, as a real site is: it must not share this process's GIL
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        cmd = [sys.executable, "-c", "import sys; from rig.sites import serve; serve(int(sys.argv[1]))", str(port)]
        server = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _SERVER_PID["pid"] = server.pid
        try:
            url = f"http://127.0.0.1:{port}"
            for _ in range(1200):
                with contextlib.suppress(OSError):
                    urllib.request.urlopen(f"{url}/flights/search", timeout=1).close()
                    break
                time.sleep(0.1)
            else:
                raise RuntimeError("the sites server did not start within 2 minutes")
            yield url
        finally:
            server.terminate()
            server.wait(10)
        return
    spec = importlib.util.spec_from_file_location("bench_test_server", ROOT / "tests" / "server.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look their module up
    spec.loader.exec_module(mod)
    with mod.pages_site() as srv:  # tests/pages and their endpoints, as the tests serve them
        yield srv.url


def _kind(proc: Any, me: int) -> str:
    """Which part of the set-up a process is: this harness, the site server, the Playwright driver or Chromium's."""
    if proc.pid == me:
        return "harness (Python)"
    if proc.pid == _SERVER_PID.get("pid"):
        return "site server"
    cmd = " ".join(proc.cmdline())
    for kind in ("renderer", "gpu-process", "utility"):
        if f"--type={kind}" in cmd:
            return f"Chromium {kind.removesuffix('-process')}"
    if "--type=" in cmd:
        return "Chromium other"
    return "Playwright driver" if "node" in proc.name() else "Chromium browser"


def _cpu_by_process() -> dict[str, float] | None:
    """CPU seconds used so far by this process and its children, by kind; None without psutil."""
    try:
        import psutil
    except ImportError:
        return None
    used: dict[str, float] = {}
    me = psutil.Process()
    for p in [me, *me.children(recursive=True)]:
        try:
            t = p.cpu_times()
            kind = _kind(p, me.pid)
        except psutil.Error:
            continue
        used[kind] = used.get(kind, 0.0) + t.user + t.system
    return used


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else path.stat().st_size


async def _episode(
    browser: Any, base: str, script: list[dict[str, Any]], mode: str, work: Path, options: RecorderOptions | None
) -> tuple[float, dict[str, float] | None, int, RecordingTime | None]:
    """Run the script once under one condition; return (wall seconds, CPU seconds by process kind, bytes written,
    how long the recorder held the script up)."""
    out = work / f"{mode}"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    kwargs: dict[str, Any] = {"record_har_path": str(out / "episode.har")} if mode == "har" else {}
    context: BrowserContext = await browser.new_context(**kwargs)
    page = await context.new_page()
    actions = parse_actions(script, "bench")
    cpu0 = _cpu_by_process()
    t0 = time.perf_counter()
    rec = None
    if mode == "tracing":
        await context.tracing.start(screenshots=True, snapshots=True)
    elif mode in ("record", "record+draw"):
        rec = await Recorder.attach(context, out / "episode", options=options)
    await ScriptRunner(page, base, rec).run(actions)
    if rec is not None:
        await rec.close()
    if mode == "record+draw":  # `rig render`'s work: every step's image from its archived DOM snapshot
        ep = EpisodeDir(out / "episode")
        due, _ = due_images(ep)
        failed = {n: why for n, why in (await render_dom_images(browser, ep.warc_file, due)).items() if why}
        assert not failed, failed
    if mode == "tracing":
        await context.tracing.stop(path=str(out / "trace.zip"))
    elapsed = time.perf_counter() - t0
    cpu1 = _cpu_by_process()
    await context.close()  # writes the HAR
    cpu = {k: v - (cpu0 or {}).get(k, 0.0) for k, v in cpu1.items()} if cpu0 is not None and cpu1 else None
    return elapsed, cpu, _size(out), rec.time if rec is not None else None


#: condition -> (mode, recorder options); the first is the baseline.
CONDITIONS: dict[str, tuple[str, RecorderOptions | None]] = {
    "bare Playwright": ("bare", None),
    "full recording: state, WARC, text + DOM, JPEG every step (800x450)": (
        "record",
        RecorderOptions(screenshots="every"),
    ),
    "recording defaults (JPEG when the DOM changed)": ("record", RecorderOptions()),
    "full recording, full-size JPEG (1280x720)": ("record", RecorderOptions(screenshots="every", screenshot_scale=1)),
    "full recording, no wait for the screenshot (screenshot_wait_ms=0)": (
        "record",
        RecorderOptions(screenshots="every", screenshot_wait_ms=0),
    ),
    "recording without JPEG": ("record", RecorderOptions(screenshots="off")),
    "recording without JPEG, text or DOM snapshots": (
        "record",
        RecorderOptions(screenshots="off", record_text=False, dom_snapshot=False),
    ),
    "recording without JPEG or response bodies (max_body_bytes=0: no body read, no CDP session of the recorder's)": (
        "record",
        RecorderOptions(screenshots="off", max_body_bytes=0),
    ),
    "recording, JPEGs drawn later from the DOM snapshots (screenshot_source=dom)": (
        "record",
        RecorderOptions(screenshots="every", screenshot_source="dom"),
    ),
    "the same, then drawing every step's JPEG (rig render)": (
        "record+draw",
        RecorderOptions(screenshots="every", screenshot_source="dom"),
    ),
    "Playwright tracing (screenshots + snapshots)": ("tracing", None),
    "HAR recording": ("har", None),
}


def _script(site: str) -> list[dict[str, Any]]:
    """The benchmark's action script for a site (`held-out`: bench_record_process.py's, on the sites server)."""
    if site == "held-out":
        from bench_record_process import HELD_OUT  # scripts/bench_record_process.py

        return json.loads(json.dumps(HELD_OUT).replace("{base}", ""))
    return FLIGHTS if site == "flights" else CATALOG


async def run(repeats: int, site: str, only: list[str] | None = None) -> list[dict[str, Any]]:
    """Every condition (or those whose name contains one of `only`, and the first), `repeats` times each (interleaved,
    after a warm-up round), with medians."""
    conds = {k: v for i, (k, v) in enumerate(CONDITIONS.items()) if not i or not only or any(o in k for o in only)}
    script = _script(site)
    times: dict[str, list[float]] = {k: [] for k in conds}
    cpus: dict[str, list[dict[str, float]]] = {k: [] for k in conds}
    sizes: dict[str, list[int]] = {k: [] for k in conds}
    holds: dict[str, list[RecordingTime]] = {k: [] for k in conds}
    work = Path(tempfile.mkdtemp(prefix="bench-recorder-"))
    try:
        with _server("catalog" if site == "catalog" else "flights") as base:
            async with async_playwright() as pw:
                browser = await launch(pw)
                for mode, opts in conds.values():  # warm-up
                    await _episode(browser, base, script, mode, work, opts)
                for _ in range(repeats):
                    for name, (mode, opts) in conds.items():
                        seconds, cpu, size, hold = await _episode(browser, base, script, mode, work, opts)
                        times[name].append(seconds)
                        if hold is not None:
                            holds[name].append(hold)
                        if cpu is not None:
                            cpus[name].append(cpu)
                        sizes[name].append(size)
                await browser.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    base_name = next(iter(conds))
    bare = statistics.median(times[base_name])
    bare_cpu = statistics.median(sum(c.values()) for c in cpus[base_name]) if cpus[base_name] else None
    rows = []
    for name in conds:
        med = statistics.median(times[name])
        cpu = statistics.median(sum(c.values()) for c in cpus[name]) if cpus[name] else None
        kinds = sorted({k for c in cpus[name] for k in c})
        by_process = {k: round(statistics.median(c.get(k, 0.0) for c in cpus[name]), 3) for k in kinds}
        rows.append(
            {
                "condition": name,
                "median_s": round(med, 3),
                "overhead_pct": round(100 * (med / bare - 1), 1),
                "cpu_s": round(cpu, 3) if cpu is not None else None,
                "cpu_overhead_pct": round(100 * (cpu / bare_cpu - 1), 1) if cpu is not None and bare_cpu else None,
                "cpu_by_process": by_process,
                "bytes_per_step": int(statistics.median(sizes[name])) // len(script),
                "settle_ms_per_step": _per_step(holds[name], "settle_s", len(script)),
                "image_wait_ms_per_step": _per_step(holds[name], "image_wait_s", len(script)),
                "runs": [round(t, 3) for t in times[name]],
            }
        )
    return rows


def _per_step(holds: list[RecordingTime], attr: str, steps: int) -> float | None:
    """The median over repeats of one part of the recorder's hold, in ms per step."""
    return round(1000 * statistics.median(getattr(h, attr) for h in holds) / steps, 1) if holds else None


def main(argv: list[str] | None = None) -> None:
    """Print a markdown table (or JSON) of the benchmark."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--site", choices=("flights", "catalog", "held-out"), default="flights",
                    help="held-out: bench_record_process.py's 41 actions over the stats and eco sites")
    ap.add_argument("--only", action="append", help="only the conditions whose name contains this (and the baseline)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--cpus", type=int, help="run everything (browser, driver, site server) on this many cores")
    args = ap.parse_args(argv)
    if args.cpus:  # the processes started from here inherit the affinity
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[: args.cpus])
    logger.disable("recorders")
    rows = asyncio.run(run(args.repeats, args.site, args.only))
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    steps = len(_script(args.site))
    cores = len(os.sched_getaffinity(0))
    print(
        f"{steps}-step scripted episode over {args.site}, median of {args.repeats} interleaved runs (after a warm-up), "
        f"on {cores} core{'s' if cores > 1 else ''}\n"
    )
    print("| condition | wall time (s) | vs bare | CPU (s, all processes) | vs bare | bytes/step on disk |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        size = f"{r['bytes_per_step']:,}" if r["bytes_per_step"] else "-"
        cpu = f"{r['cpu_s']:.2f} | {r['cpu_overhead_pct']:+.1f}%" if r["cpu_s"] is not None else "- | -"
        print(f"| {r['condition']} | {r['median_s']:.3f} | {r['overhead_pct']:+.1f}% | {cpu} | {size} |")
    print("\nWhere the recorder held the script up (medians, ms per step):\n")
    print("| condition | settling and reading state | waiting for the step's screenshot |")
    print("|---|---:|---:|")
    for r in rows:
        if r["settle_ms_per_step"] is not None:
            print(f"| {r['condition']} | {r['settle_ms_per_step']:.1f} | {r['image_wait_ms_per_step']:.1f} |")
    kinds = sorted({k for r in rows for k in r["cpu_by_process"]})
    if kinds:
        print("\nCPU seconds by process (medians):\n")
        print("| condition | " + " | ".join(kinds) + " |")
        print("|---|" + "---:|" * len(kinds))
        for r in rows:
            print(f"| {r['condition']} | " + " | ".join(f"{r['cpu_by_process'].get(k, 0):.2f}" for k in kinds) + " |")


if __name__ == "__main__":
    sys.exit(main())
