"""`rig demo`, the README's main job, end to end as a user runs it: a separate process, no network, no API key."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from rig.agents.perturbed import KINDS
from rig.commands.demo import HYBRID, SUBSET

RIG = Path(sys.executable).with_name("rig")


def _demo(out: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run([str(RIG), "demo", "--out", str(out)], capture_output=True, text=True, timeout=600, env=env)


def test_demo_records_grades_and_reports_then_resumes(tmp_path):
    out = tmp_path / "demo"
    done = _demo(out)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()
    assert lines[-1] == f"report: {out / 'report' / 'index.html'}", "the report's path is printed last"
    assert (out / "report" / "index.html").is_file()

    summary = json.loads((out / "runs" / "summary.json").read_text())
    assert summary["episodes"] == summary["scored"] == len(SUBSET) * (1 + len(KINDS)) + 1 and summary["infra"] == 0
    assert summary["label_agreement"]["overall"] == 1.0
    reference = next(g for g in summary["groups"] if g["agent"] == "reference")
    assert (reference["row_f1"], reference["poa"], reference["gold_state_reach"]) == (1.0, 1.0, 1.0)
    assert reference["record_episodes"] == 1 and reference["record_hard_f1"] == 1.0  # the evidence-records task
    for g in summary["groups"]:
        if g["agent"] != "reference":
            kind = g["agent"].removeprefix("perturbed:")
            assert g["failures"][kind] == len(SUBSET), (kind, g["failures"])
    assert "record F1 soft/hard" in done.stdout and "label" in done.stdout
    hybrid = json.loads(next(out.glob(f"runs/{HYBRID}/constraint/reference/trial-0/grade.json")).read_text())
    assert hybrid["hybrid"]["passed"] and hybrid["site_found"], hybrid["hybrid"]

    episodes = sorted(out.glob("runs/*/*/*/trial-*/episode.json"))
    assert len(episodes) == summary["episodes"]
    mtimes = [p.stat().st_mtime_ns for p in episodes]
    again = _demo(out)  # run again: it resumes, finished episodes are not run twice
    assert again.returncode == 0, again.stderr[-3000:]
    assert [p.stat().st_mtime_ns for p in episodes] == mtimes
    assert json.loads((out / "runs" / "summary.json").read_text())["label_agreement"] == summary["label_agreement"]
