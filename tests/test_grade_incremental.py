"""`rig grade` keeps a grade.json that is still current: newer than every file it was computed from, those files the
same set with the same sizes, the task file's digest and the grader version unchanged. `--force` regrades all.

Times are set explicitly (os.utime) where a test needs a file newer than a grade: nothing here depends on the clock.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from test_grade_run import runs  # noqa: F401  (the fixture: a synthetic runs directory of 8 episodes)
from typer.testing import CliRunner

import rig.grading.runs as runs_module
from rig.cli import app
from rig.episode_dir import EpisodeDir, RunsDir
from rig.formats.grade import GRADER_VERSION, Grade
from rig.grading.runs import grade_run

EPISODES = 8


def grade_files(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every grade.json under `root`: its bytes and modification time (ns), by episode directory."""
    return {p.parent.relative_to(root).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns) for p in root.rglob("grade.json")}


def changed(before: dict[str, tuple[bytes, int]], after: dict[str, tuple[bytes, int]]) -> set[str]:
    """The episodes whose grade.json was written again (its modification time moved)."""
    return {k for k in after if k not in before or after[k][1] != before[k][1]}


def touch(path: Path, root: Path) -> None:
    """Give `path` a modification time one second after every grade.json under `root` (what an edit would do)."""
    t = max(p.stat().st_mtime_ns for p in root.rglob("grade.json")) + 1_000_000_000
    os.utime(path, ns=(t, t))


def test_a_second_grade_regrades_nothing(runs):  # noqa: F811
    root, _ = runs
    first = grade_run(root, jobs=1)
    assert (first.graded, first.kept) == (EPISODES, 0)
    before = grade_files(root)
    second = grade_run(root, jobs=1)
    assert (second.graded, second.kept) == (0, EPISODES)
    assert grade_files(root) == before  # not one grade.json written again
    assert second.summary == first.summary
    assert RunsDir(root).read_summary() == first.summary
    g = Grade.model_validate_json(before["syn-01/constraint/flaky/trial-0"][0])
    assert g.grader_version == GRADER_VERSION and g.task_sha256
    assert set(g.inputs) == {"episode.json", "trajectory.jsonl", "evidence.warc.gz", "answer.json",
                             "../../reference/trial-0/episode.json", "../../reference/trial-0/trajectory.jsonl"}
    assert g.inputs["answer.json"] == (root / "syn-01/constraint/flaky/trial-0/answer.json").stat().st_size


def test_touching_a_file_regrades_exactly_that_episode(runs):  # noqa: F811
    root, _ = runs
    grade_run(root, jobs=1)
    before = grade_files(root)
    flaky = root / "syn-01/constraint/flaky/trial-1"
    touch(flaky / "trajectory.jsonl", root)
    result = grade_run(root, jobs=1)
    assert (result.graded, result.kept) == (1, EPISODES - 1)
    assert changed(before, grade_files(root)) == {"syn-01/constraint/flaky/trial-1"}


def test_touching_a_reference_regrades_the_episodes_compared_with_it(runs):  # noqa: F811
    root, _ = runs
    grade_run(root, jobs=1)
    before = grade_files(root)
    ref = root / "syn-01/constraint/reference/trial-1"
    touch(ref / "trajectory.jsonl", root)
    result = grade_run(root, jobs=1)
    # trial-1 itself, and trial-0 whose reference it is (every other episode compares with trial-0)
    assert result.graded == 2
    assert changed(before, grade_files(root)) == {"syn-01/constraint/reference/trial-0",
                                                 "syn-01/constraint/reference/trial-1"}


def test_a_removed_or_replaced_file_regrades_even_with_old_times(runs):  # noqa: F811
    root, _ = runs
    grade_run(root, jobs=1)
    ep = root / "syn-01/constraint/flaky/trial-0"
    (ep / "answer.json").unlink()  # removing a file changes no file's time
    result = grade_run(root, jobs=1)
    assert result.graded == 1
    assert EpisodeDir(ep).read_grade().status == "agent_error"
    other = root / "syn-01/constraint/flaky/trial-1"
    answer = other / "answer.json"
    st = answer.stat()
    answer.write_text(json.dumps({"columns": ["Dest", "Flights"], "rows": []}), encoding="utf-8")
    os.utime(answer, ns=(st.st_atime_ns, st.st_mtime_ns))  # an older copy put in its place: same time, other size
    before = grade_files(root)
    result = grade_run(root, jobs=1)
    assert result.graded == 1 and changed(before, grade_files(root)) == {"syn-01/constraint/flaky/trial-1"}
    assert EpisodeDir(other).read_grade().scores.row_f1 == 0.0


