"""95 % bootstrap intervals over tasks and pass^k in summary.json and summary.md: the interval of a hand-computed case
(the draws replayed and every resample summed by a plain loop; a case small enough to know the answer exactly), one
task, determinism, and the intervals of real runs."""

from __future__ import annotations

import json
import re
import shutil
from math import floor

import numpy as np
import pytest
from real_runs import AGENTS, TASKS, TRIALS
from test_grade_run import runs  # noqa: F401  (the fixture: a synthetic runs directory of one task)
from typer.testing import CliRunner

from rig.cli import app
from rig.formats.summary import CI_METRICS, Summary
from rig.grading.runs import grade_runs
from rig.stats import RESAMPLES, SEED, bootstrap_ci, sign_test


def _percentile(sorted_values: list[float], q: float) -> float:
    """Linear interpolation between order statistics (Hyndman and Fan's type 7), by hand."""
    pos = q * (len(sorted_values) - 1)
    lo = floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (pos - lo) * (sorted_values[hi] - sorted_values[lo])


def test_interval_of_a_hand_computed_case():
    """Four tasks with different numbers of trials (a task is one cluster: its numerator and denominator add up);
    the documented draws replayed, each resample's ratio of sums taken by a plain loop."""
    # task: (sum of the trials' values, number of trials)
    tasks = [(2.0, 2.0), (0.5, 3.0), (1.0, 1.0), (0.0, 2.0)]
    draws = np.random.default_rng(SEED).integers(0, len(tasks), size=(RESAMPLES, len(tasks))).tolist()
    values = []
    for draw in draws:
        num = den = 0.0
        for i in draw:
            num += tasks[i][0]
            den += tasks[i][1]
        values.append(num / den)
    values.sort()
    lo, hi = bootstrap_ci(tasks)
    assert lo == pytest.approx(_percentile(values, 0.025), abs=1e-12)
    assert hi == pytest.approx(_percentile(values, 0.975), abs=1e-12)
    assert 0.0 <= lo < 3.5 / 8 < hi <= 1.0  # the point estimate, 3.5 / 8, lies inside


def test_interval_of_a_case_known_exactly():
    """Two tasks scoring 0 and 1: a resample is {0, 0}, {0, 1} or {1, 1} with chances 1/4, 1/2, 1/4, so the 2.5th
    percentile is 0 and the 97.5th is 1. All tasks equal: no spread at all. One task: no interval."""
    assert bootstrap_ci([(0.0, 1.0), (1.0, 1.0)]) == (0.0, 1.0)
    assert bootstrap_ci([(0.6, 1.0)] * 5) == (0.6, 0.6)
    assert bootstrap_ci([(3.0, 4.0)]) is None
    assert bootstrap_ci([(3.0, 4.0), (0.0, 0.0)]) is None  # a task the metric does not apply to holds no value
    assert bootstrap_ci([]) is None


def test_intervals_are_deterministic():
    clusters = [(float(i % 3), 1.0 + i % 2) for i in range(15)]
    assert bootstrap_ci(clusters) == bootstrap_ci(clusters)
    assert bootstrap_ci(clusters, seed=SEED + 1) != bootstrap_ci(clusters)  # the seed is what fixes them


def test_sign_test_by_hand():
    # 5 tasks worse, 1 better, 1 tied: two-sided 2 * P(X <= 1 | n=6) = 2 * (1 + 6) / 64
    t = sign_test([-0.2, -0.1, -0.5, -1.0, -0.3, 0.4, 0.0])
    assert (t.positive, t.negative, t.ties) == (1, 5, 1) and t.p_value == pytest.approx(14 / 64)
    assert sign_test([-1.0, -1.0, -1.0]).p_value == pytest.approx(0.25)
    assert sign_test([0.0, 0.0]).p_value == 1.0 and sign_test([]).p_value == 1.0
    assert sign_test([1.0]).p_value == 1.0


