"""Fault injection on the flights tasks: every kind applies, and each edit is a real fault of its category.

No browser here: the edits are checked against the task's script, its gold states and the site adapter.
"""

from __future__ import annotations

import re

import pytest

from recorders.adapter import load_adapter
from rig.agents.perturbed import KINDS, check_supported, perturb_answer, perturb_script
from rig.formats.answer import Answer
from rig.formats.task import Task
from rig.sites.flights import SITE
from rig.tasks import load_task
from rig.tasks.loader import bundled_task_paths

TASKS = [load_task(p) for p in bundled_task_paths() if p.stem.startswith("flights-")]
ADAPTER = load_adapter(SITE.adapter)
CONTROL_VERBS = {"select", "check", "uncheck", "fill", "click"}
LOOKUP_VERBS = {"goto", "extract_table"}
FAULT_TAG = {"scope_drift": "scope", "criterion_mismatch": "criterion"}


def _ids(tasks: list[Task]) -> list[str]:
    return [t.id for t in tasks]


def _verb(action: dict) -> str:
    return next(iter(action))


def _control(action: dict) -> str:
    """The form control an action sets: `#month_from` -> month_from, `input[name=metric]...` -> metric."""
    arg = action[_verb(action)]
    selector = arg if isinstance(arg, str) else arg["selector"]
    m = re.search(r"name=(\w+)", selector) or re.fullmatch(r"#(\w+)", selector)
    assert m, f"cannot tell which control {selector!r} sets"
    return m.group(1)


def _dimension(key: str) -> str | None:
    """The adapter dimension a state key belongs to (`dim.x` or one of its raw keys)."""
    if key.startswith("dim."):
        return key[4:]
    return next((name for name, d in ADAPTER.dimensions.items() if key in d.keys), None)


def _dependent_dims(task: Task) -> set[str]:
    return {_dimension(c.key) for s in task.gold_states for c in s.constraints if c.dependent} - {None}


def test_all_seven_flights_tasks_are_covered():
    assert _ids(TASKS) == [f"flights-0{i}" for i in range(1, 8)]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("task", TASKS, ids=_ids(TASKS))
def test_every_kind_can_be_injected(task: Task, kind: str):
    check_supported(task, kind)


@pytest.mark.parametrize("kind", sorted(FAULT_TAG))
@pytest.mark.parametrize("task", TASKS, ids=_ids(TASKS))
def test_scope_and_criterion_edits_set_a_control_of_their_tag(task: Task, kind: str):
    edits = task.perturbations[kind]
    faults = [e for e in edits if e.set is not None and _verb(task.reference_solution[e.at]) in CONTROL_VERBS]
    assert faults, f"{task.id}: {kind} must edit an action that sets a control"
    for e in faults:
        dim = _dimension(f"url.query.{_control(task.reference_solution[e.at])}")
        assert dim is not None, f"{task.id}: {kind} edits a control the adapter does not read"
        assert ADAPTER.dimensions[dim].tag == FAULT_TAG[kind], f"{task.id}: {kind} edits {dim}"
        assert dim not in _dependent_dims(task), f"{task.id}: {kind} edits the dependent value {dim}"
    for e in (e for e in edits if not any(e is f for f in faults)):
        verb = _verb(task.reference_solution[e.at])
        # the only other edits are consequences: lookups of rows that no longer exist, or reading the answer
        assert (e.drop and verb in LOOKUP_VERBS) or (verb == "answer" and set(e.set) == {"columns"}), (task.id, e)


@pytest.mark.parametrize("task", TASKS, ids=_ids(TASKS))
def test_gold_states_mark_the_dependency_and_agree_with_the_adapter(task: Task):
    first, *later = task.gold_states
    assert not any(c.dependent for c in first.constraints), "the first state cannot depend on an earlier one"
    assert any(c.dependent for s in later for c in s.constraints), f"{task.id}: no constraint marked dependent"
    for state in task.gold_states:
        for c in state.constraints:
            dim = _dimension(c.key)
            if dim is not None:
                assert ADAPTER.dimensions[dim].tag == c.tag, f"{task.id}.{state.name}: {c.key} tagged {c.tag}"


@pytest.mark.parametrize("task", TASKS, ids=_ids(TASKS))
def test_retrieval_dependency_changes_the_dependent_lookup(task: Task):
    script = perturb_script(task, "retrieval_dependency")
    changed = [i for i, (a, b) in enumerate(zip(task.reference_solution, script)) if a != b]
    assert changed, f"{task.id}: the retrieval_dependency script equals the reference"
    assert all("${" in repr(task.reference_solution[i]) for i in changed)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("task", TASKS, ids=_ids(TASKS))
def test_every_kind_is_a_real_fault(task: Task, kind: str):
    script = perturb_script(task, kind)
    gold = Answer(columns=task.output.columns, rows=task.gold.rows, citations=[])
    if script == task.reference_solution:  # answer-level kind: the transform itself must change the table
        assert perturb_answer(task, kind, gold).rows != gold.rows, f"{task.id}: {kind} leaves the answer as is"
    if kind in task.perturbations:
        assert perturb_answer(task, kind, gold) == gold, "a task-specific edit replaces the answer transform"
