"""`rig grade RUNS_DIR`: grade.json per episode, summary.json and summary.md, Pass@k, label agreement;
then real eco episodes from `rig run` (reference and perturbed agents) graded end to end."""

from __future__ import annotations

import hashlib
import json

import pytest
import yaml
from test_grading_states import (
    GOLD,
    ROUTE_DIMS,
    ROUTES_B6,
    ROUTES_EV_LGA,
    answer,
    reference_steps,
    step,
    synthetic_task,
    write_episode,
)

from rig.episode_dir import EpisodeDir
from rig.formats.grade import Grade
from rig.formats.schemas import schemas
from rig.formats.summary import Metrics, Summary
from rig.grading.grade import grade_episode
from rig.grading.runs import grade_runs
from rig.grading.summary import pooled, summary_json


@pytest.fixture
def runs(tmp_path):
    """A runs directory of the synthetic task: 2 reference trials, 2 trials of a flaky agent, perturbed agents, an infra error."""
    task_file = tmp_path / "syn-01.yaml"
    task_file.write_text(yaml.safe_dump(synthetic_task().model_dump(mode="json"), allow_unicode=True))
    root = tmp_path / "runs"

    def ep(agent, trial, steps, rows, **kw):
        d = root / "syn-01" / "constraint" / agent.replace(":", "_") / f"trial-{trial}"
        return write_episode(d, steps, answer(rows), agent=agent, trial=trial, task_path=str(task_file), **kw)

    drift = reference_steps()[:3] + [step({**ROUTE_DIMS, "dim.origin": "LGA"}, ROUTES_EV_LGA, "extract_table")]
    dep = reference_steps()[:3] + [step({**ROUTE_DIMS, "dim.carrier": "B6"}, ROUTES_B6, "extract_table")]
    ep("reference", 0, reference_steps(), GOLD)
    ep("reference", 1, reference_steps(), GOLD)
    ep("flaky", 0, reference_steps(), GOLD)
    ep("flaky", 1, reference_steps(), GOLD[::-1])
    ep("flaky", 2, reference_steps(), GOLD, status="infra_error")
    ep("perturbed:scope_drift", 0, drift, [["BOS", "12"], ["DCA", "9"]], injected_fault="scope_drift")
    ep("perturbed:retrieval_dependency", 0, dep, [["MIA", "40"], ["BOS", "5"]], injected_fault="retrieval_dependency")
    ep("perturbed:answer_composition", 0, reference_steps(), GOLD, injected_fault="answer_composition")  # fault had no effect
    return root, task_file


def test_grade_runs_writes_grades_and_summary(runs):
    root, task_file = runs
    summary = grade_runs(root)
    grades = {p.parent.relative_to(root).as_posix(): Grade.model_validate_json(p.read_text()) for p in root.rglob("grade.json")}
    assert len(grades) == 8
    assert Summary.model_validate_json((root / "summary.json").read_text()) == summary
    ref = grades["syn-01/constraint/reference/trial-0"]
    assert ref.task_sha256 == hashlib.sha256(task_file.read_bytes()).hexdigest()
    assert ref.grader_version == summary.grader_version and ref.passed
    assert ref.reference_episode.endswith("reference/trial-1") and ref.first_divergence is None
    drift = grades["syn-01/constraint/perturbed_scope_drift/trial-0"]
    assert drift.reference_episode.endswith("reference/trial-0")
    assert drift.first_divergence.step == 3 and drift.first_divergence.keys == ["dim.origin"]
    assert drift.label == "scope_drift" and drift.injected_fault == "scope_drift"
    assert [(r.name, r.reached) for r in drift.gold_states] == [("top_carrier", True), ("carrier_routes", False)]
    assert drift.evidence[1].met is False and ref.evidence[1].met and ref.evidence[1].step == 3
    infra = grades["syn-01/constraint/flaky/trial-2"]
    assert not infra.scored and infra.scores is None


def test_summary_metrics_pass_at_k_and_infra(runs):
    root, _ = runs
    summary = grade_runs(root)
    groups = {g.agent: g for g in summary.groups}
    assert [g.agent for g in summary.groups][0] == "reference"
    flaky = groups["flaky"]
    assert (flaky.episodes, flaky.scored, flaky.infra, flaky.statuses) == (3, 2, 1, {"ok": 2, "infra_error": 1})
    assert flaky.table_episodes == 2
    assert flaky.item_f1 == 1.0 and flaky.poa == 0.5  # the infra episode is not a zero
    assert flaky.passk == {"pass@1": 0.5, "avg@1": 0.5, "pass@2": 1.0, "avg@2": 0.5}
    assert flaky.failures["answer_composition"] == 1 and flaky.state_anchored_rows == 1.0
    assert groups["reference"].passk["pass@2"] == 1.0 and groups["reference"].gold_state_reach == 1.0
    assert groups["perturbed:scope_drift"].answer_state_reach == 0.0
    assert set(flaky.families) == {"synthetic"}
    assert (summary.episodes, summary.scored, summary.infra) == (8, 7, 1)


