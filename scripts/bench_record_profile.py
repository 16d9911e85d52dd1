"""Where a recording's CPU goes: one `rig record` of the held-out script, its process tree's CPU seconds by process.

    .venv/bin/python scripts/bench_record_profile.py [--step-images live|dom|off] [--repeats 3] [--py-spy OUT.txt]
    .venv/bin/python scripts/bench_record_profile.py --baseline bare|tracing [--repeats 3]
    .venv/bin/python scripts/bench_record_profile.py --phases [--repeats 15]

Every 50 ms it reads /proc for each process of the tree (the rig's Python, the Playwright driver, Chromium's browser,
renderer, GPU and utility processes) and keeps each one's last CPU reading, so a process that exits keeps what it
had used up to at most 50 ms before. `--py-spy OUT.txt` runs the rig's Python under py-spy (`pip install py-spy`)
and writes its collapsed stacks (`py-spy record --format raw`) for flame graphs or grep. The held-out script and the
sites server are `bench_record_process.py`'s. Medians over the repeats.

`--phases` times the recorder's one state read per step (`recorders.observer.collect`, one `page.evaluate`) on two
pages of the script (the stats explorer's table, the eco browser's results), with and without the visible text and the
DOM snapshot, as the round trip from Python and as the page's own time (`performance.now()` around the call).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_record_process import HELD_OUT, _sites  # scripts/bench_record_process.py
from proctree import become_subreaper, load_average  # scripts/proctree.py

_TICK = os.sysconf("SC_CLK_TCK")


def _kind(pid: int) -> str:
    """Which part of a recording a process is, from its command line."""
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "gone"
    if "py-spy" in cmd:
        return "py-spy"
    for kind in ("renderer", "gpu-process", "utility", "zygote"):
        if f"--type={kind}" in cmd:
            sub = ""
            if kind == "utility":
                sub = " (network)" if "network.mojom" in cmd else " (storage)" if "storage" in cmd else ""
            return f"Chromium {kind.removesuffix('-process')}{sub}"
    if "--type=" in cmd:
        return "Chromium other"
    if "node" in cmd.split(" ")[0]:
        return "Playwright driver (node)"
    if "chrom" in cmd:
        return "Chromium browser"
    return "Python (rig or driver script)" if "python" in cmd or "/rig " in cmd else cmd.split(" ")[0]


def _stat(pid: int) -> tuple[int, float] | None:
    """(parent pid, CPU seconds) of a process, or None when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / _TICK


def profile(cmd: list[str]) -> dict[str, float]:
    """Run `cmd`; CPU seconds of its process tree by kind, polled every 50 ms."""
    become_subreaper()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seen: dict[int, tuple[str, float]] = {}
    while proc.poll() is None:
        parents: dict[int, int] = {}
        cpu: dict[int, float] = {}
        for entry in os.scandir("/proc"):
            if entry.name.isdigit() and (got := _stat(int(entry.name))) is not None:
                parents[int(entry.name)], cpu[int(entry.name)] = got
        tree, todo = set(), [proc.pid]
        while todo:
            pid = todo.pop()
            tree.add(pid)
            todo += [c for c, p in parents.items() if p == pid and c not in tree]
        for pid in tree | (set(seen) & set(cpu)):
            kind = seen[pid][0] if pid in seen else _kind(pid)
            seen[pid] = (kind, cpu.get(pid, seen.get(pid, ("", 0.0))[1]))
        time.sleep(0.05)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr.read().decode()[-3000:]}")
    out: dict[str, float] = {}
    for kind, seconds in seen.values():
        out[kind] = out.get(kind, 0.0) + seconds
    out["total"] = sum(v for k, v in out.items() if k != "py-spy")
    return out


_IN_PAGE = """async o => { const t = []; for (let i = 0; i < o.n; i++) { const a = performance.now();
  JSON.stringify(await window.__sgrRec.collect(o)); t.push(performance.now() - a); }
  t.sort((a, b) => a - b); return t[Math.floor(t.length / 2)]; }"""


