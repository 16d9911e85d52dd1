"""Fault injection for the eco and stats tasks: every kind applies, and state faults edit real controls (no browser)."""

from __future__ import annotations

import pytest

from rig.agents.perturbed import KINDS, check_supported, perturb_script
from rig.formats.actions import parse_actions
from rig.formats.task import Task
from rig.tasks import bundled_tasks

TASKS = [t for t in bundled_tasks() if t.site in ("eco", "stats")]
CONTROL_VERBS = {"select", "check", "uncheck", "fill", "click"}


def _verb(action: dict) -> str:
    return next(iter(action))


def test_the_eco_and_stats_suites_are_all_here():
    assert sorted(t.id for t in TASKS) == [f"{s}-0{i}" for s in ("eco", "stats") for i in range(1, 6)]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_every_kind_can_be_injected(task: Task, kind: str):
    check_supported(task, kind)
    parse_actions(perturb_script(task, kind), f"{task.id}.{kind}")


@pytest.mark.parametrize("kind", ["scope_drift", "criterion_mismatch"])
@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_state_faults_edit_a_control(task: Task, kind: str):
    """The fault sets or skips a control; the only other edits re-point a wait at the state the fault produces."""
    edits = task.perturbations[kind]
    verbs = [_verb(task.reference_solution[e.at]) for e in edits]
    assert any(v in CONTROL_VERBS for v in verbs), verbs
    for e, v in zip(edits, verbs):
        assert v in CONTROL_VERBS or (v == "wait_for" and isinstance(e.set, str) and not e.drop), (e, v)
    assert perturb_script(task, kind) != task.reference_solution


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_the_dependency_is_marked_in_the_last_gold_state(task: Task):
    """The last state carries the value read earlier, marked `dependent`; its script reference is what the fault shifts."""
    dependent = [c for c in task.gold_states[-1].constraints if c.dependent]
    assert dependent and all(c.tag == "scope" for c in dependent)
    assert not any(c.dependent for c in task.gold_states[0].constraints)
    assert perturb_script(task, "retrieval_dependency") != task.reference_solution
