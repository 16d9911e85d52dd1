"""`rig compare RUNS_A RUNS_B` on real runs: B a perturbed agent (every delta negative, the sign test's p-value
worked out by hand), tasks only one run holds, rows paired by name, a bad metric or an ungraded run (exit 2)."""

from __future__ import annotations

import json

import pytest
from real_runs import TASKS, copy_run
from typer.testing import CliRunner

from rig.cli import app
from rig.compare import compare_runs
from rig.formats.compare import Comparison
from rig.formats.grade import Grade

TASK_KEYS = {"task", "group", "metric", "a", "b", "delta"}
GROUP_KEYS = {"group", "metric", "a", "b", "delta", "p_value", "test"}


@pytest.fixture(scope="module")
def pair(real_runs, tmp_path_factory):
    """A: the reference agent on every task; B: perturbed:scope_drift on every task; C: it on two of them."""
    root = tmp_path_factory.mktemp("compare")
    a = copy_run(real_runs, root / "a", ("reference",))
    b = copy_run(real_runs, root / "b", ("perturbed:scope_drift",))
    c = copy_run(real_runs, root / "c", ("perturbed:scope_drift",), TASKS[:2])
    return a, b, c


def _task_mean(run, task, agent_dir) -> float:
    grades = [Grade.model_validate_json(p.read_text()) for p in run.glob(f"{task}/constraint/{agent_dir}/*/grade.json")]
    return sum(g.scores.item_f1 for g in grades) / len(grades)


def test_a_perturbed_agent_scores_below_the_reference(pair):
    a, b, _ = pair
    res = CliRunner().invoke(app, ["compare", str(a), str(b), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert set(doc) >= {"tasks", "groups", "only_in_a", "only_in_b"}
    assert all(set(t) >= TASK_KEYS for t in doc["tasks"]) and all(set(g) >= GROUP_KEYS for g in doc["groups"])
    assert Comparison.model_validate(doc).metric == "item_f1"
    assert (doc["only_in_a"], doc["only_in_b"]) == ([], [])
    [group] = doc["groups"]  # one row each, named differently: those two are paired
    assert group["group"] == "reference / constraint vs perturbed:scope_drift / constraint"
    assert group["delta"] == pytest.approx(group["b"] - group["a"]) and group["delta"] < 0
    assert sorted(t["task"] for t in doc["tasks"]) == sorted(TASKS)
    for t in doc["tasks"]:
        assert t["a"] == pytest.approx(_task_mean(a, t["task"], "reference"))
        assert t["b"] == pytest.approx(_task_mean(b, t["task"], "perturbed_scope_drift"))
        assert t["delta"] == pytest.approx(t["b"] - t["a"]) and t["delta"] < 0
    assert [t["delta"] for t in doc["tasks"]] == sorted(t["delta"] for t in doc["tasks"])
    # every task worse: the exact two-sided sign test gives 2 * (1/2)^3
    assert group["test"] == "sign_test" and group["p_value"] == pytest.approx(2 * 0.5 ** len(TASKS))
    assert 0 < group["p_value"] <= 1 and (group["negative"], group["positive"], group["ties"]) == (len(TASKS), 0, 0)
    # the reference's summary.json value is what a is over the same tasks
    summary = json.loads((a / "summary.json").read_text())
    assert group["a"] == pytest.approx(summary["groups"][0]["item_f1"])
    text = CliRunner().invoke(app, ["compare", str(a), str(b)])
    assert text.exit_code == 0 and "sign test over tasks" in text.stdout and "p = 0.25" in text.stdout


def test_tasks_only_one_run_holds_are_listed(pair):
    a, _, c = pair
    forward = compare_runs(a, c)
    assert forward.only_in_a == [TASKS[2]] and forward.only_in_b == []
    assert sorted(t.task for t in forward.tasks) == sorted(TASKS[:2]) and forward.groups[0].tasks == 2
    backward = compare_runs(c, a, "passed")
    assert backward.only_in_a == [] and backward.only_in_b == [TASKS[2]]
    assert backward.groups[0].delta == pytest.approx(1.0)  # the reference passes what scope drift never does
    assert backward.groups[0].p_value == pytest.approx(0.5)  # two tasks, both better


def test_rows_are_paired_by_name(real_runs, tmp_path):
    a = copy_run(real_runs, tmp_path / "a", ("reference", "perturbed:scope_drift"))
    b = copy_run(real_runs, tmp_path / "b", ("reference", "perturbed:page_misreading"))
    c = compare_runs(a, b, "row_f1")
    assert [g.group for g in c.groups] == ["reference / constraint"]
    g = c.groups[0]
    assert (g.delta, g.ties, g.p_value) == (0.0, len(TASKS), 1.0)  # the same episodes: every task tied
    assert c.unpaired_a == ["perturbed:scope_drift / constraint"]
    assert c.unpaired_b == ["perturbed:page_misreading / constraint"]


def test_bad_input_is_exit_2(pair, tmp_path):
    a, b, _ = pair
    res = CliRunner().invoke(app, ["compare", str(a), str(b), "--metric", "nonsense"])
    assert res.exit_code == 2 and "'nonsense' is not a metric" in res.stderr
    (tmp_path / "ungraded").mkdir()
    res = CliRunner().invoke(app, ["compare", str(a), str(tmp_path / "ungraded")])
    assert res.exit_code == 2 and "no summary.json: grade the run first" in res.stderr
