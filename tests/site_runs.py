"""Recording a bundled site's SGR-mini episodes once per test module: the reference and every perturbed agent on each
of the site's tasks (constraint prompts), through the real runner and grader, live or frozen.

    plan = once_each(["papers-01", ...], {"scope_drift": "papers-01", ...})   # the reference on every task,
                                                                              # each fault on the task named for it
    grades, summary = await record_site_in(browser, tmp_path, sites_url=url, plan=plan)  # live, {(task, agent): Grade}
    grades, summary = record_site(tmp_path, frozen=SNAPSHOTS / "papers", plan=plan)     # answered from the snapshot

Step images are off (the grades do not read them), so a site's 28 episodes take well under a minute on an idle
machine.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from urllib.parse import urlsplit

from playwright.async_api import Browser
from server import TestServer

from replay import FROZEN_ORIGIN

from rig.agents.perturbed import KINDS
from rig.episode_dir import RunsDir
from rig.formats.episode import Episode
from rig.formats.grade import Grade
from rig.formats.summary import Summary
from rig.grading.runs import grade_runs
from rig.runner.config import RunConfig
from rig.runner.run import run, run_async

SNAPSHOTS = Path(__file__).resolve().parents[1] / "site_snapshots"


#: The faults that change what the agent operates (the states only they reach): the ones a frozen replay must answer.
STATE_FAULTS = ("scope_drift", "criterion_mismatch", "retrieval_dependency")


def once_each(tasks: list[str], fault_tasks: Mapping[str, str]) -> dict[str, list[str]]:
    """A plan for `record_site_in` and `record_site`: the reference on every task, each perturbation kind on the one
    task named for it."""
    assert set(fault_tasks) == set(KINDS) and set(fault_tasks.values()) <= set(tasks), fault_tasks
    return {"reference": list(tasks), **{f"perturbed:{k}": [fault_tasks[k]] for k in KINDS}}


def record_site(runs: Path, *, frozen: Path,
                plan: Mapping[str, list[str]]) -> tuple[dict[tuple[str, str], Grade], Summary]:
    """Run and grade each agent of `plan` on its tasks, answered from the snapshot `frozen` in the run's own
    archive-only browser; the grades by (task, agent) and the run's summary."""
    return _graded(run(_config(runs, plan, sites_url=None, frozen=frozen)), runs, plan, frozen)


async def record_site_in(browser: Browser, runs: Path, *, sites_url: str,
                         plan: Mapping[str, list[str]]) -> tuple[dict[tuple[str, str], Grade], Summary]:
    """Run and grade each agent of `plan` on its tasks on the bundled sites at `sites_url`, in a browser the caller
    launched (the session's); the grades by (task, agent) and the run's summary."""
    return _graded(await run_async(_config(runs, plan, sites_url=sites_url, frozen=None), browser=browser), runs,
                   plan, None)


def _config(runs: Path, plan: Mapping[str, list[str]], *, sites_url: str | None, frozen: Path | None) -> RunConfig:
    return RunConfig(sorted({t for ids in plan.values() for t in ids}), list(plan), runs, variants=["constraint"],
                     concurrency=2, sites_url=sites_url, frozen=frozen, step_images="off",
                     tasks_by_agent=dict(plan))


def _graded(episodes: list[Episode], runs: Path, plan: Mapping[str, list[str]],
            frozen: Path | None) -> tuple[dict[tuple[str, str], Grade], Summary]:
    """Check every planned episode ran ok (a frozen one missing nothing), grade the runs directory, read the grades."""
    assert len(episodes) == sum(len(ids) for ids in plan.values())
    bad = [(e.task_id, e.agent, e.status, e.error, e.replay_misses) for e in episodes
           if e.status != "ok" or (frozen is not None and e.replay_misses != 0)]
    assert not bad, bad
    summary = grade_runs(runs)
    grades = [Grade.model_validate_json(p.read_text()) for p in RunsDir(runs).path.rglob("grade.json")]
    return {(g.task_id, g.agent): g for g in grades}, summary


def assert_reference_perfect(grades: dict[tuple[str, str], Grade], tasks: list[str]) -> None:
    """Every reference episode scores 1.0 and reaches every gold state, its rows anchored in an answer state."""
    for task in tasks:
        g = grades[task, "reference"]
        assert g.scores is not None and (g.scores.item_f1, g.scores.row_f1, g.scores.poa) == (1.0, 1.0, 1.0), task
        assert [r.name for r in g.gold_states if not r.reached] == [], (task, g.gold_states)
        assert g.state_anchored_rows == 1.0 and g.label is None, (task, g.rationale)
        assert all(e.met for e in g.evidence), (task, [e for e in g.evidence if not e.met])


def assert_labels_agree(grades: dict[tuple[str, str], Grade], tasks: list[str], summary: Summary) -> None:
    """Every perturbed episode recorded of the tasks is labelled with the category injected into it, and every
    category was injected at least once."""
    ran = [(t, k) for t in tasks for k in KINDS if (t, f"perturbed:{k}") in grades]
    assert {k for _, k in ran} == set(KINDS), ran
    wrong = [(t, k, grades[t, f"perturbed:{k}"].label, grades[t, f"perturbed:{k}"].rationale)
             for t, k in ran if grades[t, f"perturbed:{k}"].label != k]
    assert not wrong, wrong
    assert summary.label_agreement is not None and summary.label_agreement["overall"] == 1.0


def same_grades(live: Grade, frozen: Grade) -> None:
    """A frozen episode grades as its live twin: scores, gold-state reach, label."""
    assert frozen.scores is not None and live.scores is not None
    assert (frozen.scores.item_f1, frozen.scores.row_f1, frozen.scores.poa) == \
        (live.scores.item_f1, live.scores.row_f1, live.scores.poa), (live.task_id, live.agent)
    assert [(r.name, r.reached) for r in frozen.gold_states] == [(r.name, r.reached) for r in live.gold_states]
    assert frozen.label == live.label, (live.task_id, live.agent, frozen.rationale)


@contextlib.contextmanager
def frozen_trap() -> Iterator[TestServer | None]:
    """A server listening where frozen runs put the sites, answering 500 to anything: it must receive nothing.
    None when the port is taken (another run's): isolation then rests on the route handler (test_replay_route)."""
    try:
        trap = TestServer(port=urlsplit(FROZEN_ORIGIN).port, fallback=lambda ex: ex.send(500)).start()
    except OSError:
        trap = None
    try:
        yield trap
    finally:
        if trap is not None:
            trap.stop()
