"""Scale: a run on a two-node Ray cluster (started on this machine) uses both nodes and grades as a local run, and the
scale benchmark's measuring helpers."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
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


class RayNode:
    """One node of a Ray cluster on this machine: `ray start --block` as a child process, stopped by its pid."""

    def __init__(self, log: Path, *args: str) -> None:
        env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0",
               "RAY_agent_register_timeout_ms": "300000"}  # the dashboard agent starts slowly on a loaded machine
        env.pop("RAY_ADDRESS", None)
        self.log = log
        with log.open("wb") as out:
            self.proc = subprocess.Popen([str(Path(sys.executable).with_name("ray")), "start", "--block",
                                          "--disable-usage-stats", *args], stdout=out, stderr=subprocess.STDOUT, env=env)

    def wait_started(self) -> None:
        def started() -> bool:
            assert self.proc.poll() is None, self.log.read_text(errors="replace")[-3000:]
            return b"Ray runtime started" in self.log.read_bytes()

        wait_until_sync(started, timeout=300, interval=0.5, message=f"ray start: see {self.log}")

    def stop(self) -> None:
        self.proc.terminate()  # `ray start --block` stops the node's processes as it exits
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def two_node_cluster(tmp_path):
    """A head node on 127.0.0.2 and a second node on 127.0.0.3, one CPU and one `rig_browser` each (every address
    on loopback: Ray replaces 127.0.0.1 itself with the machine's outward address); yields the head's address."""
    pytest.importorskip("ray")
    port = _free_port()
    temp = Path(tempfile.mkdtemp(prefix="r", dir="/tmp"))  # short: Ray's socket paths live under it
    common = ["--num-cpus", "1", "--resources", json.dumps({"rig_browser": 1})]
    head = RayNode(tmp_path / "head.log", "--head", "--port", str(port), "--node-ip-address", "127.0.0.2",
                   "--include-dashboard", "false", "--dashboard-port", str(_free_port()), "--temp-dir", str(temp),
                   *common)
    nodes = [head]
    try:
        head.wait_started()
        nodes.append(RayNode(tmp_path / "node.log", "--address", f"127.0.0.2:{port}", "--node-ip-address", "127.0.0.3",
                             *common))
        nodes[1].wait_started()
        yield f"127.0.0.2:{port}"
    finally:
        for node in reversed(nodes):
            node.stop()
        shutil.rmtree(temp, ignore_errors=True)


@pytest.mark.slow
def test_a_run_on_a_two_node_ray_cluster_uses_both_nodes_and_grades_as_a_local_run(two_node_cluster, tmp_path,
                                                                                 sites_url):
    tasks = ["eco-02", "stats-02"]
    agents = ["reference", "perturbed:answer_composition"]
    run(RunConfig(tasks, agents, tmp_path / "local", variants=["constraint"], sites_url=sites_url, concurrency=2,
                  step_images="off"))
    rig = str(Path(sys.executable).with_name("rig"))
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    cmd = [rig, "run", "--executor", "ray", "--ray-address", two_node_cluster, "--ray-resource", "rig_browser",
           "--concurrency", "2", "--variant", "constraint", "--sites-url", sites_url, "--step-images", "off"]
    for t in tasks:
        cmd += ["--task", t]
    for a in agents:
        cmd += ["--agent", a]
    done = subprocess.run([*cmd, "--out", str(tmp_path / "ray")], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    episodes = [json.loads(p.read_text()) for p in (tmp_path / "ray").rglob("episode.json")]
    assert len(episodes) == 4 and {e["status"] for e in episodes} == {"ok"}, [e["error"] for e in episodes]
    # one worker per node (each node offers one rig_browser), so both nodes ran episodes; the one that is not the
    # driver's shipped its episodes' files back
    assert {e["ray_node"].rsplit("@", 1)[1] for e in episodes} == {"127.0.0.2", "127.0.0.3"}
    local, remote = _grades(tmp_path / "local"), _grades(tmp_path / "ray")
    assert len(local) == len(tasks) * len(agents) and local == remote
    summary = {k: json.loads((tmp_path / k / "summary.json").read_text()) for k in ("local", "ray")}
    assert summary["local"]["groups"] == summary["ray"]["groups"]
    # --frozen on the cluster: every worker opens the snapshot on its own node
    done = subprocess.run([rig, "run", "--executor", "ray", "--ray-address", two_node_cluster, "--task", "eco-02",
                           "--agent", "reference", "--variant", "constraint", "--frozen", str(ROOT / "site_snapshots"),
                           "--step-images", "off", "--out", str(tmp_path / "frozen")],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    [frozen] = [json.loads(p.read_text()) for p in (tmp_path / "frozen").rglob("episode.json")]
    assert frozen["status"] == "ok" and frozen["frozen"] and frozen["ray_node"], frozen


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


def test_proctree_counts_the_cpu_of_a_process_orphaned_before_it_ended():
    """`proctree.run_tree` counts what a command's orphans use (Chromium's renderers outlive the browser process that
    started them): here a child that burns 0.2 s of CPU after its parent exited, which `time(1)` would never see."""
    burn = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.2:\n    pass\n"
    parent = f"import subprocess, sys, os\nsubprocess.Popen([sys.executable, '-c', {burn!r}])\nos._exit(0)\n"
    probe = ("import sys\nsys.path.insert(0, sys.argv[1])\nfrom proctree import run_tree\n"
             f"u = run_tree([sys.executable, '-c', {parent!r}])\nprint(u.returncode, u.cpu_s)\n")
    out = subprocess.run([sys.executable, "-c", probe, str(ROOT / "scripts")], capture_output=True, text=True,
                         timeout=120)
    code, cpu = out.stdout.split()
    assert code == "0" and float(cpu) >= 0.2, out.stdout + out.stderr
