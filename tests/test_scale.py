"""Scale: the Ray executor gives the same grades as the local one (on a local Ray instance the test starts), and the
scale benchmark's measuring helpers."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from waiting import wait_until_sync

from rig.grading.runs import grade_runs
from rig.runner.config import RunConfig
from rig.runner.run import run

ROOT = Path(__file__).parents[1]


def _bench():
    """scripts/bench_scale.py as a module, with scripts/ on sys.path as when it runs as a script."""
    scripts = str(ROOT / "scripts")
    if scripts not in sys.path:
        sys.path.insert(0, scripts)
    spec = importlib.util.spec_from_file_location("bench_scale", ROOT / "scripts" / "bench_scale.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _grades(runs: Path) -> dict[tuple, tuple]:
    summary = grade_runs(runs)
    assert summary.infra == 0
    out = {}
    for g in runs.rglob("grade.json"):
        d = json.loads(g.read_text())
        s = d["scores"] or {}
        out[(d["task_id"], d["variant"], d["agent"], d["trial"])] = (
            d["status"], s.get("item_f1"), s.get("row_f1"), s.get("poa"), d["label"], d["passed"])
    return out


@pytest.mark.slow
def test_ray_and_local_executors_give_the_same_grades(tmp_path, sites_url, monkeypatch):
    ray = pytest.importorskip("ray")
    monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "0")
    tasks = ["eco-02", "stats-02"]
    agents = ["reference", "perturbed:page_misreading", "perturbed:answer_composition"]
    for agent in agents:
        run(RunConfig(tasks, agent, tmp_path / "local", variants=["constraint"], sites_url=sites_url, concurrency=2))
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        for agent in agents:
            eps = run(RunConfig(tasks, agent, tmp_path / "ray", variants=["constraint"], sites_url=sites_url, executor="ray", concurrency=2))
            assert [e.status for e in eps] == ["ok", "ok"], [e.error for e in eps]
        assert ray.is_initialized(), "the executor leaves a Ray instance it did not start running"
    finally:
        ray.shutdown()
    local, remote = _grades(tmp_path / "local"), _grades(tmp_path / "ray")
    assert len(local) == len(tasks) * len(agents) and local == remote
    labels = {k[2]: v[4] for k, v in local.items()}
    assert labels["reference"] is None and labels["perturbed:answer_composition"] == "answer_composition"


def test_bench_measures_the_whole_process_tree(tmp_path):
    bench = _bench()
    child = subprocess.Popen([sys.executable, "-c", "import time; x = bytearray(64 << 20); time.sleep(30)"])
    try:
        wait_until_sync(lambda: bench.memory([child.pid])[0] >= 64 << 20, message="the child never held its 64 MB")
        pids = bench.tree(os.getpid())
        assert os.getpid() in pids and child.pid in pids
        rss, pss = bench.memory(pids)
        assert rss >= bench.memory([os.getpid()])[0] + (64 << 20) and pss > 64 << 20
    finally:
        child.kill()
        child.wait()
    levels = [{"concurrency": c, "per_hour": h} for c, h in ((1, 100), (2, 180), (4, 250), (8, 260))]
    assert bench.knee(levels) == 4
    assert bench.knee(levels[:1]) == 1
    assert bench.knee([{"concurrency": 1, "per_hour": 100}, {"concurrency": 2, "per_hour": 101}]) == 1
    doc = tmp_path / "benchmarks.md"
    doc.write_text("# Benchmarks\n\n## Replay\n\nx\n")
    bench.write_section(doc, bench.SECTION, bench.SECTION + "\n\nfirst\n")
    bench.write_section(doc, bench.SECTION, bench.SECTION + "\n\nsecond\n")
    text = doc.read_text()
    assert text.count(bench.SECTION) == 1 and "second" in text and "first" not in text and "## Replay\n\nx" in text
