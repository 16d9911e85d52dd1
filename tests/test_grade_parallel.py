"""`rig grade --jobs N`: episodes graded in N processes give the same grade.json and summary files, byte for byte, as
one process; a grading process that dies is an infrastructure error, never a score."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_grade_run import runs  # noqa: F401  (the fixture: a synthetic runs directory of 8 episodes)

import rig.grading.runs as runs_module
from rig.errors import InfraError
from rig.grading.runs import PARALLEL_FROM, default_jobs, grade_run


def outputs(root: Path) -> dict[str, bytes]:
    """Every file grading wrote under `root` (grade.json per episode, summary.json, summary.md), by relative path."""
    names = ("grade.json", "summary.json", "summary.md")
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.name in names}


def test_parallel_grades_equal_serial_ones_byte_for_byte(runs):  # noqa: F811
    root, _ = runs
    serial = grade_run(root, jobs=1, force=True)
    one = outputs(root)
    parallel = grade_run(root, jobs=2, force=True)
    assert parallel.jobs == 2 and parallel.graded == serial.graded == 8
    assert outputs(root) == one
    assert parallel.summary == serial.summary
    assert len([k for k in one if k.endswith("grade.json")]) == 8


def test_parallel_incremental_keeps_what_is_current(runs):  # noqa: F811
    root, _ = runs
    grade_run(root, jobs=2)
    again = grade_run(root, jobs=2)
    assert (again.graded, again.kept) == (0, 8)


def test_default_jobs_cross_over_at_the_measured_size():
    cpus = len(os.sched_getaffinity(0))
    assert default_jobs(PARALLEL_FROM - 1) == 1
    assert default_jobs(PARALLEL_FROM) == min(cpus, PARALLEL_FROM)
    assert default_jobs(1) == 1


def test_a_grading_process_that_dies_is_an_infrastructure_error(runs, monkeypatch):  # noqa: F811
    root, _ = runs
    real = runs_module.grade_episode

    def dies_on_one(ed, *args, **kwargs):
        if Path(ed.path).as_posix().endswith("flaky/trial-1"):
            os._exit(3)  # the worker process ends as a crash or the OOM killer would end it
        return real(ed, *args, **kwargs)

    monkeypatch.setattr(runs_module, "grade_episode", dies_on_one)  # worker processes are forked: they inherit it
    with pytest.raises(InfraError, match="a grading process died"):
        grade_run(root, jobs=2, force=True)
    monkeypatch.setattr(runs_module, "grade_episode", real)
    result = grade_run(root, jobs=2)
    assert result.graded + result.kept == 8 and result.summary.ungraded == 0


@pytest.mark.slow
def test_real_episodes_grade_the_same_in_parallel(tmp_path, sites_url):
    from rig.runner.config import RunConfig
    from rig.runner.run import run

    eps = run(RunConfig(["eco-01", "flights-03"], ["reference", "perturbed:scope_drift"], tmp_path,
                        variants=["constraint"], sites_url=sites_url))
    assert [e.status for e in eps] == ["ok"] * 4
    serial = grade_run(tmp_path, jobs=1, force=True)
    one = outputs(tmp_path)
    parallel = grade_run(tmp_path, jobs=2, force=True)
    assert parallel.jobs == 2 and outputs(tmp_path) == one
    assert serial.summary.scored == 4 and any(g.agent == "perturbed:scope_drift" for g in serial.summary.groups)
