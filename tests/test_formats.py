"""Every file format round-trips: a real instance written as JSON and read back through its model is equal to
itself, and each versioned format writes its `format` field."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import pytest
import yaml
from pydantic import BaseModel

from recorders import load_adapter
from recorders.models import Step
from replay.report import ReplayReport
from replay.snapshot import Manifest
from rig.episode_dir import EpisodeDir, RunsDir, read_answer_file
from rig.formats.actions import ActionScript
from rig.formats.answer_text import ParseFailure, ParseFailureRecord
from rig.formats.audit import Audit
from rig.formats.episode import Episode
from rig.formats.grade import Grade
from rig.formats.summary import Summary
from rig.sites import bundled_adapters
from rig.tasks import bundled_task_paths, load_task

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data"
GOLDEN = DATA / "golden"


def _roundtrip(model: BaseModel) -> BaseModel:
    again = type(model).model_validate_json(model.model_dump_json())
    assert again == model
    return again


@pytest.mark.parametrize("path", bundled_task_paths()[:3], ids=lambda p: p.stem)
def test_task(path):
    task = load_task(path)  # (equality of tasks would compare the file each was loaded from, too)
    again = type(task).model_validate_json(task.model_dump_json())
    assert again.model_dump() == task.model_dump() and again.id == path.stem


def test_action_script():
    task = load_task(bundled_task_paths()[0])
    script = ActionScript.validate_python(task.reference_solution)
    assert ActionScript.validate_json(ActionScript.dump_json(script, by_alias=True)) == script


def test_answer_written_and_read_through_the_episode_directory(tmp_path):
    answer = read_answer_file(DATA / "answers" / "markdown.md")
    ed = EpisodeDir(tmp_path)
    ed.write_answer(answer)
    assert json.loads(ed.answer_file.read_text())["format"] == "sgr-rig/answer/1"
    assert ed.read_answer() == answer


def test_parse_failure_record(tmp_path):
    ed = EpisodeDir(tmp_path)
    ed.write_parse_failure(ParseFailure("pasted answer", "no table found"))
    assert ParseFailureRecord.model_validate_json(ed.parse_failure_file.read_text()).format == "sgr-rig/parse-failure/1"
    again = ed.read_parse_failure()
    assert (again.source, again.reason) == ("pasted answer", "no table found")


def test_episode(tmp_path):
    ep = Episode(task_id="eco-01", variant="goal", agent="reference", trial=2, start_url="http://127.0.0.1:1/eco/")
    ep.finish("ok", steps=7)
    ed = EpisodeDir(tmp_path)
    ed.write_episode(ep)
    assert ed.read_episode() == _roundtrip(ep)


@pytest.mark.parametrize("name", ["grade-reference.json", "grade-scope-drift.json"])
def test_grade(name, tmp_path):
    # the golden grades mask their input files' sizes (`<size>`: episode.json holds temporary paths); any number
    # stands in for them here, where only the format's round trip is checked
    text = (GOLDEN / name).read_text().replace("<size>", "0")
    grade = Grade.model_validate_json(text)
    ed = EpisodeDir(tmp_path)
    ed.write_grade(_roundtrip(grade))
    assert ed.read_grade() == grade and ed.grade_file.read_text() == text


def test_summary(tmp_path):
    summary = Summary.model_validate_json((GOLDEN / "summary.json").read_text())
    RunsDir(tmp_path).write_summary(_roundtrip(summary), "# summary\n")
    assert RunsDir(tmp_path).read_summary() == summary


def test_audit(tmp_path):
    audit = Audit(label="scope_drift", note="left JFK at step 4", auditor="a")
    EpisodeDir(tmp_path).write_audit(audit)
    assert EpisodeDir(tmp_path).read_audit() == _roundtrip(audit)


def test_trajectory_step():
    for line in (GOLDEN / "trajectory.jsonl").read_text().splitlines():
        step = Step.model_validate_json(line)
        assert step.format == "sgr-rig/step/1" and step.model_dump_json() == line


def test_site_adapter():
    for adapter in bundled_adapters():
        assert type(adapter).model_validate_json(adapter.model_dump_json()) == adapter
    assert load_adapter(ROOT / "rig" / "sites" / "eco" / "adapter.yaml") == bundled_adapters()[2]


def test_snapshot_manifest():
    for site in ("eco", "flights", "stats"):
        manifest = Manifest.read(ROOT / "site_snapshots" / site)
        assert Manifest(**json.loads(json.dumps(asdict(manifest)))) == manifest and manifest.site == site


def test_replay_report():
    report = ReplayReport(steps=3, matched=2, mismatches=[{"step": 1, "diff": {"url": ["a", "b"]}}],
                          misses=[{"method": "GET", "url": "http://x/", "step": 1}])
    assert ReplayReport(**json.loads(json.dumps(report.to_json()))) == report


def test_task_files_load_from_yaml_written_by_their_model(tmp_path):
    task = load_task(bundled_task_paths()[0])
    path = tmp_path / f"{task.id}.yaml"
    path.write_text(yaml.safe_dump(task.model_dump(mode="json"), allow_unicode=True))
    assert load_task(path).model_dump() == task.model_dump()


def test_files_of_the_previous_formats_still_load():
    """grade.json and summary.json of format 1 (grader 1.1.0, kept in tests/data/old as that grader wrote them) load,
    and say they are outdated: `rig grade` redoes them, the report asks for that."""
    grade = Grade.model_validate_json((DATA / "old" / "grade-format-1.json").read_text().replace("<size>", "0"))
    assert grade.format == "sgr-rig/grade/1" and grade.outdated and grade.step_marks == []
    assert grade.gold_states[0].constraints == [] and grade.task_revision is None
    summary = Summary.model_validate_json((DATA / "old" / "summary-format-1.json").read_text())
    assert summary.format == "sgr-rig/summary/1" and summary.outdated and summary.intervals is None
    assert summary.groups[0].item_f1_ci95 is None and summary.groups[0].families["synthetic"].gold_state_reach is None
    current = Summary.model_validate_json((GOLDEN / "summary.json").read_text())
    assert not current.outdated and not Grade.model_validate_json(
        (GOLDEN / "grade-reference.json").read_text().replace("<size>", "0")).outdated