def test_one_task_has_no_interval_and_pass_hat_k(runs):  # noqa: F811
    root, _ = runs
    summary = grade_runs(root)
    groups = {g.agent: g for g in summary.groups}
    flaky = groups["flaky"]
    assert flaky.tasks == 1 and flaky.item_f1 == 1.0 and flaky.item_f1_ci95 is None
    # flaky passed one of its two scored trials: pass@2 is 1, pass^2 (both succeed) is 0
    assert (flaky.k, flaky.passk["pass@2"], flaky.pass_hat_k) == (2, 1.0, 0.0)
    assert groups["reference"].pass_hat_k == 1.0 and groups["perturbed:scope_drift"].k == 1
    assert summary.intervals.resamples == RESAMPLES and summary.intervals.seed == SEED
    md = (root / "summary.md").read_text()
    assert "| flaky | constraint | 1 | 100.0 [n/a] | 100.0 [n/a] | 50.0 [n/a] |" in md
    assert "| Pass@k | Avg@k | Pass^k |" in md and "| 100.00 (k=2) | 50.00 | 0.00 (k=2) |" in md


@pytest.fixture(scope="module")
def graded(real_runs):
    """The real runs' summary as rig grade wrote it."""
    return Summary.model_validate_json((real_runs / "summary.json").read_text())


def test_real_runs_carry_an_interval_beside_every_mean(graded):
    assert [g.agent for g in graded.groups] == ["reference", "perturbed:page_misreading", "perturbed:scope_drift"]
    for g in graded.groups:
        assert g.tasks == len(TASKS) and g.episodes == len(TASKS) * TRIALS and g.k == TRIALS
        doc = g.model_dump(mode="json")
        for metric in CI_METRICS:
            assert f"{metric}_ci95" in doc
            value, ci = doc[metric], doc[f"{metric}_ci95"]
            if value is None:
                assert ci is None, (g.agent, metric)
        for metric in ("item_f1", "row_f1", "poa", "gold_state_reach", "state_anchored_rows", "infra_rate"):
            lo, hi = doc[f"{metric}_ci95"]
            assert lo <= doc[metric] + 1e-9 and doc[metric] <= hi + 1e-9, (g.agent, metric)
        # one record task: its means stand, with no interval over a single task
        assert g.record_hard_f1 is not None and g.record_hard_f1_ci95 is None
        assert set(g.passk_ci95) == set(g.passk) == {"pass@1", "avg@1", f"pass@{TRIALS}", f"avg@{TRIALS}"}
        assert g.pass_hat_k is not None and g.pass_hat_k_ci95 is not None
        assert g.pass_hat_k <= g.passk[f"avg@{TRIALS}"] <= g.passk[f"pass@{TRIALS}"]
        # the family with two tasks has intervals; a single-task family has none
        assert g.families["environmental monitoring"].item_f1_ci95 is not None
        assert g.families["transport"].tasks == 1 and g.families["transport"].item_f1_ci95 is None
    drift = next(g for g in graded.groups if g.agent == "perturbed:scope_drift")
    lo, hi = drift.item_f1_ci95
    assert lo < drift.item_f1 < hi  # its tasks score differently: the interval has width
    assert graded.groups[0].item_f1_ci95 == (1.0, 1.0)  # the reference solves every task


def test_intervals_are_the_same_when_graded_again_elsewhere(real_runs, graded, tmp_path):
    copy = tmp_path / "runs"
    shutil.copytree(real_runs, copy)
    again = grade_runs(copy, force=True)

    def intervals(s: Summary) -> list[dict]:
        return [{k: v for k, v in g.model_dump(mode="json").items() if k.endswith("_ci95")} for g in s.groups]

    assert intervals(again) == intervals(graded)


def test_rig_grade_prints_the_intervals(real_runs, graded, tmp_path):
    copy = tmp_path / "runs"
    shutil.copytree(real_runs, copy)
    res = CliRunner().invoke(app, ["grade", str(copy)])
    assert res.exit_code == 0, res.output
    assert "## 95 % intervals (percentile bootstrap over tasks: 2000 resamples, seed 0)" in res.stdout
    drift = next(g for g in graded.groups if g.agent == "perturbed:scope_drift")
    lo, hi = drift.item_f1_ci95
    cell = f"{100 * drift.item_f1:.1f} [{100 * lo:.1f}, {100 * hi:.1f}]"
    assert re.search(rf"\| perturbed:scope\\?_drift \| constraint \| {len(TASKS)} \| {re.escape(cell)} \|", res.stdout)
    res = CliRunner().invoke(app, ["grade", str(copy), "--json"])
    doc = json.loads(res.stdout)
    assert all("item_f1_ci95" in g and "pass_hat_k" in g for g in doc["groups"])
    assert len(doc["groups"]) == len(AGENTS)