def test_table_metrics_pool_over_the_episodes_with_a_table():
    # two of the constraint variant's four scored episodes are of a records-only task: they carry no Item-F1
    constraint = Metrics(episodes=4, scored=4, table_episodes=2, item_f1=1.0, record_episodes=2)
    goal = Metrics(episodes=2, scored=2, table_episodes=2, item_f1=0.0)
    records_only = Metrics(episodes=3, scored=3, record_episodes=3)
    assert pooled([constraint, goal, records_only], "item_f1") == 0.5
    assert pooled([records_only], "item_f1") is None


def test_label_agreement(runs):
    summary = grade_runs(runs[0])
    assert summary.label_agreement == pytest.approx(
        {"overall": 2 / 3, "answer_composition": 0.0, "retrieval_dependency": 1.0, "scope_drift": 1.0})
    assert summary.label_agreement_detail["answer_composition"].labels == {"none": 1}
    doc = json.loads(summary_json(summary))
    assert doc["label_agreement"]["overall"] == pytest.approx(2 / 3)


def test_summary_markdown_is_table_2_shaped(runs):
    root, _ = runs
    grade_runs(root)
    md = (root / "summary.md").read_text()
    assert "| Agent | Constraint Row-F1 | Constraint Item-F1 | Constraint P.O.A. | Goal Row-F1 |" in md
    assert "| reference | 100.00 | 100.00 | 100.00 | – | – | – | 100.00 |" in md
    assert "## Label agreement with injected faults: 66.67 %" in md


def test_single_episode_directory(runs):
    root, _ = runs
    d = root / "syn-01" / "constraint" / "flaky" / "trial-1"
    summary = grade_runs(d)
    assert summary.episodes == 1 and (d / "grade.json").exists() and not (d / "summary.json").exists()


def test_broken_episodes_are_reported_not_fatal(runs):
    root, _ = runs
    (root / "syn-01" / "constraint" / "flaky" / "trial-1" / "episode.json").write_text("{broken")
    bad_task = root / "syn-01" / "constraint" / "flaky" / "trial-0"
    ep = json.loads((bad_task / "episode.json").read_text())
    (bad_task / "episode.json").write_text(json.dumps({**ep, "task_path": str(root / "missing.yaml")}))
    summary = grade_runs(root)
    assert summary.episodes == 8
    broken = Grade.model_validate_json((root / "syn-01/constraint/flaky/trial-1/grade.json").read_text())
    assert not broken.scored and "unreadable episode.json" in broken.error
    missing = Grade.model_validate_json((bad_task / "grade.json").read_text())
    assert not missing.scored and missing.error.startswith("grading failed")


def test_episode_without_a_task_is_not_scored(tmp_path):
    d = write_episode(tmp_path / "ep", reference_steps(), answer(GOLD), task_id=None)
    g = grade_episode(d)
    assert not g.scored and g.task_id is None and "no task" in g.error


def test_schemas():
    out = schemas()
    assert {"grade.schema.json", "summary.schema.json"} <= set(out)
    assert "label" in out["grade.schema.json"]["properties"] and "label_agreement" in out["summary.schema.json"]["properties"]


@pytest.mark.slow
def test_real_eco_episodes(tmp_path, sites_url):
    from rig.runner.config import RunConfig
    from rig.runner.run import run

    kinds = ("page_misreading", "retrieval_dependency", "answer_composition", "intent_rewriting")
    for agent in ("reference", *(f"perturbed:{k}" for k in kinds)):
        eps = run(RunConfig(["eco-01"], agent, tmp_path, variants=["constraint"], sites_url=sites_url))
        assert [e.status for e in eps] == ["ok"]
    summary = grade_runs(tmp_path)
    grades = {g.agent: g for g in (Grade.model_validate_json(p.read_text()) for p in tmp_path.rglob("grade.json"))}
    ref = grades["reference"]
    assert (ref.scores.item_f1, ref.scores.row_f1, ref.scores.poa) == (1.0, 1.0, 1.0)
    assert all(r.reached for r in ref.gold_states) and ref.state_anchored_rows == 1.0 and ref.label is None
    assert all(e.met for e in ref.evidence) and ref.drift == []
    assert ref.citations and all(c.verified and c.state_anchored for c in ref.citations)
    for kind in kinds:
        g = grades[f"perturbed:{kind}"]
        assert g.label == kind, (kind, g.label, g.rationale)
    dep = grades["perturbed:retrieval_dependency"]
    assert dep.first_divergence is not None and dep.first_divergence.keys == ["dim.time_window"]
    assert summary.label_agreement["overall"] == 1.0


