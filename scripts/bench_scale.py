"""Benchmark scale: episodes per hour and peak memory at concurrency 1, 2, 4 and 8, and grading throughput.

    .venv/bin/python scripts/bench_scale.py [--levels 1,2,4,8] [--repeats 3] [--tasks all] [--out DIR] [--json]
        [--doc docs/benchmarks.md] [--step-images live|dom|off]

In one run: the bundled sites are served once, in their own process (data loaded before timing starts); then,
in each of `--repeats` rounds, every concurrency level in turn (interleaved, so a change in the machine's load
hits every level alike), `rig run` (the reference agent, every SGR-mini task, constraint prompts, local executor)
writes a fresh runs directory while a sampler reads /proc every 0.2 s for the memory of the whole process tree
(this Python process, the sites server, the Playwright driver and every Chromium process), as RSS and as PSS
(shared pages divided among the processes sharing them, so Chromium's processes are not counted many times
over). Each level's figures are medians over the rounds; its speed-up is the median, over rounds, of its
episodes per hour divided by the first level's in the same round. A frozen run (`--frozen site_snapshots`, concurrency 2) follows. Grading throughput is `grade_runs`
over each live run and over the frozen run, median of 3, in episodes graded per second. `--doc` replaces (or
appends) the "Scale" section of a Markdown file with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from loguru import logger

from rig.grading.runs import grade_runs
from rig.runner.config import RunConfig
from rig.runner.run import run
from rig.sites import SitesServer
from rig.runner.step_images import STEP_IMAGES
from rig.tasks import bundled_tasks
from benchdoc import write_section  # scripts/benchdoc.py

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOTS = ROOT / "site_snapshots"
PAGE = os.sysconf("SC_PAGE_SIZE")
SECTION = "## Scale (`scripts/bench_scale.py`)"


def tree(root: int) -> list[int]:
    """`root` and every process descended from it (from /proc/*/stat)."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:  # the process ended meanwhile
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo += children.get(pid, [])
    return out


def memory(pids: list[int]) -> tuple[int, int]:
    """(RSS, PSS) in bytes summed over `pids` (processes that are gone count as 0)."""
    rss = pss = 0
    for pid in pids:
        try:
            rss += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
            m = re.search(r"^Pss:\s+(\d+) kB", Path(f"/proc/{pid}/smaps_rollup").read_text(), re.M)
            pss += int(m.group(1)) * 1024 if m else 0
        except (OSError, ValueError):
            continue
    return rss, pss


class Sampler:
    """Samples the memory of this process's tree in a thread; `peak()` gives the maxima since `reset()`."""

    def __init__(self, every_s: float = 0.2) -> None:
        self.every_s = every_s
        self._peak = (0, 0)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        while not self._stop.wait(self.every_s):
            self.sample()

    def sample(self) -> tuple[int, int]:
        """Take one sample now."""
        rss, pss = memory(tree(os.getpid()))
        self._peak = (max(self._peak[0], rss), max(self._peak[1], pss))
        return rss, pss

    def reset(self) -> None:
        """Start a new peak from the current level."""
        self._peak = (0, 0)
        self.sample()

    def peak(self) -> tuple[int, int]:
        """(RSS, PSS) peaks since the last reset."""
        return self._peak


def grading(runs_dir: Path, repeats: int = 3) -> dict[str, Any]:
    """Median seconds of `grade_runs` over a runs directory, and episodes graded per second."""
    times, n = [], 0
    for _ in range(repeats):
        start = time.perf_counter()
        n = grade_runs(runs_dir, force=True).episodes  # force: incremental grading would skip the repeats
        times.append(time.perf_counter() - start)
    median = statistics.median(times)
    return {"episodes": n, "seconds": round(median, 3), "per_second": round(n / median, 2)}


def cpu_seconds() -> tuple[float, float]:
    """CPU time of this process, and of it with its reaped descendants (the Playwright driver and Chromium, once a
    run ends)."""
    t = os.times()
    return t.user + t.system, t.user + t.system + t.children_user + t.children_system


def machine_busy() -> tuple[float, float]:
    """(busy, total) CPU jiffies of the whole machine since boot (/proc/stat): every process, reaped or not."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields) - idle, sum(fields)


def process_cpu(pid: int | None) -> float:
    """CPU seconds a running process has used (0 when there is none)."""
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one_run(tasks: list[str], out: Path, sampler: Sampler, server_pid: int | None = None, **kw: Any) -> dict[str, Any]:
    """One `rig run` of the reference agent: wall time, episodes per hour, CPU use, statuses, peak memory."""
    sampler.reset()
    start, cpu, served, machine = time.perf_counter(), cpu_seconds(), process_cpu(server_pid), machine_busy()
    episodes = run(RunConfig(tasks, "reference", out, variants=["constraint"], **kw))
    wall = time.perf_counter() - start
    own, total = (b - a for a, b in zip(cpu, cpu_seconds()))
    total += process_cpu(server_pid) - served  # the sites server is reaped only at the end: count it while it runs
    busy, jiffies = (b - a for a, b in zip(machine, machine_busy()))
    rss, pss = sampler.peak()
    statuses: dict[str, int] = {}
    for e in episodes:
        statuses[e.status] = statuses.get(e.status, 0) + 1
    return {"episodes": len(episodes), "seconds": round(wall, 1), "per_hour": round(len(episodes) / wall * 3600),
            "cpu_pct": round(100 * total / wall / (os.cpu_count() or 1)), "python_pct": round(100 * own / wall),
            # the rig's processes as the kernel accounts them can miss Chromium processes no one reaped in time;
            # the machine's busy share (every process, so only meaningful on an otherwise idle machine) does not
            "machine_pct": round(100 * busy / max(jiffies, 1)),
            "peak_rss_mb": round(rss / 2**20),
            "peak_pss_mb": round(pss / 2**20), "statuses": statuses}


def knee(levels: list[dict[str, Any]], gain: float = 0.15) -> int | None:
    """The last concurrency level whose step up gained at least `gain` (15 %) in episodes per hour."""
    best = None
    for prev, cur in zip(levels, levels[1:]):
        if cur["per_hour"] >= prev["per_hour"] * (1 + gain):
            best = cur["concurrency"]
        else:
            break
    return best if best is not None else (levels[0]["concurrency"] if levels else None)


def _median_level(c: int, runs: list[dict[str, Any]], speedups: list[float]) -> dict[str, Any]:
    """A level's figures: medians over its rounds (statuses summed), and its median speed-up."""
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0] if isinstance(runs[0][k], (int, float))}
    statuses: Counter[str] = sum((Counter(r["statuses"]) for r in runs), Counter())
    return {**{k: round(v, 1) for k, v in med.items()}, "per_hour": round(med["per_hour"]), "concurrency": c,
            "rounds": len(runs), "statuses": dict(statuses), "speedup": round(statistics.median(speedups), 2),
            "per_hour_all": [r["per_hour"] for r in runs]}


def bench(levels: list[int], tasks: list[str], out: Path, repeats: int = 3,
          step_images: str = "live") -> dict[str, Any]:
    """Run every level in interleaved rounds, the frozen run and the grading timings."""
    result: dict[str, Any] = {"cpus": os.cpu_count(), "load_before": os.getloadavg()[0], "tasks": len(tasks),
                              "repeats": repeats, "step_images": step_images, "levels": []}
    rounds: dict[int, list[dict[str, Any]]] = {c: [] for c in levels}
    speedups: dict[int, list[float]] = {c: [] for c in levels}
    with SitesServer() as srv, Sampler() as sampler:
        result["baseline_rss_mb"] = round(sampler.sample()[0] / 2**20)
        for i in range(repeats):
            for c in levels:
                r = one_run(tasks, out / f"r{i}-c{c}", sampler, server_pid=srv.pid, concurrency=c, sites_url=srv.url,
                            step_images=step_images)
                rounds[c].append(r)
                speedups[c].append(r["per_hour"] / rounds[levels[0]][i]["per_hour"])
                logger.info("round {} concurrency {}: {}", i, c, r)
        result["levels"] = [_median_level(c, rounds[c], speedups[c]) for c in levels]
        result["frozen"] = one_run(tasks, out / "frozen", sampler, concurrency=2, frozen=SNAPSHOTS,
                                   step_images=step_images)
    grading(out / f"r0-c{levels[0]}", repeats=1)  # warm-up: imports, task files, caches
    for r in result["levels"]:
        r["grading"] = grading(out / f"r0-c{r['concurrency']}")
    result["frozen"]["grading"] = grading(out / "frozen")
    result["knee"] = knee(result["levels"])
    result["load_after"] = os.getloadavg()[0]
    return result


def table(r: dict[str, Any], command: str) -> str:
    """The Markdown section for docs/benchmarks.md."""
    rows = [f"| concurrency | episodes | seconds | episodes / hour | vs concurrency {r['levels'][0]['concurrency']} "
            f"| CPU (% of {r['cpus']} cores) | machine busy (%) | rig's Python (% of a core) | peak RSS (MB) "
            "| peak PSS (MB) | graded / s |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for label, x in [*((str(x["concurrency"]), x) for x in r["levels"]), ("2, frozen", r["frozen"])]:
        speedup = f"{x['speedup']:.2f}x" if "speedup" in x else "-"
        rows.append(f"| {label} | {x['episodes']:g} | {x['seconds']} | {x['per_hour']} | {speedup} | {x['cpu_pct']:g} "
                    f"| {x.get('machine_pct', '-')} "
                    f"| {x['python_pct']:g} | {x['peak_rss_mb']:g} | {x['peak_pss_mb']:g} | {x['grading']['per_second']} |")
    f, lv = r["frozen"], r["levels"]
    at_knee = next(x for x in lv if x["concurrency"] == r["knee"])
    per_context = ((lv[-1]["peak_pss_mb"] - lv[0]["peak_pss_mb"]) / (lv[-1]["concurrency"] - lv[0]["concurrency"])
                   if len(lv) > 1 else 0)
    bad = dict(sum((Counter({k: v for k, v in x["statuses"].items() if k != "ok"}) for x in [*lv, f]), Counter()))
    images = ("live step images" if r["step_images"] == "live" else
              "no step images while recording (`--step-images dom`: `rig render` draws them later)"
              if r["step_images"] == "dom" else "no step images")
    return "\n".join([
        section_heading(r["step_images"]), "", "```bash", command, "```", "",
        f"The reference agent on {r['tasks']} SGR-mini tasks (constraint prompts), {images}, local executor, one Chromium "
        f"shared by the episodes of a run, the sites in a process of their own; medians of {r['repeats']} interleaved "
        f"rounds (speed-up: the median over rounds of the level's episodes per hour over the first level's in the same "
        f"round); {r['cpus']} cores, load average {r['load_before']:.1f} before and "
        f"{r['load_after']:.1f} after. Memory is the whole process tree (Python with the sites server, the "
        f"Playwright driver, every Chromium process), sampled every 0.2 s; at rest (the sites' data loaded, no "
        f"browser) it holds {r['baseline_rss_mb']} MB RSS. Grading: `grade_runs` over the run's episodes, median of 3.", "",
        *rows, "",
        f"Knee: episodes per hour stop growing by 15 % or more per doubling after concurrency {r['knee']}. There the "
        f"process tree uses {at_knee['cpu_pct']} % of the {r['cpus']} cores and the rig's Python process (one event "
        f"loop driving and recording every context) {at_knee['python_pct']} % of one core: {_bottleneck(at_knee)}. "
        f"Each extra context adds about {per_context:.0f} MB (PSS)."
        + (f" Episodes that did not end ok: {bad}." if bad else ""), "",
    ])


def section_heading(step_images: str) -> str:
    """The docs/benchmarks.md heading of a run with these step images (each mode has a section of its own)."""
    return SECTION if step_images == "live" else SECTION.replace("## Scale", f"## Scale, --step-images {step_images}")


def _bottleneck(x: dict[str, Any]) -> str:
    """What limits throughput at a level, from its CPU figures."""
    if max(x["cpu_pct"], x.get("machine_pct", 0)) >= 85:
        return "the cores are saturated, so further episodes only queue for them"
    if x["python_pct"] >= 85:
        return "the single Python process is saturated; more processes (`--executor ray`) would lift it"
    return ("neither the cores nor the Python process is saturated, so the limit is elsewhere: contention inside the "
            "one shared Chromium, or other jobs on the machine (see the load average)")


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the Markdown section (or JSON)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--levels", default="1,2,4,8", help="concurrency levels, comma-separated")
    ap.add_argument("--repeats", type=int, default=3, help="interleaved rounds over the levels (medians are reported)")
    ap.add_argument("--tasks", default="all", help="`all` or comma-separated task ids")
    ap.add_argument("--out", type=Path, default=None, help="keep the runs here (default: a temporary directory)")
    ap.add_argument("--json", action="store_true", help="print the raw figures as JSON")
    ap.add_argument("--doc", type=Path, default=None, help="write the section into this Markdown file")
    ap.add_argument("--step-images", choices=STEP_IMAGES, default="live",
                    help="where the recorded step images come from (rig run --step-images)")
    args = ap.parse_args(argv)
    logger.remove()
    logger.add(sys.stderr, level="INFO", filter=lambda rec: rec["name"].startswith("__main__"))
    tasks = [t.id for t in bundled_tasks()] if args.tasks == "all" else args.tasks.split(",")
    out = args.out or Path(tempfile.mkdtemp(prefix="rig-bench-scale-"))
    try:
        result = bench([int(x) for x in args.levels.split(",")], tasks, out, args.repeats, args.step_images)
    finally:
        if args.out is None:
            shutil.rmtree(out, ignore_errors=True)
    command = ".venv/bin/python scripts/bench_scale.py " + " ".join(argv if argv is not None else sys.argv[1:])
    section = table(result, command.strip())
    if args.doc:
        write_section(args.doc, section_heading(args.step_images), section)
    print(json.dumps(result, indent=2) if args.json else section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
