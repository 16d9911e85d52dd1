"""The `reference` agent: runs a task's reference solution; and the check that it yields the gold table."""

from __future__ import annotations

from playwright.async_api import Page

from rig.actions import parse_actions
from rig.agents.scripted import ActionHook, ScriptRunner
from rig.answer import Answer
from rig.errors import AgentError
from rig.grading.canonical import Canonicalizer
from rig.tasks.models import Task


async def run_reference(task: Task, page: Page, base_url: str, hook: ActionHook | None = None) -> Answer:
    """Run the task's reference solution from its start page; return its answer."""
    actions = parse_actions(task.reference_solution, f"{task.id}.reference_solution")
    runner = ScriptRunner(page, base_url, hook)
    await page.goto(base_url.rstrip("/") + task.start_path)
    result = await runner.run(actions)
    if result.answer is None:
        raise AgentError(f"{task.id}: the reference solution ends without an `answer` action")
    return result.answer


def gold_mismatch(task: Task, answer: Answer) -> str | None:
    """None when the answer equals the gold table after canonicalisation; else what differs."""
    if answer.columns != task.output.columns:
        return f"columns {answer.columns} != {task.output.columns}"
    canon = Canonicalizer(task.canonicalize)
    got = canon.rows(task.output.columns, answer.rows)
    want = canon.rows(task.output.columns, task.gold.rows)
    if got == want:
        return None
    extra = [r for r in got if r not in want]
    missing = [r for r in want if r not in got]
    if not extra and not missing:
        return f"same rows in a different order: got {got}"
    return f"{len(got)} rows vs {len(want)} gold; extra {extra[:3]}, missing {missing[:3]}"
