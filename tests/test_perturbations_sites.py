"""Fault injection on the tasks of the synthetic sites (bio, vuln, complaints, papers): every kind applies, each edit
is a fault of its category on a real control, and the gold states agree with the site adapters (no browser: the
recorded episodes are in test_site_<site>.py)."""

from __future__ import annotations

import pytest

from recorders.adapter import load_adapter
from rig.agents.perturbed import KINDS, check_supported, perturb_answer, perturb_script
from rig.formats.answer import Answer
from rig.formats.task import Task
from rig.sites import bundled_sites
from rig.tasks import bundled_tasks

SITES = ("bio", "vuln", "complaints", "papers")
TASKS = [t for t in bundled_tasks() if t.site in SITES]
ADAPTERS = {s.name: load_adapter(s.adapter) for s in bundled_sites() if s.name in SITES}
CONTROL_VERBS = {"select", "check", "uncheck", "fill", "click"}
CONSEQUENCE_VERBS = {"wait_for", "goto", "extract_table", "answer"}


def _verb(action: dict) -> str:
    return next(iter(action))


def test_every_suite_is_here():
    assert sorted(t.id for t in TASKS) == sorted(f"{s}-0{i}" for s in SITES for i in range(1, 5))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_every_kind_can_be_injected_and_is_a_real_fault(task: Task, kind: str):
    check_supported(task, kind)
    script = perturb_script(task, kind)
    gold = Answer(columns=task.output.columns, rows=task.gold.rows, citations=[])
    if script == task.reference_solution:  # an answer-level kind: its transform must change the table
        assert perturb_answer(task, kind, gold).rows != gold.rows, f"{task.id}: {kind} leaves the answer as is"
    else:  # a script edit: a state fault, or a misreading the task declares itself (papers-03 reads the wrong column)
        assert kind not in ("page_misreading", "answer_composition") or kind in task.perturbations, \
            f"{task.id}: {kind} should act on the answer"


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
                # a task may raise a view dimension to a criterion (papers: the order whose top row is read)
                tags = {adapter.dimensions[c.key[4:]].tag} | ({"criterion"} if adapter.dimensions[c.key[4:]].tag ==
                                                              "view" else set())
                assert c.tag in tags, f"{task.id}.{state.name}: {c.key} tagged {c.tag}"


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_retrieval_dependency_changes_a_value_read_earlier(task: Task):
    script = perturb_script(task, "retrieval_dependency")
    steps = task.reference_solution
    changed = [i for i, (a, b) in enumerate(zip(steps, script)) if a != b]

    def feeds_a_later_step(i: int) -> bool:  # an extraction whose value a later step uses (papers-04 reads row 2)
        name = next(iter(steps[i].values())).get("as") if _verb(steps[i]).startswith("extract") else None
        return name is not None and any("${" + name in repr(s) for s in steps[i + 1:])

    assert changed and all("${" in repr(steps[i]) or feeds_a_later_step(i) for i in changed), task.id
