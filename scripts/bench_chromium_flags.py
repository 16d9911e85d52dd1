"""Benchmark the features the rig turns off in Chromium: the CPU of a browser that opens many contexts, with and without.

    .venv/bin/python scripts/bench_chromium_flags.py [--repeats 5] [--contexts 15] [--json] [--write-doc]

Each condition is a process of its own, timed whole by `scripts/proctree.py` (Chromium's renderers included): it
launches the rig's Chromium, then opens `--contexts` contexts one after another, each with one page showing a small
form, and closes it, as a test or a run of episodes does. `playwright` has the rig's flags but only Playwright's
own `--disable-features` list (what Chromium would run without `rig.network.flags.RIG_DISABLED_FEATURES`); `rig` is
`rig.browser.launch` as it is. Where Debian's `chromium-headless-shell` is installed (`apt install
chromium-headless-shell`; the rig's set-up does not install it), `shell` is that binary with the rig's flags: Chromium's
old headless mode, the same release with no window per context. Rounds interleave the conditions, the order rotating,
after a warm-up round; each figure is the median over rounds, and the ratio is taken round by round against
`playwright` of the same round.

Why the rig turns them off: Chromium's new headless mode opens a window for every context, and builds for each
window the address bar's drop-downs (`chrome://omnibox-popup.top-chrome/`, features `WebUIOmniboxPopup` and
`WebUIOmniboxAimPopup`) in WebUI renderers of their own, before anyone types. In the test suite these renderers
took about a sixth of all CPU (by process, sampled from /proc during a full run). Chromium keeps only the last
`--disable-features` of its command line, so the rig's one flag repeats Playwright's list (checked against
chrome://version by `tests/test_browser_flags.py`).

Why the rig does not launch the headless shell, though it costs less CPU: it has no PDF viewer, so a page that is a
PDF is a download there (`page.goto` fails with "Download is starting"), where the rig's Chromium shows it as a page
an agent reads (`tests/test_recorder_bodies.py` fails on it). An agent would meet a different web.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from benchdoc import write_section  # noqa: E402
from proctree import load_average, run_tree  # noqa: E402

#: Debian's package `chromium-headless-shell`, measured when installed.
HEADLESS_SHELL = Path("/usr/lib/chromium/chromium-headless-shell")
CONDITIONS = ("playwright", "rig", "shell") if HEADLESS_SHELL.exists() else ("playwright", "rig")
PAGE = "<form><label>Year <select name=y><option>2024<option>2025</select></label><input name=q></form>"
HEADING = "## Chromium's flags (`scripts/bench_chromium_flags.py`)"


async def _child(condition: str, contexts: int) -> None:
    """One measured process: launch, open and close `contexts` contexts with one page each, exit."""
    from playwright.async_api import async_playwright

    from rig.browser import chromium_path
    from rig.network import flags

    args = flags.launch_args()
    if condition == "playwright":
        args = [a for a in args if not a.startswith("--disable-features=")]
        args.append("--disable-features=" + ",".join(flags.PLAYWRIGHT_DISABLED_FEATURES))
    async with async_playwright() as pw:
        executable = str(HEADLESS_SHELL) if condition == "shell" else chromium_path()
        browser = await pw.chromium.launch(executable_path=executable, args=args)
        for _ in range(contexts):
            context = await browser.new_context()
            page = await context.new_page()
            await page.set_content(PAGE)
            await page.select_option("select", "2025")
            await context.close()
        await browser.close()


def bench(repeats: int, contexts: int) -> dict[str, Any]:
    """Run the rounds; per condition the median wall and CPU seconds and the median ratio of CPU to `playwright`."""
    runs: dict[str, list[dict[str, float]]] = {c: [] for c in CONDITIONS}
    loads = []
    for round_no in range(repeats + 1):  # round 0 warms the page cache and is not counted
        k = round_no % len(CONDITIONS)
        order = CONDITIONS[k:] + CONDITIONS[:k]
        figures = {}
        for condition in order:
            usage = run_tree([sys.executable, __file__, "--child", condition, "--contexts", str(contexts)], cwd=ROOT)
            if usage.returncode:
                raise SystemExit(f"{condition} exited {usage.returncode}:\n{usage.stderr}")
            figures[condition] = {"wall_s": usage.wall_s, "cpu_s": usage.cpu_s}
            loads.append(usage.load_before)
        if round_no:
            for condition in CONDITIONS:
                base = figures["playwright"]
                runs[condition].append({**figures[condition],
                                        "cpu_ratio": figures[condition]["cpu_s"] / base["cpu_s"],
                                        "wall_ratio": figures[condition]["wall_s"] / base["wall_s"]})
    median = {c: {k: statistics.median(r[k] for r in rows) for k in rows[0]} for c, rows in runs.items()}
    return {"repeats": repeats, "contexts": contexts, "load_median": statistics.median(loads),
            "load_range": [min(loads), max(loads)], "median": median, "runs": runs}


def table(r: dict[str, Any]) -> str:
    """The results as a Markdown table."""
    rows = ["| condition | wall (s) | CPU (s, whole tree) | CPU per context (s) | wall vs playwright | CPU vs playwright |",
            "|---|---:|---:|---:|---:|---:|"]
    for condition in CONDITIONS:
        m = r["median"][condition]
        rows.append(f"| {condition} | {m['wall_s']:.2f} | {m['cpu_s']:.2f} | {m['cpu_s'] / r['contexts']:.3f} "
                    f"| {m['wall_ratio']:.2f}x | {m['cpu_ratio']:.2f}x |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments; run a measured child, or the rounds."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--contexts", type=int, default=15)
    ap.add_argument("--child", choices=CONDITIONS, help=argparse.SUPPRESS)
    ap.add_argument("--json", action="store_true", help="print the raw figures as JSON")
    ap.add_argument("--write-doc", action="store_true", help="write the table into docs/benchmarks.md")
    args = ap.parse_args(argv)
    if args.child:
        asyncio.run(_child(args.child, args.contexts))
        return 0
    load0 = load_average()
    r = bench(args.repeats, args.contexts)
    print(json.dumps(r, indent=2) if args.json else table(r))
    if args.write_doc:
        lo, hi = r["load_range"]
        section = (f"{HEADING}\n\n```bash\n.venv/bin/python scripts/bench_chromium_flags.py --repeats {args.repeats} "
                   f"--contexts {args.contexts} --write-doc\n```\n\n{__doc__.split(chr(10) * 2, 2)[2].strip()}\n\n"
                   f"{args.repeats} rounds of {args.contexts} contexts; load average {load0:.1f} before, "
                   f"{r['load_median']:.1f} median during ({lo:.1f}-{hi:.1f}):\n\n{table(r)}\n")
        write_section(ROOT / "docs" / "benchmarks.md", HEADING, section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
