"""The `reference` agent: runs a task's reference solution; and the check that it yields the gold table."""

from __future__ import annotations

from playwright.async_api import Page

from rig.agents.scripted import ActionHook, ScriptRunner
from rig.errors import AgentError
from rig.formats.actions import parse_actions
from rig.formats.answer import Answer
from rig.formats.canonical import Canonicalizer
from rig.formats.task import Task


async def run_reference(task: Task, page: Page, base_url: str, hook: ActionHook | None = None) -> Answer:
    """Run the task's reference solution from its start page; return its answer."""
    actions = parse_actions(task.reference_solution, f"{task.id}.reference_solution")
    runner = ScriptRunner(page, base_url, hook)
    await page.goto(task.start_at(base_url))
    result = await runner.run(actions)
    if result.answer is None:
        raise AgentError(f"{task.id}: the reference solution ends without an `answer` action")
    return result.answer


def gold_mismatch(task: Task, answer: Answer) -> str | None:
    """None when the answer equals the gold table (and its records the gold records) after canonicalisation;
    else what differs."""
    if task.output is None or task.gold is None:
        return records_mismatch(task, answer)
    if answer.columns != task.output.columns:
        return f"columns {answer.columns} != {task.output.columns}"
    canon = Canonicalizer(task.canonicalize)
    got = canon.rows(task.output.columns, answer.rows)
    want = canon.rows(task.output.columns, task.gold.rows)
    if got == want:
        return records_mismatch(task, answer)
    extra = [r for r in got if r not in want]
    missing = [r for r in want if r not in got]
    if not extra and not missing:
        return f"same rows in a different order: got {got}"
    return f"{len(got)} rows vs {len(want)} gold; extra {extra[:3]}, missing {missing[:3]}"


def records_mismatch(task: Task, answer: Answer) -> str | None:
    """None when the answer's records name exactly the task's gold records (item, answer, branch); else what differs."""
    if task.records is None or task.records.gold is None:
        return None
    spec = task.records
    answers = Canonicalizer({"default": spec.answer_rules})

    def key(item: dict[str, str], value: str, subtask: str | None) -> tuple[object, ...]:
        axes = tuple(sorted((a, Canonicalizer({"default": spec.hierarchy.policy(a).rules}).cell(a, v))
                            for a, v in item.items()))
        return axes, answers.cell("answer", value), subtask

    got = sorted(key(r.item, r.answer, r.subtask) for r in answer.records)
    want = sorted(key(g.item, g.answer, g.subtask) for g in spec.gold)
    if got == want:
        return None
    return f"{len(got)} records vs {len(want)} gold; extra {[k for k in got if k not in want][:3]}, " \
           f"missing {[k for k in want if k not in got][:3]}"
