"""Replay QA (`rig qa`) of every shipped snapshot and of the demo's episodes: pages, mean, min and the time taken,
written into docs/replay.md ("Replay QA figures").

    .venv/bin/python scripts/bench_qa.py [--snapshots site_snapshots] [--work DIR] [--no-demo] [--no-write]

Each snapshot is scored on a copy (the shipped directory gets no qa.json); a bundled site's snapshot is compared
with the reference episodes the QA records on the bundled sites served here. The demo (`rig demo`) runs first into
the work directory, then its runs directory is scored. The machine's load average is reported beside the times: on
a shared machine they are read as a range, not a point.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from benchdoc import write_section
from loguru import logger

from replay.snapshot import snapshot_dirs
from rig.formats.qa import QaReport
from rig.qa.run import QaOptions, qa

ROOT = Path(__file__).resolve().parents[1]
HEADING = "## Replay QA figures"


def _row(name: str, report: QaReport) -> str:
    s = report.summary
    below = ", ".join(f"{b.url.split('/', 3)[-1]}{f' (step {b.step})' if b.step is not None else ''}: {b.score:.3f} "
                      f"{b.worst}" for b in s.below[:3]) or "none"
    more = f" and {len(s.below) - 3} more" if len(s.below) > 3 else ""
    mean = "–" if s.mean is None else f"{s.mean:.4f}"
    low = "–" if s.min is None else f"{s.min:.4f}"
    return f"| {name} | {s.pages} | {mean} | {low} | {below}{more} | {s.seconds:.0f} |"


def main(argv: list[str] | None = None) -> int:
    """Score the snapshots and the demo; print and write the figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--snapshots", type=Path, default=ROOT / "site_snapshots")
    ap.add_argument("--work", type=Path, help="where the copies and the demo go (default: a temporary directory)")
    ap.add_argument("--no-demo", action="store_true", help="score the snapshots only")
    ap.add_argument("--no-write", action="store_true", help="print the figures, leave docs/replay.md as it is")
    args = ap.parse_args(argv)
    logger.remove()
    logger.add(sys.stderr, level="WARNING")
    work = args.work or Path(tempfile.mkdtemp(prefix="rig-bench-qa-"))
    rows = []
    load_before = os.getloadavg()[0]
    for d in snapshot_dirs(args.snapshots):
        copy = work / "snapshots" / d.name
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(d, copy)
        (copy / "qa.json").unlink(missing_ok=True)
        report, _ = qa(copy, QaOptions())
        rows.append(_row(f"`{d.relative_to(ROOT) if d.is_relative_to(ROOT) else d}`", report))
        print(rows[-1], flush=True)
    if not args.no_demo:
        from rig.demo import run_demo

        began = time.perf_counter()
        run_demo(work / "demo")
        demo_s = time.perf_counter() - began
        report, _ = qa(work / "demo" / "runs", QaOptions())
        rows.append(_row(f"`rig demo`'s episodes (the demo itself {demo_s:.0f} s)", report))
        print(rows[-1], flush=True)
    load_after = os.getloadavg()[0]
    section = "\n".join([
        HEADING, "",
        "Measured with `.venv/bin/python scripts/bench_qa.py` on the 2-core machine, while other work shared it (load "
        f"average {load_before:.0f} before, {load_after:.0f} after): read the times as a range, not a point. Each "
        "bundled site's snapshot is compared with the reference episodes of its tasks recorded for the QA (their "
        "recording is in the time), the demo's episodes with their own archives.", "",
        "| what | pages | mean | min | below 0.9 (first three) | seconds |",
        "|---|---|---|---|---|---|",
        *rows,
    ])
    print(section)
    if not args.no_write:
        write_section(ROOT / "docs" / "replay.md", HEADING, section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