async def phases(base: str, repeats: int) -> list[tuple[str, str, float, float, int]]:
    """(page, what is read, median round trip ms, median in-page ms, bytes) of the state read on two pages."""
    from playwright.async_api import async_playwright

    from recorders import observer
    from rig.browser import launch

    out = []
    async with async_playwright() as pw:
        browser = await launch(pw)
        context = await browser.new_context()
        await context.add_init_script(script=observer.observer_script())
        page = await context.new_page()
        pages = {"stats explorer, table": ("/stats/explore", [("click", 'role=treeitem[name="World"]'),
                                                             ("click", 'role=tab[name="Table"]')],
                                           "#panel-table table.results"),
                 "eco browser, results": ("/eco/browse", [("select", "#dataset", "sf-temps"), ("click", "#run")],
                                          'table#results[data-state="ready"]')}
        for name, (path, acts, ready) in pages.items():
            await page.goto(base + path)
            for act in acts:
                await (page.click(act[1]) if act[0] == "click" else page.select_option(act[1], act[2]))
            await page.wait_for_selector(ready)
            for what, text, html in (("state only", False, False), ("+ text", True, False), ("+ DOM", False, True),
                                     ("+ text + DOM (a step)", True, True)):
                trips, size = [], 0
                for _ in range(repeats):
                    t0 = time.perf_counter()
                    raw = await observer.collect(page, {}, 0, [], 3000, text=text, html=html)
                    trips.append(1000 * (time.perf_counter() - t0))
                    size = len(json.dumps(raw))
                opts = {"n": repeats, "text": text, "html": html, "facts": {}, "secretNames": [], "secretPart": "^$",
                        "secretPair": "^$", "secretBoundary": "^$"}
                out.append((name, what, statistics.median(trips), await page.evaluate(_IN_PAGE, opts), size))
        await browser.close()
    return out


def main(argv: list[str] | None = None) -> None:
    """Print the CPU seconds by process of `rig record` (or a baseline) on the held-out script."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--step-images", default=None)
    ap.add_argument("--baseline", choices=("bare", "tracing"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--py-spy", type=Path)
    ap.add_argument("--phases", action="store_true", help="time the per-step state read, part by part")
    args = ap.parse_args(argv)
    if args.phases:
        import asyncio

        with _sites() as (base, _):
            rows = asyncio.run(phases(base, args.repeats))
        print(f"load average {load_average():.1f}; medians of {args.repeats}")
        print("| page | read | round trip (ms) | in the page (ms) | bytes |\n|---|---|---:|---:|---:|")
        for page, what, trip, inpage, size in rows:
            print(f"| {page} | {what} | {trip:.1f} | {inpage:.1f} | {size:,} |")
        return
    py, rig = sys.executable, str(Path(sys.executable).with_name("rig"))
    work = Path(tempfile.mkdtemp(prefix="bench-record-profile-"))
    runs: list[dict[str, float]] = []
    recording: list[dict[str, float]] = []
    try:
        with _sites() as (base, _):
            script = work / "held-out.json"
            script.write_text(json.dumps(HELD_OUT).replace("{base}", base), encoding="utf-8")
            for _ in range(args.repeats):
                ep = work / "episode"
                shutil.rmtree(ep, ignore_errors=True)
                if args.baseline:
                    cmd = [py, str(Path(__file__).with_name("bench_record_process.py")), "drive", args.baseline,
                           str(script), str(work)]
                else:
                    cmd = [rig, "record", "--script", str(script), "--out", str(ep)]
                    cmd += ["--step-images", args.step_images] if args.step_images else []
                if args.py_spy:
                    cmd = [str(Path(sys.executable).with_name("py-spy")), "record", "--format", "raw", "-r", "200",
                           "-o", str(args.py_spy), "--", *cmd]
                runs.append(profile(cmd))
                if not args.baseline:
                    recording.append(json.loads((ep / "episode.json").read_text())["recording"])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    kinds = sorted({k for r in runs for k in r}, key=lambda k: (k == "total", k))
    print(f"load average {load_average():.1f}; medians of {args.repeats} runs, CPU seconds")
    for k in kinds:
        print(f"  {k:34s} {statistics.median(r.get(k, 0.0) for r in runs):7.2f}   {[round(r.get(k, 0), 2) for r in runs]}")
    for k in (recording[0] if recording else {}):
        print(f"  recording.{k:24s} {statistics.median(r[k] for r in recording):7.3f}")


if __name__ == "__main__":
    main()