def test_editing_a_task_regrades_exactly_its_episodes(runs):  # noqa: F811
    root, task_file = runs
    other_task = task_file.with_name("syn-01-copy.yaml")
    shutil.copy(task_file, other_task)
    copy = root / "syn-01/constraint/flaky/trial-5"
    shutil.copytree(root / "syn-01/constraint/flaky/trial-0", copy)
    ep = EpisodeDir(copy)
    ep.write_episode(ep.read_episode().model_copy(update={"trial": 5, "task_path": str(other_task)}))
    first = grade_run(root, jobs=1)
    assert first.graded == EPISODES + 1
    before = grade_files(root)
    other_task.write_text(other_task.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    result = grade_run(root, jobs=1)
    assert (result.graded, result.kept) == (1, EPISODES)
    assert changed(before, grade_files(root)) == {"syn-01/constraint/flaky/trial-5"}
    assert ep.read_grade().task_sha256 != Grade.model_validate_json(before["syn-01/constraint/flaky/trial-5"][0]).task_sha256
    task_file.write_text(task_file.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    assert grade_run(root, jobs=1).graded == EPISODES


def test_another_grader_version_and_force_regrade_everything(runs, monkeypatch):  # noqa: F811
    root, _ = runs
    grade_run(root, jobs=1)
    assert grade_run(root, jobs=1, force=True).graded == EPISODES
    monkeypatch.setattr(runs_module, "GRADER_VERSION", "0.9.0")  # grades on disk are now another version's
    assert grade_run(root, jobs=1).graded == EPISODES


def test_an_episode_that_could_not_be_graded_is_tried_again(runs):  # noqa: F811
    root, _ = runs
    (root / "syn-01/constraint/flaky/trial-1/episode.json").write_text("{broken")
    grade_run(root, jobs=1)
    result = grade_run(root, jobs=1)
    assert (result.graded, result.kept) == (1, EPISODES - 1)
    assert result.summary.ungraded == 1


def test_an_episode_graded_under_another_path_is_regraded(runs, tmp_path):  # noqa: F811
    root, _ = runs
    grade_run(root, jobs=1)
    moved = tmp_path / "moved"
    shutil.copytree(root, moved)  # copytree keeps modification times: the grades are newer, but name the old path
    result = grade_run(moved, jobs=1)
    assert result.graded == EPISODES
    assert all(Grade.model_validate_json(p.read_text()).episode.startswith(str(moved)) for p in moved.rglob("grade.json"))


def test_the_command_says_how_many_it_graded_and_kept(runs):  # noqa: F811
    root, _ = runs
    res = CliRunner().invoke(app, ["grade", str(root), "--json"])
    assert res.exit_code == 0, res.output
    assert f"graded {EPISODES} episodes, kept 0 unchanged" in res.stderr
    first = json.loads(res.stdout)
    res = CliRunner().invoke(app, ["grade", str(root), "--json"])
    assert res.exit_code == 0 and f"graded 0 episodes, kept {EPISODES} unchanged" in res.stderr
    assert json.loads(res.stdout) == first
    res = CliRunner().invoke(app, ["grade", str(root), "--force", "--jobs", "1"])
    assert res.exit_code == 0 and f"graded {EPISODES} episodes, kept 0 unchanged" in res.stderr


def test_jobs_must_be_positive(runs):  # noqa: F811
    res = CliRunner().invoke(app, ["grade", str(runs[0]), "--jobs", "0"])
    assert res.exit_code == 2 and "--jobs: must be at least 1, got 0" in res.stderr


@pytest.mark.parametrize("name", ["audit.json", ".grade.json-tmp"])
def test_files_the_grade_does_not_read_do_not_regrade(runs, name):  # noqa: F811
    root, _ = runs
    grade_run(root, jobs=1)
    ep = root / "syn-01/constraint/flaky/trial-0"
    (ep / name).write_text("{}", encoding="utf-8")
    touch(ep / name, root)
    assert grade_run(root, jobs=1).graded == 0