def test_an_ungradable_task_is_counted_and_the_command_fails(runs):
    """Issue 17, item 6: a task file that cannot be graded never makes its episodes vanish with exit 0."""
    from typer.testing import CliRunner

    from rig.cli import app

    root, task_file = runs
    data = yaml.safe_load(task_file.read_text())
    task_file.write_text(yaml.safe_dump({**data, "canonicalize": {"default": ["casefodl"]}}))
    res = CliRunner().invoke(app, ["grade", str(root), "--json"])
    assert res.exit_code == 1
    summary = Summary.model_validate_json(res.stdout)
    assert (summary.episodes, summary.scored, summary.ungraded) == (8, 0, 8)
    assert {p.kind for p in summary.problems} == {"ungraded"} and len(summary.problems) == 8
    assert all("canonicalize.default[0]: unknown rule 'casefodl'" in p.reason for p in summary.problems)
    assert "8 of 8 episodes could not be graded" in res.stderr


def test_infra_failure_rate_is_shown_and_flagged(runs):
    """Issue 17, item 7: an agent's infrastructure failures are visible beside its scores."""
    root, _ = runs
    summary = grade_runs(root)
    groups = {g.agent: g for g in summary.groups}
    assert groups["flaky"].infra_rate == pytest.approx(1 / 3) and groups["reference"].infra_rate == 0.0
    assert summary.infra_rate == pytest.approx(1 / 8)
    md = (root / "summary.md").read_text()
    assert "| Overall Item-F1 | Infra failures |" in md
    assert "| flaky | 100.00 | 100.00 | 50.00 | – | – | – | 100.00 | 33.33 ⚠ |" in md
    assert "| reference | 100.00 | 100.00 | 100.00 | – | – | – | 100.00 | 0.00 |" in md
    assert "**Warning:** flaky: 1 of 3 episodes were infrastructure failures (33.33 %), not scored" in md
    from rig.report import write_report

    html = write_report(root).read_text()
    assert 'id="infra-warning"' in html and "flaky: 1 of 3 episodes were infrastructure failures" in html
    assert html.count('class="num infra-rate flagged"') == 1 and html.count('class="num infra-rate"') == 4


def test_agent_names_are_escaped_in_summary_md(tmp_path):
    """Issue 17, item 8: an agent name from episode.json cannot inject Markdown, HTML or table cells."""
    from rig.grading.summary import md_text

    evil = "x | <img src=x onerror=alert(1)> [link](http://e.example) *b* _i_\nnext"
    d = write_episode(tmp_path / "runs" / "t" / "constraint" / "evil" / "trial-0", reference_steps(), answer(GOLD),
                      agent=evil, task_id=None)
    grade_runs(d.parents[3])
    md = (d.parents[3] / "summary.md").read_text()
    assert md_text(evil) == r"x \| \<img src=x onerror=alert(1)\> \[link\](http://e.example) \*b\* \_i\_ next"
    assert f"| {md_text(evil)} |" in md and " <img" not in md and "\nnext" not in md
    assert md_text("perturbed:scope_drift") == "perturbed:scope_drift"


def test_grading_a_missing_path_is_a_clear_error(tmp_path):
    from typer.testing import CliRunner

    from rig.cli import app

    res = CliRunner().invoke(app, ["grade", str(tmp_path / "nowhere")])
    assert res.exit_code == 2 and "nowhere: no such runs or episode directory" in res.stderr  # bad input
    assert res.exception is None or isinstance(res.exception, SystemExit)


def test_grading_a_directory_with_no_episode_exits_2_and_writes_nothing(tmp_path):
    """Issue 23, item 5: an empty runs directory is bad input, not a run of zero episodes with its summary files."""
    from typer.testing import CliRunner

    from rig.cli import app

    empty = tmp_path / "runs"
    (empty / "notes").mkdir(parents=True)
    (empty / "notes" / "todo.txt").write_text("nothing recorded yet")
    res = CliRunner().invoke(app, ["grade", str(empty), "--json"])
    assert res.exit_code == 2, res.output
    assert f"{empty}: holds no episode (no episode.json in it or below it): nothing to grade" in res.stderr
    assert res.stdout == ""
    assert sorted(p.relative_to(empty).as_posix() for p in empty.rglob("*")) == ["notes", "notes/todo.txt"]


def test_two_models_under_one_agent_name_are_two_rows(runs):
    """Issue 17, item 2: a summary never mixes the episodes of two models run under one agent name."""
    root, _ = runs
    for trial, model in ((0, "model-a"), (1, "model-b"), (2, "model-b")):
        d = EpisodeDir(root / "syn-01" / "constraint" / "flaky" / f"trial-{trial}")
        d.write_episode(d.read_episode().model_copy(update={"model": model}))
    summary = grade_runs(root)
    groups = {g.agent: g for g in summary.groups}
    assert "flaky" not in groups
    assert (groups["flaky (model-a)"].episodes, groups["flaky (model-b)"].episodes) == (1, 2)
    assert groups["flaky (model-b)"].infra == 1 and groups["flaky (model-a)"].infra == 0
    md = (root / "summary.md").read_text()
    assert "| flaky (model-a) |" in md and "| flaky (model-b) |" in md
