"""Task revisions: a task's `revision` (default: a digest of its gold and grading rules) is recorded in every
grade.json, and `rig grade` refuses to summarise two revisions of one task in one row (exit 2, naming the task, the
revisions and their episodes) unless `--mix-revisions`."""

from __future__ import annotations

import json
import shutil

import pytest
import yaml
from real_runs import episode_path
from test_grade_run import runs  # noqa: F401  (the fixture: a synthetic runs directory)
from typer.testing import CliRunner

from rig.cli import app
from rig.episode_dir import EpisodeDir, RunsDir
from rig.formats.grade import Grade
from rig.formats.summary import Summary
from rig.grading.runs import grade_runs
from rig.grading.summary import MixedRevisions
from rig.tasks import bundled_task_paths, load_task


def _task_file(task_id: str):
    return next(p for p in bundled_task_paths() if p.stem == task_id)


def test_the_default_revision_is_a_digest_of_the_gold_and_grading_rules(tmp_path):
    path = _task_file("eco-01")
    task = load_task(path)
    data = yaml.safe_load(path.read_text())
    assert task.revision is None and task.grading_revision.startswith("sha256:") and len(task.grading_revision) == 23

    def revision(**changes) -> str:
        p = tmp_path / "eco-01.yaml"
        p.write_text(yaml.safe_dump({**data, **changes}, allow_unicode=True))
        return load_task(p).grading_revision

    assert revision() == task.grading_revision  # the same rules: the same revision
    assert revision(prompts={"constraint": "reworded", "goal": "reworded"}) == task.grading_revision
    gold = [list(r) for r in data["gold"]["rows"]]
    gold[0][-1] = "999"
    assert revision(gold={"rows": gold}) != task.grading_revision
    assert revision(canonicalize={"default": ["nfkc", "trim", "collapse_ws", "casefold"]}) != task.grading_revision
    states = [dict(s) for s in data["gold_states"]]
    states[0]["description"] = "reworded"
    assert revision(gold_states=states) != task.grading_revision
    assert revision(revision="2024-06") == "2024-06"  # a declared revision stands for itself


def test_grade_json_records_the_revisions(runs):  # noqa: F811
    root, _ = runs
    d = root / "syn-01" / "constraint" / "reference" / "trial-0"
    ep = EpisodeDir(d)
    ep.write_episode(ep.read_episode().model_copy(update={"task_revision": "r-run"}))  # the runner's field, later
    grade_runs(root, mix_revisions=True)
    g = ep.read_grade()
    other = Grade.model_validate_json((root / "syn-01/constraint/reference/trial-1/grade.json").read_text())
    assert g.task_revision == other.task_revision and g.task_revision.startswith("sha256:")
    assert (g.run_revision, g.revision) == ("r-run", "r-run") and other.run_revision is None
    with pytest.raises(MixedRevisions, match=r"task syn-01 in the row reference / constraint was graded at 2 revisions"):
        grade_runs(root)


@pytest.fixture
def mixed(real_runs, tmp_path):
    """A copy of the real runs where the reference agent's trial 1 of eco-01 was run against a second revision of
    the task (a copy of its file declaring `revision: "2"`)."""
    root = tmp_path / "runs"
    shutil.copytree(real_runs, root)
    data = yaml.safe_load(_task_file("eco-01").read_text())
    revised = tmp_path / "eco-01.yaml"
    revised.write_text(yaml.safe_dump({**data, "revision": "2"}, allow_unicode=True))
    ep = EpisodeDir(episode_path(root, "eco-01", "reference", 1))
    # the episode ran against the second revision: its file, and the revision the runner recorded then
    ep.write_episode(ep.read_episode().model_copy(update={"task_path": str(revised), "task_revision": "2"}))
    return root


def test_two_revisions_in_one_row_are_refused_then_allowed(mixed):
    digest = load_task(_task_file("eco-01")).grading_revision
    res = CliRunner().invoke(app, ["grade", str(mixed)])
    assert res.exit_code == 2, res.output
    assert (f"task eco-01 in the row reference / constraint was graded at 2 revisions: 2 (1 episode), {digest} "
            "(1 episode)") in " ".join(res.stderr.split())
    assert "--mix-revisions" in res.stderr
    assert not RunsDir(mixed).summary_file.exists() and not RunsDir(mixed).summary_md.exists()  # no stale summary
    revisions = {json.loads(p.read_text())["task_revision"] for p in mixed.glob("eco-01/*/reference/*/grade.json")}
    assert revisions == {"2", digest}  # the grades are written all the same
    res = CliRunner().invoke(app, ["grade", str(mixed), "--mix-revisions"])
    assert res.exit_code == 0, res.output
    summary = Summary.model_validate_json(RunsDir(mixed).summary_file.read_text())
    ref = next(g for g in summary.groups if g.agent == "reference")
    assert [(m.task, m.revisions) for m in ref.mixed_revisions] == [("eco-01", {"2": 1, digest: 1})]
    assert all(not g.mixed_revisions for g in summary.groups if g.agent != "reference")
    assert "**Warning:** reference / constraint mixes revisions of task eco-01: 2 (1)" in RunsDir(mixed).summary_md.read_text()
