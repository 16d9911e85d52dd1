"""Benchmark grading against the cost of reading the archives: `rig grade` beside a read-once floor, whole processes.

    .venv/bin/python scripts/bench_grade.py build --out DIR                 # DIR/runs-100 and DIR/runs-1000
    .venv/bin/python scripts/bench_grade.py bench DIR [--repeats 5] [--baseline-src SRC] [--json] [--doc docs/benchmarks.md]
    .venv/bin/python scripts/bench_grade.py floor RUNS_DIR                  # the floor on its own (what `bench` times)
    .venv/bin/python scripts/bench_grade.py reader RUNS_DIR [--repeats 3]   # what reading the archives costs, by reader

`build` runs the reference agent and two perturbed agents on every bundled task with both prompts (about 100
real episodes, offline, on the bundled sites), then makes a runs directory ten times as large by copying each
episode under nine more trial numbers (episode.json's trial rewritten to match).

`bench` times, in one run, interleaved and repeated (medians), each as a subprocess of its own from start to exit:
- the floor: a minimal reader that parses every episode's episode.json, answer.json and each trajectory line with
  `json`, and reads every record of its WARC whole with warcio (nothing graded, nothing written);
- `rig grade --force` serially (`--jobs 1`), with the default jobs, and with `--jobs 2`;
- `rig grade` again on an unchanged run (the incremental mode: every grade kept);
- with `--baseline-src SRC` (a checkout of an earlier version, e.g. `git archive <commit> | tar -x -C SRC`),
  that version's `rig grade` on the same directories (run with SRC first on PYTHONPATH).
On the 1,000-episode run `--jobs 2` (the default on 2 cores) and the earlier version are left out. It reports each time
against the floor measured in the same round, and the machine's load average; `--crossover` times one process
against two on small runs (copies of the first N episodes).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from benchdoc import write_section  # scripts/benchdoc.py
from proctree import run_tree  # scripts/proctree.py

ROOT = Path(__file__).resolve().parents[1]
SECTION = "## Grading (`scripts/bench_grade.py`)"
EPISODE = "episode.json"
AGENTS = ["reference", "perturbed:scope_drift", "perturbed:page_misreading"]


def episode_dirs(runs_dir: Path) -> list[Path]:
    """Every episode directory under a runs directory (failed attempts under `attempts/` left out)."""
    return sorted(p.parent for p in runs_dir.rglob(EPISODE) if "attempts" not in p.relative_to(runs_dir).parts[:-1])


def read_floor(runs_dir: Path) -> int:
    """Read every episode's files once, as little as grading needs: JSON files and trajectory lines parsed, every
    WARC record read whole. Returns the number of episodes read."""
    from warcio.archiveiterator import ArchiveIterator

    n = 0
    for d in episode_dirs(runs_dir):
        json.loads((d / EPISODE).read_bytes())
        if (d / "answer.json").exists():
            json.loads((d / "answer.json").read_bytes())
        trajectory = d / "trajectory.jsonl"
        if trajectory.exists():
            for line in trajectory.read_bytes().splitlines():
                if line.strip():
                    json.loads(line)
        warc = d / "evidence.warc.gz"
        if warc.exists():
            with warc.open("rb") as fh:
                for record in ArchiveIterator(fh):
                    record.content_stream().read()
        n += 1
    return n


def readers(runs_dir: Path, repeats: int) -> dict[str, float]:
    """CPU seconds (medians, alternated in one process) of reading every archive of a runs directory: warcio with
    every record's content read (the floor), warcio reading headers only (the content skipped), the rig's reader
    (`rigwarc.read.ArchiveReader`: every content, DOM snapshots included), and `replay.load_index` with page texts
    (what grading does)."""
    from warcio.archiveiterator import ArchiveIterator

    from replay.index import load_index
    from rigwarc.read import ArchiveReader

    warcs = [d / "evidence.warc.gz" for d in episode_dirs(runs_dir) if (d / "evidence.warc.gz").exists()]

    def warcio(content: bool) -> None:
        for w in warcs:
            with w.open("rb") as fh:
                for record in ArchiveIterator(fh):
                    if content:
                        record.content_stream().read()

    ways = {"warcio, every content read (the floor's reading)": lambda: warcio(True),
            "warcio, headers only": lambda: warcio(False),
            "rigwarc ArchiveReader, every content (DOM snapshots too)": lambda: [list(ArchiveReader(w)) for w in warcs],
            "replay.load_index with texts (grading's reading)": lambda: [load_index(w, texts=True) for w in warcs]}
    got: dict[str, list[float]] = {k: [] for k in ways}
    for _ in range(repeats):
        for name, way in ways.items():
            start = time.process_time()
            way()
            got[name].append(time.process_time() - start)
    return {k: round(statistics.median(v), 3) for k, v in got.items()}


def build(out: Path, copies: int = 10, concurrency: int = 2) -> tuple[Path, Path]:
    """Record the ~100-episode runs directory (resumable) and copy it into one `copies` times as large."""
    from rig.runner.config import RunConfig
    from rig.runner.run import run
    from rig.sites import SitesServer
    from rig.tasks import bundled_tasks

    small, large = out / "runs-100", out / "runs-1000"
    tasks = [t.id for t in bundled_tasks()]
    with SitesServer() as srv:
        run(RunConfig(tasks=tasks, agent=AGENTS, runs_dir=small, variants=["constraint", "goal"], concurrency=concurrency,
                      resume=True, sites_url=srv.url))
    if large.exists():
        shutil.rmtree(large)
    for d in episode_dirs(small):
        rel = d.relative_to(small)
        first = int(rel.name.removeprefix("trial-"))
        for k in range(copies):
            target = large / rel.parent / f"trial-{first + k}"
            shutil.copytree(d, target, ignore=shutil.ignore_patterns("grade.json", "screens"))
            if k:
                episode = json.loads((target / EPISODE).read_text(encoding="utf-8"))
                episode["trial"] = first + k
                (target / EPISODE).write_text(json.dumps(episode, indent=2) + "\n", encoding="utf-8")
    return small, large


Command = tuple[list[str], dict[str, str] | None, Path | None]  # argv, environment, working directory


def timed(cmd: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system, the process and every process it started) of one subprocess run to
    its end."""
    u = run_tree(cmd, env=env, cwd=cwd)
    if u.returncode not in (0, 1):  # 1: some episode could not be graded (counted, still a full pass)
        raise SystemExit(f"{' '.join(cmd)} failed ({u.returncode}): {u.stderr[-2000:]}")
    return u.wall_s, u.cpu_s


