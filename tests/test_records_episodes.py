"""Evidence records end to end: real episodes of the record-taking tasks through Chromium, graded against the
episode's own captures (reference -> perfect soft and hard F1; a fabricated excerpt -> that record fails)."""

from __future__ import annotations

import importlib
import json
import shutil

import pytest

from rig.grading.grade import grade_episode
from rig.grading.runs import grade_runs
from rig.grading.summary import markdown
from rig.runner.config import RunConfig
from rig.runner.run import run
from rig.tasks import bundled_tasks, resolve_task

RECORD_TASKS = [t for t in bundled_tasks() if t.records is not None]
PERFECT = dict.fromkeys(("soft_precision", "soft_recall", "soft_f1", "hard_precision", "hard_recall", "hard_f1"), 1.0)


def test_bundled_record_tasks_gold_is_independent():
    assert len(RECORD_TASKS) >= 2
    for task in RECORD_TASKS:
        gold = importlib.import_module(f"rig.sites.{task.site}.gold")
        want = [g.model_dump(exclude_defaults=True) for g in task.records.gold]
        assert gold.RECORD_GOLD[task.id]() == want, task.id


@pytest.fixture(scope="module")
def runs(tmp_path_factory, sites_url):
    root = tmp_path_factory.mktemp("record-runs")
    for task in RECORD_TASKS:
        for agent in ("reference", "perturbed:page_misreading"):
            eps = run(RunConfig([task.id], agent, root, variants=["constraint"], sites_url=sites_url))
            assert [e.status for e in eps] == ["ok"], (task.id, agent)
    return root


def test_reference_records_grade_perfectly(runs):
    summary = grade_runs(runs)
    for task in RECORD_TASKS:
        ep = runs / task.id / "constraint" / "reference" / "trial-0"
        g = json.loads((ep / "grade.json").read_text())
        assert g["record_scores"] == PERFECT, (task.id, g["record_scores"])
        assert g["passed"] and len(g["records"]) == len(task.records.gold)
        for r in g["records"]:
            assert r["captured"] and r["gold_match"] and all(r["facts"].values()) and r["steps"]
            assert [x["match"] for x in r["excerpts"]] in (["exact"], ["normalised"])
        misread = json.loads((ep.parent.parent / "perturbed_page_misreading" / "trial-0" / "grade.json").read_text())
        assert misread["record_scores"]["hard_f1"] == 0.0 and misread["label"] == "page_misreading"
    ref = next(g for g in summary.groups if g.agent == "reference")
    assert ref.record_episodes == len(RECORD_TASKS) and ref.record_hard_f1 == 1.0
    assert ref.families["transport"].record_soft_f1 == 1.0
    assert "## Evidence records" in markdown(summary)


def test_fabricated_excerpt_fails_its_record(runs, tmp_path):
    src = runs / "flights-06" / "constraint" / "reference" / "trial-0"
    ep = tmp_path / "fabricated"
    shutil.copytree(src, ep)
    answer = json.loads((ep / "answer.json").read_text())
    real = answer["records"][1]["excerpts"][0]
    answer["records"][1]["excerpts"] = [real.replace(" 54 ", " 64 ")]  # a near miss of the real row
    answer["records"][2]["excerpts"].append("DL Delta Air Lines Inc. flew 480 delayed flights")  # invented
    (ep / "answer.json").write_text(json.dumps(answer))
    g = grade_episode(ep, resolve_task("flights-06"))
    first, second, third = g.records
    assert first.hard == 1.0
    assert second.captured and not second.excerpts[0].faithful and second.excerpts[0].match == "fuzzy"
    assert second.verdict.fuzzy_near_misses == 1 and second.hard == 0.0 and second.soft == 0.0
    assert "near miss" in second.reason
    assert third.excerpts[0].faithful and third.excerpts[1].match is None
    assert (third.soft, third.hard) == (0.5, 0.0)
    s = g.record_scores
    assert s.hard_precision == pytest.approx(1 / 3) and s.hard_recall == pytest.approx(1 / 3)
    assert s.soft_f1 == pytest.approx(0.5) and s.hard_f1 < s.soft_f1 < 1.0
    assert not g.passed and g.scores.row_f1 == 1.0  # the table is untouched


def test_records_only_task_grades_without_a_table(runs):
    task = resolve_task("flights-06").model_copy(update={"output": None, "gold": None})
    ep = runs / "flights-06" / "constraint" / "reference" / "trial-0"
    g = grade_episode(ep, task)
    assert g.scored and g.scores is None and g.passed and g.rows == []
    assert g.record_scores.model_dump() == PERFECT and g.label is None


def test_unscored_and_answerless_episodes(runs, tmp_path):
    src = runs / "flights-07" / "constraint" / "reference" / "trial-0"
    ep = tmp_path / "noanswer"
    shutil.copytree(src, ep)
    answer = json.loads((ep / "answer.json").read_text())
    (ep / "answer.json").write_text(json.dumps({"columns": answer["columns"], "rows": answer["rows"]}))
    g = grade_episode(ep, resolve_task("flights-07"))
    assert g.records == [] and g.record_scores.hard_f1 == 0.0 and g.scores.row_f1 == 1.0 and not g.passed
    meta = json.loads((ep / "episode.json").read_text())
    (ep / "episode.json").write_text(json.dumps({**meta, "status": "infra_error"}))
    g = grade_episode(ep, resolve_task("flights-07"))
    assert not g.scored and g.record_scores is None
