"""Benchmark the recorder: a 30-step scripted episode, bare vs recorded vs Playwright tracing (and HAR bytes).

    .venv/bin/python scripts/bench_recorder.py [--repeats 5] [--json]

Each condition runs the same action script in a fresh browser context against tests/pages/catalog.html
served on 127.0.0.1; the median wall time of the repeats is reported with bytes per step.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from loguru import logger
from playwright.async_api import BrowserContext, async_playwright

from recorders import Recorder, RecorderOptions
from rig.actions import parse_actions
from rig.agents.scripted import ScriptRunner
from rig.browser import launch

ROOT = Path(__file__).resolve().parents[1]

#: 30 actions over the catalog page: navigations, form controls, JS tabs, a fetch, pagination.
SCRIPT: list[dict[str, Any]] = [
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


def _page_server() -> Any:
    spec = importlib.util.spec_from_file_location("bench_pages_serve", ROOT / "tests" / "pages" / "serve.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.PageServer()


def _cpu_seconds() -> float | None:
    """CPU seconds used so far by this process and its children (browser, Playwright driver); None without psutil."""
    try:
        import psutil
    except ImportError:
        return None
    total = 0.0
    me = psutil.Process()
    for p in [me, *me.children(recursive=True)]:
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.Error:
            pass
    return total


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else path.stat().st_size


async def _episode(
    browser: Any, base: str, mode: str, work: Path, options: RecorderOptions | None
) -> tuple[float, float | None, int]:
    """Run the script once under one condition; return (wall seconds, CPU seconds, bytes written)."""
    out = work / f"{mode}"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    kwargs: dict[str, Any] = {"record_har_path": str(out / "episode.har")} if mode == "har" else {}
    context: BrowserContext = await browser.new_context(**kwargs)
    page = await context.new_page()
    actions = parse_actions(SCRIPT, "bench")
    cpu0 = _cpu_seconds()
    t0 = time.perf_counter()
    rec = None
    if mode == "tracing":
        await context.tracing.start(screenshots=True, snapshots=True)
    elif mode.startswith("record"):
        rec = await Recorder.attach(context, out / "episode", options=options)
    await ScriptRunner(page, base, rec).run(actions)
    if rec is not None:
        await rec.close()
    if mode == "tracing":
        await context.tracing.stop(path=str(out / "trace.zip"))
    elapsed = time.perf_counter() - t0
    cpu1 = _cpu_seconds()
    await context.close()  # writes the HAR
    return elapsed, (cpu1 - cpu0 if cpu0 is not None and cpu1 is not None else None), _size(out)


async def run(repeats: int) -> list[dict[str, Any]]:
    """Every condition, `repeats` times each (interleaved), with medians."""
    conditions: dict[str, tuple[str, RecorderOptions | None]] = {
        "bare Playwright": ("bare", None),
        "record (defaults: screenshot on change, text + DOM per step)": ("record", RecorderOptions()),
        "record, screenshot every step": ("record", RecorderOptions(screenshots="every")),
        "record, half-scale screenshots": ("record", RecorderOptions(screenshot_scale=0.5)),
        "record, no screenshots": ("record", RecorderOptions(screenshots="off")),
        "Playwright tracing (screenshots + snapshots)": ("tracing", None),
        "HAR recording": ("har", None),
    }
    times: dict[str, list[float]] = {k: [] for k in conditions}
    cpus: dict[str, list[float]] = {k: [] for k in conditions}
    sizes: dict[str, int] = {}
    work = Path(tempfile.mkdtemp(prefix="bench-recorder-"))
    try:
        with _page_server() as srv:
            async with async_playwright() as pw:
                browser = await launch(pw)
                for mode, opts in conditions.values():  # warm-up
                    await _episode(browser, srv.url, mode, work, opts)
                for _ in range(repeats):
                    for name, (mode, opts) in conditions.items():
                        seconds, cpu, size = await _episode(browser, srv.url, mode, work, opts)
                        times[name].append(seconds)
                        if cpu is not None:
                            cpus[name].append(cpu)
                        sizes[name] = size
                await browser.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    bare = statistics.median(times["bare Playwright"])
    bare_cpu = statistics.median(cpus["bare Playwright"]) if cpus["bare Playwright"] else None
    rows = []
    for name in conditions:
        med = statistics.median(times[name])
        cpu = statistics.median(cpus[name]) if cpus[name] else None
        rows.append(
            {
                "condition": name,
                "median_s": round(med, 3),
                "overhead_pct": round(100 * (med / bare - 1), 1),
                "cpu_s": round(cpu, 3) if cpu is not None else None,
                "cpu_overhead_pct": round(100 * (cpu / bare_cpu - 1), 1) if cpu is not None and bare_cpu else None,
                "bytes_per_step": sizes[name] // len(SCRIPT),
                "runs": [round(t, 3) for t in times[name]],
            }
        )
    return rows


def main(argv: list[str] | None = None) -> None:
    """Print a markdown table (or JSON) of the benchmark."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    logger.disable("recorders")
    rows = asyncio.run(run(args.repeats))
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{len(SCRIPT)}-step scripted episode, median of {args.repeats} runs (after one warm-up)\n")
    print("| condition | wall time (s) | vs bare | CPU (s, browser + driver + Python) | vs bare | bytes/step on disk |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        size = f"{r['bytes_per_step']:,}" if r["bytes_per_step"] else "-"
        cpu = f"{r['cpu_s']:.2f} | {r['cpu_overhead_pct']:+.1f}%" if r["cpu_s"] is not None else "- | -"
        print(f"| {r['condition']} | {r['median_s']:.3f} | {r['overhead_pct']:+.1f}% | {cpu} | {size} |")


if __name__ == "__main__":
    sys.exit(main())