def conditions(runs_dir: Path, baseline_src: Path | None, large: bool = False) -> dict[str, Command]:
    """The commands timed on one runs directory, by name (`large`: without `--jobs 2`, which on 2 cores is the
    default, and without the earlier version, to keep a round of 1,000 episodes short)."""
    py, rig = sys.executable, str(Path(sys.executable).with_name("rig"))
    out: dict[str, Command] = {
        "floor": ([py, str(Path(__file__).resolve()), "floor", str(runs_dir)], None, None),
        "rig grade --force --jobs 1": ([rig, "grade", str(runs_dir), "--force", "--jobs", "1"], None, None),
        "rig grade --force": ([rig, "grade", str(runs_dir), "--force"], None, None),
        "rig grade --force --jobs 2": ([rig, "grade", str(runs_dir), "--force", "--jobs", "2"], None, None),
        "rig grade (nothing changed)": ([rig, "grade", str(runs_dir)], None, None),
    }
    if large:
        del out["rig grade --force --jobs 2"]
    if baseline_src is not None and not large:  # run from SRC, so that its `rig` package is the one imported
        env = {**os.environ, "PYTHONPATH": str(baseline_src.resolve())}
        out["earlier version's rig grade"] = ([py, "-m", "rig.cli", "grade", str(runs_dir.resolve())], env,
                                              baseline_src.resolve())
    return out


def subset(small: Path, n: int, out: Path) -> Path:
    """A runs directory of the first `n` episodes of `small` (sorted), copied."""
    target = out / f"subset-{n}"
    if target.exists():
        shutil.rmtree(target)
    for d in episode_dirs(small)[:n]:
        shutil.copytree(d, target / d.relative_to(small), ignore=shutil.ignore_patterns("grade.json", "screens"))
    return target


def crossover(out: Path, sizes: list[int], repeats: int) -> list[dict[str, Any]]:
    """`rig grade --force` with one process against two, on runs of `sizes` episodes, interleaved; medians."""
    rig = str(Path(sys.executable).with_name("rig"))
    rows = []
    for n in sizes:
        d = subset(out / "runs-100", n, out)
        times: dict[int, list[float]] = {1: [], 2: []}
        for _ in range(repeats):
            for jobs in (1, 2):
                times[jobs].append(timed([rig, "grade", str(d), "--force", "--jobs", str(jobs)])[0])
        one, two = statistics.median(times[1]), statistics.median(times[2])
        rows.append({"episodes": n, "jobs_1": round(one, 3), "jobs_2": round(two, 3), "speedup": round(one / two, 2)})
    return rows


