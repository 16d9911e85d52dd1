"""Benchmark `rig record` as a whole process beside bare Playwright and Playwright tracing doing the same actions.

    .venv/bin/python scripts/bench_record_process.py [--repeats 5] [--json] [--doc docs/benchmarks.md]
    .venv/bin/python scripts/bench_record_process.py drive bare|tracing SCRIPT.json OUT_DIR   # one baseline process

A held-out 41-action script over the bundled `stats` and `eco` sites (the recorder's tuning script,
`bench_recorder.py`, is over `flights`) is run, in each round, by each condition as a process of its own from start
to exit: a bare Playwright script (the same Chromium and flags, the same actions, nothing recorded), the same with
Playwright tracing (screenshots and snapshots, the trace written), and `rig record` with each `--step-images` mode
(`rig render` afterwards for `dom`). The conditions are interleaved (their order rotates from round to round); each
is timed by wall clock and by the CPU seconds of its whole process tree, Chromium's renderers included
(`proctree.run_tree`); the sites are served once, from a process of their own, not counted. Ratios are taken against
the baselines of the same round, then their median over rounds is reported, with the machine's load average.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
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

from benchdoc import write_section  # scripts/benchdoc.py
from proctree import Usage, load_average, run_tree  # scripts/proctree.py

SECTION = "## Recording, whole processes (`scripts/bench_record_process.py`)"

#: 41 actions over the bundled stats and eco sites: stats-01's reference solution and eco-04's (their variables
#: replaced by the values they take), then the explorer again and two clicks. `{base}` is the sites' URL.
HELD_OUT: list[dict[str, Any]] = [
    {"goto": "{base}/stats/explore"},
    {"click": 'role=treeitem[name="World"]'},
    {"select": {"selector": 'select[name="indicator"]', "value": "gdpPercap"}},
    {"select": {"selector": 'select[name="year_from"]', "value": "1977"}},
    {"select": {"selector": 'select[name="year_to"]', "value": "1977"}},
    {"click": 'role=tab[name="Aggregate"]'},
    {"wait_for": '#panel-aggregate table.results[data-node="World"][data-indicator="gdpPercap"][data-year-to="1977"]'},
    {"click": '#panel-aggregate th[data-col="wmean"] button'},
    {"wait_for": '#panel-aggregate th[data-col="wmean"][aria-sort="ascending"]'},
    {"extract_table": {"selector": "#panel-aggregate table.results", "as": "regions"}},
    {"click": 'role=treeitem[name="Asia"]'},
    {"select": {"selector": 'select[name="indicator"]', "value": "lifeExp"}},
    {"select": {"selector": 'select[name="year_to"]', "value": "2007"}},
    {"select": {"selector": 'select[name="year_from"]', "value": "2007"}},
    {"click": 'role=tab[name="Table"]'},
    {"wait_for": '#panel-table table.results[data-node="Asia"][data-indicator="lifeExp"][data-year-from="2007"]'},
    {"click": '#panel-table th[data-col="2007"] button'},
    {"wait_for": '#panel-table th[data-col="2007"][aria-sort="ascending"]'},
    {"click": '#panel-table th[data-col="2007"] button'},
    {"wait_for": '#panel-table th[data-col="2007"][aria-sort="descending"]'},
    {"extract_table": {"selector": "#panel-table table.results", "as": "countries"}},
    {"goto": "/eco/browse"},
    {"select": {"selector": "#dataset", "value": "sf-temps"}},
    {"check": "#agg-monthly"},
    {"select": {"selector": "#sort", "value": "temp_mean"}},
    {"select": {"selector": "#dir", "value": "desc"}},
    {"click": "#run"},
    {"wait_for": 'table#results[data-state="ready"]'},
    {"extract_table": {"selector": "table#results", "as": "months"}},
    {"select": {"selector": "#dataset", "value": "seattle-temps"}},
    {"fill": {"selector": "#start", "value": "2010-09"}},
    {"fill": {"selector": "#end", "value": "2010-09"}},
    {"check": "#agg-daily"},
    {"fill": {"selector": "#min_temp", "value": "70"}},
    {"select": {"selector": "#sort", "value": "temp_max"}},
    {"click": "#run"},
    {"wait_for": 'table#results[data-state="ready"]'},
    {"extract_table": {"selector": "table#results", "as": "days"}},
    {"goto": "/stats/explore"},
    {"click": 'role=tab[name="Summary"]'},
    {"click": 'role=treeitem[name="World"]'},
]

# ---- the baselines: the same actions with nothing but Playwright ----------------------------------------

_TABLE_JS = "t => Array.from(t.querySelectorAll('tr')).map(r => Array.from(r.cells).map(c => c.innerText.trim()))"


async def _act(page: Any, action: dict[str, Any], base: str) -> None:
    """One script action with plain Playwright calls (what `replay.perform` and the script runner do)."""
    (verb, arg), = action.items()
    selector = arg if isinstance(arg, str) else arg.get("selector")
    loc = page.locator(selector) if selector else None
    if verb == "goto":
        await page.goto(arg if arg.startswith("http") else base + arg)
    elif verb == "click":
        await loc.click()
    elif verb == "select":
        await loc.select_option(arg["value"])
    elif verb == "check":
        await loc.check()
    elif verb == "fill":
        await loc.fill(arg["value"])
    elif verb == "wait_for":
        await loc.first.wait_for(state="visible")
    elif verb == "extract_table":
        await loc.wait_for(state="attached")
        await loc.evaluate(_TABLE_JS)
    else:
        raise SystemExit(f"the baseline driver does not know {verb!r}")


async def drive(mode: str, script: Path, out: Path) -> None:
    """Run the script in a fresh browser (the rig's Chromium and flags), bare or with Playwright tracing."""
    from playwright.async_api import async_playwright

    from rig.browser import launch  # only the binary and its flags: no recorder, no runner

    actions = json.loads(script.read_text(encoding="utf-8"))
    base = actions[0]["goto"].split("/", 3)
    base = "/".join(base[:3])
    async with async_playwright() as pw:
        browser = await launch(pw)
        context = await browser.new_context()
        if mode == "tracing":
            await context.tracing.start(screenshots=True, snapshots=True)
        page = await context.new_page()
        for action in actions:
            await _act(page, action, base)
        if mode == "tracing":
            await context.tracing.stop(path=str(out / "trace.zip"))
        await context.close()
        await browser.close()


# ---- the benchmark -------------------------------------------------------------------------------------


@contextlib.contextmanager
def _sites() -> Iterator[tuple[str, int]]:
    """The bundled sites in a process of their own (not timed): (base URL, pid)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    rig = str(Path(sys.executable).with_name("rig"))
    server = subprocess.Popen([rig, "sites", "serve", "--port", str(port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(1200):
            with contextlib.suppress(OSError):
                urllib.request.urlopen(f"{url}/stats/explore", timeout=2).close()
                break
            time.sleep(0.1)
        else:
            raise SystemExit("the sites server did not start within 2 minutes")
        yield url, server.pid
    finally:
        server.terminate()
        server.wait(30)


def conditions(script: Path, work: Path) -> dict[str, list[list[str]]]:
    """Each condition's commands (run one after another, timed together), by name; the first two are the baselines."""
    py, rig, me = sys.executable, str(Path(sys.executable).with_name("rig")), str(Path(__file__).resolve())
    ep = str(work / "episode")
    return {
        "bare Playwright": [[py, me, "drive", "bare", str(script), str(work)]],
        "Playwright tracing (screenshots + snapshots)": [[py, me, "drive", "tracing", str(script), str(work)]],
        "rig record (default step images)": [[rig, "record", "--script", str(script), "--out", ep]],
        "rig record --step-images live": [[rig, "record", "--script", str(script), "--out", ep, "--step-images", "live"]],
        "rig record --step-images dom": [[rig, "record", "--script", str(script), "--out", ep, "--step-images", "dom"]],
        "rig record --step-images dom, then rig render": [
            [rig, "record", "--script", str(script), "--out", ep, "--step-images", "dom"], [rig, "render", ep]],
        "rig record --step-images off": [[rig, "record", "--script", str(script), "--out", ep, "--step-images", "off"]],
    }


def _timed(commands: list[list[str]], work: Path, keep: set[int]) -> Usage:
    """Run a condition's commands in a clean work directory; their summed usage."""
    shutil.rmtree(work / "episode", ignore_errors=True)
    (work / "trace.zip").unlink(missing_ok=True)
    runs = []
    for cmd in commands:
        u = run_tree(cmd, keep=keep)
        if u.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed ({u.returncode}): {u.stderr}")
        runs.append(u)
    return Usage(sum(u.wall_s for u in runs), sum(u.user_s for u in runs), sum(u.sys_s for u in runs), 0,
                 runs[0].load_before, runs[-1].load_after)


def _images(work: Path) -> tuple[int, int]:
    """(steps, steps whose image file exists) of the episode just recorded."""
    lines = [json.loads(x) for x in (work / "episode" / "trajectory.jsonl").read_text().splitlines() if x.strip()]
    shown = sum(1 for s in lines if s.get("screenshot") and (work / "episode" / s["screenshot"]).is_file())
    return len(lines), shown


def bench(repeats: int, only: list[str] | None = None) -> dict[str, Any]:
    """Every condition once per round, `repeats` rounds after a warm-up round, interleaved with a rotating order."""
    work = Path(tempfile.mkdtemp(prefix="bench-record-process-"))
    rounds: list[dict[str, dict[str, Any]]] = []
    try:
        with _sites() as (base, server):
            script = work / "held-out.json"
            actions = json.loads(json.dumps(HELD_OUT).replace("{base}", base))
            script.write_text(json.dumps(actions), encoding="utf-8")
            conds = conditions(script, work)
            names = [n for n in conds if only is None or n in only or n in list(conds)[:2]]
            for r in range(repeats + 1):
                order = names[r % len(names):] + names[: r % len(names)]
                got: dict[str, dict[str, Any]] = {}
                for name in order:
                    u = _timed(conds[name], work, {server})
                    got[name] = {"wall_s": u.wall_s, "cpu_s": u.cpu_s, "load": (u.load_before + u.load_after) / 2}
                    if name.startswith("rig record"):
                        got[name]["steps"], got[name]["images"] = _images(work)
                if r:  # round 0 warms the caches up
                    rounds.append(got)
                print(f"round {r}: " + ", ".join(f"{n.split(' (')[0]} {g['wall_s']:.1f}s/{g['cpu_s']:.1f}cpu"
                                                 for n, g in got.items()), file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {"repeats": repeats, "steps": len(HELD_OUT), "cores": len(os.sched_getaffinity(0)),
            "rows": _rows(rounds, names), "loads": [g["load"] for r in rounds for g in r.values()]}


def _rows(rounds: list[dict[str, dict[str, Any]]], names: list[str]) -> list[dict[str, Any]]:
    bare, tracing = names[0], names[1]

    def med(name: str, key: str, over: str | None = None) -> float:
        return statistics.median(r[name][key] / (r[over][key] if over else 1) for r in rounds)

    rows = []
    for name in names:
        row = {"condition": name, "wall_s": round(med(name, "wall_s"), 2), "cpu_s": round(med(name, "cpu_s"), 2),
               "wall_vs_bare": round(med(name, "wall_s", bare), 2), "wall_vs_tracing": round(med(name, "wall_s", tracing), 2),
               "cpu_vs_bare": round(med(name, "cpu_s", bare), 2), "cpu_vs_tracing": round(med(name, "cpu_s", tracing), 2),
               "wall_runs": [round(r[name]["wall_s"], 2) for r in rounds],
               "cpu_runs": [round(r[name]["cpu_s"], 2) for r in rounds]}
        if "steps" in rounds[0][name]:
            row["images"] = f"{min(r[name]['images'] for r in rounds)}/{rounds[0][name]['steps']}"
        rows.append(row)
    return rows


def table(result: dict[str, Any]) -> str:
    """The result as a Markdown table with its conditions line."""
    loads = result["loads"]
    lines = [
        f"{result['steps']} actions, {result['cores']} cores, median of {result['repeats']} interleaved rounds after a "
        f"warm-up; load average (1 min) during the runs {min(loads):.1f}-{max(loads):.1f}, median "
        f"{statistics.median(loads):.1f}.",
        "",
        "| condition | wall (s) | CPU (s, whole tree) | wall vs bare | wall vs tracing | CPU vs bare | CPU vs tracing "
        "| steps with an image |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in result["rows"]:
        lines.append(f"| {r['condition']} | {r['wall_s']:.2f} | {r['cpu_s']:.2f} | {r['wall_vs_bare']:.2f}x | "
                     f"{r['wall_vs_tracing']:.2f}x | {r['cpu_vs_bare']:.2f}x | {r['cpu_vs_tracing']:.2f}x | "
                     f"{r.get('images', '-')} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark (or, with `drive`, one baseline process)."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["drive"]:
        _, mode, script, out = argv
        asyncio.run(drive(mode, Path(script), Path(out)))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--only", action="append", help="run only these conditions (the two baselines always run)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--doc", type=Path, help="write the figures into this Markdown file's section")
    args = ap.parse_args(argv)
    print(f"load average before: {load_average():.1f}", file=sys.stderr)
    result = bench(args.repeats, args.only)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(table(result))
    if args.doc:
        write_section(args.doc, SECTION, f"{SECTION}\n\n{table(result)}\n")


if __name__ == "__main__":
    main()
