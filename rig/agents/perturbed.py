"""`perturbed:KIND`: the reference solution with one fault injected, one kind per SGR-Bench failure category.

Kinds and how each is injected (a task's `perturbations` entry overrides the generic edit):
- `scope_drift`: a scope filter or hierarchy node changed before extraction (task-specific edit needed)
- `criterion_mismatch`: a criterion such as the search term or threshold altered (task-specific edit needed)
- `intent_rewriting`: exhaustive search dropped: appended pages are not read, else only the first half of the rows is kept
- `page_misreading`: the neighbouring row's value is read for the first non-key column
- `retrieval_dependency`: the dependent lookup uses the wrong intermediate value (`${t[0].X}` becomes `${t[1].X}`)
- `answer_composition`: right rows, wrong order (reversed)
The injected kind is the episode's ground truth (`episode.json: injected_fault`).
"""

from __future__ import annotations

import copy
import math
import re
from typing import Any, get_args

from rig.agents.base import EpisodeEnv
from rig.agents.scripted import ScriptRunner
from rig.errors import AgentError, InputError
from rig.formats.actions import parse_actions
from rig.formats.answer import Answer, Citation
from rig.formats.task import FailureKind, Task, apply_edits

KINDS: tuple[str, ...] = get_args(FailureKind)
_FIRST_ROW = re.compile(r"\$\{(\w+)\[0\]\.")


def perturb_script(task: Task, kind: str) -> list[dict[str, Any]]:
    """The reference solution with the fault of `kind` injected into its actions."""
    script = copy.deepcopy(task.reference_solution)
    if kind in task.perturbations:
        return apply_edits(script, task.perturbations[kind])
    if kind == "retrieval_dependency":
        text_refs = [a for a in script if _FIRST_ROW.search(repr(a))]
        if not text_refs:
            raise InputError(task.id, "perturbations.retrieval_dependency",
                             "no `${table[0].Column}` reference to shift; declare the edit in the task")
        return [_shift_refs(a) for a in script]
    if kind == "intent_rewriting":
        appended = [i for i, a in enumerate(script) if a.get("extract_table", {}).get("append")]
        if appended:
            return [a for i, a in enumerate(script) if i not in appended]
        answer = next(a for a in reversed(script) if "answer" in a)
        half = math.ceil((len(task.gold.rows) if task.gold else _expected_records(task)) / 2)
        answer["answer"]["limit"] = min(answer["answer"].get("limit") or half, half)
        return script
    if kind in ("scope_drift", "criterion_mismatch"):
        raise InputError(task.id, f"perturbations.{kind}", "this kind needs a task-specific edit in the task file")
    return script


def _shift_refs(action: dict[str, Any]) -> dict[str, Any]:
    def walk(v: Any) -> Any:
        if isinstance(v, str):
            return _FIRST_ROW.sub(lambda m: "${" + m.group(1) + "[1].", v)
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        return v

    return walk(action)


def perturb_answer(task: Task, kind: str, answer: Answer) -> Answer:
    """The answer with the fault of `kind` injected (answer-level kinds without a task-specific edit)."""
    if kind in task.perturbations:
        return answer
    if kind == "answer_composition":
        order = list(range(len(answer.rows)))[::-1]
        return _reordered(answer, order)
    if kind == "page_misreading":
        update: dict[str, Any] = {}
        if task.output is not None:
            keys = set(task.output.key)
            col = next((i for i, c in enumerate(answer.columns) if c not in keys), None)
            if col is None or len(answer.rows) < 2:
                raise InputError(task.id, "output", "page_misreading needs a non-key column and two rows")
            rows = [list(r) for r in answer.rows]
            values = [r[col] for r in answer.rows]
            for i, r in enumerate(rows):
                r[col] = values[(i + 1) % len(values)]
            update["rows"] = rows
        if len(answer.records) >= 2:  # each record states its neighbour's answer
            recs = answer.records
            update["records"] = [r.model_copy(update={"answer": recs[(i + 1) % len(recs)].answer})
                                 for i, r in enumerate(recs)]
        return answer.model_copy(update=update)
    return answer


def _expected_records(task: Task) -> int:
    """How many records a records-only task expects (the product of `required` down the main branch)."""
    n, level = 1, task.records.hierarchy.root if task.records else None
    while level is not None:
        n, level = n * level.required, level.child
    return n


def _reordered(answer: Answer, order: list[int]) -> Answer:
    where = {old: new for new, old in enumerate(order)}
    cites = [Citation(**{**c.model_dump(), "row": where.get(c.row) if c.row is not None else None}) for c in answer.citations]
    return answer.model_copy(update={"rows": [answer.rows[i] for i in order], "citations": cites})


def check_supported(task: Task, kind: str) -> None:
    """Raise InputError when `kind` cannot be injected into `task` (checked before any episode runs)."""
    parse_actions(perturb_script(task, kind), f"{task.id}.perturbations.{kind}")
    if kind == "page_misreading" and kind not in task.perturbations and task.output is not None and task.gold:
        keys = set(task.output.key)
        cols = [i for i, c in enumerate(task.output.columns) if c not in keys]
        if not cols or len({r[cols[0]] for r in task.gold.rows}) < 2:
            raise InputError(task.id, "output", "page_misreading needs a non-key column whose values differ")


class PerturbedAgent:
    """The reference solution with one injected fault of a known SGR-Bench category."""

    model, needs_cdp = None, False

    def __init__(self, kind: str) -> None:
        if kind not in KINDS:
            raise InputError("--agent", None, f"unknown perturbation {kind!r}; expected one of {', '.join(KINDS)}")
        self.kind = self.injected_fault = kind
        self.name = f"perturbed:{kind}"

    def check(self, task: Task) -> None:
        """Fail early when this fault cannot be injected into `task`."""
        check_supported(task, self.kind)

    async def run(self, env: EpisodeEnv) -> Answer | None:
        """Run the perturbed script, then perturb its answer where the kind is answer-level."""
        if env.task is None:
            raise InputError(self.name, None, "perturbed agents need a task")
        actions = parse_actions(perturb_script(env.task, self.kind), f"{env.task.id}:{self.name}")
        result = await ScriptRunner(env.page, env.script_base, hook=env.recorder).run(actions)
        if result.answer is None:
            raise AgentError(f"{env.task.id}: the perturbed solution gives no answer")
        return perturb_answer(env.task, self.kind, result.answer)