def bench(out: Path, repeats: int, baseline_src: Path | None, sizes: list[int]) -> dict[str, Any]:
    """Time every condition on both runs directories, interleaved, `repeats` rounds; medians and ratios to the floor."""
    result: dict[str, Any] = {"cpus": os.cpu_count(), "repeats": repeats, "load_before": os.getloadavg(), "sets": []}
    loads: list[float] = []
    for runs_dir in (out / "runs-100", out / "runs-1000"):
        n = len(episode_dirs(runs_dir))
        conds = conditions(runs_dir, baseline_src, large=n > 500)
        subprocess.run([str(Path(sys.executable).with_name("rig")), "grade", str(runs_dir)], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=False)  # warm-up: page cache, .pyc files; leaves every grade fresh
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in conds}
        for _ in range(repeats):
            for name, (cmd, env, cwd) in conds.items():
                times[name].append(timed(cmd, env, cwd))
                loads.append(os.getloadavg()[0])
        floor = statistics.median(w for w, _ in times["floor"])
        rows = []
        for name, ts in times.items():
            wall, cpu = statistics.median(w for w, _ in ts), statistics.median(c for _, c in ts)
            # the ratio of each round's time to that round's floor, then the median: pairs share the machine's load
            ratio = statistics.median(w / f for (w, _), (f, _) in zip(ts, times["floor"]))
            rows.append({"condition": name, "seconds": round(wall, 3), "cpu_seconds": round(cpu, 3),
                         "episodes_per_second": round(n / wall, 1), "vs_floor": round(ratio, 2),
                         "min": round(min(w for w, _ in ts), 3), "max": round(max(w for w, _ in ts), 3)})
        result["sets"].append({"runs_dir": str(runs_dir), "episodes": n, "floor_seconds": round(floor, 3), "rows": rows})
    result["crossover"] = crossover(out, sizes, repeats) if sizes else []
    result["load_after"] = os.getloadavg()
    result["load_during"] = [round(min(loads), 1), round(statistics.median(loads), 1), round(max(loads), 1)]
    return result


def section(r: dict[str, Any], command: str) -> str:
    """The Markdown section for docs/benchmarks.md."""
    lines = [SECTION, "", "```bash", command, "```", "",
             (f"{r['cpus']} cores; each figure the median of {r['repeats']} rounds, every condition a whole process "
             f"(start, imports, grading, exit) run one after another in each round. Load average (1 min) "
             f"{r['load_before'][0]:.1f} before, {r['load_during'][1]:.1f} median during (range "
             f"{r['load_during'][0]:.1f}-{r['load_during'][2]:.1f}), {r['load_after'][0]:.1f} after: the machine was "
             "shared with other jobs, so read absolute seconds as noisy and the ratios to the floor (taken round by "
             "round) as what counts."), ""]
    for s in r["sets"]:
        lines += [f"**{s['episodes']} episodes** (floor {s['floor_seconds']} s):", "",
                  "| condition | seconds | CPU seconds | episodes / s | vs floor | min-max (s) |",
                  "|---|---:|---:|---:|---:|---:|"]
        lines += [f"| {x['condition']} | {x['seconds']} | {x['cpu_seconds']} | {x['episodes_per_second']} | "
                  f"{x['vs_floor']}x | {x['min']}-{x['max']} |" for x in s["rows"]]
        lines.append("")
    if r["crossover"]:
        lines += ["Where two processes start to pay (`rig grade --force`, wall seconds, medians):", "",
                  "| episodes | --jobs 1 | --jobs 2 | speed-up |", "|---:|---:|---:|---:|"]
        lines += [f"| {x['episodes']} | {x['jobs_1']} | {x['jobs_2']} | {x['speedup']}x |" for x in r["crossover"]]
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    """Parse the command line and run one mode."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="mode", required=True)
    b = sub.add_parser("build", help="record ~100 episodes and copy them into ~1,000")
    b.add_argument("--out", type=Path, required=True)
    b.add_argument("--concurrency", type=int, default=2)
    m = sub.add_parser("bench", help="time rig grade against the floor")
    m.add_argument("dir", type=Path, help="the --out of `build`")
    m.add_argument("--repeats", type=int, default=5)
    m.add_argument("--baseline-src", type=Path, help="source tree of an earlier version to time beside")
    m.add_argument("--crossover", default="10,20,40", help="episode counts to time one process against two on")
    m.add_argument("--json", action="store_true")
    m.add_argument("--doc", type=Path, help="write the Grading section of this Markdown file")
    f = sub.add_parser("floor", help="the read-once floor on one runs directory")
    f.add_argument("runs_dir", type=Path)
    r = sub.add_parser("reader", help="what reading the archives costs, by reader (CPU seconds, one process)")
    r.add_argument("runs_dir", type=Path)
    r.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    if args.mode == "floor":
        read_floor(args.runs_dir)
    elif args.mode == "reader":
        for name, seconds in readers(args.runs_dir, args.repeats).items():
            print(f"| {name} | {seconds:.2f} |")
    elif args.mode == "build":
        for d in build(args.out, concurrency=args.concurrency):
            print(d, len(episode_dirs(d)))
    else:
        sizes = [int(x) for x in args.crossover.split(",") if x.strip()]
        r = bench(args.dir, args.repeats, args.baseline_src, sizes)
        command = (f".venv/bin/python scripts/bench_grade.py bench {args.dir} --repeats {args.repeats}"
                   + (f" --baseline-src {args.baseline_src}" if args.baseline_src else "")
                   + (f" --crossover {args.crossover}" if sizes else ""))
        text = section(r, command)
        print(json.dumps(r, indent=2) if args.json else text)
        if args.doc:
            write_section(args.doc, SECTION, text)


if __name__ == "__main__":
    main()
