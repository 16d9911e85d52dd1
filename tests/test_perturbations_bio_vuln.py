"""Fault injection on the bio and vuln tasks: every kind applies, each edit is a fault of its category on a real
control, and the gold states agree with the site adapters (no browser: the recorded episodes are in
test_site_bio.py and test_site_vuln.py)."""

from __future__ import annotations

import pytest

from recorders.adapter import load_adapter
from rig.agents.perturbed import KINDS, check_supported, perturb_answer, perturb_script
from rig.formats.answer import Answer
from rig.formats.task import Task
from rig.sites import bundled_sites
from rig.tasks import bundled_tasks

TASKS = [t for t in bundled_tasks() if t.site in ("bio", "vuln")]
ADAPTERS = {s.name: load_adapter(s.adapter) for s in bundled_sites() if s.name in ("bio", "vuln")}
CONTROL_VERBS = {"select", "check", "uncheck", "fill", "click"}
CONSEQUENCE_VERBS = {"wait_for", "goto", "extract_table", "answer"}


def _verb(action: dict) -> str:
    return next(iter(action))


def test_both_suites_are_here():
    assert sorted(t.id for t in TASKS) == [f"{s}-0{i}" for s in ("bio", "vuln") for i in range(1, 5)]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_every_kind_can_be_injected_and_is_a_real_fault(task: Task, kind: str):
    check_supported(task, kind)
    script = perturb_script(task, kind)
    gold = Answer(columns=task.output.columns, rows=task.gold.rows, citations=[])
    if script == task.reference_solution:  # an answer-level kind: its transform must change the table
        assert perturb_answer(task, kind, gold).rows != gold.rows, f"{task.id}: {kind} leaves the answer as is"
    else:
        assert kind not in ("page_misreading", "answer_composition"), f"{task.id}: {kind} should act on the answer"


@pytest.mark.parametrize("kind", ["scope_drift", "criterion_mismatch"])
@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_state_faults_set_or_skip_a_control(task: Task, kind: str):
    edits = task.perturbations[kind]
    verbs = [_verb(task.reference_solution[e.at]) for e in edits]
    assert any(v in CONTROL_VERBS for v in verbs), verbs
    for e, v in zip(edits, verbs):
        assert v in CONTROL_VERBS or (v in CONSEQUENCE_VERBS and not e.drop), (task.id, e, v)


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_gold_states_mark_the_dependency_and_agree_with_the_adapter(task: Task):
    adapter = ADAPTERS[task.site]
    first, *later = task.gold_states
    assert not any(c.dependent for c in first.constraints), "the first state cannot depend on an earlier one"
    assert any(c.dependent for c in later[-1].constraints), f"{task.id}: the last state carries no dependency"
    assert task.dependency
    for state in task.gold_states:
        for c in state.constraints:
            if c.key.startswith("dim."):
                assert c.key[4:] in adapter.dimensions, f"{task.id}.{state.name}: no dimension {c.key}"
                assert adapter.dimensions[c.key[4:]].tag == c.tag, f"{task.id}.{state.name}: {c.key} tagged {c.tag}"


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_retrieval_dependency_changes_a_value_read_earlier(task: Task):
    script = perturb_script(task, "retrieval_dependency")
    changed = [i for i, (a, b) in enumerate(zip(task.reference_solution, script)) if a != b]
    assert changed and all("${" in repr(task.reference_solution[i]) for i in changed), task.id
