"""Benchmark the network guard's proxy: the same live-style browsing with and without it, CPU and wall time.

    .venv/bin/python scripts/bench_proxy.py [--repeats 5] [--json] [--write-doc]

The offline web (tests/liveweb.py) runs in a process of its own (HTTPS hosts on 127.0.0.1 behind `--resolve`).
Each repeat browses it in a fresh context of one live browser three times, interleaved: `direct` (the browser's own
host mappings, no routes, no proxy), `polite` (a politeness gate's routes, limits off: a live run's context before the
guard) and `guarded` (the gate and a `rig.network.NetworkGuard`: its proxy carries every connection, its routes check
every request: a live run's context now). The workload: the portal's search form and result pages, a gallery of 40 images, record
pages, a cross-host redirect and an archive page. Measured: wall seconds, and CPU seconds of this process (the
Playwright client and, guarded, the proxy; the servers and Chromium run elsewhere), per condition; medians.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from loguru import logger
from playwright.async_api import Browser, async_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from benchdoc import write_section  # noqa: E402

from rig.browser import launch  # noqa: E402
from rig.network import NetworkGuard, PoliteGate, Politeness, episode_policy, parse_resolve  # noqa: E402

#: Politeness with its limits off: only the cost of routing every request through the gate.
UNLIMITED = Politeness(rate_per_host=0, max_per_host=0)

PORTAL, ARCHIVE = "https://portal.example.org", "https://archive.example.net"
PAGES = ([f"{PORTAL}/search", f"{PORTAL}/results?kind=dataset&sort=year&order=desc"]
         + [f"{PORTAL}/results?page={p}" for p in (1, 2, 3)] + [f"{PORTAL}/gallery/40"]
         + [f"{PORTAL}/record/{i}" for i in range(1, 6)] + [f"{ARCHIVE}/moved/7", f"{ARCHIVE}/doc/1"])


async def browse(browser: Browser, guard: NetworkGuard | None, polite: bool) -> dict[str, float]:
    """Load every page of the workload in a fresh context; wall and CPU seconds, requests."""
    options: dict[str, Any] = {"ignore_https_errors": True, "service_workers": "block"}
    if guard is not None:
        await guard.start()
        options["proxy"] = guard.proxy_option
    context = await browser.new_context(**options)
    requests = 0

    def count(_: object) -> None:
        nonlocal requests
        requests += 1

    context.on("requestfinished", count)
    try:
        if polite:
            await PoliteGate(UNLIMITED).attach(context)
        if guard is not None:
            await guard.attach(context)
        page = await context.new_page()
        wall, cpu = time.perf_counter(), time.process_time()
        for url in PAGES:
            await page.goto(url, wait_until="load")
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    finally:
        await context.close()
        if guard is not None:
            await guard.close()
    return {"wall_s": wall, "cpu_s": cpu, "requests": requests}


async def bench(repeats: int, resolve: list[str]) -> dict[str, Any]:
    """Interleaved repeats of both conditions; medians."""
    mappings = parse_resolve(resolve)
    policy = episode_policy(True, mappings, None, None, [PAGES[0]])
    runs: dict[str, list[dict[str, float]]] = {"direct": [], "polite": [], "guarded": []}
    async with async_playwright() as pw:
        browser = await launch(pw, local_only=False, resolve=mappings, sealed=True)
        try:
            await browse(browser, None, False)  # warm up
            for _ in range(repeats):
                runs["direct"].append(await browse(browser, None, False))
                runs["polite"].append(await browse(browser, None, True))
                runs["guarded"].append(await browse(browser, NetworkGuard(policy), True))
        finally:
            await browser.close()
    med = {c: {k: statistics.median(r[k] for r in rs) for k in ("wall_s", "cpu_s", "requests")}
           for c, rs in runs.items()}
    return {"repeats": repeats, "pages": len(PAGES), "medians": med}


def table(r: dict[str, Any]) -> str:
    """The figures as a Markdown table."""
    m = r["medians"]
    lines = [f"| condition (median of {r['repeats']}, {r['pages']} pages) | wall s | CPU s (rig process) | requests "
             "| CPU ms / request |", "|---|---:|---:|---:|---:|"]
    for c in ("direct", "polite", "guarded"):
        lines.append(f"| {c} | {m[c]['wall_s']:.2f} | {m[c]['cpu_s']:.3f} | {m[c]['requests']:.0f} "
                     f"| {1000 * m[c]['cpu_s'] / max(1, m[c]['requests']):.2f} |")
    extra = m["guarded"]["cpu_s"] - m["polite"]["cpu_s"]
    lines.append(f"\nOver a live run's context before the guard (`polite`), the proxy and the guard's routes add "
                 f"{extra:.3f} CPU s of the rig's process ({1000 * extra / max(1, m['guarded']['requests']):.2f} ms a "
                 f"request) and {m['guarded']['wall_s'] / m['polite']['wall_s']:.2f}x wall time.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Serve the offline web in a subprocess, run the benchmark, print a Markdown table (or JSON)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", action="store_true", help="print the raw figures as JSON")
    ap.add_argument("--write-doc", action="store_true", help="write the table into docs/benchmarks.md")
    args = ap.parse_args(argv)
    logger.remove()
    logger.add(sys.stderr, level="WARNING")
    web = subprocess.Popen([sys.executable, str(ROOT / "tests" / "liveweb.py")], stdout=subprocess.PIPE, text=True,
                           cwd=ROOT / "tests")
    try:
        words = (web.stdout.readline() if web.stdout else "").split()
        resolve = [words[i + 1] for i, w in enumerate(words) if w == "--resolve"]
        if not resolve:
            raise SystemExit("tests/liveweb.py did not start")
        result = asyncio.run(bench(max(1, args.repeats), resolve))
    finally:
        web.terminate()
        web.wait(10)
    text = table(result)
    print(json.dumps(result, indent=2) if args.json else text)
    if args.write_doc:
        write_section(ROOT / "docs" / "benchmarks.md", "## Network guard", "## Network guard (`scripts/bench_proxy.py`)"
                      "\n\n" + text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
